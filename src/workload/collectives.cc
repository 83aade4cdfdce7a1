#include "workload/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "core/error.h"

namespace rocesim {

namespace {

[[noreturn]] void fail(const std::string& what) { throw InputError("", 0, "collective: " + what); }

// Bytes [S·i/N, S·(i+1)/N) of the buffer: segment i's size.
Bytes segment(Bytes s, int n, int64_t i) { return s * (i + 1) / n - s * i / n; }
// Bytes of segments [first, first + count).
Bytes segments(Bytes s, int n, int64_t first, int64_t count) {
  return s * (first + count) / n - s * first / n;
}
Bytes chunk(Bytes m, int c_count, int c) { return m * (c + 1) / c_count - m * c / c_count; }

int mod(int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// Flows of (rank, step), each a message of `chunks` chunks, indexed (step x N + rank) x C + chunk (the
// flat algorithms; the hierarchical ones add messages with msg()). The edges are kept as well, for PXN's
// relays (pxn_relay), with whether each is a chunk's wait for the previous chunk of its message.
struct Builder {
  struct Edge {
    uint32_t on, flow;
    bool order;  // chunk c waits for chunk c-1 of the same message
  };
  const CollectiveParams& p;
  int n, c;
  FlowDag dag;
  std::vector<Edge> edges;
  explicit Builder(const CollectiveParams& params)
      : p(params), n(static_cast<int>(params.hosts.size())), c(params.chunks) {}
  uint32_t id(int rank, int step, int ch) const {
    return static_cast<uint32_t>((static_cast<int64_t>(step) * n + rank) * c + ch);
  }
  void wait(uint32_t flow, uint32_t on, bool order = false) {
    dag.wait(flow, on);
    edges.push_back({on, flow, order});
  }
  // Adds a message of `m` bytes from rank r to rank `to` in step s, in chunks, each after the previous one;
  // returns its first chunk's index (chunk c is that + c).
  uint32_t msg(int r, int to, Bytes m, int s) {
    uint32_t first = 0;
    for (int ch = 0; ch < c; ++ch) {
      const uint32_t f =
          dag.add(p.hosts[r], p.hosts[to], chunk(m, c, ch), static_cast<uint32_t>(s), p.step_latency);
      if (ch == 0) first = f;
      if (ch > 0) wait(f, f - 1, true);
    }
    return first;
  }
  // Adds rank `r`'s message of step `s` to rank `to`; in chunks, each after the previous one.
  void message(int r, int s, int to, Bytes m) {
    if (msg(r, to, m, s) != id(r, s, 0)) throw std::logic_error("collective: flows added out of order");
  }
  // Chunk ch of (r, s) waits for chunk ch of (r2, s2).
  void waits(int r, int s, int r2, int s2) {
    for (int ch = 0; ch < c; ++ch) wait(id(r, s, ch), id(r2, s2, ch));
  }
  // Messages by first chunk: chunk ch of `m` waits for chunk ch of `on`; all of `m` for all of `on`.
  void chunkwise(uint32_t m, uint32_t on) {
    for (int ch = 0; ch < c; ++ch) wait(m + static_cast<uint32_t>(ch), on + static_cast<uint32_t>(ch));
  }
  void after_all(uint32_t m, uint32_t on) { wait(m, on + static_cast<uint32_t>(c - 1)); }
};

void ring(Builder& b, int steps, int first_phase_step) {
  const int n = b.n;
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < n; ++r)
      b.message(r, s, (r + 1) % n, segment(b.p.bytes, n, mod(r - s - first_phase_step, n)));
  for (int s = 1; s < steps; ++s)
    for (int r = 0; r < n; ++r) b.waits(r, s, mod(r - 1, n), s - 1);
}

void halving_doubling(Builder& b) {
  const int n = b.n;
  const int levels = std::countr_zero(static_cast<unsigned>(n));
  const Bytes s = b.p.bytes;
  std::vector<int> partner_of_step;
  for (int k = 0; k < levels; ++k) {  // recursive halving: distance N/2, N/4, ..., 1
    const int dist = n >> (k + 1);
    for (int r = 0; r < n; ++r) {
      const int partner = r ^ dist;
      // r's range before this step: the aligned N/2^k blocks containing r; it sends the partner's half.
      const int64_t half_base = static_cast<int64_t>(partner) & ~static_cast<int64_t>(dist - 1);
      b.message(r, k, partner, segments(s, n, half_base, dist));
    }
    partner_of_step.push_back(dist);
  }
  for (int k = 0; k < levels; ++k) {  // recursive doubling: distance 1, 2, ..., N/2
    const int dist = 1 << k;
    for (int r = 0; r < n; ++r) {
      const int64_t base = static_cast<int64_t>(r) & ~static_cast<int64_t>(dist - 1);
      b.message(r, levels + k, r ^ dist, segments(s, n, base, dist));
    }
    partner_of_step.push_back(dist);
  }
  // What r sends in step st holds what it received in every earlier step: it waits for its receive of
  // step st-1 and for its own send of st-1 (which waited for the receive before, and so on).
  for (int st = 1; st < 2 * levels; ++st)
    for (int r = 0; r < n; ++r) {
      b.waits(r, st, r ^ partner_of_step[st - 1], st - 1);
      b.waits(r, st, r, st - 1);
    }
}

void alltoall(Builder& b) {
  const int n = b.n;
  for (int k = 1; k < n; ++k)
    for (int r = 0; r < n; ++r) b.message(r, k - 1, (r + k) % n, segment(b.p.bytes, n, (r + k) % n));
  for (int k = 2; k < n; ++k)
    for (int r = 0; r < n; ++r) {
      b.waits(r, k - 1, r, k - 2);                    // its own send of step k-1
      b.waits(r, k - 1, mod(r - (k - 1), n), k - 2);  // what it received in step k-1
    }
}

void broadcast(Builder& b) {
  // Step i: rank i -> i+1, flows indexed as (step i, rank 0): one message per step.
  const int n = b.n, c = b.c;
  for (int i = 0; i + 1 < n; ++i)
    for (int ch = 0; ch < c; ++ch) {
      const uint32_t f = b.dag.add(b.p.hosts[i], b.p.hosts[i + 1], chunk(b.p.bytes, c, ch),
                                   static_cast<uint32_t>(i), b.p.step_latency);
      if (ch > 0) b.wait(f, f - 1, true);
      if (i > 0) b.wait(f, f - static_cast<uint32_t>(c));
    }
}

// Where a node is: its server (-1 - node for a host on no server) and its local GPU index.
struct Where {
  int server = 0, local = 0;
};
class Locator {
 public:
  explicit Locator(const std::vector<std::vector<int>>& servers) : servers_(servers) {
    for (size_t sv = 0; sv < servers.size(); ++sv)
      for (size_t g = 0; g < servers[sv].size(); ++g)
        at_.emplace(servers[sv][g], Where{static_cast<int>(sv), static_cast<int>(g)});
  }
  Where operator()(int node) const {
    if (auto it = at_.find(node); it != at_.end()) return it->second;
    return {-1 - node, 0};
  }
  // GPU `local` of server `server`, or -1.
  int gpu(int server, int local) const {
    if (server < 0 || static_cast<size_t>(local) >= servers_[static_cast<size_t>(server)].size()) return -1;
    return servers_[static_cast<size_t>(server)][static_cast<size_t>(local)];
  }

