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
//                              gathered). Waits for what its previous partner sent it and for its own
//                              previous send (so for everything it received before).
//   alltoall                   pairwise exchange: N-1 steps; in step k (1-based) rank r sends segment
//                              (r+k) mod N to rank r+k and waits for its own send and its receive (from
//                              r-k+1) of step k-1.
//   broadcast                  pipelined chain from hosts[0]: rank i forwards each of the C chunks of S
//                              to rank i+1 (step i) once it has received it.
// Closed forms at link rate B with step latency L (every flow at B, no overheads; chunks = 1):
//   ring_allreduce 2(N-1)(S/N/B + L); reduce_scatter, allgather, alltoall (N-1)(S/N/B + L);
//   halving_doubling 2(N-1)/N·S/B + 2·log2(N)·L; broadcast (N-1+C-1)(S/C/B + L).
//
// GPU servers (CollectiveParams::servers): the ranks on M servers, G ranks on each (the same local GPU
// indices on every server: rail j of the fabric joins GPU j of every server). Each server's ranks are taken
// in local-index order (local position i = its i-th rank by GPU index), the servers in the order of their
// first rank. B is then the NIC rate, B_nv the NVLink rate (CollectiveParams's intra rate).
//   hierarchical_ring_allreduce  2(G-1) + 2(M-1) steps: (1) reduce-scatter over NVLink: a ring of the G
//                              ranks of each server (local position i to i+1), G-1 steps of S/G, after
//                              which position i holds the server's sum of segment (i+1) mod G of G;
//                              (2) per rail, a ring all-reduce of that segment (S/G) among the M ranks of
//                              local position i, one per server (server m to m+1), 2(M-1) steps of S/(GM);
//                              (3) all-gather over NVLink, the ring of (1) again, G-1 steps of S/G. A
//                              phase's first message waits for all of the rank's last receive of the phase
//                              before (every chunk of it). The "2D-Torus all-reduce" [Mikami et al.,
//                              "Massively Distributed SGD: ImageNet/ResNet-50 Training in a Flash",
//                              arXiv:1811.05233, 2018] with NVLink as one dimension and the rails as the
//                              other; Horovod's hierarchical all-reduce has the same three phases.
//   tree_allreduce             NCCL's double binary tree [Sanders, Speck, Träff, "Two-tree algorithms for
//                              full bandwidth broadcast, reduction and scan", Parallel Computing 35,
//                              2009; NCCL 2.4, "Massively Scale Your Deep Learning Training with NCCL 2.4",
//                              NVIDIA blog, 2019] with one channel per rail: S in 2G parts of S/(2G); part
//                              (j, t) (rail j, tree t = 0, 1) is reduced up and broadcast down a chain of
//                              the server's ranks (local positions j+G-1 -> ... -> j+1 -> j, mod G; the
//                              broadcast the other way) and, between servers, binary tree t over the M
//                              servers among the ranks of local position j. Tree 0: servers numbered
//                              1..M, server i at level ctz(i); its parent is i + 2^ctz(i) when i / 2^ctz(i)
//                              is 1 mod 4 and that is at most M, else i - 2^ctz(i); the root is the largest
//                              power of two <= M. Tree 1 is tree 0 mirrored (server i as M+1-i) for even
//                              M, shifted by one (i as i mod M + 1) for odd M, so that no server is inner
//                              in both trees. A rank sends a chunk up once it has that chunk from its chain
//                              and its children; the root sends the result down (to its chain and
//                              children) once it has it; every other rank forwards what it receives.
//   pxn = true (any algorithm) PXN [NCCL 2.12, "Doubling all2all Performance with NVIDIA Collective
//                              Communication Library 2.12", NVIDIA blog, 2022]: a flow from a GPU to a GPU of
//                              another server and another local index j is relayed: it goes over NVLink to
//                              GPU j of the sender's server (the relay, a rank of the collective or not),
//                              which sends it on over rail j (no fabric flow crosses rails). Both hops carry
//                              the message's bytes and the step latency; chunk c's second hop waits for its
//                              first hop and for chunk c-1's second hop; what waited for the flow waits for
//                              the second hop.
// Closed forms (no other traffic; NVLink steps at B_nv; chunks = 1 but for the tree):
//   hierarchical_ring_allreduce 2(G-1)(S/G/B_nv + L) + 2(M-1)(S/(GM)/B + L);
//   tree_allreduce  an estimate, not exact (both trees share each NIC; measured 16-35 % above it on 4 x 8
//                   GPUs): with D = S/(2G), the busiest resource's time (the busiest NIC's bytes one way,
//                   a server inner in one tree and a leaf in the other: 4D, at B; a GPU's NVLink bytes
//                   4(G-1)D at B_nv) times (C-1)/C, plus one chunk's way: 2(G-1) NVLink hops of D/C and,
//                   down from the root to the farthest server and back up, each tree hop of k·D/C at B (k
//                   the children of its inner server, which share that NIC), L per hop;
//   with pxn, each step that relays a flow adds its NVLink hop (its message at B_nv, plus L).
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
  // The GPU servers: per server, the node ids of its GPUs by local index (servers[s][g] is GPU g of server
  // s). A host on none is a server of its own (local index 0). Empty: every host one server.
  std::vector<std::vector<int>> servers;
  bool pxn = false;  // relay cross-rail flows over NVLink (above); needs servers
  // GPUs of a server per rail, consecutive in local index (GPU g on rail g / gpus_per_rail): more than 1
  // when GPUs share a NIC (topo/builders.h nics_per_server). PXN relays only flows between rails.
  int gpus_per_rail = 1;
};

