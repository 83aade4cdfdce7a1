// Shortest-path routing tables: for every switch and destination node, the equal-cost egress ports
// (ECMP picks one of them per flow, net/switch.cc).
//
// Memory grows with switches x switches, not nodes x nodes. When every host hangs off a single switch (its
// "attachment switch": every fabric the builders make, and most topology files), a host is routed like its
// attachment switch everywhere but at that switch, whose ports towards the host are kept per host. The
// equal-cost port sets repeat (a leaf has one "all uplinks" set for every remote destination), so each
// distinct set is stored once and the table holds a set id per (switch, destination switch): in 8 bits
// when there are at most 256 sets (a k-ary fat-tree has a few more than k), in 16 when fewer than 65,536.
// Other topologies (a host wired to two switches or to another host) fall back to a column per destination
// node.
//
// Pod form: when the topology labels pods (TopoSpec::pod: the builders' fat-trees and cross_dc) and every
// switch outside a pod has one port set towards all of the pod's attachment switches (its ToRs), a switch's
// row keeps one id per pod (and one per other switch) instead of one per destination switch, and each pod
// keeps a block for the routes of its own switches towards its ToRs. A k = 24 fat-tree's 720 x 721 ids become
// 720 x 457 plus 24 blocks of 24 x 12, and the part of a row that data uses (towards the 24 pods) fits one
// cache line. The form is checked against the full table when it is built and used only where it holds:
// the answers are the same.
//
// All forms give the same port lists, in port order, as a breadth-first search from each destination node
// that never forwards through hosts.
//
// With a visit rank (set_visit_rank), the ports are listed instead in the order the ns-3 HPCC simulator's
// routing table lists next hops (its third.cc, CalculateRoute): the search visits each node's neighbours
// in increasing rank, and a switch's equal-cost ports follow the order in which their neighbours were
// reached (ties, parallel links to one neighbour, in port order).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "topo/topology.h"

namespace rocesim {

class Node;

class RouteTable {
 public:
  // Builds the tables for `nodes` (indexed by node id, wired as `topo` says), calling `progress` with the
  // fraction done now and then when given. Failed links (Port::down) carry no route; a later call rebuilds
  // the tables for the links up then (net/link_events.h).
  void build(const std::vector<Node*>& nodes, const TopoSpec& topo,
             const std::function<void(double)>& progress = {});

  // Ranks by which the search orders each node's neighbours (one per node; empty: port order). Applies
  // to the next build().
  void set_visit_rank(std::vector<uint32_t> rank) { rank_ = std::move(rank); }

  // Equal-cost egress ports of switch `sw` towards node `dst` (count 0: unreachable).
  std::pair<const uint16_t*, int> lookup(int sw, int dst) const {
    const PerNode& d = node_[dst];
    uint32_t set;
    if (d.attach == static_cast<uint32_t>(sw)) {
      set = d.host_set;
    } else {
      const Row& s = row_[sw];
      const size_t cell = s.group == d.column ? inner_at_ + d.inner + s.local
                                              : static_cast<size_t>(s.row) * columns_ + d.column;
      set = id_bytes_ == 1 ? tiny_[cell] : id_bytes_ == 2 ? narrow_[cell] : table_[cell];
    }
    const auto [offset, count] = sets_[set];
    return {ports_.data() + offset, static_cast<int>(count)};
  }

  // Whether hosts are routed through their attachment switch (the compact form).
  bool compact() const { return compact_; }
  // Whether the compact table is stored per pod (the pod form).
  bool per_pod() const { return pods_; }
  size_t distinct_port_sets() const { return sets_.size(); }
  // Bytes held by the tables.
  size_t memory_bytes() const;
  // Bytes the tables of `topo` take, before they are built (for the memory estimate of a run): the table in
  // the compact form or not, the per-node arrays, and room for as many distinct port sets per switch as its
  // most connected switch has ports, each of up to that many ports.
  static size_t estimate_bytes(const TopoSpec& topo);
  // Each node's attachment switch when every host is linked to one switch only (kNone for switches and
  // hosts without links), else empty: the compact form applies.
  static std::vector<uint32_t> attachments(const TopoSpec& topo);

