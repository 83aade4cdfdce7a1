// Collective communication decomposed into point-to-point flows (a FlowDag; workload/flow_dag.h).
//
// Ranks are the hosts in the order given (rank r = hosts[r]); S is the per-rank buffer (`bytes`), N the
// number of ranks, C the chunks a step's message is split into. Segment i of the buffer is
// [S·i/N, S·(i+1)/N) bytes. Every flow has delay = the step latency (after the flows it waits for, or
// after the iteration's start). Chunk c of a message waits for chunk c-1 of the same message (chunks of
// one message go in order) and for chunk c of the data it forwards:
//   ring_allreduce             2(N-1) steps; in step s rank r sends segment (r-s) mod N to rank r+1:
//                              reduce-scatter (s < N-1), then all-gather. Waits for what rank r-1 sent
//                              it in step s-1.
//   reduce_scatter, allgather  the ring's N-1 steps of one phase (allgather: S is the gathered output,
//                              each rank contributes S/N).
//   halving_doubling_allreduce N a power of two; log2 N steps of recursive halving (partner r xor N/2,
//                              N/4, ...; sends the half of its current range it does not keep), then
//                              log2 N of recursive doubling (partner r xor 1, 2, ...; sends what it has
//                              gathered). Waits for what its previous partner sent it.
//   alltoall                   pairwise exchange: N-1 steps; in step k (1-based) rank r sends segment
//                              (r+k) mod N to rank r+k and waits for its own send and its receive (from
//                              r-k+1) of step k-1.
//   broadcast                  pipelined chain from hosts[0]: rank i forwards each of the C chunks of S
//                              to rank i+1 (step i) once it has received it.
// Closed forms at link rate B with step latency L (every flow at B, no overheads; chunks = 1):
//   ring_allreduce 2(N-1)(S/N/B + L); reduce_scatter, allgather, alltoall (N-1)(S/N/B + L);
//   halving_doubling 2(N-1)/N·S/B + 2·log2(N)·L; broadcast (N-1+C-1)(S/C/B + L).
#pragma once
#include <string>
#include <vector>

#include "core/time.h"
#include "workload/flow_dag.h"

namespace rocesim {

struct CollectiveParams {
  std::string algorithm;   // one of collective_names()
  std::vector<int> hosts;  // node ids, rank order (distinct, >= 2)
  Bytes bytes = 0;         // per-rank buffer S (>= N x C: every flow carries at least one byte)
  int chunks = 1;          // C >= 1
  Time step_latency;       // L >= 0
};

const std::vector<std::string>& collective_names();
// The graph of one iteration (sealed). Throws InputError("", 0, "collective: ...") on bad parameters.
FlowDag build_collective(const CollectiveParams& p);
// NCCL's bus-bandwidth factor: 2(N-1)/N for all-reduce, (N-1)/N for reduce-scatter, all-gather and
// all-to-all, 1 for broadcast.
double bus_bandwidth_factor(const std::string& algorithm, int n);
// Flows of one iteration (steps x ranks x chunks; broadcast: (N-1) x chunks), without building them.
int64_t collective_flow_count(const std::string& algorithm, int n, int chunks);
// The closed form above for one iteration at rate `link` (what the header lists).
Time collective_ideal_time(const CollectiveParams& p, Rate link);

}  // namespace rocesim