 private:
  const std::vector<std::vector<int>>& servers_;
  std::unordered_map<int, Where> at_;
};

// The ranks by server (in the order of each server's first rank), each server's by local GPU index.
std::vector<std::vector<int>> by_server(const std::vector<int>& hosts, const Locator& where) {
  std::vector<std::vector<int>> out;
  std::unordered_map<int, size_t> pos;
  for (size_t r = 0; r < hosts.size(); ++r) {
    const int sv = where(hosts[r]).server;
    auto [it, fresh] = pos.emplace(sv, out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(static_cast<int>(r));
  }
  for (auto& ranks : out)
    std::stable_sort(ranks.begin(), ranks.end(),
                     [&](int a, int b) { return where(hosts[a]).local < where(hosts[b]).local; });
  return out;
}

// The hierarchical algorithms' layout: at[m][i] is the rank of local position i on server m.
struct Layout {
  int m = 0, g = 0;
  std::vector<std::vector<int>> at;
};

Layout layout_of(const CollectiveParams& p) {
  const Locator where(p.servers);
  Layout l;
  l.at = by_server(p.hosts, where);
  l.m = static_cast<int>(l.at.size());
  l.g = static_cast<int>(l.at[0].size());
  auto locals = [&](const std::vector<int>& ranks) {
    std::vector<int> v;
    for (int r : ranks) v.push_back(where(p.hosts[r]).local);
    return v;
  };
  const std::vector<int> first = locals(l.at[0]);
  for (const auto& ranks : l.at)
    if (locals(ranks) != first)
      fail(
          fmt::format("{} needs the same GPUs (local indices) on every server, so that rail j joins GPU j "
                      "of each: node {}'s server has local indices [{}], node {}'s [{}]",
                      p.algorithm, p.hosts[l.at[0][0]], fmt::join(first, ", "), p.hosts[ranks[0]],
                      fmt::join(locals(ranks), ", ")));
  return l;
}

void hierarchical_ring(Builder& b, const Layout& l) {
  const int m = l.m, g = l.g;
  const Bytes s = b.p.bytes;
  auto idx = [&](int step, int sv, int i) { return (static_cast<size_t>(step) * m + sv) * g + i; };
  std::vector<uint32_t> rs(static_cast<size_t>(g - 1) * m * g), ar(static_cast<size_t>(2 * (m - 1)) * m * g),
      ag(rs.size());
  const auto& at = l.at;
  for (int st = 0; st + 1 < g; ++st)
    for (int sv = 0; sv < m; ++sv)
      for (int i = 0; i < g; ++i)
        rs[idx(st, sv, i)] = b.msg(at[sv][i], at[sv][(i + 1) % g], segment(s, g, mod(i - st, g)), st);
  const int base = g - 1, inter = 2 * (m - 1);
  for (int k = 0; k < inter; ++k)
    for (int sv = 0; sv < m; ++sv)
      for (int i = 0; i < g; ++i) {
        const Bytes t = segment(s, g, (i + 1) % g);  // what local position i holds after the reduce-scatter
        ar[idx(k, sv, i)] = b.msg(at[sv][i], at[(sv + 1) % m][i], segment(t, m, mod(sv - k, m)), base + k);
      }
  for (int st = 0; st + 1 < g; ++st)
    for (int sv = 0; sv < m; ++sv)
      for (int i = 0; i < g; ++i)
        ag[idx(st, sv, i)] =
            b.msg(at[sv][i], at[sv][(i + 1) % g], segment(s, g, mod(i + 1 - st, g)), base + inter + st);
  for (int sv = 0; sv < m; ++sv)
    for (int i = 0; i < g; ++i) {
      const int prev = mod(i - 1, g), up = mod(sv - 1, m);
      for (int st = 1; st + 1 < g; ++st) b.chunkwise(rs[idx(st, sv, i)], rs[idx(st - 1, sv, prev)]);
      for (int k = 0; k < inter; ++k)
        if (k > 0)
          b.chunkwise(ar[idx(k, sv, i)], ar[idx(k - 1, up, i)]);
        else if (g > 1)
          b.after_all(ar[idx(0, sv, i)], rs[idx(g - 2, sv, prev)]);
      for (int st = 0; st + 1 < g; ++st)
        if (st > 0)
          b.chunkwise(ag[idx(st, sv, i)], ag[idx(st - 1, sv, prev)]);
        else if (m > 1)
          b.after_all(ag[idx(0, sv, i)], ar[idx(inter - 1, up, i)]);
        else
          b.chunkwise(ag[idx(0, sv, i)], rs[idx(g - 2, sv, prev)]);
    }
}

}  // namespace

BinaryTree binary_tree(int m, int tree) {
  BinaryTree t;
  t.parent.assign(static_cast<size_t>(m), -1);
  std::vector<int> p0(static_cast<size_t>(m) + 1, 0);  // by 1-based label, 0: the root
  for (int i = 1; i <= m; ++i) {
    const int b = i & -i;
    if (b == static_cast<int>(std::bit_floor(static_cast<unsigned>(m))) && i == b) continue;  // the root
    p0[static_cast<size_t>(i)] = ((i / b) % 4 == 1 && i + b <= m) ? i + b : i - b;
  }
  // Position q plays tree 0's position phi(q).
  auto phi = [&](int q) { return tree == 0 ? q : (m % 2 == 0 ? m - 1 - q : (q + 1) % m); };
  auto phi_inv = [&](int q) { return tree == 0 ? q : (m % 2 == 0 ? m - 1 - q : (q + m - 1) % m); };
  t.children.assign(static_cast<size_t>(m), {});
  for (int q = 0; q < m; ++q) {
    const int par0 = p0[static_cast<size_t>(phi(q)) + 1];
    if (par0 == 0) {
      t.root = q;
    } else {
      t.parent[static_cast<size_t>(q)] = phi_inv(par0 - 1);
      t.children[static_cast<size_t>(t.parent[static_cast<size_t>(q)])].push_back(q);
    }
  }
  return t;
}

namespace {

// Per position, its height (leaves 0) and depth (the root 0).
void heights(const BinaryTree& t, std::vector<int>& h, std::vector<int>& d) {
  const auto m = t.parent.size();
  h.assign(m, 0);
  d.assign(m, 0);
  std::vector<int> order{t.root};  // breadth first
  for (size_t k = 0; k < order.size(); ++k)
    for (int c : t.children[static_cast<size_t>(order[k])]) {
      d[static_cast<size_t>(c)] = d[static_cast<size_t>(order[k])] + 1;
      order.push_back(c);
    }
  for (size_t k = order.size(); k-- > 0;) {
    const int q = order[k];
    if (t.parent[static_cast<size_t>(q)] >= 0)
      h[static_cast<size_t>(t.parent[static_cast<size_t>(q)])] =
          std::max(h[static_cast<size_t>(t.parent[static_cast<size_t>(q)])], h[static_cast<size_t>(q)] + 1);
  }
}

void tree_allreduce(Builder& b, const Layout& l) {
  const int m = l.m, g = l.g;
  const auto& at = l.at;
  std::vector<int> h, d;
  std::vector<uint32_t> rc(static_cast<size_t>(m * g)), bc(rc.size()), up(static_cast<size_t>(m)),
      down(up.size());
  auto ci = [&](int sv, int q) { return static_cast<size_t>(sv * g + q); };
  for (int t = 0; t < 2; ++t) {
    const BinaryTree tr = binary_tree(m, t);
    heights(tr, h, d);
    const int top = (g - 1) + h[static_cast<size_t>(tr.root)];  // the step at which the root has the sum
    for (int j = 0; j < g; ++j) {
      const Bytes part = segment(b.p.bytes, 2 * g, 2 * j + t);
      auto rank = [&](int sv, int q) { return at[sv][(j + q) % g]; };
      for (int sv = 0; sv < m; ++sv) {
        const auto s = static_cast<size_t>(sv);
        for (int q = g - 1; q >= 1; --q) rc[ci(sv, q)] = b.msg(rank(sv, q), rank(sv, q - 1), part, g - 1 - q);
        if (tr.parent[s] >= 0) {
          up[s] = b.msg(rank(sv, 0), rank(tr.parent[s], 0), part, g - 1 + h[s]);
          down[s] = b.msg(rank(tr.parent[s], 0), rank(sv, 0), part, top + d[s] - 1);
        }
        for (int q = 1; q < g; ++q)
          bc[ci(sv, q)] = b.msg(rank(sv, q - 1), rank(sv, q), part, top + d[s] + q - 1);
      }
      // What the root's sum waits for (chunk by chunk): its chain and its children.
      auto after_sum = [&](uint32_t msg) {
        if (g > 1) b.chunkwise(msg, rc[ci(tr.root, 1)]);
        for (int c : tr.children[static_cast<size_t>(tr.root)]) b.chunkwise(msg, up[static_cast<size_t>(c)]);
      };
      for (int sv = 0; sv < m; ++sv) {
        const auto s = static_cast<size_t>(sv);
        for (int q = 1; q + 1 < g; ++q) b.chunkwise(rc[ci(sv, q)], rc[ci(sv, q + 1)]);
        if (tr.parent[s] >= 0) {
          if (g > 1) b.chunkwise(up[s], rc[ci(sv, 1)]);
          for (int c : tr.children[s]) b.chunkwise(up[s], up[static_cast<size_t>(c)]);
          if (tr.parent[s] == tr.root)
            after_sum(down[s]);
          else
            b.chunkwise(down[s], down[static_cast<size_t>(tr.parent[s])]);
        }
        if (g > 1) {
          if (sv == tr.root)
            after_sum(bc[ci(sv, 1)]);
          else
            b.chunkwise(bc[ci(sv, 1)], down[s]);
        }
        for (int q = 2; q < g; ++q) b.chunkwise(bc[ci(sv, q)], bc[ci(sv, q - 1)]);
      }
    }
  }
}

// PXN: the built graph again, each flow between GPUs of different servers and rails relayed by the
// sender's server's GPU of the receiver's local index (header).
FlowDag pxn_relay(const Builder& b) {
  const Locator where(b.p.servers);
  const FlowDag& raw = b.dag;
  FlowDag out;
  std::vector<uint32_t> first(raw.size()), last(raw.size());
  for (uint32_t i = 0; i < raw.size(); ++i) {
    const FlowDag::Flow& f = raw.flow(i);
    const Where ws = where(f.src), wd = where(f.dst);
    if (ws.server != wd.server && ws.local / b.p.gpus_per_rail != wd.local / b.p.gpus_per_rail) {
      const int relay = where.gpu(ws.server, wd.local);
      if (relay < 0)
        fail(fmt::format(
            "pxn: node {} sends to node {} (local GPU {}) on another server, but {} has no GPU {} "
            "to relay through",
            f.src, f.dst, wd.local, ws.server < 0 ? "it is on no GPU server and" : "its server", wd.local));
      first[i] = out.add(f.src, relay, f.bytes, f.step, f.delay, f.not_before);
      last[i] = out.add(relay, f.dst, f.bytes, f.step, f.delay, f.not_before);
      out.wait(last[i], first[i]);
    } else {
      first[i] = last[i] = out.add(f.src, f.dst, f.bytes, f.step, f.delay, f.not_before);
    }
  }
  for (const Builder::Edge& e : b.edges)
    if (e.order) {
      out.wait(first[e.flow], first[e.on]);
      out.wait(last[e.flow], last[e.on]);
    } else {
      out.wait(first[e.flow], last[e.on]);
    }
  return out;
}

bool is_hierarchical(const std::string& a) {
  return a == "hierarchical_ring_allreduce" || a == "tree_allreduce";
}

int steps_of(const std::string& a, int n) {
  if (a == "ring_allreduce") return 2 * (n - 1);
  if (a == "halving_doubling_allreduce") return 2 * std::countr_zero(static_cast<unsigned>(n));
  return n - 1;  // reduce_scatter, allgather, alltoall, broadcast
}

// The flat algorithms' partner of rank r in step s and its message (PXN's closed form).
std::pair<int, Bytes> flat_step(const CollectiveParams& p, int n, int s, int r) {
  const std::string& a = p.algorithm;
  if (a == "alltoall") return {(r + s + 1) % n, segment(p.bytes, n, (r + s + 1) % n)};
  if (a == "broadcast") return {r == s ? s + 1 : -1, p.bytes / p.chunks};
  if (a == "halving_doubling_allreduce") {
    const int levels = std::countr_zero(static_cast<unsigned>(n));
    const int dist = s < levels ? n >> (s + 1) : 1 << (s - levels);
    return {r ^ dist, p.bytes * dist / n};
  }
  return {(r + 1) % n, segment(p.bytes, n, 0)};  // the rings
}

void check(const CollectiveParams& p) {
  const auto& names = collective_names();
  if (std::find(names.begin(), names.end(), p.algorithm) == names.end())
    fail(fmt::format("unknown collective '{}'; expected one of {}", p.algorithm, fmt::join(names, ", ")));
  const int n = static_cast<int>(p.hosts.size());
  if (n < 2) fail("needs at least 2 hosts");
  std::vector<int> sorted = p.hosts;
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    fail(fmt::format("node {} listed twice in the hosts", *d));
  if (p.chunks < 1) fail("chunks must be >= 1");
  if (p.step_latency < Time::zero()) fail("the step latency must be >= 0");
  const bool tree = p.algorithm == "tree_allreduce";
  const int64_t parts = p.algorithm == "broadcast" ? p.chunks
                        : tree ? int64_t{2} * static_cast<int64_t>(layout_of(p).g) * p.chunks
                               : static_cast<int64_t>(n) * p.chunks;
  if (p.bytes < parts)
    fail(fmt::format("bytes = {} is less than one byte per flow ({} {}); raise bytes or lower chunks",
                     p.bytes, parts,
                     p.algorithm == "broadcast" ? "chunks"
                     : tree                     ? "2 x ranks per server x chunks"
                                                : "ranks x chunks"));
  if (p.algorithm == "halving_doubling_allreduce" && !std::has_single_bit(static_cast<unsigned>(n)))
    fail(
        fmt::format("halving_doubling_allreduce needs a power-of-two number of hosts, got {}; use "
                    "ring_allreduce or {} hosts",
                    n, std::bit_floor(static_cast<unsigned>(n))));
  if (p.pxn && p.servers.empty()) fail("pxn needs GPU servers (a topology whose GPUs share an NVSwitch)");
}

int64_t base_flow_count(const CollectiveParams& p) {
  const int n = static_cast<int>(p.hosts.size());
  const std::string& a = p.algorithm;
  if (a == "hierarchical_ring_allreduce") {
    const Layout l = layout_of(p);
    return int64_t{2} * (l.g - 1 + l.m - 1) * n * p.chunks;
  }
  if (a == "tree_allreduce") return int64_t{4} * layout_of(p).g * (n - 1) * p.chunks;
  return static_cast<int64_t>(steps_of(a, n)) * (a == "broadcast" ? 1 : n) * p.chunks;
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names{
      "ring_allreduce", "halving_doubling_allreduce",  "reduce_scatter", "allgather", "alltoall",
      "broadcast",      "hierarchical_ring_allreduce", "tree_allreduce"};
  return names;
}

const std::vector<std::string>& placement_names() {
  static const std::vector<std::string> names{"listed", "packed", "spread"};
  return names;
}

std::vector<int> place_ranks(const std::vector<int>& hosts, const std::vector<std::vector<int>>& servers,
                             const std::string& placement) {
  const auto& names = placement_names();
  if (std::find(names.begin(), names.end(), placement) == names.end())
    throw InputError("", 0,
                     fmt::format("placement: unknown placement '{}'; expected one of {}", placement,
                                 fmt::join(names, ", ")));
  if (placement == "listed") return hosts;
  const Locator where(servers);
  const auto groups = by_server(hosts, where);
  std::vector<int> out;
  if (placement == "packed") {
    for (const auto& ranks : groups)
      for (int r : ranks) out.push_back(hosts[static_cast<size_t>(r)]);
    return out;
  }
  for (const auto& ranks : groups)
    if (ranks.size() != groups[0].size())
      throw InputError(
          "", 0,
          fmt::format("placement: spread needs as many hosts on every server: node {}'s server has "
                      "{}, node {}'s {}",
                      hosts[static_cast<size_t>(groups[0][0])], groups[0].size(),
                      hosts[static_cast<size_t>(ranks[0])], ranks.size()));
  for (size_t k = 0; k < groups[0].size(); ++k)
    for (const auto& ranks : groups) out.push_back(hosts[static_cast<size_t>(ranks[k])]);
  return out;
}

FlowDag build_collective(const CollectiveParams& p) {
  check(p);
  const int64_t flows = base_flow_count(p) * (p.pxn ? 2 : 1);
  if (flows > int64_t{1} << 31)
    fail(fmt::format("{} flows per iteration is more than this simulator holds (2^31); lower chunks", flows));
  const int n = static_cast<int>(p.hosts.size());
  Builder b(p);
  const std::string& a = p.algorithm;
  if (a == "ring_allreduce")
    ring(b, 2 * (n - 1), 0);
  else if (a == "reduce_scatter")
    ring(b, n - 1, 0);
  else if (a == "allgather")
    ring(b, n - 1, n - 1);
  else if (a == "halving_doubling_allreduce")
    halving_doubling(b);
  else if (a == "alltoall")
    alltoall(b);
  else if (a == "broadcast")
    broadcast(b);
  else if (a == "hierarchical_ring_allreduce")
    hierarchical_ring(b, layout_of(p));
  else
    tree_allreduce(b, layout_of(p));
  FlowDag out = p.pxn ? pxn_relay(b) : std::move(b.dag);
  if (out.seal() >= 0) throw std::logic_error("collective: the built graph has a cycle");
  return out;
}

int64_t collective_flow_count(const CollectiveParams& p) {
  check(p);
  return base_flow_count(p) * (p.pxn ? 2 : 1);
}

int64_t collective_flow_count(const std::string& a, int n, int chunks) {
  if (is_hierarchical(a)) throw std::logic_error("collective_flow_count: " + a + " needs the servers");
  return static_cast<int64_t>(steps_of(a, n)) * (a == "broadcast" ? 1 : n) * chunks;
}

double bus_bandwidth_factor(const std::string& a, int n) {
  const double f = static_cast<double>(n - 1) / n;
  if (a == "ring_allreduce" || a == "halving_doubling_allreduce" || is_hierarchical(a)) return 2 * f;
  if (a == "broadcast") return 1;
  return f;
}

Time collective_ideal_time(const CollectiveParams& p, Rate link, Rate intra) {
  if (!(intra.bps > 0)) intra = link;
  const int n = static_cast<int>(p.hosts.size());
  const double s_ps = static_cast<double>(p.bytes) * 8e12 / link.bps;    // S/B
  const double nv_ps = static_cast<double>(p.bytes) * 8e12 / intra.bps;  // S/B_nv
  const double l_ps = static_cast<double>(p.step_latency.ps);
  const std::string& a = p.algorithm;
  double t = 0;
  if (a == "hierarchical_ring_allreduce") {
    const Layout l = layout_of(p);
    t = 2.0 * (l.g - 1) * (nv_ps / l.g + l_ps) + 2.0 * (l.m - 1) * (s_ps / (l.g * l.m) + l_ps);
  } else if (a == "tree_allreduce") {
    const Layout l = layout_of(p);
    const double c = p.chunks, part = 1.0 / (2.0 * l.g);  // D / S
    double nic = 0;                                       // the busiest NIC's bytes one way, / S
    double climb = 0;  // the slowest way from the root to a server and back, for one chunk
    std::vector<double> out(static_cast<size_t>(l.m), 0), in(out.size(), 0);
    for (int tr = 0; tr < 2; ++tr) {
      const BinaryTree bt = binary_tree(l.m, tr);
      std::vector<int> h, d;
      heights(bt, h, d);
      // Per server, its parts' hops from the root: each at its share of the inner server's NIC (that many
      // children), in the order of depth.
      std::vector<int> order(static_cast<size_t>(l.m));
      for (int q = 0; q < l.m; ++q) order[static_cast<size_t>(q)] = q;
      std::sort(order.begin(), order.end(),
                [&](int x, int y) { return d[static_cast<size_t>(x)] < d[static_cast<size_t>(y)]; });
      std::vector<double> shares(order.size(), 0);
      for (int q : order) {
        const auto s = static_cast<size_t>(q);
        const int up = bt.parent[s];
        if (up >= 0)
          shares[s] = shares[static_cast<size_t>(up)] +
                      static_cast<double>(bt.children[static_cast<size_t>(up)].size());
        climb = std::max(climb, 2.0 * (shares[s] * part * s_ps / c + d[s] * l_ps));
        const double kids = static_cast<double>(bt.children[s].size());
        const double has_parent = up >= 0 ? 1 : 0;
        out[s] += (has_parent + kids) * part;
        in[s] += (kids + has_parent) * part;
      }
    }
    for (int q = 0; q < l.m; ++q)
      nic = std::max({nic, out[static_cast<size_t>(q)], in[static_cast<size_t>(q)]});
    const double busy = std::max(nic * s_ps, 4.0 * (l.g - 1) * part * nv_ps);
    const double fill = 2.0 * (l.g - 1) * (part * nv_ps / c + l_ps) + climb;
    t = busy * (c - 1) / c + fill;
  } else if (a == "ring_allreduce") {
    t = 2.0 * (n - 1) * (s_ps / n + l_ps);
  } else if (a == "halving_doubling_allreduce") {
    t = 2.0 * (n - 1) / n * s_ps + 2.0 * std::countr_zero(static_cast<unsigned>(n)) * l_ps;
  } else if (a == "broadcast") {
    t = (n - 1.0 + p.chunks - 1.0) * (s_ps / p.chunks + l_ps);
  } else {
    t = (n - 1.0) * (s_ps / n + l_ps);
  }
  if (p.pxn && !is_hierarchical(a)) {  // each step that relays a flow: its NVLink hop first
    const Locator where(p.servers);
    for (int st = 0; st < steps_of(a, n); ++st) {
      Bytes relayed = 0;
      for (int r = 0; r < n; ++r) {
        const auto [to, bytes] = flat_step(p, n, st, r);
        if (to < 0) continue;
        const Where ws = where(p.hosts[static_cast<size_t>(r)]), wd = where(p.hosts[static_cast<size_t>(to)]);
        if (ws.server != wd.server && ws.local / p.gpus_per_rail != wd.local / p.gpus_per_rail)
          relayed = std::max(relayed, bytes);
      }
      if (relayed > 0) t += static_cast<double>(relayed) * 8e12 / intra.bps + l_ps;
    }
  }
  return Time::from_ps(static_cast<int64_t>(t + 0.5));
}

}  // namespace rocesim
