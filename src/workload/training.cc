#include "workload/training.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "workload/collectives.h"

namespace rocesim {

namespace {

using Kind = TrainingOp::Kind;

constexpr int64_t kMaxTrainingNodes = int64_t{1} << 26;

struct OpRef {
  int32_t rank = -1;
  uint32_t op = 0;
};

// The k-th collective of a group: its members' ops.
struct Instance {
  int32_t group = -1;
  OpRef first;
  uint32_t members = 0;
};

struct Compiler {
  const TrainingGraph& g;
  const TrainingOptions& o;
  CompiledTraining out;
  std::vector<std::vector<uint32_t>> entry, exit;  // per rank and op: its node in the graph
  std::vector<OpRef> owner;                        // per node: an op it stands for (for messages)

  Compiler(const TrainingGraph& graph, const TrainingOptions& opt) : g(graph), o(opt) {}

  const TrainingOp& op(OpRef r) const { return g.ranks[r.rank][r.op]; }
  std::string where(OpRef r) const {
    const TrainingOp& x = op(r);
    return x.name.empty() ? fmt::format("node {}", x.id) : fmt::format("node {} ('{}')", x.id, x.name);
  }
  [[noreturn]] void fail(OpRef r, const std::string& what) const {
    throw InputError(g.rank_source.at(r.rank), 0, fmt::format("{}: {}", where(r), what));
  }
  std::string label(OpRef r) const { return fmt::format("{}:{}", op(r).id, op(r).name); }

  uint32_t node(uint32_t index, OpRef r) {
    if (owner.size() <= index) owner.resize(index + 1);
    owner[index] = r;
    return index;
  }

  void set(OpRef r, uint32_t in, uint32_t out_node) {
    entry[r.rank][r.op] = in;
    exit[r.rank][r.op] = out_node;
  }

  static Rate slowest_of(const std::vector<Rate>& rates, const std::vector<int>& hosts) {
    Rate b{0};
    for (int h : hosts)
      if (static_cast<size_t>(h) < rates.size() && rates[h].bps > 0 && (b.bps == 0 || rates[h] < b))
        b = rates[h];
    return b;
  }
  Rate slowest(const std::vector<int>& hosts) const { return slowest_of(o.link, hosts); }

  // Whether every host is a GPU of one server.
  bool one_server(const std::vector<int>& hosts) const {
    for (const std::vector<int>& server : o.servers)
      if (std::find(server.begin(), server.end(), hosts[0]) != server.end())
        return std::all_of(hosts.begin(), hosts.end(),
                           [&](int h) { return std::find(server.begin(), server.end(), h) != server.end(); });
    return false;
  }

  // A collective instance's parameters (bytes at least one per flow).
  CollectiveParams params(const TrainingOp& x, const std::vector<int>& ranks) const {
    CollectiveParams p;
    p.algorithm = x.collective == "allreduce" ? o.allreduce : x.collective;
    for (int r : ranks) p.hosts.push_back(o.hosts[r]);
    const int64_t n = static_cast<int64_t>(ranks.size());
    const int64_t parts = p.algorithm == "broadcast" ? o.chunks : n * o.chunks;
    p.bytes = std::max<Bytes>(x.bytes, parts);  // at least one byte per flow
    p.chunks = o.chunks;
    p.step_latency = o.step_latency;
    p.servers = o.servers;
    return p;
  }

