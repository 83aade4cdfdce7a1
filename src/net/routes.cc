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

namespace {

// A working link as the searches read it: the neighbour it leads to and the port it leaves by.
struct LinkArc {
  int peer;
  uint16_t port;
};

// Each node's working links as one array (peer, port), in port order: the searches read them once per
// root, where the Port objects would cost a cache line each (and their peers' another), most of the
// set-up time of a large fabric.
struct SearchLinks {
  std::vector<uint32_t> first;  // node u's links are arcs[first[u] .. first[u + 1])
  std::vector<LinkArc> arcs;
  // With a visit rank, each node's links again in the order the searches take them (by the neighbour's
  // rank, then port); empty without.
  std::vector<LinkArc> visit;
  bool ranked = false;
  const std::vector<LinkArc>& search_order() const { return ranked ? visit : arcs; }
};

// The links of `nodes` that are up (a failed link: net/link_events.h), ordered for the searches by `rank`
// when it is given.
SearchLinks links_of(const std::vector<Node*>& nodes, const std::vector<uint32_t>& rank) {
  const int n = static_cast<int>(nodes.size());
  SearchLinks l;
  l.first.assign(n + 1, 0);
  for (int u = 0; u < n; ++u) {
    l.first[u] = static_cast<uint32_t>(l.arcs.size());
    for (const Port& p : nodes[u]->ports())
      if (!p.down) l.arcs.push_back(LinkArc{p.peer->id(), static_cast<uint16_t>(p.index)});
  }
  l.first[n] = static_cast<uint32_t>(l.arcs.size());
  l.ranked = !rank.empty();
  if (l.ranked) {
    l.visit = l.arcs;
    for (int u = 0; u < n; ++u)
      std::stable_sort(l.visit.begin() + l.first[u], l.visit.begin() + l.first[u + 1],
                       [&](const LinkArc& a, const LinkArc& b) { return rank[a.peer] < rank[b.peer]; });
  }
  return l;
}

// Breadth-first search from one root over the links, never forwarding through a host; a switch's routes
// towards the root are its ports towards neighbours one hop closer that are switches or the root itself.
// Reused for every root.
class RouteSearch {
 public:
  RouteSearch(const SearchLinks& links, const std::vector<bool>& is_switch)
      : links_(links),
        is_switch_(is_switch),
        dist_(links.first.size() - 1),
        reached_(links.ranked ? dist_.size() : 0) {
    bfs_.reserve(dist_.size());
  }

  // Hop counts from `root` (-1: unreachable), and with a visit rank the order in which each node was reached.
  void run(int root) {
    root_ = root;
    std::fill(dist_.begin(), dist_.end(), -1);
    dist_[root] = 0;
    bfs_.assign(1, root);
    int count = 0;
    if (links_.ranked) reached_[root] = count++;
    const std::vector<LinkArc>& arcs = links_.search_order();
    for (size_t head = 0; head < bfs_.size(); ++head) {  // bfs_[head..]: still to visit
      const int u = bfs_[head];
      if (u != root && !is_switch_[u]) continue;
      for (uint32_t a = links_.first[u]; a < links_.first[u + 1]; ++a) {
        const int v = arcs[a].peer;
        if (dist_[v] < 0) {
          dist_[v] = dist_[u] + 1;
          bfs_.push_back(v);
          if (links_.ranked) reached_[v] = count++;
        }
      }
    }
  }

  int dist(int v) const { return dist_[v]; }

  // Switch `s`'s ports towards the root of the last run: in port order, or with a visit rank in the order
  // the search reached their next hops (from the links, not the ports).
  const std::vector<uint16_t>& next_hops(int s) {
    hops_.clear();
    for (uint32_t a = links_.first[s]; a < links_.first[s + 1]; ++a) {
      const LinkArc& arc = links_.arcs[a];
      if (dist_[arc.peer] == dist_[s] - 1 && (is_switch_[arc.peer] || arc.peer == root_))
        hops_.push_back(arc);
    }
    if (links_.ranked)
      std::stable_sort(hops_.begin(), hops_.end(), [&](const LinkArc& a, const LinkArc& b) {
        return reached_[a.peer] < reached_[b.peer];
      });
    ports_.clear();
    for (const LinkArc& h : hops_) ports_.push_back(h.port);
    return ports_;
  }

