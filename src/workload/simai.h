// SimAI workload files, as AICB (Alibaba's AI communication benchmark) writes them for a model and its
// parallelism, read into a TrainingGraph (workload/training.h). The format:
//   line 1   the policy and the parallelism, e.g. "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group:
//            8 ep: 1 pp: 2 vpp: 8 ga: 4 all_gpus: 32 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 8388608"
//            (policy HYBRID_TRANSFORMER_FWD_IN_BCKWD or HYBRID_TRANSFORMER; all_gpus and
//            model_parallel_NPU_group required; pp (default 1), ga (micro-batches per iteration, default 1)
//            and pp_comm (the bytes a stage sends the next per micro-batch; needed when pp > 1) are used; vpp
//            and the checkpoints are read and not modelled)
//   line 2   the number of layers (of one pipeline stage: AICB divides the model's layers by pp)
//   then one line per layer of 12 fields separated by blanks: name, reserved (-1), forward compute (ns),
//            forward comm type, forward comm bytes, input-gradient compute (ns), its comm type and bytes,
//            weight-gradient compute (ns), its comm type and bytes, weight update time (ns; not modelled).
// Comm types: NONE, or ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL with an optional group suffix _TP, _DP,
// _EP or _DP_EP. Without a suffix the forward and input-gradient comms run over the tensor-parallel group,
// the weight-gradient comm over the data-parallel group (as SimAI does).
// Groups over the N = all_gpus ranks, with T = model_parallel_NPU_group, P = pp, D = N / (T·P), E = ep
// (D % E == 0), in Megatron's rank order (TP fastest, then DP, then PP) of rank r (TP block b = r / T,
// position p = r % T, stage s = r / (T·D), the stage's first block f = s·D):
//   TP     the T consecutive ranks b·T .. b·T + T - 1
//   DP     the D ranks (f + j)·T + p (j = 0 .. D-1): the same position in every TP block of the stage
//   EP     the E ranks (⌊b/E⌋·E + i)·T + p (i = 0 .. E-1): same position, E consecutive TP blocks
//   DP_EP  the D/E ranks (f + (b mod E) + k·E)·T + p (k = 0 .. D/E-1)
//   PP     rank r of stage s sends to r + T·D (stage s + 1) and receives from r - T·D
// (SimAI itself builds its groups as if pp were 1 and adds the pipeline's bubble and transfers to its
// report by a formula; here they are flows.) Every stage runs the file's layers. A micro-batch's forward
// pass: for each layer in order, its forward compute then its forward comm (blocking), then (not the last
// stage) pp_comm bytes to the next stage; a stage after the first starts it once the previous stage's
// activation has arrived. Its backward pass (not the last stage: once the next stage's gradient has
// arrived): for each layer in reverse, input-gradient compute, its comm (blocking), weight-gradient compute
// and, in the last micro-batch only, its comm, which overlaps the layers after it; then (not the first
// stage) pp_comm bytes to the previous stage. The M micro-batches (ga when pp > 1; one when pp = 1, the
// pass SimAI simulates) run in Megatron's 1F1B order: stage s runs min(P - 1 - s, M) forwards, then one
// forward and one backward in turn, then the backwards left. The iteration ends when all of it is done.
#pragma once
#include <string>

#include "workload/training.h"

namespace rocesim {

struct SimaiWorkload {
  std::string policy;
  int tp = 1, ep = 1, pp = 1, vpp = 1, ga = 1, all_gpus = 0;
  int64_t pp_comm = 0;    // bytes
  int micro_batches = 1;  // run per iteration
  int layers = 0;
  TrainingGraph graph;
};

// micro_batches: per iteration (0: ga when pp > 1, else 1). Throws InputError(path, line, "... expected ...")
// for anything it cannot read.
SimaiWorkload read_simai_workload(const std::string& path, double compute_scale, int micro_batches = 0);

}  // namespace rocesim