  // A collective instance: entry timer, the decomposition's flows, exit timer.
  void collective(const Instance& in, std::vector<OpRef>& members) {
    const TrainingOp& x = op(in.first);
    const std::vector<int>& ranks = g.groups[in.group];
    if (ranks.size() < 2 || x.collective == "barrier" || x.bytes == 0) {
      const uint32_t t = node(out.dag.add_timer(Time::zero(), 0), in.first);
      for (OpRef m : members) set(m, t, t);
      return;
    }
    // The decomposition computes S·(i + 1) for segments i < N: keep it within 64 bits.
    if (x.bytes > (int64_t{1} << 62) / static_cast<int64_t>(ranks.size()))
      fail(in.first, fmt::format("a {} of {} bytes over {} ranks is more than rocesim computes with (bytes x "
                                 "ranks < 2^62)",
                                 x.collective, x.bytes, ranks.size()));
    const CollectiveParams p = params(x, ranks);
    const int64_t n = static_cast<int64_t>(ranks.size());
    FlowDag sub;
    try {
      sub = build_collective(p);
    } catch (const InputError& e) {
      fail(in.first, e.what());
    }
    const auto step = static_cast<uint32_t>(out.spans.size());
    const uint32_t coll = out.dag.add_collective(label(in.first));  // == step
    DagSpan span;
    span.kind = p.algorithm;
    span.ranks = static_cast<int>(n);
    span.bytes_per_rank = p.bytes;
    span.bus_factor = bus_bandwidth_factor(p.algorithm, static_cast<int>(n));
    // B is the NIC's rate, or the NVLink's when every rank is on one server (as for a collective table).
    const Rate nvlink = slowest_of(o.nvlink, p.hosts);
    const Rate link = one_server(p.hosts) && nvlink.bps > 0 ? nvlink : slowest(p.hosts);
    if (link.bps > 0) span.ideal = collective_ideal_time(p, link, nvlink);
    out.spans.push_back(std::move(span));
    FlowDag& d = out.dag;
    const uint32_t e = node(d.add_timer(Time::zero(), 0), in.first);
    const auto base = static_cast<uint32_t>(d.size());
    for (uint32_t i = 0; i < sub.size(); ++i) {
      const FlowDag::Flow& f = sub.flow(i);
      d.set_collective(node(d.add(f.src, f.dst, f.bytes, step, f.delay), in.first), coll);
    }
    const uint32_t x_end = node(d.add_timer(Time::zero(), 0), in.first);
    for (uint32_t i = 0; i < sub.size(); ++i) {
      auto [b, end] = sub.children(i);
      for (const uint32_t* c = b; c != end; ++c) d.wait(base + *c, base + i);
      if (sub.flow(i).waits == 0) d.wait(base + i, e);
      if (b == end) d.wait(x_end, base + i);
    }
    for (OpRef m : members) set(m, e, x_end);
  }

