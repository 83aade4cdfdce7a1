#include "workload/simai.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace rocesim {

namespace {

enum class Group { kTp, kDp, kEp, kDpEp };

constexpr int64_t kMaxOps = int64_t{1} << 22;
constexpr int64_t kMaxCommBytes = int64_t{1} << 50;  // as a Chakra trace's comm_size

int to_int(const std::string& path, int line, const std::string& what, const std::string& v, int64_t lo,
           int64_t hi) {
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty())
    throw InputError(path, line, fmt::format("{}: expected an integer, got '{}'", what, v));
  if (x < lo || x > hi)
    throw InputError(path, line, fmt::format("{} = {} is out of [{}, {}]", what, x, lo, hi));
  return static_cast<int>(x);
}

int64_t to_i64(const std::string& path, int line, const std::string& what, const std::string& v) {
  size_t used = 0;
  int64_t x = -1;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || x < 0)
    throw InputError(path, line, fmt::format("{}: expected a whole number >= 0, got '{}'", what, v));
  return x;
}

struct Comm {
  std::string collective;  // empty: NONE
  Group group = Group::kTp;
};

Comm parse_comm(const std::string& path, int line, const std::string& field, const std::string& v,
                Group def) {
  Comm c;
  if (v == "NONE") return c;
  // ALLREDUCEALLTOALL is an all-reduce: SimAI's parser (astra-sim-alibabacloud/astra-sim/workload/
  // Workload.cc) tests the ALLREDUCE prefix first and so gives it ComType::All_Reduce; its own branch,
  // which names the groups (none: the phase's default, _EP, _DP_EP), is never reached, and SimAI's Layer
  // issues no all-to-all for it (docs/user-guide.md, "Bring your training job").
  static const std::vector<std::pair<std::string, std::string>> bases{{"ALLREDUCEALLTOALL", "allreduce"},
                                                                      {"ALLREDUCE", "allreduce"},
                                                                      {"ALLGATHER", "allgather"},
                                                                      {"REDUCESCATTER", "reduce_scatter"},
                                                                      {"ALLTOALL", "alltoall"}};
  static const std::vector<std::pair<std::string, Group>> suffixes{
      {"_DP_EP", Group::kDpEp}, {"_TP", Group::kTp}, {"_DP", Group::kDp}, {"_EP", Group::kEp}};
  for (const auto& [base, name] : bases) {
    if (v.compare(0, base.size(), base) != 0) continue;
    const std::string rest = v.substr(base.size());
    if (rest.empty()) return {name, def};
    for (const auto& [suf, grp] : suffixes)
      if (rest == suf) return {name, grp};
  }
  throw InputError(
      path, line,
      fmt::format("{}: unknown comm type '{}'; expected NONE or ALLREDUCE, ALLGATHER, REDUCESCATTER, "
                  "ALLTOALL or ALLREDUCEALLTOALL, optionally with _TP, _DP, _EP or _DP_EP",
                  field, v));
}

}  // namespace