 private:
  const SearchLinks& links_;
  const std::vector<bool>& is_switch_;
  int root_ = 0;
  std::vector<int> dist_;
  std::vector<int> reached_;  // ranked: the order in which the search reached each node
  std::vector<int> bfs_;      // the search's queue
  std::vector<LinkArc> hops_;
  std::vector<uint16_t> ports_;
};

}  // namespace

void RouteTable::build(const std::vector<Node*>& nodes, const TopoSpec& topo,
                       const std::function<void(double)>& progress) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> switches;
  for (int i = 0; i < n; ++i)
    if (topo.is_switch[i]) switches.push_back(i);
  reset(n, topo);
  const std::vector<int> roots = assign_columns(n, topo.is_switch, switches);

  sets_.clear();
  ports_.clear();
  SetIndex index;
  intern({}, index);  // set 0: unreachable
  table_.assign(switches.size() * columns_, 0);
  route_columns(nodes, topo.is_switch, switches, roots, index, progress);
  if (compact_) group_by_pods(topo, switches);
  narrow_ids();
  if (compact_) route_hosts(nodes, index);
}

void RouteTable::reset(int n, const TopoSpec& topo) {
  // The compact form needs every host with ports to reach exactly one switch, and nothing else.
  const std::vector<uint32_t> attach = attachments(topo);
  compact_ = !attach.empty();
  pods_ = false;
  inner_at_ = 0;
  node_.assign(n, PerNode{});
  row_.assign(n, Row{});
  if (compact_)
    for (int i = 0; i < n; ++i) node_[i].attach = attach[i];
}

std::vector<int> RouteTable::assign_columns(int n, const std::vector<bool>& is_switch,
                                            const std::vector<int>& switches) {
  for (size_t r = 0; r < switches.size(); ++r) row_[switches[r]].row = static_cast<uint32_t>(r);
  std::vector<int> roots;
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
  return roots;
}

void RouteTable::route_columns(const std::vector<Node*>& nodes, const std::vector<bool>& is_switch,
                               const std::vector<int>& switches, const std::vector<int>& roots,
                               SetIndex& index, const std::function<void(double)>& progress) {
  const SearchLinks links = links_of(nodes, rank_);
  RouteSearch search(links, is_switch);
  for (size_t c = 0; c < roots.size(); ++c) {
    if (progress && c % std::max<size_t>(1, roots.size() / 16) == 0)
      progress(static_cast<double>(c) / static_cast<double>(roots.size()));
    search.run(roots[c]);
    for (int s : switches)
      if (search.dist(s) > 0) table_[row_[s].row * columns_ + c] = intern(search.next_hops(s), index);
  }
}

void RouteTable::narrow_ids() {
  id_bytes_ = sets_.size() <= UINT8_MAX + 1 ? 1 : sets_.size() <= UINT16_MAX ? 2 : 4;
  std::vector<uint8_t>().swap(tiny_);
  std::vector<uint16_t>().swap(narrow_);
  if (id_bytes_ == 1) tiny_.assign(table_.begin(), table_.end());
  if (id_bytes_ == 2) narrow_.assign(table_.begin(), table_.end());
  if (id_bytes_ != 4) std::vector<uint32_t>().swap(table_);
}

void RouteTable::route_hosts(const std::vector<Node*>& nodes, SetIndex& index) {
  const int n = static_cast<int>(nodes.size());
  std::vector<uint16_t> set;
  for (int h = 0; h < n; ++h) {
    if (node_[h].attach == kNone) continue;
    set.clear();
    for (const Port& p : nodes[node_[h].attach]->ports())
      if (p.peer->id() == h && !p.down) set.push_back(static_cast<uint16_t>(p.index));
    node_[h].host_set = intern(set, index);
  }
}

// The pod form's layout: which group each column of the compact table falls in, which pod's block each
// row uses, and where each pod's block starts. Groups are numbered pods first, so that the ids a row holds
// towards the pods are together.
struct RouteTable::PodLayout {
  std::map<int, uint32_t> pod_group;           // each pod label's group, in the order of the switches
  size_t pods = 0;                             // labelled pods: groups 0 .. pods - 1
  size_t groups = 0;                           // groups of columns, pods first
  size_t inner = 0;                            // ids in all the pods' blocks
  std::vector<uint32_t> group, local;          // per column: its group, and its column in its pod's block
  std::vector<uint32_t> row_group, row_local;  // per row: its pod's group (kNone: none), its row in the block
  std::vector<uint32_t> width, height;         // per pod: its block's columns and rows
  std::vector<size_t> base;                    // per pod: where its block starts among the blocks

