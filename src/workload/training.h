// A training job as its framework runs it: per rank, a graph of compute and communication steps, as read
// from a Chakra execution trace (workload/chakra.h) or a SimAI workload file (workload/simai.h), and
// compiled into one job of the DagRunner (workload/flow_dag.h):
//   compute      a timer of its duration: it runs once every op it waits for has finished.
//   collective   over a group of ranks: the k-th collective a rank makes on a group is matched with the
//                k-th of every other member. It begins when every member's op is ready (as the NCCL
//                collective waits for its last rank), runs as our decomposition of it over the members'
//                hosts (workload/collectives.h) and ends for all members when its last flow finishes.
//                A group of one rank, or a barrier, is a synchronisation without flows.
//   send, recv   the k-th send from rank a to rank b with tag t is matched with the k-th recv on b from a
//                with tag t: one flow of the send's size that starts when both are ready.
//   noop         orders ops only (a Chakra METADATA_NODE).
// An op starts when the latest of the ops it waits for (of its own rank) finishes; the ranks' compute ops
// overlap unless the graph orders them. An iteration ends when every op has finished; the next one starts
// then.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "workload/flow_dag.h"

namespace rocesim {

struct TrainingOp {
  enum class Kind : uint8_t { kCompute, kCollective, kSend, kRecv, kNoop };
  Kind kind = Kind::kNoop;
  uint64_t id = 0;              // the trace's node id (SimAI: the op's index in the rank's sequence)
  std::string name;             // the trace's node name
  Time duration;                // kCompute
  std::string collective;       // kCollective: "allreduce" (TrainingOptions::allreduce), "barrier" or one of
                                // collective_names()
  Bytes bytes = 0;              // kCollective: per-rank buffer S; kSend / kRecv: the message
  int32_t group = -1;           // kCollective: index into TrainingGraph::groups
  int32_t peer = -1;            // kSend: the destination rank; kRecv: the source rank
  int64_t tag = 0;              // kSend / kRecv
  std::vector<uint32_t> after;  // indices (in its rank's ops) of the ops it waits for
};

struct TrainingGraph {
  std::vector<std::string> rank_source;        // per rank: where its ops came from (a file), for messages
  std::vector<std::vector<TrainingOp>> ranks;  // per rank, its ops
  std::vector<std::vector<int>> groups;        // process groups: ranks, in collective rank order
};

struct TrainingOptions {
  std::vector<int> hosts;                    // node id of every rank
  int chunks = 1;                            // of every collective (workload/collectives.h)
  Time step_latency;                         // of every collective
  std::string allreduce = "ring_allreduce";  // the decomposition of all-reduces (hierarchical: needs servers)
  std::vector<std::vector<int>> servers;  // GPU servers (CollectiveParams::servers), for placement by server
  // Per node id, for the collectives' ideal times (optional): the host's NIC rate (its fastest link other
  // than an NVLink) and its NVLink's (zero without one).
  std::vector<Rate> link, nvlink;
};

// The job's graph (sealed; it names one collective per collective and per send/recv pair, FlowDag::
// add_collective with the node's "id:name", in the order of their first op, and spans describes each). Throws
// InputError(the rank's source, 0, ...) for an unmatched or mismatched collective or send/recv, an unknown
// group, or a dependency cycle.
struct CompiledTraining {
  FlowDag dag;
  std::vector<DagSpan> spans;
  int64_t compute_ops = 0;
};
CompiledTraining compile_training(const TrainingGraph& g, const TrainingOptions& o);

}  // namespace rocesim