SimaiWorkload read_simai_workload(const std::string& path, double compute_scale, int micro_batches) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the SimAI workload file");
  SimaiWorkload w;
  std::string text;
  int line = 1;
  if (!std::getline(in, text)) throw InputError(path, 1, "empty: expected the parallelism header");
  {
    std::istringstream ss(text);
    std::vector<std::string> t;
    for (std::string x; ss >> x;) t.push_back(x);
    if (t.empty()) throw InputError(path, 1, "expected the parallelism header");
    w.policy = t[0];
    if (w.policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" && w.policy != "HYBRID_TRANSFORMER")
      throw InputError(
          path, 1,
          fmt::format("policy '{}' is not supported; expected HYBRID_TRANSFORMER_FWD_IN_BCKWD or "
                      "HYBRID_TRANSFORMER",
                      w.policy));
    std::map<std::string, std::string> kv;
    for (size_t i = 1; i + 1 < t.size(); ++i)
      if (t[i].back() == ':' || t[i] == "pp_comm") kv[t[i]] = t[i + 1];
    auto need = [&](const std::string& key, bool required, int def, int lo = 1) {
      auto it = kv.find(key);
      if (it == kv.end()) {
        if (required) throw InputError(path, 1, fmt::format("the header needs '{} <number>'", key));
        return def;
      }
      return to_int(path, 1, key, it->second, lo, 1 << 24);
    };
    w.tp = need("model_parallel_NPU_group:", true, 1);
    w.all_gpus = need("all_gpus:", true, 0);
    w.ep = need("ep:", false, 1);
    w.pp = need("pp:", false, 1);
    w.vpp = need("vpp:", false, 1);
    w.ga = need("ga:", false, 1, 0);  // AICB writes 0 when the batch is smaller than DP x micro-batch
    // pp_comm: AICB writes it as "pp_comm: <bytes>", a float ("2097152.0") when it divides it by the
    // tensor-parallel size.
    auto pc = kv.find("pp_comm:");
    if (pc == kv.end()) pc = kv.find("pp_comm");
    if (pc != kv.end()) {
      std::string v = pc->second;
      const size_t dot = v.find('.');
      if (dot != std::string::npos && dot > 0 && v.find_first_not_of('0', dot + 1) == std::string::npos)
        v.resize(dot);
      w.pp_comm = to_i64(path, 1, "pp_comm (bytes)", v);
      if (w.pp_comm > (int64_t{1} << 40))
        throw InputError(path, 1, fmt::format("pp_comm = {} bytes is more than 2^40", w.pp_comm));
    }
  }
  if (w.all_gpus % (static_cast<int64_t>(w.tp) * w.pp) != 0)
    throw InputError(path, 1,
                     fmt::format("all_gpus = {} is not a multiple of model_parallel_NPU_group x pp = {} x {}",
                                 w.all_gpus, w.tp, w.pp));
  if (w.pp > 1 && w.pp_comm <= 0)
    throw InputError(path, 1,
                     fmt::format("pp = {} needs 'pp_comm: <bytes>' (the activation a stage sends the next "
                                 "per micro-batch) greater than 0",
                                 w.pp));
  if (w.pp > 1 && w.ga < 1 && micro_batches < 1)
    throw InputError(path, 1,
                     fmt::format("pp = {} needs 'ga: <micro-batches per iteration>' of 1 or more", w.pp));
  w.micro_batches = micro_batches > 0 ? micro_batches : (w.pp > 1 ? w.ga : 1);
  const int n = w.all_gpus, T = w.tp, P = w.pp, D = n / (T * P), E = w.ep, M = w.micro_batches;
  if (D % E != 0)
    throw InputError(path, 1,
                     fmt::format("ep = {} does not divide the data-parallel size all_gpus / "
                                 "(model_parallel_NPU_group x pp) = {}",
                                 E, D));
  ++line;
  if (!std::getline(in, text)) throw InputError(path, 2, "expected the number of layers");
  {
    std::istringstream ss(text);
    std::string x, extra;
    ss >> x;
    if (ss >> extra) throw InputError(path, 2, "expected the number of layers alone on the line");
    w.layers = to_int(path, 2, "the number of layers", x, 1, 1 << 24);
  }
  struct Layer {
    std::string name;
    int line = 0;
    Time compute[3];
    Comm comm[3];
    Bytes bytes[3] = {0, 0, 0};
  };
  std::vector<Layer> layers;
  static const char* const kPhase[3] = {"forward", "input-gradient", "weight-gradient"};
  while (static_cast<int>(layers.size()) < w.layers) {
    ++line;
    if (!std::getline(in, text))
      throw InputError(path, line,
                       fmt::format("the file ends after {} of its {} layers", layers.size(), w.layers));
    std::istringstream ss(text);
    std::vector<std::string> f;
    for (std::string x; ss >> x;) f.push_back(x);
    if (f.empty()) continue;
    if (f.size() != 12)
      throw InputError(
          path, line,
          fmt::format("expected 12 fields (name, reserved, then compute time, comm type and comm "
                      "bytes of the forward, input-gradient and weight-gradient phases, then the "
                      "weight update time), got {}",
                      f.size()));
    Layer l;
    l.name = f[0];
    l.line = line;
    for (int p = 0; p < 3; ++p) {
      const int64_t ns = to_i64(path, line, fmt::format("{} compute time (ns)", kPhase[p]), f[2 + 3 * p]);
      if (static_cast<double>(ns) * compute_scale > 1e15)
        throw InputError(
            path, line,
            fmt::format("{} compute time {} ns (x compute_scale) is more than 10^15 ns", kPhase[p], ns));
      l.compute[p] = Time::from_ps(std::llround(static_cast<double>(ns) * 1e3 * compute_scale));
      l.comm[p] = parse_comm(path, line, fmt::format("{} comm type", kPhase[p]), f[3 + 3 * p],
                             p == 2 ? Group::kDp : Group::kTp);
      l.bytes[p] = to_i64(path, line, fmt::format("{} comm bytes", kPhase[p]), f[4 + 3 * p]);
      if (l.bytes[p] > kMaxCommBytes)
        throw InputError(path, line,
                         fmt::format("{} comm bytes = {} is more than 2^50", kPhase[p], l.bytes[p]));
    }
    (void)to_i64(path, line, "weight update time (ns)", f[11]);
    layers.push_back(std::move(l));
  }
  // About 5 ops per layer and micro-batch on every rank: keep the graph within memory.
  const double ops = 5.0 * n * M * static_cast<double>(layers.size());
  if (ops > static_cast<double>(kMaxOps))
    throw InputError(
        path, 1,
        fmt::format("{} GPUs x {} micro-batches x {} layers make about {:.3g} ops, more than the "
                    "{} rocesim runs",
                    n, M, layers.size(), ops, kMaxOps));
  // Groups: every group of each kind, indexed by kind and number. Rank r is at position p = r mod T of its
  // tensor-parallel block b = r / T; stage s = r / (T·D) (Megatron's order: TP, then DP, then PP).
  TrainingGraph& g = w.graph;
  g.ranks.resize(static_cast<size_t>(n));
  g.rank_source.assign(static_cast<size_t>(n), path);
  // The groups of a kind partition the ranks: a group is known by its kind and first member, and its
  // members are listed once (a rank's lookup is then O(log groups), not O(group size)).
  std::map<std::pair<int, int>, int32_t> known;
  auto group_of = [&](Group kind, int r) {
    const int b = r / T, p = r % T, first = r / (T * D) * D;  // first: the stage's first block
    int size = 0, lead = 0;
    std::function<int(int)> member;
    if (kind == Group::kTp) {
      size = T;
      member = [&](int j) { return b * T + j; };
    } else if (kind == Group::kDp) {
      size = D;
      member = [&](int j) { return (first + j) * T + p; };
    } else if (kind == Group::kEp) {
      size = E;
      member = [&](int i) { return (b / E * E + i) * T + p; };
    } else {
      size = D / E;
      member = [&](int k) { return (first + (b % E) + k * E) * T + p; };
    }
    lead = member(0);
    auto [it, fresh] = known.emplace(std::make_pair(static_cast<int>(kind), lead), 0);
    if (fresh) {
      std::vector<int> m;
      m.reserve(static_cast<size_t>(size));
      for (int j = 0; j < size; ++j) m.push_back(member(j));
      it->second = static_cast<int32_t>(g.groups.size());
      g.groups.push_back(std::move(m));
    }
    return it->second;
  };
  static const char* const kSuffix[3] = {"fwd", "ig", "wg"};
  const int stride = T * D;  // from a rank to the same rank of the next stage
  for (int r = 0; r < n; ++r) {
    std::vector<TrainingOp>& ops = g.ranks[r];
    const int s = r / stride;
    int64_t prev = -1;  // the op the next one waits for
    auto add = [&](TrainingOp op, int64_t after) {
      if (after >= 0) op.after.push_back(static_cast<uint32_t>(after));
      ops.push_back(std::move(op));
      return static_cast<int64_t>(ops.size() - 1);
    };
    auto phase = [&](const Layer& l, size_t index, int p, int mb, int64_t recv) {
      const std::string sfx = M > 1 ? fmt::format(".mb{}", mb) : std::string();
      TrainingOp c;
      c.kind = TrainingOp::Kind::kCompute;
      c.id = index;
      c.name = fmt::format("{}.{}{}", l.name, kSuffix[p], sfx);
      c.duration = l.compute[p];
      if (recv >= 0) c.after.push_back(static_cast<uint32_t>(recv));
      const int64_t comp = add(std::move(c), prev);
      int64_t comm = -1;
      // The weight-gradient comm (data-parallel) runs once per iteration: in the last micro-batch.
      if (!l.comm[p].collective.empty() && l.bytes[p] > 0 && (p != 2 || mb == M - 1)) {
        TrainingOp m;
        m.kind = TrainingOp::Kind::kCollective;
        m.id = index;
        m.name = fmt::format("{}.{}_comm{}", l.name, kSuffix[p], sfx);
        m.collective = l.comm[p].collective;
        m.bytes = l.bytes[p];
        m.group = group_of(l.comm[p].group, r);
        comm = add(std::move(m), comp);
      }
      // Forward and input-gradient comms block; the weight-gradient comm overlaps what follows.
      prev = p == 2 || comm < 0 ? comp : comm;
    };
    // A pipeline transfer: the activation (forward, tag 0) to the next stage, or its gradient (backward,
    // tag 1) to the previous one.
    auto p2p = [&](bool send, bool forward, int peer, int mb) {
      TrainingOp x;
      x.kind = send ? TrainingOp::Kind::kSend : TrainingOp::Kind::kRecv;
      x.id = static_cast<uint64_t>(send ? s : peer / stride);  // the sending stage
      x.name = fmt::format("pp_{}.mb{}", forward ? "fwd" : "bwd", mb);
      x.bytes = w.pp_comm;
      x.peer = peer;
      x.tag = forward ? 0 : 1;
      // A send leaves once the pass before it is done; a receive is posted in advance (the pass after it
      // waits for it).
      return add(std::move(x), send ? prev : -1);
    };
    auto forward = [&](int mb) {
      const int64_t recv = s > 0 ? p2p(false, true, r - stride, mb) : -1;
      for (size_t i = 0; i < layers.size(); ++i) phase(layers[i], i, 0, mb, i == 0 ? recv : -1);
      if (s < P - 1) (void)p2p(true, true, r + stride, mb);
    };
    auto backward = [&](int mb) {
      const int64_t recv = s < P - 1 ? p2p(false, false, r + stride, mb) : -1;
      for (size_t i = layers.size(); i-- > 0;) {
        phase(layers[i], i, 1, mb, i + 1 == layers.size() ? recv : -1);
        phase(layers[i], i, 2, mb, -1);
      }
      if (s > 0) (void)p2p(true, false, r - stride, mb);
    };
    // 1F1B (Megatron's schedule without interleaving): stage s runs min(P - 1 - s, M) forwards, then
    // alternates one forward and one backward, then runs the backwards left.
    const int warmup = std::min(P - 1 - s, M);
    for (int mb = 0; mb < warmup; ++mb) forward(mb);
    for (int i = 0; i < M - warmup; ++i) {
      forward(warmup + i);
      backward(i);
    }
    for (int mb = M - warmup; mb < M; ++mb) backward(mb);
  }
  return w;
}

}  // namespace rocesim