const std::vector<std::string>& collective_names();
// Rank placements (collective_placement): "listed" (rank r = hosts[r]), "packed" (the hosts by server, then
// local index: rank r = the (r mod G)-th GPU of the (r / G)-th server when every server gives G), "spread"
// (rank r on the (r mod M)-th server, its (r / M)-th GPU: consecutive ranks on different servers). Servers
// are taken in the order of their first host in `hosts`. "spread" needs the same number of hosts on every
// server.
const std::vector<std::string>& placement_names();
// `hosts` in rank order under `placement`. Throws InputError("", 0, "placement: ...") on bad input.
std::vector<int> place_ranks(const std::vector<int>& hosts, const std::vector<std::vector<int>>& servers,
                             const std::string& placement);
// The graph of one iteration (sealed). Throws InputError("", 0, "collective: ...") on bad parameters.
FlowDag build_collective(const CollectiveParams& p);
// NCCL's bus-bandwidth factor: 2(N-1)/N for all-reduce (every algorithm), (N-1)/N for reduce-scatter,
// all-gather and all-to-all, 1 for broadcast.
double bus_bandwidth_factor(const std::string& algorithm, int n);
// Flows of one iteration without building them: steps x ranks x chunks (broadcast: (N-1) x chunks;
// hierarchical_ring_allreduce 2(G-1+M-1) x N x C; tree_allreduce 4G(N-1) x C); with pxn at most twice that
// (an upper bound: each flow relayed at most once). Throws as build_collective on bad parameters.
int64_t collective_flow_count(const CollectiveParams& p);
// The same for a flat algorithm (not hierarchical_ring_allreduce or tree_allreduce, which need the servers)
// of n ranks without pxn, before its bytes are known (training jobs size their graphs with it).
int64_t collective_flow_count(const std::string& flat_algorithm, int n, int chunks);
// tree_allreduce's binary tree `tree` (0 or 1, header) over servers 0..m-1 (m >= 1): per server its parent
// (-1: the root) and children.
struct BinaryTree {
  int root = 0;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
};
BinaryTree binary_tree(int m, int tree);
// The closed form above for one iteration at rate `link` (what the header lists); `intra` is the NVLink
// rate B_nv of the hierarchical algorithms and pxn (zero: `link`).
Time collective_ideal_time(const CollectiveParams& p, Rate link, Rate intra = Rate{0});

}  // namespace rocesim
