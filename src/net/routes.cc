#include "net/routes.h"

#include <algorithm>

#include "net/node.h"

namespace rocesim {

uint32_t RouteTable::intern(const std::vector<uint16_t>& ports, SetIndex& index) {
  const auto [it, added] = index.try_emplace(ports, static_cast<uint32_t>(sets_.size()));
  if (added) {
    sets_.emplace_back(static_cast<uint32_t>(ports_.size()), static_cast<uint32_t>(ports.size()));
    ports_.insert(ports_.end(), ports.begin(), ports.end());
  }
  return it->second;
}

std::vector<uint32_t> RouteTable::attachments(const TopoSpec& topo) {
  // Every host's links (a node's ports are its links in topo.links order) must lead to one switch.
  std::vector<uint32_t> attach(static_cast<size_t>(topo.num_nodes), kNone);
  for (const LinkSpec& l : topo.links)
    for (auto [h, peer] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (topo.is_switch[h]) continue;
      if (!topo.is_switch[peer] || (attach[h] != kNone && attach[h] != static_cast<uint32_t>(peer)))
        return {};
      attach[h] = static_cast<uint32_t>(peer);
    }
  return attach;
}

void RouteTable::build(const std::vector<Node*>& nodes, const TopoSpec& topo,
                       const std::function<void(double)>& progress) {
  const int n = static_cast<int>(nodes.size());
  const std::vector<bool>& is_switch = topo.is_switch;
  std::vector<int> switches;
  for (int i = 0; i < n; ++i)
    if (is_switch[i]) switches.push_back(i);

  // The compact form needs every host with ports to reach exactly one switch, and nothing else.
  const std::vector<uint32_t> attach = attachments(topo);
  compact_ = !attach.empty();
  pods_ = false;
  inner_at_ = 0;
  node_.assign(n, PerNode{});
  row_.assign(n, Row{});
  if (compact_)
    for (int i = 0; i < n; ++i) node_[i].attach = attach[i];

  // Destination columns: one per switch (compact; a host takes its switch's), or one per node. The last
  // column is always empty (hosts without ports).
  for (size_t r = 0; r < switches.size(); ++r) row_[switches[r]].row = static_cast<uint32_t>(r);
  std::vector<int> roots;  // the node each column's search starts from
  if (compact_) {
    roots = switches;
    for (int i = 0; i < n; ++i)
      node_[i].column = is_switch[i] ? row_[i].row
                                     : (node_[i].attach != kNone ? row_[node_[i].attach].row
                                                                 : static_cast<uint32_t>(roots.size()));
  } else {
    for (int i = 0; i < n; ++i) {
      node_[i].column = static_cast<uint32_t>(i);
      roots.push_back(i);
    }
  }
  columns_ = roots.size() + 1;

  sets_.clear();
  ports_.clear();
  SetIndex index;
  intern({}, index);  // set 0: unreachable
  table_.assign(switches.size() * columns_, 0);

  // Each node's working links as one array (peer, port), in port order: the searches read them once per
  // root, where the Port objects would cost a cache line each (and their peers' another), most of the
  // set-up time of a large fabric.
  struct Arc {
    int peer;
    uint16_t port;
  };
  std::vector<uint32_t> first(n + 1, 0);
  std::vector<Arc> arcs;
  for (int u = 0; u < n; ++u) {
    first[u] = static_cast<uint32_t>(arcs.size());
    for (const Port& p : nodes[u]->ports())
      if (!p.down)  // a failed link (net/link_events.h)
        arcs.push_back(Arc{p.peer->id(), static_cast<uint16_t>(p.index)});
  }
  first[n] = static_cast<uint32_t>(arcs.size());
  // With a visit rank, the searches take each node's links in the order its neighbours are visited (by
  // rank, then port).
  const bool ranked = !rank_.empty();
  std::vector<Arc> visit;
  if (ranked) {
    visit = arcs;
    for (int u = 0; u < n; ++u)
      std::stable_sort(visit.begin() + first[u], visit.begin() + first[u + 1],
                       [&](const Arc& a, const Arc& b) { return rank_[a.peer] < rank_[b.peer]; });
  }
  const std::vector<Arc>& search_arcs = ranked ? visit : arcs;

  // Breadth-first from each root over the links, never forwarding through a host; a switch's routes are
  // its ports towards neighbours one hop closer that are switches or the root itself.
  std::vector<int> dist(n);
  std::vector<int> reached(ranked ? n : 0);  // ranked: the order in which the search reached each node
  std::vector<int> bfs;                      // the search's queue: bfs[head..] still to visit
  bfs.reserve(n);
  std::vector<uint16_t> set;
  auto search = [&](int root) {
    std::fill(dist.begin(), dist.end(), -1);
    dist[root] = 0;
    bfs.assign(1, root);
    int count = 0;
    if (ranked) reached[root] = count++;
    for (size_t head = 0; head < bfs.size(); ++head) {
      const int u = bfs[head];
      if (u != root && !is_switch[u]) continue;
      for (uint32_t a = first[u]; a < first[u + 1]; ++a) {
        const int v = search_arcs[a].peer;
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          bfs.push_back(v);
          if (ranked) reached[v] = count++;
        }
      }
    }
  };
  std::vector<Arc> hops;
  auto next_hops = [&](int s, int root) {
    hops.clear();
    for (uint32_t a = first[s]; a < first[s + 1]; ++a) {
      const int v = arcs[a].peer;
      if (dist[v] == dist[s] - 1 && (is_switch[v] || v == root)) hops.push_back(arcs[a]);
    }
    if (ranked)  // in the order this search reached the next hops, from the links, not the ports
      std::stable_sort(hops.begin(), hops.end(),
                       [&](const Arc& a, const Arc& b) { return reached[a.peer] < reached[b.peer]; });
    set.clear();
    for (const Arc& h : hops) set.push_back(h.port);
    return intern(set, index);
  };
  for (size_t c = 0; c < roots.size(); ++c) {
    if (progress && c % std::max<size_t>(1, roots.size() / 16) == 0)
      progress(static_cast<double>(c) / static_cast<double>(roots.size()));
    search(roots[c]);
    for (int s : switches)
      if (dist[s] > 0) table_[row_[s].row * columns_ + c] = next_hops(s, roots[c]);
  }

