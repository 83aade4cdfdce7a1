// Flows that wait for other flows: a graph of point-to-point flows (a collective's steps, a dependency
// trace) and the runner that releases them into the network as their dependencies finish
// (DependentFlows, workload/flow.h).
//
// A flow of iteration k (which began at T_k) starts at max(T_k + not_before, F + delay), where F is the
// finish of the last flow it waits for (T_k when it waits for none). An iteration ends when all its flows
// have finished; the next begins `gap` later. The graph is built once and re-run every iteration; running
// it allocates nothing beyond the map of live flows, which stops growing at the peak number in flight.
//
// A graph may also hold timers (add_timer): nodes that carry no data and take no part in the network, the
// compute of a training job (workload/training.h). A timer becomes ready like a flow, at
// max(T_k + not_before, F) where F is the finish of the last node it waits for, and finishes `delay` later;
// the nodes that wait for it then start after that finish. In a graph with timers a node waits for the
// latest finish among the nodes it waits for (which need not be the last to finish in the run's order, as
// timers finish in advance).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/flat_map.h"
#include "core/time.h"
#include "workload/flow.h"

namespace rocesim {

class FlowDag {
 public:
  static constexpr int32_t kTimer = -1;  // Flow::src of a timer
  struct Flow {
    int32_t src = 0, dst = 0;  // kTimer: a timer (no data)
    Bytes bytes = 0;
    Time not_before;           // from the iteration's start
    Time delay;                // after the last flow it waits for
    uint32_t step = 0;         // the algorithm's step (or the trace's depth), for the per-step timeline
    uint32_t waits = 0;        // number of flows it waits for
    uint32_t first_child = 0;  // into children() (after seal())
  };

  // Adds a flow and returns its index.
  uint32_t add(int src, int dst, Bytes bytes, uint32_t step, Time delay, Time not_before = Time::zero());
  // Adds a timer of `duration` and returns its index.
  uint32_t add_timer(Time duration, uint32_t step, Time not_before = Time::zero()) {
    const uint32_t i = add(kTimer, kTimer, 0, step, duration, not_before);
    has_timers_ = true;
    return i;
  }
  bool has_timers() const { return has_timers_; }
  bool is_timer(uint32_t i) const { return flows_[i].src == kTimer; }
  // `flow` waits for `on` (both indices returned by add). Duplicate edges are ignored by seal().
  void wait(uint32_t flow, uint32_t on) { edges_.emplace_back(on, flow); }
  // Builds the child lists. Returns the index of a flow on a dependency cycle, or -1 when there is none.
  // With `steps_from_depth`, each flow's step becomes its depth (longest chain of waits before it).
  int64_t seal(bool steps_from_depth = false);

  size_t size() const { return flows_.size(); }
  const Flow& flow(uint32_t i) const { return flows_[i]; }
  Flow& flow(uint32_t i) { return flows_[i]; }
  // The flows that wait for flow i.
  std::pair<const uint32_t*, const uint32_t*> children(uint32_t i) const {
    const uint32_t end =
        i + 1 < flows_.size() ? flows_[i + 1].first_child : static_cast<uint32_t>(children_.size());
    return {children_.data() + flows_[i].first_child, children_.data() + end};
  }
  uint32_t steps() const { return steps_; }  // 1 + the largest step
  // Memory a graph of `flows` flows with about 2 waits each holds while a run uses it (the flows, their
  // child lists and the runner's per-flow counters), for memory estimates.
  static int64_t estimate_bytes(int64_t flows) {
    return flows * static_cast<int64_t>(sizeof(Flow) + 2 * sizeof(uint32_t) + sizeof(uint32_t));
  }
  Bytes total_bytes() const { return total_bytes_; }

 private:
  std::vector<Flow> flows_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (on, flow); cleared by seal()
  std::vector<uint32_t> children_;
  uint32_t steps_ = 0;
  Bytes total_bytes_ = 0;
  bool has_timers_ = false;
};

// A named part of a job's graph: one collective or point-to-point transfer of a training job, whose flows
// all carry step = its index in DagJob::spans (collectives.csv has a row for each).
struct DagSpan {
  std::string node;          // the trace's own node id and name ("17:all_reduce_grads")
  std::string kind;          // the collective ("ring_allreduce", ...), "sendrecv" or "barrier"
  int ranks = 0;             // participating hosts
  Bytes bytes_per_rank = 0;  // the collective's buffer per rank (sendrecv: the message)
  double bus_factor = 0;     // as DagJob's
  Time ideal;                // as DagJob's (0: none)
};

// One job: a graph run `iterations` times.
struct DagJob {
  std::string name;  // label in collectives.csv and summary.json
  std::string kind;  // the collective ("ring_allreduce", ...) or "trace"
  FlowDag dag;       // sealed
  uint32_t iterations = 1;
  Time start;                  // the first iteration's T_0
  Time gap;                    // between an iteration's end and the next one's start (compute)
  int priority = 3;            // FlowSpec::priority of every flow
  uint16_t class_id = 0;       // FlowSpec::class_id of every flow
  int ranks = 0;               // participating hosts
  Bytes bytes_per_rank = 0;    // the collective's buffer per rank (the trace: all its bytes)
  double bus_factor = 0;       // bus bandwidth = algorithm bandwidth x this (0: not a collective)
  Time ideal;                  // the closed-form duration of one iteration at the hosts' link rate (0: none)
  std::vector<DagSpan> spans;  // a training job's collectives, one per step (empty: none)
};

struct StepTimes {
  Time start = Time::max();  // first flow of the step started
  Time finish;               // last flow of the step finished
  uint64_t flows = 0;
  Bytes bytes = 0;
};

struct IterationTimes {
  Time start;   // T_k
  Time finish;  // the last flow finished (zero while unfinished)
  bool done = false;
  std::vector<StepTimes> steps;  // of flows only (timers are in no step)
};

// Runs jobs; jobs are independent of each other (their flows share only the fabric).
class DagRunner : public DependentFlows {
 public:
  // Returns the job's index. Call before the run begins.
  size_t add(DagJob job);
  size_t num_jobs() const { return jobs_.size(); }
  const DagJob& job(size_t j) const { return jobs_[j].spec; }
  // Iterations begun so far (finished ones have done = true).
  const std::vector<IterationTimes>& iterations(size_t j) const { return jobs_[j].iters; }

  void begin(Releaser& r) override;
  void on_flow_finished(uint64_t id, Time now, Releaser& r) override;
  uint64_t unreleased() const override { return unreleased_; }

 private:
  struct Job {
    DagJob spec;
    std::vector<uint32_t> waits_left;  // per flow, this iteration
    std::vector<Time> ready;           // graphs with timers: per node, the latest finish it waited for
    std::vector<IterationTimes> iters;
    uint32_t iteration = 0;  // the current one
    uint64_t finished = 0;   // flows of the current iteration
    Time last_finish;        // of the current iteration's nodes so far
  };
  void begin_iteration(uint32_t j, Time t, Releaser& r);
  void release(uint32_t j, uint32_t f, Time at, Releaser& r);
  void finished(uint32_t j, uint32_t f, Time now, Releaser& r);
  void run_timers(Releaser& r);

  std::vector<Job> jobs_;
  FlatMap<uint64_t> live_{1024};  // network flow id -> (job << 32 | flow index)
  uint64_t unreleased_ = 0;
  std::vector<std::pair<uint64_t, Time>> timers_;  // (job << 32 | node, finish) of timers to finish
};

}  // namespace rocesim
