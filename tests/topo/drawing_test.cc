// `rocesim draw` (topo/drawing.h): the export holds every node and link of the network the simulator builds
// (its port counts), the drawing accounts for each of them (drawn, or inside a box), the tiers are
// summarize_tiers', planes and servers are found, and large fabrics collapse by the stated rule.
#include "topo/drawing.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "config/scenario.h"
#include "net/network.h"
#include "topo/builders.h"
#include "topo/tiers.h"

namespace rocesim {
namespace {

using nlohmann::json;

// The checks every drawing must pass: counts against the topology, every node drawn or boxed once, every
// link on one line or inside one box, the tiers of tiers.h.
void check_accounts(const TopoSpec& topo, const Drawing& d) {
  const json j = json::parse(drawing_json(topo, d, "t"));
  ASSERT_EQ(j["nodes"].size(), static_cast<size_t>(topo.num_nodes));
  ASSERT_EQ(j["links"].size(), topo.links.size());
  int64_t nodes = 0;
  for (const Drawing::Item& it : d.items) nodes += it.node >= 0 ? 1 : it.hidden_nodes;
  EXPECT_EQ(nodes, topo.num_nodes);
  for (int i = 0; i < topo.num_nodes; ++i) {
    ASSERT_GE(d.item_of[i], 0) << i;
    const Drawing::Item& it = d.items[d.item_of[i]];
    EXPECT_TRUE(it.node == i || it.node < 0) << i;
  }
  int64_t links = d.links_inside_boxes;
  for (const Drawing::Line& l : d.lines) links += l.links;
  EXPECT_EQ(links, static_cast<int64_t>(topo.links.size()));
  const TierSummary s = summarize_tiers(topo);
  ASSERT_EQ(d.tiers, static_cast<int>(s.tiers.size()));
  std::map<int, int> per_tier;
  for (const auto& n : j["nodes"]) ++per_tier[n["tier"].get<int>()];
  for (const TierSummary::Tier& t : s.tiers) EXPECT_EQ(per_tier[t.level], t.nodes) << "tier " << t.level;
  // The export's links are the topology's, in order.
  for (size_t i = 0; i < topo.links.size(); ++i) {
    EXPECT_EQ(j["links"][i]["a"].get<int>(), topo.links[i].a);
    EXPECT_DOUBLE_EQ(j["links"][i]["rate_gbps"].get<double>(), topo.links[i].rate.bps * 1e-9);
  }
}

// The network `text` builds: each node's port count is its number of links in the export.
void check_against_network(const std::string& text) {
  const Scenario s = load_scenario_text(text, "drawing_test.toml");
  const Drawing d = draw_topology(s.topo);
  check_accounts(s.topo, d);
  const json j = json::parse(drawing_json(s.topo, d, "t"));
  std::vector<size_t> degree(static_cast<size_t>(s.topo.num_nodes), 0);
  for (const auto& l : j["links"]) ++degree[l["a"].get<size_t>()], ++degree[l["b"].get<size_t>()];
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  ASSERT_EQ(net.num_nodes(), static_cast<int>(j["nodes"].size()));
  for (int i = 0; i < net.num_nodes(); ++i) EXPECT_EQ(net.node(i).ports().size(), degree[i]) << "node " << i;
}

std::string scenario(const std::string& topology) {
  return "duration_ms = 1\n[topology]\n" + topology + "\n[[flows]]\nsrc = 0\ndst = 9\nsize_bytes = 1000\n";
}

TEST(Drawing, ExportMatchesTheNetworkItBuilds) {
  check_against_network(scenario("kind = \"rail_optimized\"\nservers = 4"));
  check_against_network(scenario("kind = \"multi_plane\"\nservers = 4\nplanes = 2\nservers_per_pod = 2"));
  check_against_network(scenario("kind = \"gpu_clos\"\nservers = 4\nspines = 2"));
  check_against_network(scenario("kind = \"fat_tree\"\nk = 4"));
  check_against_network(scenario("kind = \"rail_optimized\"\nservers = 4\nnics_per_server = 4"));
  check_against_network(scenario("kind = \"multi_plane\"\nservers = 4\nplanes = 2\nnics_per_server = 2"));
  check_against_network(scenario("kind = \"gpu_clos\"\nservers = 4\nspines = 2\nnics_per_server = 1"));
}

// Shared NICs: a bar above their GPUs, in their server's frame, tier 0; the lines from a NIC to its GPUs
// leave it above each GPU, the one to its leaf from its centre.
TEST(Drawing, SharedNicsAreBarsAboveTheirGpus) {
  const TopoSpec t = gpu_cluster({.servers = 2, .gpus_per_server = 8, .nics_per_server = 4});
  const Drawing d = draw_topology(t);
  check_accounts(t, d);
  EXPECT_EQ(d.tiers, 3);
  ASSERT_EQ(d.frames.size(), 2u);
  const Drawing::Item& nic = d.items[d.item_of[18]];  // server 0's NIC 0 (after 16 GPUs, 2 NVSwitches)
  EXPECT_EQ(nic.kind, NodeKind::kNic);
  EXPECT_EQ(nic.tier, 0);
  const Drawing::Item& g0 = d.items[d.item_of[0]];
  const Drawing::Item& g1 = d.items[d.item_of[1]];
  const Drawing::Item& g2 = d.items[d.item_of[2]];
  EXPECT_LT(nic.y, g0.y);
  EXPECT_GT(nic.y, d.items[d.item_of[26]].y);   // below the leaves
  EXPECT_NEAR(nic.x, (g0.x + g1.x) / 2, 1e-9);  // over its two GPUs
  EXPECT_GT(nic.x + nic.w / 2, g1.x);
  EXPECT_LT(nic.x + nic.w / 2, g2.x);
  EXPECT_GE(d.frames[0].y, nic.y - nic.h / 2 - 10);
  EXPECT_LE(d.frames[0].y, nic.y - nic.h / 2);
}

// Small fabrics (at most 3 servers per pod, 3 pods, 8 switches per row) are drawn whole: one item per node,
// one line per link (no parallel links), the servers framed, the planes and tiers found.
TEST(Drawing, SmallFabricsAreDrawnWhole) {
  const TopoSpec rail = gpu_cluster({.servers = 3});
  const Drawing d = draw_topology(rail);
  check_accounts(rail, d);
  EXPECT_FALSE(d.collapsed);
  EXPECT_EQ(d.items.size(), static_cast<size_t>(rail.num_nodes));
  EXPECT_EQ(d.lines.size(), rail.links.size());
  EXPECT_EQ(d.tiers, 3);
  EXPECT_EQ(d.planes, 1);
  EXPECT_EQ(d.groups, 3);  // servers
  EXPECT_EQ(d.frames.size(), 3u);
  EXPECT_EQ(d.frames[0].label, "h0..h7");
  // GPU g of server s is in server s; tiers rise upwards; an NVSwitch lies under its GPUs.
  EXPECT_EQ(d.group[8 * 2 + 5], 2);
  const Drawing::Item& gpu = d.items[d.item_of[0]];
  const Drawing::Item& leaf = d.items[d.item_of[rail.num_nodes - 1 - 3]];  // the last rail switch
  const Drawing::Item& nvs = d.items[d.item_of[24]];
  EXPECT_EQ(nvs.kind, NodeKind::kNvSwitch);
  EXPECT_GT(nvs.y, gpu.y);
  EXPECT_LT(leaf.y, gpu.y);

  const TopoSpec planes = gpu_cluster({.servers = 4, .planes = 2});
  const Drawing p = draw_topology(planes);
  check_accounts(planes, p);
  EXPECT_EQ(p.planes, 2);
  // Plane 1 is mirrored below tier 0: its leaves lie below the GPUs, plane 0's above.
  int above = 0, below = 0;
  for (const Drawing::Item& it : p.items)
    if (it.tier == 1) (it.y < p.y_tier0 ? above : below) += it.plane == (it.y < p.y_tier0 ? 0 : 1);
  EXPECT_EQ(above, 8);
  EXPECT_EQ(below, 8);

  const TopoSpec clos = gpu_cluster({.servers = 4, .servers_per_pod = 2, .spines = 2, .three_tier = true});
  const Drawing c = draw_topology(clos);
  check_accounts(clos, c);
  EXPECT_EQ(c.tiers, 4);

  const TopoSpec ft = fat_tree({.k = 4});
  const Drawing f = draw_topology(ft, {.max_groups = 4, .max_row = 8});
  check_accounts(ft, f);
  EXPECT_FALSE(f.collapsed);
  EXPECT_EQ(f.groups, 16);  // hosts alone
  EXPECT_TRUE(f.frames.empty());
}

// 1,024 GPUs in 4 pods of 32 servers, 32 spines: pods 0 and 3 drawn with a box for pods 1-2, in each
// drawn pod servers 0 and 31 with a box for the other 30; the spines 6, a box of 25, the last.
TEST(Drawing, LargeFabricsCollapseByTheRule) {
  const TopoSpec rail = gpu_cluster({.servers = 128, .servers_per_pod = 32});
  const Drawing d = draw_topology(rail);
  check_accounts(rail, d);
  EXPECT_TRUE(d.collapsed);
  std::map<std::string, int> boxes;
  int gpus = 0, switches = 0;
  for (const Drawing::Item& it : d.items) {
    if (it.node < 0) ++boxes[it.label];
    gpus += it.node >= 0 && it.kind == NodeKind::kGpu;
    switches += it.node >= 0 && it.kind == NodeKind::kSwitch;
  }
  EXPECT_EQ(boxes["2 more pods"], 1);
  EXPECT_EQ(boxes["30 more servers"], 2);
  EXPECT_EQ(boxes["25 more"], 1);  // spines
  EXPECT_EQ(gpus, 2 * 2 * 8);
  EXPECT_EQ(switches, 2 * 8 + 7);  // two pods' rail switches, 7 spines
  // Every node of server 1 (pod 0) is in the servers' box, every node of pod 1 in the pods' box.
  const Drawing::Item& s1 = d.items[d.item_of[8]];
  EXPECT_EQ(s1.hidden_groups, 30);
  EXPECT_EQ(s1.hidden_nodes, 30 * 9);
  const Drawing::Item& p1 = d.items[d.item_of[32 * 8]];
  EXPECT_EQ(p1.hidden_groups, 2);
  EXPECT_EQ(p1.hidden_nodes, 2 * (32 * 9 + 8));
  // Nothing collapses when told so.
  const Drawing all = draw_topology(rail, {.max_groups = 0, .max_row = 0});
  check_accounts(rail, all);
  EXPECT_FALSE(all.collapsed);
  EXPECT_EQ(all.items.size(), static_cast<size_t>(rail.num_nodes));

  // A box hides at least one group: of two servers none, of three the middle one.
  EXPECT_FALSE(draw_topology(gpu_cluster({.servers = 2}), {.max_groups = 1, .max_row = 8}).collapsed);
  const Drawing three = draw_topology(gpu_cluster({.servers = 3}), {.max_groups = 1, .max_row = 8});
  EXPECT_EQ(three.items[three.item_of[8]].label, "1 more server");

  const TopoSpec ft = fat_tree({.k = 16});
  const Drawing f = draw_topology(ft);
  check_accounts(ft, f);
  std::map<std::string, int> fb;
  for (const Drawing::Item& it : f.items)
    if (it.node < 0) ++fb[it.label];
  EXPECT_EQ(fb["14 more pods"], 1);
  EXPECT_EQ(fb["6 more racks"], 2);
  EXPECT_EQ(fb["6 more hosts"], 4);
  EXPECT_EQ(fb["57 more"], 1);  // of 64 cores
}

TEST(Drawing, BadInputIsRefused) {
  TopoSpec t = gpu_cluster({.servers = 2});
  EXPECT_THROW(draw_topology(t, {.max_groups = 3, .max_row = 2}), std::invalid_argument);
  EXPECT_THROW(draw_topology(t, {.max_groups = -1, .max_row = 8}), std::invalid_argument);
  t.num_nodes += 1;  // a switch with no link
  t.is_switch.push_back(true);
  t.node_names.push_back("lonely");
  t.kind.push_back(NodeKind::kSwitch);
  try {
    draw_topology(t);
    FAIL() << "a node with no link was drawn";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lonely) has no link"), std::string::npos) << e.what();
  }
  EXPECT_THROW(draw_topology(TopoSpec{}), std::invalid_argument);
}

// The SVG names every drawn switch, draws the legend's rates with their counts, and states the rule.
TEST(Drawing, SvgHasTheLegendAndTheRule) {
  const TopoSpec rail = gpu_cluster({.servers = 128, .servers_per_pod = 32});
  const std::string svg = drawing_svg(rail, draw_topology(rail), "rail");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("400 Gb/s: 2,048 links"), std::string::npos);
  EXPECT_NE(svg.find("3600 Gb/s: 1,024 links"), std::string::npos);
  EXPECT_NE(svg.find("1,024 GPUs, 128 NVSwitches, 64 switches"), std::string::npos);
  EXPECT_NE(svg.find("more than 3 groups shows its first and last"), std::string::npos);
  EXPECT_NE(svg.find(">30 more<tspan"), std::string::npos);
}

}  // namespace
}  // namespace rocesim