  if (compact_) group_by_pods(topo, switches);

  // Most fabrics have few distinct sets: their ids fit 16 bits, a fat-tree's 8.
  id_bytes_ = sets_.size() <= UINT8_MAX + 1 ? 1 : sets_.size() <= UINT16_MAX ? 2 : 4;
  std::vector<uint8_t>().swap(tiny_);
  std::vector<uint16_t>().swap(narrow_);
  if (id_bytes_ == 1) tiny_.assign(table_.begin(), table_.end());
  if (id_bytes_ == 2) narrow_.assign(table_.begin(), table_.end());
  if (id_bytes_ != 4) std::vector<uint32_t>().swap(table_);

  // Compact form: each attachment switch's ports towards each of its hosts.
  if (compact_) {
    for (int h = 0; h < n; ++h) {
      if (node_[h].attach == kNone) continue;
      set.clear();
      for (const Port& p : nodes[node_[h].attach]->ports())
        if (p.peer->id() == h && !p.down) set.push_back(static_cast<uint16_t>(p.index));
      node_[h].host_set = intern(set, index);
    }
  }
}

bool RouteTable::group_by_pods(const TopoSpec& topo, const std::vector<int>& switches) {
  if (topo.pod.size() != static_cast<size_t>(topo.num_nodes)) return false;
  const size_t rows = switches.size();
  std::vector<bool> attachment(rows, false);
  for (const PerNode& node : node_)
    if (node.attach != kNone) attachment[row_[node.attach].row] = true;
  // Groups of columns: a labelled pod's attachment switches, each other switch alone, the empty column
  // alone; pods first, so that the ids a row holds towards them are together. A labelled switch's row
  // takes its pod's block for the columns of its pod.
  std::map<int, uint32_t> pod_group;
  for (int s : switches)
    if (topo.pod[s] >= 0) pod_group.try_emplace(topo.pod[s], static_cast<uint32_t>(pod_group.size()));
  const size_t pods = pod_group.size();
  std::vector<uint32_t> group(columns_), local(columns_), width(pods, 0);
  size_t groups = pods;
  for (size_t c = 0; c < columns_; ++c) {
    const int pod = c < rows ? topo.pod[switches[c]] : -1;
    if (pod >= 0 && attachment[c]) {
      group[c] = pod_group.at(pod);
      local[c] = width[group[c]]++;
    } else {
      group[c] = static_cast<uint32_t>(groups++);
    }
  }
  std::vector<uint32_t> row_group(rows, kNone), row_local(rows, 0), height(pods, 0);
  for (size_t r = 0; r < rows; ++r)
    if (const int pod = topo.pod[switches[r]]; pod >= 0) {
      row_group[r] = pod_group.at(pod);
      row_local[r] = height[row_group[r]]++;
    }
  std::vector<size_t> base(pods);
  size_t inner = 0;
  for (size_t g = 0; g < pods; ++g) {
    base[g] = inner;
    inner += size_t{width[g]} * height[g];
  }
  if (rows * groups + inner >= rows * columns_) return false;  // nothing to gain
  // Every id of the full table lands in its row's cell towards the column's group (which must then hold
  // one id for all the group's columns) or, for a pod's column from a row of that pod, in the pod's block.
  constexpr uint32_t kUnset = UINT32_MAX;
  std::vector<uint32_t> cells(rows * groups + inner, kUnset);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < columns_; ++c) {
      const uint32_t id = table_[r * columns_ + c];
      const uint32_t g = group[c];
      if (g == row_group[r]) {
        cells[rows * groups + base[g] + size_t{local[c]} * height[g] + row_local[r]] = id;
        continue;
      }
      uint32_t& cell = cells[r * groups + g];
      if (cell == kUnset) cell = id;
      if (cell != id) return false;  // this switch routes to the group's switches differently
    }
  for (uint32_t& cell : cells)
    if (cell == kUnset) cell = 0;  // a row's cell towards its own pod: the block is read instead
  // Destinations take their column's group and block offset, switches their pod's group and block row.
  for (PerNode& node : node_) {
    const uint32_t c = node.column, g = group[c];
    node.column = g;
    node.inner = g < pods ? static_cast<uint32_t>(base[g] + size_t{local[c]} * height[g]) : 0;
  }
  for (int s : switches) {
    row_[s].group = row_group[row_[s].row];
    row_[s].local = row_local[row_[s].row];
  }
  table_ = std::move(cells);
  columns_ = groups;
  inner_at_ = rows * groups;
  pods_ = true;
  return true;
}