  static constexpr uint32_t kNone = UINT32_MAX;

 private:
  using SetIndex = std::map<std::vector<uint16_t>, uint32_t>;
  struct PodLayout;

  // The id of the port set `ports`, stored once.
  uint32_t intern(const std::vector<uint16_t>& ports, SetIndex& index);
  // build(), step by step:
  // Empties the per-node arrays for `n` nodes and picks the form: compact when every host with links has
  // one attachment switch (each host's is then recorded).
  void reset(int n, const TopoSpec& topo);
  // Numbers the rows (one per switch, in `switches` order) and the destination columns: one per switch in
  // the compact form (a host takes its switch's), else one per node; the last column is always empty
  // (hosts without ports). Sets columns_; returns the node each column's search starts from.
  std::vector<int> assign_columns(int n, const std::vector<bool>& is_switch,
                                  const std::vector<int>& switches);
  // Fills table_ (rows x columns_) with each switch's port set towards each column's root, one breadth-first
  // search per root, calling `progress` every 1/16 of the roots.
  void route_columns(const std::vector<Node*>& nodes, const std::vector<bool>& is_switch,
                     const std::vector<int>& switches, const std::vector<int>& roots, SetIndex& index,
                     const std::function<void(double)>& progress);
  // Moves table_'s ids to the narrowest array that holds them (most fabrics have few distinct sets: their
  // ids fit 16 bits, a fat-tree's 8), freeing the others.
  void narrow_ids();
  // Compact form: each attachment switch's ports towards each of its hosts.
  void route_hosts(const std::vector<Node*>& nodes, SetIndex& index);
  // Turns the full compact table_ (rows x columns_) into the pod form when topo labels pods, the form holds
  // and it is smaller; returns whether it did.
  bool group_by_pods(const TopoSpec& topo, const std::vector<int>& switches);
  // The pod form's groups of columns and rows for topo's pod labels (group_by_pods).
  PodLayout pod_layout(const TopoSpec& topo, const std::vector<int>& switches) const;
  // The pod form's ids (`rows` rows, then the pods' blocks) from the full table_ into `cells`; false when a
  // row holds different ids towards one group's columns (the form does not hold).
  bool pod_cells(const PodLayout& layout, size_t rows, std::vector<uint32_t>& cells) const;

  std::vector<uint32_t> rank_;  // per node, see set_visit_rank
  bool compact_ = false;
  bool pods_ = false;    // the pod form
  size_t columns_ = 0;   // ids per row: destination columns, or groups in the pod form
  size_t inner_at_ = 0;  // pod form: where the blocks of routes inside each group start
  // What a lookup reads of its destination node, together (one cache line holds four nodes').
  struct PerNode {
    uint32_t column = 0;        // its destination column (pod form: its group); a host's: its switch's
    uint32_t attach = kNone;    // a host's attachment switch (compact form), else kNone
    uint32_t host_set = kNone;  // a host's: ports of its attachment switch towards it, else kNone
    uint32_t inner = 0;         // pod form: its column's offset in its group's block, from inner_at_
  };
  std::vector<PerNode> node_;
  // What a lookup reads of the switch (indexed by node id too).
  struct Row {
    uint32_t row = 0;
    uint32_t group = kNone;  // pod form: the group of the ToRs of its pod, if it is in one
    uint32_t local = 0;      // its row in that group's block
  };
  std::vector<Row> row_;
  // The rows x columns_ port-set ids (pod form: then the groups' blocks), in the narrowest of the three that
  // holds them all (the others are empty): 1 byte per id (at most 256 sets), 2 (at most 65,535), else 4.
  int id_bytes_ = 4;
  std::vector<uint32_t> table_;
  std::vector<uint16_t> narrow_;
  std::vector<uint8_t> tiny_;
  std::vector<std::pair<uint32_t, uint32_t>> sets_;  // (offset in ports_, count); set 0 is empty
  std::vector<uint16_t> ports_;
};

}  // namespace rocesim