  // Numbers the pods labelled on `switches`.
  void number_pods(const TopoSpec& topo, const std::vector<int>& switches) {
    for (int s : switches)
      if (topo.pod[s] >= 0) pod_group.try_emplace(topo.pod[s], static_cast<uint32_t>(pod_group.size()));
    pods = groups = pod_group.size();
  }

  // Groups of the `columns` columns: a labelled pod's attachment switches (`attachment`, per row), each
  // other switch alone, the empty column alone.
  void group_columns(const TopoSpec& topo, const std::vector<int>& switches,
                     const std::vector<bool>& attachment, size_t columns) {
    group.resize(columns);
    local.resize(columns);
    width.assign(pods, 0);
    for (size_t c = 0; c < columns; ++c) {
      const int pod = c < switches.size() ? topo.pod[switches[c]] : -1;
      if (pod >= 0 && attachment[c]) {
        group[c] = pod_group.at(pod);
        local[c] = width[group[c]]++;
      } else {
        group[c] = static_cast<uint32_t>(groups++);
      }
    }
  }

  // A labelled switch's row takes its pod's block for the columns of its pod.
  void group_rows(const TopoSpec& topo, const std::vector<int>& switches) {
    row_group.assign(switches.size(), kNone);
    row_local.assign(switches.size(), 0);
    height.assign(pods, 0);
    for (size_t r = 0; r < switches.size(); ++r)
      if (const int pod = topo.pod[switches[r]]; pod >= 0) {
        row_group[r] = pod_group.at(pod);
        row_local[r] = height[row_group[r]]++;
      }
  }

  // The pods' blocks one after the other, each width x height ids (column by column).
  void place_blocks() {
    base.resize(pods);
    for (size_t g = 0; g < pods; ++g) {
      base[g] = inner;
      inner += size_t{width[g]} * height[g];
    }
  }

  // Where the routes towards pod column c start among the blocks: its pod's block, then its column there.
  size_t block_column(size_t c) const { return base[group[c]] + size_t{local[c]} * height[group[c]]; }
};

RouteTable::PodLayout RouteTable::pod_layout(const TopoSpec& topo, const std::vector<int>& switches) const {
  std::vector<bool> attachment(switches.size(), false);  // per row: whether a host hangs off the switch
  for (const PerNode& node : node_)
    if (node.attach != kNone) attachment[row_[node.attach].row] = true;
  PodLayout l;
  l.number_pods(topo, switches);
  l.group_columns(topo, switches, attachment, columns_);
  l.group_rows(topo, switches);
  l.place_blocks();
  return l;
}

bool RouteTable::pod_cells(const PodLayout& l, size_t rows, std::vector<uint32_t>& cells) const {
  constexpr uint32_t kUnset = UINT32_MAX;
  cells.assign(rows * l.groups + l.inner, kUnset);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < columns_; ++c) {
      const uint32_t id = table_[r * columns_ + c];
      const uint32_t g = l.group[c];
      if (g == l.row_group[r]) {  // a pod's column from a row of the pod: in the pod's block
        cells[rows * l.groups + l.block_column(c) + l.row_local[r]] = id;
        continue;
      }
      uint32_t& cell = cells[r * l.groups + g];  // one id for all the group's columns
      if (cell == kUnset) cell = id;
      if (cell != id) return false;  // this switch routes to the group's switches differently
    }
  for (uint32_t& cell : cells)
    if (cell == kUnset) cell = 0;  // a row's cell towards its own pod: the block is read instead
  return true;
}

bool RouteTable::group_by_pods(const TopoSpec& topo, const std::vector<int>& switches) {
  if (topo.pod.size() != static_cast<size_t>(topo.num_nodes)) return false;
  const size_t rows = switches.size();
  const PodLayout l = pod_layout(topo, switches);
  if (rows * l.groups + l.inner >= rows * columns_) return false;  // nothing to gain
  std::vector<uint32_t> cells;
  if (!pod_cells(l, rows, cells)) return false;
  // Destinations take their column's group and block offset, switches their pod's group and block row.
  for (PerNode& node : node_) {
    const uint32_t c = node.column, g = l.group[c];
    node.column = g;
    node.inner = g < l.pods ? static_cast<uint32_t>(l.block_column(c)) : 0;
  }
  for (int s : switches) {
    row_[s].group = l.row_group[row_[s].row];
    row_[s].local = l.row_local[row_[s].row];
  }
  table_ = std::move(cells);
  columns_ = l.groups;
  inner_at_ = rows * l.groups;
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
