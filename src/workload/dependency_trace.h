// Dependency traces: flows that start at a time or after other flows, one flow per line, as a workload
// generator (SimAI, ASTRA-sim, a script) can write them. Two forms, told apart by the first line that is
// not blank or a `#` comment:
//
// CSV with a header naming the columns (any order; id, src, dst and bytes required):
//     id,src,dst,bytes,start_us,after,delay_us
//     a,h0,h1,1000000,0,,
//     b,h1,h2,1000000,,a,5
//     c,h2,h0,500000,10,a;b,
// An optional column `collective` names the collective a flow belongs to (the generator's id of an
// all-reduce, say); collectives.csv then has a row per such collective and iteration (trace_id). An optional
// column `collective_type` (allreduce, allgather, reduce_scatter, alltoall, broadcast or sendrecv; on any of
// the collective's rows, the same on each) says what it is, for its bus bandwidth (trace_collective_spans).
// JSON Lines, one object per line with the same keys (`after` an array, ids strings or integers):
//     {"id": "a", "src": "h0", "dst": "h1", "bytes": 1000000, "start_us": 0}
//     {"id": "b", "src": "h1", "dst": "h2", "bytes": 1000000, "after": ["a"], "delay_us": 5}
//
// A flow starts at max(start_us, finish of the last flow in `after` + delay_us); start_us defaults to 0,
// `after` to none (separated by ';' or spaces in CSV), delay_us to 0 (only with `after`). delay_us is
// compute on the flow's src (the time to produce what it sends; FlowDag::delays_compute). Ids are unique
// strings, kept as the flows' names (flows.csv's name column); `after` may name flows on later lines. src
// and dst are host names or node ids. Every problem (a missing column, a bad number, an unknown host, a
// duplicate or unknown id, a flow that waits for itself or a dependency cycle) throws
// InputError(path, line, ...).
#pragma once
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "workload/flow_dag.h"

namespace rocesim {

// Resolves a host named in the trace to its node id; throws std::invalid_argument("what is wrong") else.
using HostResolver = std::function<int(const std::string& text)>;

// The trace as a sealed graph whose steps are the flows' depths (0: waits for nothing). collective_types,
// if given, gets per collective (FlowDag::collective_id) its collective_type (empty: none given).
FlowDag read_dependency_trace(const std::string& path, const HostResolver& host,
                              std::vector<std::string>* collective_types = nullptr);
FlowDag read_dependency_trace(std::istream& in, const std::string& path, const HostResolver& host,
                              std::vector<std::string>* collective_types = nullptr);

// What collectives.csv says of a trace's typed collectives (DagJob::spans; empty when none is typed; a span
// of kind "" for an untyped one): kind the type, ranks the hosts its flows run between, bytes_per_rank the
// buffer S whose bandwidth-optimal decomposition moves its flows' bytes B (all-reduce: B / 2(N-1); sendrecv:
// B; the others: B / (N-1)), bus_factor nccl-tests' (all-reduce 2(N-1)/N, broadcast and sendrecv 1, the
// others (N-1)/N). So busbw is B / N per second (broadcast: B / (N-1)): what each rank sends.
std::vector<DagSpan> trace_collective_spans(const FlowDag& dag, const std::vector<std::string>& types);

}  // namespace rocesim
