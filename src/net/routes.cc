#include "net/routes.h"

#include <algorithm>
#include <deque>

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
  node_.assign(n, PerNode{});
  if (compact_)
    for (int i = 0; i < n; ++i) node_[i].attach = attach[i];

  // Destination columns: one per switch (compact; a host takes its switch's), or one per node. The last
  // column is always empty (hosts without ports).
  for (size_t r = 0; r < switches.size(); ++r) node_[switches[r]].row = static_cast<uint32_t>(r);
  std::vector<int> roots;  // the node each column's search starts from
  if (compact_) {
    roots = switches;
    for (int i = 0; i < n; ++i)
      node_[i].column = is_switch[i] ? node_[i].row
                                     : (node_[i].attach != kNone ? node_[node_[i].attach].row
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

  // With a visit rank, each node's ports in the order its neighbours are visited (by rank, then port).
  const bool ranked = !rank_.empty();
  std::vector<std::vector<uint16_t>> visit(ranked ? n : 0);
  for (int u = 0; ranked && u < n; ++u) {
    for (const Port& p : nodes[u]->ports()) visit[u].push_back(static_cast<uint16_t>(p.index));
    std::stable_sort(visit[u].begin(), visit[u].end(), [&](uint16_t a, uint16_t b) {
      return rank_[nodes[u]->ports()[a].peer->id()] < rank_[nodes[u]->ports()[b].peer->id()];
    });
  }

  // Breadth-first from each root over the links, never forwarding through a host; a switch's routes are
  // its ports towards neighbours one hop closer that are switches or the root itself.
  std::vector<int> dist(n);
  std::vector<int> reached(ranked ? n : 0);  // ranked: the order in which the search reached each node
  std::deque<int> bfs;
  std::vector<uint16_t> set;
  auto search = [&](int root) {
    std::fill(dist.begin(), dist.end(), -1);
    dist[root] = 0;
    bfs.assign(1, root);
    int count = 0;
    if (ranked) reached[root] = count++;
    auto reach = [&](int u, const Port& p) {
      if (p.down) return;  // a failed link (net/link_events.h)
      const int v = p.peer->id();
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        bfs.push_back(v);
        if (ranked) reached[v] = count++;
      }
    };
    while (!bfs.empty()) {
      const int u = bfs.front();
      bfs.pop_front();
      if (u != root && !is_switch[u]) continue;
      if (ranked) {
        for (uint16_t i : visit[u]) reach(u, nodes[u]->ports()[i]);
      } else {
        for (const Port& p : nodes[u]->ports()) reach(u, p);
      }
    }
  };
  auto next_hops = [&](int s, int root) {
    set.clear();
    for (const Port& p : nodes[s]->ports()) {
      const int v = p.peer->id();
      if (!p.down && dist[v] == dist[s] - 1 && (is_switch[v] || v == root))
        set.push_back(static_cast<uint16_t>(p.index));
    }
    if (ranked)
      std::stable_sort(set.begin(), set.end(), [&](uint16_t a, uint16_t b) {
        return reached[nodes[s]->ports()[a].peer->id()] < reached[nodes[s]->ports()[b].peer->id()];
      });
    return intern(set, index);
  };
  for (size_t c = 0; c < roots.size(); ++c) {
    if (progress && c % std::max<size_t>(1, roots.size() / 16) == 0)
      progress(static_cast<double>(c) / static_cast<double>(roots.size()));
    search(roots[c]);
    for (int s : switches)
      if (dist[s] > 0) table_[node_[s].row * columns_ + c] = next_hops(s, roots[c]);
  }

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

size_t RouteTable::memory_bytes() const {
  return table_.capacity() * sizeof(uint32_t) + narrow_.capacity() * sizeof(uint16_t) + tiny_.capacity() +
         rank_.capacity() * sizeof(uint32_t) + node_.capacity() * sizeof(PerNode) +
         sets_.capacity() * sizeof(sets_[0]) + ports_.capacity() * sizeof(uint16_t);
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
