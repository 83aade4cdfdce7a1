// Results of the jobs of a run (collectives and dependency traces; workload/flow_dag.h):
//   collectives.csv       job,collective,ranks,iteration,bytes,start_us,finish_us,duration_us,algbw_gbps,
//                         busbw_gbps,ideal_us,slowdown,comm_us,compute_us,exposed_comm_us,trace_id
//                         one row per job x iteration begun (trace_id empty); an iteration still running at
//                         the end of the run has empty finish and figures. bytes is the per-rank buffer (a
//                         trace or training job: all its bytes); algbw = bytes x 8 / duration; busbw = algbw
//                         x the collective's bus factor (empty for a trace); ideal_us the closed form at the
//                         hosts' link rate (workload/collectives.h; empty for a trace); slowdown = duration
//                         / ideal; comm, compute and exposed_comm as IterationTimes defines them.
//                         Each iteration's row is followed by one row per collective the job's graph names
//                         (FlowDag::collective_id) begun in it, by start: trace_id the trace's id (a
//                         dependency trace's collective column; a training job's node "id:name"), start and
//                         finish its first flow's start and last flow's finish (finish and the figures
//                         once the iteration finished), comm, compute and exposed_comm empty. A training
//                         job's collective or send/recv (DagJob::spans) has its algorithm or "sendrecv",
//                         ranks, per-rank bytes, busbw and ideal; a dependency trace's has the job's kind,
//                         the hosts its flows run between, all its bytes, and no busbw or ideal, unless the
//                         trace gives its collective_type (trace_collective_spans: the type, the per-rank
//                         buffer its bytes stand for, busbw).
//   collective_steps.csv  job,iteration,step,flows,bytes,start_us,finish_us: per step (a trace: per depth)
//                         of every iteration, the first start and the last finish of its flows.
//   job_timeline.csv      job,iteration,host,activity,start_us,finish_us: one iteration of every job
//                         (DagJob::timeline_iteration, of at most kTimelineMaxFlows flows) per host: "comm"
//                         while a flow it sends or receives is in flight, "compute" in its compute windows
//                         and, for a job of several iterations, the compute_us after it; overlapping or
//                         touching intervals merged.
//   summary.json "jobs"   per job: iterations begun and finished, and over the finished ones the mean,
//                         min, max and nearest-rank p99 duration, mean algbw and busbw, the ideal and the
//                         mean slowdown, and the mean comm_us, compute_us and exposed_comm_us.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>

#include "workload/flow_dag.h"

namespace rocesim {

void write_collectives_csv(std::ostream& out, const DagRunner& runner);
void write_collective_steps_csv(std::ostream& out, const DagRunner& runner);
void write_job_timeline_csv(std::ostream& out, const DagRunner& runner);
nlohmann::json jobs_json(const DagRunner& runner);

}  // namespace rocesim
