#include "workload/simai.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace rocesim {

namespace {

enum class Group { kTp, kDp, kEp, kDpEp };

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
  static const std::vector<std::pair<std::string, std::string>> bases{{"ALLREDUCE", "allreduce"},
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
      fmt::format("{}: unknown comm type '{}'; expected NONE or ALLREDUCE, ALLGATHER, REDUCESCATTER "
                  "or ALLTOALL, optionally with _TP, _DP, _EP or _DP_EP",
                  field, v));
}

}  // namespace

SimaiWorkload read_simai_workload(const std::string& path, double compute_scale) {
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
    auto need = [&](const std::string& key, bool required, int def) {
      auto it = kv.find(key);
      if (it == kv.end()) {
        if (required) throw InputError(path, 1, fmt::format("the header needs '{} <number>'", key));
        return def;
      }
      return to_int(path, 1, key, it->second, 1, 1 << 24);
    };
    w.tp = need("model_parallel_NPU_group:", true, 1);
    w.all_gpus = need("all_gpus:", true, 0);
    w.ep = need("ep:", false, 1);
    w.pp = need("pp:", false, 1);
  }
  if (w.all_gpus % w.tp != 0)
    throw InputError(
        path, 1,
        fmt::format("all_gpus = {} is not a multiple of model_parallel_NPU_group = {}", w.all_gpus, w.tp));
  const int n = w.all_gpus, T = w.tp, D = n / T, E = w.ep;
  if (D % E != 0)
    throw InputError(path, 1,
                     fmt::format("ep = {} does not divide the data-parallel size all_gpus / "
                                 "model_parallel_NPU_group = {}",
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
    }
    (void)to_i64(path, line, "weight update time (ns)", f[11]);
    layers.push_back(std::move(l));
  }
  // Groups: every group of each kind, indexed by kind and number.
  TrainingGraph& g = w.graph;
  g.ranks.resize(static_cast<size_t>(n));
  g.rank_source.assign(static_cast<size_t>(n), path);
  std::map<std::pair<int, std::vector<int>>, int32_t> known;
  auto group_of = [&](Group kind, int r) {
    const int b = r / T, p = r % T;
    std::vector<int> m;
    if (kind == Group::kTp)
      for (int j = 0; j < T; ++j) m.push_back(b * T + j);
    else if (kind == Group::kDp)
      for (int j = 0; j < D; ++j) m.push_back(p + j * T);
    else if (kind == Group::kEp)
      for (int i = 0; i < E; ++i) m.push_back((b / E * E + i) * T + p);
    else
      for (int k = 0; k < D / E; ++k) m.push_back(((b % E) + k * E) * T + p);
    auto [it, fresh] = known.emplace(std::make_pair(static_cast<int>(kind), m), 0);
    if (fresh) {
      it->second = static_cast<int32_t>(g.groups.size());
      g.groups.push_back(std::move(m));
    }
    return it->second;
  };
  static const char* const kSuffix[3] = {"fwd", "ig", "wg"};
  for (int r = 0; r < n; ++r) {
    std::vector<TrainingOp>& ops = g.ranks[r];
    int64_t prev = -1;  // the op the next one waits for
    auto add = [&](TrainingOp op, int64_t after) {
      if (after >= 0) op.after.push_back(static_cast<uint32_t>(after));
      ops.push_back(std::move(op));
      return static_cast<int64_t>(ops.size() - 1);
    };
    auto phase = [&](const Layer& l, size_t index, int p) {
      TrainingOp c;
      c.kind = TrainingOp::Kind::kCompute;
      c.id = index;
      c.name = fmt::format("{}.{}", l.name, kSuffix[p]);
      c.duration = l.compute[p];
      const int64_t comp = add(std::move(c), prev);
      int64_t comm = -1;
      if (!l.comm[p].collective.empty() && l.bytes[p] > 0) {
        TrainingOp m;
        m.kind = TrainingOp::Kind::kCollective;
        m.id = index;
        m.name = fmt::format("{}.{}_comm", l.name, kSuffix[p]);
        m.collective = l.comm[p].collective;
        m.bytes = l.bytes[p];
        m.group = group_of(l.comm[p].group, r);
        comm = add(std::move(m), comp);
      }
      // Forward and input-gradient comms block; the weight-gradient comm overlaps what follows.
      prev = p == 2 || comm < 0 ? comp : comm;
    };
    for (size_t i = 0; i < layers.size(); ++i) phase(layers[i], i, 0);
    for (size_t i = layers.size(); i-- > 0;) {
      phase(layers[i], i, 1);
      phase(layers[i], i, 2);
    }
  }
  return w;
}

}  // namespace rocesim
