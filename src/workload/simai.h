// SimAI workload files, as AICB (Alibaba's AI communication benchmark) writes them for a model and its
// parallelism, read into a TrainingGraph (workload/training.h). The format:
//   line 1   the policy and the parallelism, e.g. "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group:
//   8
//            ep: 1 pp: 1 vpp: 8 ga: 4 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0" (policy
//            HYBRID_TRANSFORMER_FWD_IN_BCKWD or HYBRID_TRANSFORMER; all_gpus and model_parallel_NPU_group
//            required; the others, and a trailing "pp_comm <bytes>", are read and not modelled)
//   line 2   the number of layers
//   then one line per layer of 12 fields separated by blanks: name, reserved (-1), forward compute (ns),
//            forward comm type, forward comm bytes, input-gradient compute (ns), its comm type and bytes,
//            weight-gradient compute (ns), its comm type and bytes, weight update time (ns; not modelled).
// Comm types: NONE, or ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL with an optional group suffix _TP, _DP,
// _EP or _DP_EP. Without a suffix the forward and input-gradient comms run over the tensor-parallel group,
// the weight-gradient comm over the data-parallel group (as SimAI does).
// Groups over the N = all_gpus ranks, with T = model_parallel_NPU_group, D = N / T, E = ep (D % E == 0), of
// rank r (TP block b = r / T, position p = r % T):
//   TP     the T consecutive ranks b·T .. b·T + T - 1
//   DP     the D ranks p + j·T (j = 0 .. D-1): the same position in every TP block
//   EP     the E ranks (⌊b/E⌋·E + i)·T + p (i = 0 .. E-1): same position, E consecutive TP blocks
//   DP_EP  the D/E ranks ((b mod E) + k·E)·T + p (k = 0 .. D/E-1)
// Every rank runs, per iteration: for each layer in order, its forward compute then its forward comm
// (blocking); then for each layer in reverse, input-gradient compute, its comm (blocking), weight-gradient
// compute, and its comm, which overlaps the layers after it (the iteration ends when it is done).
#pragma once
#include <string>

#include "workload/training.h"

namespace rocesim {

struct SimaiWorkload {
  std::string policy;
  int tp = 1, ep = 1, pp = 1, all_gpus = 0;
  int layers = 0;
  TrainingGraph graph;
};

// Throws InputError(path, line, "... expected ...") for anything it cannot read.
SimaiWorkload read_simai_workload(const std::string& path, double compute_scale);

}  // namespace rocesim
