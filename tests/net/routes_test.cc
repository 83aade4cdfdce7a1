// Tests for net/routes.h: the compact (per attachment switch) and general (per destination node) route
// tables give, for every switch and destination, the port list of a breadth-first search from that
// destination that never forwards through hosts; and the compact form's memory grows with switches only.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "cc/none.h"
#include "net/network.h"
#include "test_util.h"
#include "topo/builders.h"

namespace rocesim {
namespace {

// The reference: one search per destination node, as the route table was first written.
std::vector<uint16_t> reference_routes(Network& net, int sw, int dst) {
  const int n = net.num_nodes();
  std::vector<int> dist(n, -1);
  std::deque<int> bfs{dst};
  dist[dst] = 0;
  while (!bfs.empty()) {
    const int u = bfs.front();
    bfs.pop_front();
    if (u != dst && net.is_host(u)) continue;
    for (const Port& p : net.node(u).ports())
      if (dist[p.peer->id()] < 0) {
        dist[p.peer->id()] = dist[u] + 1;
        bfs.push_back(p.peer->id());
      }
  }
  std::vector<uint16_t> out;
  if (dist[sw] <= 0) return out;
  for (const Port& p : net.node(sw).ports()) {
    const int v = p.peer->id();
    if (dist[v] == dist[sw] - 1 && (!net.is_host(v) || v == dst))
      out.push_back(static_cast<uint16_t>(p.index));
  }
  return out;
}

void expect_same_as_reference(const TopoSpec& t, bool compact) {
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
  EXPECT_EQ(net.route_table().compact(), compact) << t.name;
  int checked = 0;
  for (int s = 0; s < net.num_nodes(); ++s) {
    if (net.is_host(s)) continue;
    for (int d = 0; d < net.num_nodes(); ++d) {
      auto [ports, cnt] = net.routes(s, d);
      const std::vector<uint16_t> got(ports, ports + cnt);
      ASSERT_EQ(got, reference_routes(net, s, d)) << t.name << ": switch " << s << " towards " << d;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(Routes, FatTreeMatchesPerDestinationSearch) {
  FatTreeParams p;
  p.k = 4;
  expect_same_as_reference(fat_tree(p), true);
}

TEST(Routes, LeafSpineAndThreeTierMatchPerDestinationSearch) {
  expect_same_as_reference(leaf_spine(), true);
  expect_same_as_reference(fat_tree_3tier(), true);
}

// A host wired to two switches (and a pair of hosts wired to each other) cannot be routed through one
// attachment switch: the general form is used, with the same answers.
TEST(Routes, MultiHomedHostFallsBackToPerNodeColumns) {
  TopoSpec t = test::switch_ring(4, 2);
  const int multi = 4;  // h0, on s0
  t.links.push_back({multi, 2, Rate::from_gbps(100), Time::from_us(1)});
  expect_same_as_reference(t, false);
}

// With the ns-3 HPCC simulator's next-hop order (switch.ecmp_hash = "hpcc_sim", a visit rank per node)
// every switch has the same equal-cost ports as the reference, listed in the order the search reached
// their neighbours: in a k = 4 fat-tree whose switches are visited in decreasing id, the next hops towards
// a host (an edge switch's aggregation switches, an aggregation switch's cores) from the highest id down.
TEST(Routes, SimulatorOrderPermutesTheSameSets) {
  FatTreeParams p;
  p.k = 4;
  const TopoSpec t = fat_tree(p);
  for (bool multi_homed : {false, true}) {
    TopoSpec topo = t;
    if (multi_homed) topo.links.push_back({0, topo.num_nodes - 1, Rate::from_gbps(100), Time::from_us(1)});
    SwitchSettings sw;
    sw.ecmp_hash = EcmpHash::kHpccSim;
    Network net(topo, sw, NicSettings{}, 1, std::make_unique<NoCc>());
    EXPECT_EQ(net.route_table().compact(), !multi_homed);
    int permuted = 0;
    for (int s = 0; s < net.num_nodes(); ++s) {
      if (net.is_host(s)) continue;
      for (int d = 0; d < net.num_nodes(); ++d) {
        auto [ports, cnt] = net.routes(s, d);
        std::vector<uint16_t> got(ports, ports + cnt);
        // Towards a host of the plain fat-tree, the next hops in decreasing id.
        for (int i = 1; i < cnt && net.is_host(d) && !multi_homed; ++i) {
          EXPECT_GT(net.node(s).ports()[got[i - 1]].peer->id(), net.node(s).ports()[got[i]].peer->id())
              << "switch " << s << " towards " << d;
        }
        const std::vector<uint16_t> in_port_order = got;
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, reference_routes(net, s, d)) << "switch " << s << " towards " << d;
        if (got != in_port_order) ++permuted;
      }
    }
    EXPECT_GT(permuted, 0);
  }
}

// Set ids take 8 bits up to 256 distinct port sets, 16 beyond: a core switch with 300 leaf switches has 300
// sets ("the port to leaf i"), and its answers are the reference's as a fat-tree's are with 8-bit ids.
TEST(Routes, MoreThan256SetsUseWiderIds) {
  const int leaves = 300;
  TopoSpec t;
  t.name = "star of leaves";
  t.num_nodes = 1 + 2 * leaves;  // core 0, leaves 1..300, host 300 + i on leaf i
  t.is_switch.assign(t.num_nodes, false);
  for (int i = 0; i <= leaves; ++i) t.is_switch[i] = true;
  for (int i = 1; i <= leaves; ++i) {
    t.links.push_back({0, i, Rate::from_gbps(100), Time::from_us(1)});
    t.links.push_back({i, leaves + i, Rate::from_gbps(100), Time::from_us(1)});
  }
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
  ASSERT_TRUE(net.route_table().compact());
  EXPECT_GT(net.route_table().distinct_port_sets(), 256u);
  for (int s : {0, 1, leaves})
    for (int d = 0; d < net.num_nodes(); ++d) {
      auto [ports, cnt] = net.routes(s, d);
      ASSERT_EQ(std::vector<uint16_t>(ports, ports + cnt), reference_routes(net, s, d))
          << "switch " << s << " towards " << d;
    }
}

// Memory: the compact table of a k = 16 fat-tree (1,024 hosts, 320 switches) is switches x switches set ids
// (at most 4 bytes each; a fat-tree's take 1), far below the nodes x nodes pairs it replaced (14 MB).
TEST(Routes, CompactTableGrowsWithSwitchesNotNodes) {
  FatTreeParams p;
  p.k = 16;
  const TopoSpec topo = fat_tree(p);
  Network net(topo, SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
  ASSERT_TRUE(net.route_table().compact());
  const size_t nodes = static_cast<size_t>(net.num_nodes());
  const size_t switches = 320;
  EXPECT_LE(net.route_table().memory_bytes(), switches * (switches + 1) * 4 + nodes * 28 + 64 * 1024);
  EXPECT_LE(net.route_table().memory_bytes(), RouteTable::estimate_bytes(topo));
  // A fat-tree's equal-cost sets: per switch a handful (all uplinks, one downlink, ...).
  EXPECT_LT(net.route_table().distinct_port_sets(), 4 * switches);
}

// The builders' fat-trees (and the two of cross_dc) label their pods, and their tables are stored per pod: a
// switch's row holds an id per pod and per core, each pod a block for its own switches. The answers stay the
// reference's, in the ns-3 simulator's next-hop order too, and the k = 16 table shrinks from 320 x 321 ids to
// 320 x (16 pods + 128 aggregation switches + 64 cores + 1) + 16 x 16 x 8 (one byte each).
TEST(Routes, LabelledPodsAreStoredPerPod) {
  FatTreeParams p;
  p.k = 6;
  for (const TopoSpec& t : {fat_tree(p), fat_tree_3tier(), cross_dc()}) {
    expect_same_as_reference(t, true);
    Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
    EXPECT_TRUE(net.route_table().per_pod()) << t.name;
    SwitchSettings sw;
    sw.ecmp_hash = EcmpHash::kHpccSim;
    Network ranked(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
    EXPECT_TRUE(ranked.route_table().per_pod()) << t.name;
    for (int s = 0; s < net.num_nodes(); ++s) {
      if (net.is_host(s)) continue;
      for (int d = 0; d < net.num_nodes(); ++d) {
        auto [ports, cnt] = ranked.routes(s, d);
        std::vector<uint16_t> got(ports, ports + cnt);
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, reference_routes(net, s, d)) << t.name << ": switch " << s << " towards " << d;
      }
    }
  }
  p.k = 16;
  Network net(fat_tree(p), SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
  ASSERT_TRUE(net.route_table().per_pod());
  const size_t switches = 320, nodes = 1344;
  EXPECT_LE(net.route_table().memory_bytes(),
            switches * (16 + 128 + 64 + 1) + 16 * 16 * 8 + nodes * 28 + 64 * 1024);
}

// Where the labels do not describe the routes (here a link from an edge switch of pod 0 to an aggregation
// switch of pod 1: that edge switch is a shorter way into pod 1), the full table is kept.
TEST(Routes, PodLabelsThatDoNotHoldKeepTheFullTable) {
  FatTreeParams p;
  p.k = 4;
  TopoSpec t = fat_tree(p);
  const int first_edge = 16, first_agg = 24;
  t.links.push_back({first_edge, first_agg + 2, Rate::from_gbps(100), Time::from_us(1)});
  expect_same_as_reference(t, true);
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<NoCc>());
  EXPECT_FALSE(net.route_table().per_pod());
}

}  // namespace
}  // namespace rocesim