  void compile() {
    const size_t nr = g.ranks.size();
    if (o.hosts.size() < nr)
      throw InputError(g.rank_source.empty() ? "" : g.rank_source[0], 0,
                       fmt::format("{} ranks but only {} hosts to run them on", nr, o.hosts.size()));
    entry.resize(nr);
    exit.resize(nr);
    for (size_t r = 0; r < nr; ++r) {
      entry[r].assign(g.ranks[r].size(), UINT32_MAX);
      exit[r].assign(g.ranks[r].size(), UINT32_MAX);
    }
    // Groups: members distinct and within the ranks; each rank's position in each group.
    std::vector<std::unordered_map<int32_t, int>> position(nr);
    for (size_t gi = 0; gi < g.groups.size(); ++gi)
      for (size_t k = 0; k < g.groups[gi].size(); ++k) {
        const int r = g.groups[gi][k];
        if (r < 0 || static_cast<size_t>(r) >= nr)
          throw InputError(g.rank_source.empty() ? "" : g.rank_source[0], 0,
                           fmt::format("group {} names rank {}, but there are {} ranks", gi, r, nr));
        if (!position[r].emplace(static_cast<int32_t>(gi), static_cast<int>(k)).second)
          throw InputError(g.rank_source[r], 0, fmt::format("group {} lists rank {} twice", gi, r));
      }
    // Match collectives (k-th on a group with the k-th) and sends with receives, in each rank's op order.
    std::vector<Instance> instances;
    std::vector<std::vector<OpRef>> members;
    std::unordered_map<uint64_t, uint32_t> instance_of;  // group << 32 | k
    std::vector<std::unordered_map<int32_t, uint32_t>> count(nr);
    struct Queue {
      std::vector<OpRef> sends, recvs;
    };
    std::unordered_map<std::string, Queue> p2p;
    std::vector<std::string> p2p_order;
    for (size_t r = 0; r < nr; ++r)
      for (uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        const OpRef ref{static_cast<int32_t>(r), i};
        const TrainingOp& x = g.ranks[r][i];
        for (uint32_t a : x.after)
          if (a >= g.ranks[r].size()) fail(ref, fmt::format("waits for op {}, which does not exist", a));
        if (x.kind == Kind::kCollective) {
          if (x.group < 0 || static_cast<size_t>(x.group) >= g.groups.size())
            fail(ref, fmt::format("names process group {}, which is not defined", x.group));
          if (!position[r].count(x.group))
            fail(ref, fmt::format("rank {} is not a member of its process group {} ({})", r, x.group,
                                  fmt::join(g.groups[x.group], ",")));
          const uint32_t k = count[r][x.group]++;
          const uint64_t key = static_cast<uint64_t>(x.group) << 32 | k;
          auto [it, fresh] = instance_of.emplace(key, static_cast<uint32_t>(instances.size()));
          if (fresh) {
            instances.push_back({x.group, ref, 0});
            members.emplace_back();
          }
          Instance& in = instances[it->second];
          const TrainingOp& y = op(in.first);
          if (y.collective != x.collective || y.bytes != x.bytes)
            fail(ref,
                 fmt::format("is collective {} of its group on rank {}, a {} of {} bytes, but on rank {} "
                             "({} of {}) it is a {} of {} bytes; every member must make the same "
                             "collectives in the same order",
                             k, r, x.collective, x.bytes, in.first.rank, g.rank_source[in.first.rank],
                             where(in.first), y.collective, y.bytes));
          ++in.members;
          members[it->second].push_back(ref);
        } else if (x.kind == Kind::kSend || x.kind == Kind::kRecv) {
          if (x.peer < 0 || static_cast<size_t>(x.peer) >= nr || static_cast<size_t>(x.peer) == r)
            fail(ref, fmt::format("{} rank {} is not another of the {} ranks",
                                  x.kind == Kind::kSend ? "sends to" : "receives from", x.peer, nr));
          const bool send = x.kind == Kind::kSend;
          const std::string key =
              fmt::format("{}>{}#{}", send ? r : static_cast<size_t>(x.peer), send ? x.peer : r, x.tag);
          auto [it, fresh] = p2p.try_emplace(key);
          if (fresh) p2p_order.push_back(key);
          (send ? it->second.sends : it->second.recvs).push_back(ref);
        }
      }
    for (size_t k = 0; k < instances.size(); ++k) {
      const Instance& in = instances[k];
      const auto& ranks = g.groups[in.group];
      if (in.members == ranks.size()) continue;
      for (int r : ranks) {
        bool has = false;
        for (OpRef m : members[k]) has |= m.rank == r;
        if (!has)
          fail(in.first, fmt::format("rank {} ({}) makes fewer collectives on process group {} ({}) than "
                                     "rank {}: no op of it matches this one",
                                     r, g.rank_source[r], in.group, fmt::join(ranks, ","), in.first.rank));
      }
    }
    // The graph's size first: a job too large to hold is refused before it is built.
    int64_t nodes = 0;
    for (size_t r = 0; r < nr; ++r) nodes += static_cast<int64_t>(g.ranks[r].size());
    for (const Instance& in : instances) {
      const TrainingOp& x = op(in.first);
      const int n = static_cast<int>(g.groups[in.group].size());
      if (n >= 2 && x.collective != "barrier" && x.bytes > 0) {
        const std::string a = x.collective == "allreduce" ? o.allreduce : x.collective;
        if (a == "hierarchical_ring_allreduce" || a == "tree_allreduce") {
          try {
            nodes += collective_flow_count(params(x, g.groups[in.group]));
          } catch (const InputError& e) {
            fail(in.first, e.what());
          }
        } else {
          nodes += collective_flow_count(a, n, o.chunks);
        }
      }
      if (nodes > kMaxTrainingNodes)
        fail(in.first, fmt::format("the job's graph has more than {} flows and timers per iteration (2^26) "
                                   "by this collective; rocesim does not build it",
                                   kMaxTrainingNodes));
    }
    if (nodes > kMaxTrainingNodes)
      throw InputError(g.rank_source[0], 0,
                       fmt::format("the job's graph has {} flows and timers per iteration, more than {} "
                                   "(2^26); rocesim does not build it",
                                   nodes, kMaxTrainingNodes));
    // The graph: collectives, then point-to-point flows, then the other ops.
    for (size_t k = 0; k < instances.size(); ++k) collective(instances[k], members[k]);
    for (const std::string& key : p2p_order) {
      const Queue& q = p2p[key];
      const size_t n = std::min(q.sends.size(), q.recvs.size());
      if (q.sends.size() != q.recvs.size()) {
        const bool more_sends = q.sends.size() > q.recvs.size();
        const OpRef extra = more_sends ? q.sends[n] : q.recvs[n];
        fail(extra,
             fmt::format("{} (rank {} to rank {}, tag {}) has no matching {}", more_sends ? "send" : "recv",
                         more_sends ? extra.rank : op(extra).peer, more_sends ? op(extra).peer : extra.rank,
                         op(extra).tag, more_sends ? "recv on the receiver" : "send on the sender"));
      }
      for (size_t i = 0; i < n; ++i) {
        const TrainingOp& s = op(q.sends[i]);
        const TrainingOp& rv = op(q.recvs[i]);
        if (s.bytes != rv.bytes)
          fail(q.recvs[i], fmt::format("receives {} bytes but the matching send ({} of {}) sends {}",
                                       rv.bytes, where(q.sends[i]), g.rank_source[q.sends[i].rank], s.bytes));
        const auto step = static_cast<uint32_t>(out.spans.size());
        const int src = o.hosts[q.sends[i].rank], dst = o.hosts[q.recvs[i].rank];
        const Bytes bytes = std::max<Bytes>(s.bytes, 1);
        const uint32_t coll = out.dag.add_collective(label(q.sends[i]));  // == step
        DagSpan span;
        span.kind = "sendrecv";
        span.ranks = 2;
        span.bytes_per_rank = bytes;
        span.bus_factor = 1;
        const Rate link = slowest({src, dst});
        if (link.bps > 0) span.ideal = tx_time(bytes, link);
        out.spans.push_back(std::move(span));
        const uint32_t f = node(out.dag.add(src, dst, bytes, step, Time::zero()), q.sends[i]);
        out.dag.set_collective(f, coll);
        set(q.sends[i], f, f);
        set(q.recvs[i], f, f);
      }
    }
    for (size_t r = 0; r < nr; ++r)
      for (uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        const TrainingOp& x = g.ranks[r][i];
        if (x.kind != Kind::kCompute && x.kind != Kind::kNoop) continue;
        const Time d = x.kind == Kind::kCompute ? x.duration : Time::zero();
        if (x.kind == Kind::kCompute) ++out.compute_ops;
        const uint32_t t =
            node(out.dag.add_timer(d, 0, Time::zero(), o.hosts[r]), {static_cast<int32_t>(r), i});
        set({static_cast<int32_t>(r), i}, t, t);
      }
    for (size_t r = 0; r < nr; ++r)
      for (uint32_t i = 0; i < g.ranks[r].size(); ++i)
        for (uint32_t a : g.ranks[r][i].after) out.dag.wait(entry[r][i], exit[r][a]);
    const int64_t cyc = out.dag.seal();
    if (cyc >= 0)
      fail(owner.at(static_cast<size_t>(cyc)),
           "its dependencies form a cycle (through the ops of the ranks it is matched with)");
  }
};

}  // namespace

CompiledTraining compile_training(const TrainingGraph& g, const TrainingOptions& o) {
  Compiler c(g, o);
  c.compile();
  return std::move(c.out);
}

}  // namespace rocesim