size_t RouteTable::memory_bytes() const {
  return table_.capacity() * sizeof(uint32_t) + narrow_.capacity() * sizeof(uint16_t) + tiny_.capacity() +
         rank_.capacity() * sizeof(uint32_t) + node_.capacity() * sizeof(PerNode) +
         row_.capacity() * sizeof(Row) + sets_.capacity() * sizeof(sets_[0]) +
         ports_.capacity() * sizeof(uint16_t);
}

size_t RouteTable::estimate_bytes(const TopoSpec& topo) {
  const size_t nodes = static_cast<size_t>(topo.num_nodes);
  std::vector<size_t> ports_of(nodes, 0);
  for (const LinkSpec& l : topo.links) {
    ++ports_of[l.a];
    ++ports_of[l.b];
  }
  size_t switches = 0, max_ports = 1;
  for (size_t i = 0; i < nodes; ++i)
    if (topo.is_switch[i]) {
      ++switches;
      max_ports = std::max(max_ports, ports_of[i]);
    }
  const bool compact = !attachments(topo).empty();
  const size_t table = switches * ((compact ? switches : nodes) + 1) * sizeof(uint32_t);
  const size_t per_node = nodes * 4 * sizeof(uint32_t);
  const size_t sets =
      switches * max_ports * (sizeof(std::pair<uint32_t, uint32_t>) + max_ports * sizeof(uint16_t));
  return table + per_node + sets;
}

}  // namespace rocesim
