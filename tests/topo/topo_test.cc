// Tests for src/topo: the builders, the ns-3 HPCC topology reader/writer and its value parsers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "topo/builders.h"
#include "topo/topology.h"
#include "topo/topology_file.h"

namespace rocesim {
namespace {

namespace fs = std::filesystem;

fs::path topo_data_dir() {
#ifdef ROCESIM_TEST_DIR
  return fs::path(ROCESIM_TEST_DIR) / "data" / "topo";
#else
  return fs::path(__FILE__).parent_path() / "data" / "topo";
#endif
}

// A scratch directory for generated files, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = fs::path(::testing::TempDir()) / ("rocesim_topo_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

int count_switches(const TopoSpec& t) { return t.num_nodes - t.num_hosts(); }

std::vector<std::vector<int>> adjacency(const TopoSpec& t) {
  std::vector<std::vector<int>> adj(t.num_nodes);
  for (const LinkSpec& l : t.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  return adj;
}

std::vector<int> bfs_distances(const std::vector<std::vector<int>>& adj, int from) {
  std::vector<int> dist(adj.size(), -1);
  std::queue<int> q;
  dist[from] = 0;
  q.push(from);
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    for (int v : adj[u])
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        q.push(v);
      }
  }
  return dist;
}

// Sizes agree, ids are in range, every node has a link and the graph is connected.
void ExpectWellFormed(const TopoSpec& t) {
  SCOPED_TRACE(t.name);
  ASSERT_EQ(t.is_switch.size(), static_cast<size_t>(t.num_nodes));
  ASSERT_EQ(t.node_names.size(), static_cast<size_t>(t.num_nodes));
  if (!t.host_group.empty()) {
    ASSERT_EQ(t.host_group.size(), static_cast<size_t>(t.num_nodes));
    for (int i = 0; i < t.num_nodes; ++i) {
      if (t.is_switch[i]) {
        EXPECT_EQ(t.host_group[i], -1) << "switch " << i;
      } else {
        EXPECT_GE(t.host_group[i], 0) << "host " << i;
      }
    }
  }
  for (const LinkSpec& l : t.links) {
    ASSERT_TRUE(l.a >= 0 && l.a < t.num_nodes && l.b >= 0 && l.b < t.num_nodes);
    EXPECT_NE(l.a, l.b);
    EXPECT_GT(l.rate.bps, 0);
    EXPECT_GE(l.delay.ps, 0);
  }
  std::vector<std::string> names = t.node_names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate node name";
  const std::vector<int> dist = bfs_distances(adjacency(t), 0);
  for (int i = 0; i < t.num_nodes; ++i) EXPECT_GE(dist[i], 0) << "node " << i << " unreachable";
}

// Hosts first, then switches (the convention of every builder).
void ExpectHostsFirst(const TopoSpec& t) {
  const int hosts = t.num_hosts();
  for (int i = 0; i < t.num_nodes; ++i) EXPECT_EQ(t.is_switch[i], i >= hosts) << t.name << " node " << i;
}

void ExpectSameStructure(const TopoSpec& a, const TopoSpec& b) {
  ASSERT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.is_switch, b.is_switch);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    SCOPED_TRACE("link " + std::to_string(i));
    EXPECT_EQ(a.links[i].a, b.links[i].a);
    EXPECT_EQ(a.links[i].b, b.links[i].b);
    EXPECT_EQ(a.links[i].rate.bps, b.links[i].rate.bps);
    EXPECT_EQ(a.links[i].delay.ps, b.links[i].delay.ps);
    EXPECT_EQ(a.links[i].error_rate, b.links[i].error_rate);
  }
}

int count_links(const TopoSpec& t, double gbps) {
  return static_cast<int>(std::count_if(t.links.begin(), t.links.end(),
                                        [&](const LinkSpec& l) { return l.rate == Rate::from_gbps(gbps); }));
}

std::vector<int> degrees(const TopoSpec& t) {
  std::vector<int> d(t.num_nodes, 0);
  for (const LinkSpec& l : t.links) ++d[l.a], ++d[l.b];
  return d;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string to_text(const TopoSpec& t) {
  std::ostringstream out;
  write_hpcc_topology(t, out);
  return out.str();
}

// ---- builders ----------------------------------------------------------------------------------------

TEST(TopoBuilders, Dumbbell) {
  const TopoSpec t = dumbbell({.senders = 3, .receivers = 2, .bottleneck_rate = Rate::from_gbps(40)});
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.name, "dumbbell");
  EXPECT_EQ(t.num_nodes, 7);
  EXPECT_EQ(t.num_hosts(), 5);
  EXPECT_EQ(t.links.size(), 6u);
  EXPECT_EQ(count_links(t, 100), 5);
  EXPECT_EQ(count_links(t, 40), 1);
  EXPECT_EQ(t.links.back().a, lookup_node(t, "s0"));
  EXPECT_EQ(t.links.back().b, lookup_node(t, "s1"));
  EXPECT_EQ(t.host_group, (std::vector<int>{0, 0, 0, 1, 1, -1, -1}));
  EXPECT_EQ(t.node_names[4], "h4");
  const TopoSpec d = dumbbell();
  EXPECT_EQ(d.num_hosts(), 4);
  EXPECT_EQ(d.links[0].delay, Time::from_us(1));
}

TEST(TopoBuilders, Star) {
  const TopoSpec t = star({.hosts = 9, .rate = Rate::from_gbps(40), .delay = Time::from_us(4)});
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.num_nodes, 10);
  EXPECT_EQ(t.num_hosts(), 9);
  EXPECT_EQ(t.links.size(), 9u);
  EXPECT_EQ(count_links(t, 40), 9);
  EXPECT_EQ(degrees(t)[9], 9);
  EXPECT_EQ(star().num_hosts(), 16);
}

TEST(TopoBuilders, LeafSpine) {
  const TopoSpec t = leaf_spine({.leaves = 3, .spines = 2, .hosts_per_leaf = 5});
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.num_hosts(), 15);
  EXPECT_EQ(count_switches(t), 5);
  EXPECT_EQ(t.links.size(), 15u + 6u);
  EXPECT_EQ(count_links(t, 100), 15);
  EXPECT_EQ(count_links(t, 400), 6);
  const std::vector<int> deg = degrees(t);
  for (int leaf = 15; leaf < 18; ++leaf) EXPECT_EQ(deg[leaf], 5 + 2);
  for (int spine = 18; spine < 20; ++spine) EXPECT_EQ(deg[spine], 3);
  EXPECT_EQ(t.host_group[14], 2);
  const TopoSpec d = leaf_spine();
  EXPECT_EQ(d.num_hosts(), 64);
  EXPECT_EQ(d.links.size(), 64u + 16u);
}

TEST(TopoBuilders, FatTreeK4) {
  const TopoSpec t = fat_tree({.k = 4});
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.num_hosts(), 16);
  EXPECT_EQ(count_switches(t), 20);
  EXPECT_EQ(t.links.size(), 48u);
  const std::vector<int> deg = degrees(t);
  for (int i = 0; i < t.num_nodes; ++i) EXPECT_EQ(deg[i], t.is_switch[i] ? 4 : 1) << "node " << i;
  // Host-to-host paths: same edge 2 links, same pod 4, other pod 6.
  const std::vector<int> dist = bfs_distances(adjacency(t), 0);
  EXPECT_EQ(dist[1], 2);
  EXPECT_EQ(dist[2], 4);
  EXPECT_EQ(dist[4], 6);
  EXPECT_EQ(t.host_group[15], 7);
}

TEST(TopoBuilders, FatTreeK12) {
  const TopoSpec t = fat_tree({.k = 12});
  ExpectWellFormed(t);
  EXPECT_EQ(t.num_hosts(), 432);
  EXPECT_EQ(count_switches(t), 180);
  EXPECT_EQ(t.links.size(), 1296u);
  EXPECT_EQ(fat_tree().num_hosts(), 432);  // default k = 12 (rcm/fattree)
  const std::vector<int> deg = degrees(t);
  for (int i = 432; i < t.num_nodes; ++i) EXPECT_EQ(deg[i], 12);
}

TEST(TopoBuilders, FatTree3TierIsHpccFatTxt) {
  const TopoSpec t = fat_tree_3tier();
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.num_nodes, 376);
  EXPECT_EQ(t.num_hosts(), 320);
  EXPECT_EQ(count_switches(t), 56);
  EXPECT_EQ(t.links.size(), 480u);
  EXPECT_EQ(count_links(t, 100), 320);
  EXPECT_EQ(count_links(t, 400), 160);
  for (const LinkSpec& l : t.links) EXPECT_EQ(l.delay, Time::from_us(1));
  const std::vector<int> deg = degrees(t);
  for (int tor = 320; tor < 340; ++tor) EXPECT_EQ(deg[tor], 16 + 4);
  for (int agg = 340; agg < 360; ++agg) EXPECT_EQ(deg[agg], 4 + 4);
  for (int core = 360; core < 376; ++core) EXPECT_EQ(deg[core], 5);
  EXPECT_EQ(t.host_group[319], 19);

  // Longest host-to-host path: host-ToR-agg-core-agg-ToR-host.
  const auto adj = adjacency(t);
  int longest = 0;
  for (int h = 0; h < 320; h += 17) {
    const std::vector<int> dist = bfs_distances(adj, h);
    for (int o = 0; o < 320; ++o) longest = std::max(longest, dist[o]);
  }
  EXPECT_EQ(longest, 6);

  // Lines copied from the HPCC repository's simulation/mix/fat.txt.
  const std::vector<std::string> lines = lines_of(to_text(t));
  ASSERT_EQ(lines.size(), 482u);
  EXPECT_EQ(lines[0], "376 56 480");
  std::string ids;
  for (int i = 320; i < 376; ++i) ids += (i > 320 ? " " : "") + std::to_string(i);
  EXPECT_EQ(lines[1], ids);
  EXPECT_EQ(lines[2], "0 320 100Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[18], "16 321 100Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[321], "319 339 100Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[322], "320 340 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[326], "321 340 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[401], "339 359 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[402], "340 360 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[406], "341 364 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[418], "344 360 400Gbps 1000ns 0.000000");
  EXPECT_EQ(lines[481], "359 375 400Gbps 1000ns 0.000000");
}

TEST(TopoBuilders, MercuryVictimBurstsOnOwnS3Ports) {
  const TopoSpec t = mercury_victim();
  ExpectWellFormed(t);
  EXPECT_EQ(t.num_nodes, 15);
  EXPECT_EQ(t.links.size(), 14u);
  EXPECT_EQ(lookup_node(t, "S4"), -1);
  EXPECT_EQ(degrees(t)[lookup_node(t, "S3")], 11);  // S2, R1, R2, B1..B8
}

TEST(TopoBuilders, MercuryVictim) {
  const TopoSpec t = mercury_victim({.bursts_via_switch = true});
  ExpectWellFormed(t);
  ExpectHostsFirst(t);
  EXPECT_EQ(t.num_nodes, 16);
  EXPECT_EQ(t.num_hosts(), 12);
  EXPECT_EQ(t.links.size(), 15u);
  for (const char* n : {"H1", "H2", "R1", "R2", "B1", "B8", "S1", "S2", "S3", "S4"})
    EXPECT_GE(lookup_node(t, n), 0) << n;
  EXPECT_EQ(lookup_node(t, "B9"), -1);
  EXPECT_EQ(lookup_node(t, "H1"), 0);
  EXPECT_EQ(lookup_node(t, "R2"), 3);
  EXPECT_EQ(count_links(t, 20), 2);
  EXPECT_EQ(count_links(t, 40), 13);

  auto find_link = [&](const char* x, const char* y) -> const LinkSpec* {
    const int a = lookup_node(t, x), b = lookup_node(t, y);
    for (const LinkSpec& l : t.links)
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return &l;
    return nullptr;
  };
  ASSERT_NE(find_link("H1", "S1"), nullptr);
  EXPECT_EQ(find_link("H1", "S1")->rate, Rate::from_gbps(20));
  EXPECT_EQ(find_link("H1", "S1")->delay, Time::from_us(1));
  ASSERT_NE(find_link("S1", "S2"), nullptr);
  EXPECT_EQ(find_link("S1", "S2")->delay, Time::from_us(4));
  ASSERT_NE(find_link("S2", "S3"), nullptr);
  ASSERT_NE(find_link("R2", "S3"), nullptr);
  EXPECT_EQ(find_link("R2", "S3")->rate, Rate::from_gbps(40));
  ASSERT_NE(find_link("S4", "S3"), nullptr);
  ASSERT_NE(find_link("B5", "S4"), nullptr);
  EXPECT_EQ(find_link("B1", "S3"), nullptr);  // bursts enter S3 only through S4's port
  EXPECT_EQ(degrees(t)[lookup_node(t, "S3")], 4);

  // H1 -> R1 crosses S1-S2-S3: 4 links.
  EXPECT_EQ(bfs_distances(adjacency(t), lookup_node(t, "H1"))[lookup_node(t, "R1")], 4);

  const TopoSpec fast = mercury_victim({.host_rate_h12 = Rate::from_gbps(100),
                                        .rate = Rate::from_gbps(100),
                                        .burst_senders = 3,
                                        .bursts_via_switch = true});
  ExpectWellFormed(fast);
  EXPECT_EQ(fast.num_hosts(), 7);
  EXPECT_EQ(count_links(fast, 100), static_cast<int>(fast.links.size()));
  EXPECT_EQ(lookup_node(fast, "B4"), -1);

  const TopoSpec none = mercury_victim({.burst_senders = 0});
  ExpectWellFormed(none);
  EXPECT_EQ(none.num_nodes, 7);
  EXPECT_EQ(lookup_node(none, "S4"), -1);
}

TEST(TopoBuilders, EveryBuilderWellFormed) {
  const std::vector<TopoSpec> all = {
      dumbbell(),
      star(),
      leaf_spine(),
      fat_tree({.k = 2}),
      fat_tree({.k = 6}),
      fat_tree_3tier({.pods = 2, .tors_per_pod = 3, .aggs_per_pod = 2, .hosts_per_tor = 2, .cores = 6}),
      mercury_victim(),
      star({.hosts = 1})};
  for (const TopoSpec& t : all) {
    ExpectWellFormed(t);
    ExpectHostsFirst(t);
    EXPECT_EQ(t.host_group.size(), static_cast<size_t>(t.num_nodes)) << t.name;
    EXPECT_FALSE(t.name.empty());
  }
}

TEST(TopoBuilders, BadParamsThrow) {
  EXPECT_THROW(dumbbell({.senders = 0}), std::invalid_argument);
  EXPECT_THROW(dumbbell({.host_rate = Rate::from_bps(0)}), std::invalid_argument);
  EXPECT_THROW(star({.delay = Time::from_ns(-1)}), std::invalid_argument);
  EXPECT_THROW(leaf_spine({.spines = 0}), std::invalid_argument);
  EXPECT_THROW(fat_tree({.k = 5}), std::invalid_argument);
  EXPECT_THROW(fat_tree({.k = 0}), std::invalid_argument);
  EXPECT_THROW(fat_tree({.k = 1'000'000}), std::invalid_argument);
  EXPECT_THROW(fat_tree_3tier({.cores = 15}), std::invalid_argument);
  EXPECT_THROW(fat_tree_3tier({.pods = 100000, .hosts_per_tor = 100000}), std::invalid_argument);
  EXPECT_THROW(mercury_victim({.burst_senders = -1}), std::invalid_argument);
  EXPECT_THROW(mercury_victim({.rate = Rate::from_gbps(-40)}), std::invalid_argument);
}

TEST(TopoBuilders, LookupNode) {
  const TopoSpec t = fat_tree_3tier();
  EXPECT_EQ(lookup_node(t, "h0"), 0);
  EXPECT_EQ(lookup_node(t, "h319"), 319);
  EXPECT_EQ(lookup_node(t, "s0"), 320);
  EXPECT_EQ(lookup_node(t, "s55"), 375);
  EXPECT_EQ(lookup_node(t, "s56"), -1);
  EXPECT_EQ(lookup_node(t, ""), -1);
  EXPECT_EQ(lookup_node(TopoSpec{}, "h0"), -1);
}

// ---- value parsers -----------------------------------------------------------------------------------

TEST(TopoFile, ParseNs3Rate) {
  struct Case {
    const char* text;
    double bps;
  };
  const Case good[] = {{"100Gbps", 100e9}, {"400Gbps", 400e9}, {"40Gbps", 40e9},    {"25Gbps", 25e9},
                       {"10Gbps", 10e9},   {"100Mbps", 100e6}, {"1Kbps", 1e3},      {"1kbps", 1e3},
                       {"1bps", 1},        {"100Gb/s", 100e9}, {"2.5Gbps", 2.5e9},  {".5Gbps", 0.5e9},
                       {"1GBps", 8e9},     {"1Kib/s", 1024},   {"1MiB/s", 8388608}, {"1000", 1000},
                       {"0.3Gbps", 3e8},   {"1.5bps", 1},      {"007Mbps", 7e6},    {"0Gbps", 0}};
  for (const Case& c : good) {
    const auto r = parse_ns3_rate(c.text);
    ASSERT_TRUE(r.has_value()) << c.text;
    EXPECT_EQ(r->bps, c.bps) << c.text;
  }
  for (const char* bad :
       {"", "Gbps", "100Gbs", "100gbps", "100 Gbps", "-1Gbps", "+1Gbps", "1e9bps", "1.2.3Gbps", "100GBPS",
        "100Gbps ", "99999999999Gbps", ".Gbps", "1..0Gbps", "nanGbps"})
    EXPECT_FALSE(parse_ns3_rate(bad).has_value()) << "'" << bad << "'";
}

TEST(TopoFile, ParseNs3Time) {
  struct Case {
    const char* text;
    int64_t ps;
  };
  const Case good[] = {{"1000ns", 1'000'000},
                       {"0.001ms", 1'000'000},
                       {"1us", 1'000'000},
                       {"2s", 2'000'000'000'000},
                       {"1500ps", 1500},
                       {"4us", 4'000'000},
                       {"0.0015us", 1500},
                       {"1", 1'000'000'000'000},
                       {"-1us", -1'000'000},
                       {"+3ns", 3000},
                       {"0ns", 0},
                       {"1500fs", 2},
                       {"1.4ps", 1},
                       {"0.0000000000000001s", 0},
                       {"1000000s", 1'000'000'000'000'000'000}};
  for (const Case& c : good) {
    const auto t = parse_ns3_time(c.text);
    ASSERT_TRUE(t.has_value()) << c.text;
    EXPECT_EQ(t->ps, c.ps) << c.text;
  }
  for (const char* bad : {"", "ns", "1000nsec", "1 us", "1e3ns", "--1ns", "1.2.3us", "1min", "10000000s",
                          "99999999999999999999999ps", "1US", "+", "."})
    EXPECT_FALSE(parse_ns3_time(bad).has_value()) << "'" << bad << "'";
}

TEST(TopoFile, FormatNs3Values) {
  EXPECT_EQ(format_ns3_rate(Rate::from_gbps(100)), "100Gbps");
  EXPECT_EQ(format_ns3_rate(Rate::from_gbps(2.5)), "2500Mbps");
  EXPECT_EQ(format_ns3_rate(Rate::from_bps(1234)), "1234bps");
  EXPECT_EQ(format_ns3_time(Time::from_us(1)), "1000ns");
  EXPECT_EQ(format_ns3_time(Time::from_ps(1500)), "1500ps");
  EXPECT_EQ(format_ns3_time(Time::zero()), "0ns");
  EXPECT_THROW(format_ns3_rate(Rate::from_bps(0.2)), std::invalid_argument);
  EXPECT_THROW(format_ns3_time(Time::from_ps(-1)), std::invalid_argument);
  for (double g : {0.001, 1.0, 2.5, 12.345, 100.0, 400.0, 1e6}) {
    const Rate r = Rate::from_gbps(g);
    EXPECT_EQ(parse_ns3_rate(format_ns3_rate(r))->bps, std::round(r.bps)) << g;
  }
}

// ---- reader and writer -------------------------------------------------------------------------------

TEST(TopoFile, RoundTripBuilders) {
  ScratchDir dir("roundtrip");
  TopoSpec lossy = dumbbell();
  lossy.name = "dumbbell_lossy";
  lossy.links[0].error_rate = 1e-5;
  lossy.links[1].error_rate = 0.25;
  lossy.links[2].delay = Time::from_ps(1500);
  lossy.links[3].rate = Rate::from_bps(123456789);
  const std::vector<std::pair<TopoSpec, bool>> specs = {// (spec, uses default names)
                                                        {dumbbell({.senders = 3, .receivers = 5}), true},
                                                        {star(), true},
                                                        {leaf_spine(), true},
                                                        {fat_tree({.k = 4}), true},
                                                        {fat_tree({.k = 12}), true},
                                                        {fat_tree_3tier(), true},
                                                        {mercury_victim(), false},
                                                        {lossy, true}};
  for (const auto& [spec, default_names] : specs) {
    SCOPED_TRACE(spec.name);
    const std::string text = to_text(spec);
    const std::string path = dir.write(spec.name + ".txt", text);
    const TopoSpec back = read_hpcc_topology(path);
    ExpectSameStructure(spec, back);
    EXPECT_EQ(back.name, path);
    if (default_names) {
      EXPECT_EQ(back.node_names, spec.node_names);
    }
    EXPECT_TRUE(back.host_group.empty());
    EXPECT_EQ(to_text(back), text);  // writing is stable
  }
}

TEST(TopoFile, ValidFilesWithBlankLines) {
  // Data file: blank lines at the start, between and after, tabs, trailing spaces, mixed units.
  const std::string path = (topo_data_dir() / "valid_blank_lines.txt").string();
  const TopoSpec t = read_hpcc_topology(path);
  ExpectWellFormed(t);
  EXPECT_EQ(t.num_nodes, 6);
  EXPECT_EQ(t.num_hosts(), 4);
  EXPECT_TRUE(t.is_switch[4] && t.is_switch[5]);
  ASSERT_EQ(t.links.size(), 5u);
  EXPECT_EQ(t.links[1].delay, Time::from_us(1));
  EXPECT_EQ(t.links[2].rate, Rate::from_gbps(40));
  EXPECT_EQ(t.links[3].rate, Rate::from_mbps(100));
  EXPECT_EQ(t.links[3].delay, Time::from_ps(2000));
  EXPECT_EQ(t.links[3].error_rate, 1e-5);
  EXPECT_EQ(t.links[4].rate, Rate::from_gbps(400));
  EXPECT_EQ(t.node_names, (std::vector<std::string>{"h0", "h1", "h2", "h3", "s0", "s1"}));

  // CRLF line ends, switches listed out of order and interleaved with hosts, no final newline,
  // parallel links, a multi-homed host, a host-to-host link.
  const TopoSpec u = parse_hpcc_topology(
      "5 2 6\r\n\r\n3 0\r\n1 0 10Gbps 1us 0\r\n1 3 10Gbps 1us 0\r\n0 3 25Gbps 2us 0\r\n0 3 25Gbps 2us 0\r\n"
      "2 3 1Gbps 1ms 0\r\n2 4 1Gbps 1ms 1",
      "inline");
  EXPECT_EQ(u.name, "inline");
  EXPECT_EQ(u.is_switch, (std::vector<bool>{true, false, false, true, false}));
  EXPECT_EQ(u.node_names, (std::vector<std::string>{"s0", "h0", "h1", "s1", "h2"}));
  EXPECT_EQ(u.links.back().error_rate, 1.0);

  // No switches: the switch-id line is blank or absent.
  for (const char* text : {"2 0 1\n\n0 1 100Gbps 1us 0\n", "2 0 1\n0 1 100Gbps 1us 0\n"}) {
    const TopoSpec v = parse_hpcc_topology(text, "noswitch");
    EXPECT_EQ(v.num_hosts(), 2);
    EXPECT_EQ(v.links.size(), 1u);
  }
  const TopoSpec w =
      parse_hpcc_topology(to_text(parse_hpcc_topology("2 0 1\n0 1 100Gbps 1us 0\n", "x")), "y");
  EXPECT_EQ(w.num_nodes, 2);
}

struct BadCase {
  const char* name;
  std::string text;
  int line;
  const char* phrase;
};

const char kOk[] = " 100Gbps 1000ns 0.000000\n";
std::string ok_link(int a, int b) { return std::to_string(a) + " " + std::to_string(b) + kOk; }

// A 4-node base: hosts 0, 1 and switches 2, 3.
std::string base(const std::string& links_text, int links = 3) {
  return "4 2 " + std::to_string(links) + "\n2 3\n" + links_text;
}

TEST(TopoFile, MalformedFilesNameFileLineAndProblem) {
  ScratchDir dir("bad");
  const std::vector<BadCase> cases = {
      {"empty", "", 1, "file is empty"},
      {"blank_only", "\n  \n\t\n", 1, "file is empty"},
      {"header_fields", "4 2\n2 3\n", 1, "expected a header line of 3 whole numbers"},
      {"header_word", "4 two 3\n", 1, "expected the switch count (a whole number)"},
      {"header_negative", "\n4 -2 3\n", 2, "switch count must not be negative, got '-2'"},
      {"header_float", "4.0 2 3\n", 1, "expected the node count"},
      {"one_node", "1 0 0\n", 1, "at least 2 nodes"},
      {"switches_exceed_nodes", "4 5 3\n", 1, "switch count 5 exceeds the node count 4"},
      {"no_links", "4 2 0\n2 3\n", 1, "link count is 0"},
      {"switch_count_short", "4 2 3\n2\n" + ok_link(0, 2), 2, "expected 2 switch ids on line 2, got 1"},
      {"switch_count_long", "\n\n4 2 3\n\n2 3 1\n", 5, "expected 2 switch ids on line 5, got 3"},
      {"switch_dup", "4 2 3\n3 3\n", 2, "duplicate switch id 3"},
      {"switch_range", "4 2 3\n2 4\n", 2, "switch id 4 out of range 0..3"},
      {"switch_word", "4 2 3\n2 x\n", 2, "expected a switch id"},
      {"switch_missing", "4 2 3\n\n", 2, "file ends before the switch ids"},
      {"node_range", base(ok_link(0, 2) + "400 2" + kOk + ok_link(2, 3)), 4, "node id 400 out of range 0..3"},
      {"node_huge", base(ok_link(0, 2) + "1 99999999999999999999" + kOk), 4, "out of range 0..3"},
      {"node_negative", base("-1 2" + std::string(kOk)), 3, "node id must not be negative, got '-1'"},
      {"node_word", base(ok_link(0, 2) + ok_link(1, 3) + "two 3" + kOk), 5, "expected a node id"},
      {"self_link", base(ok_link(0, 2) + "\n\n3 3" + kOk), 6, "link 3-3 connects a node to itself"},
      {"bad_rate", base("0 2 100Gbs 1000ns 0\n"), 3, "expected a rate like 100Gbps, got '100Gbs'"},
      {"zero_rate", base("0 2 0Gbps 1000ns 0\n"), 3, "link rate must be positive, got '0Gbps'"},
      {"negative_rate", base("0 2 -5Gbps 1000ns 0\n"), 3, "expected a rate like 100Gbps, got '-5Gbps'"},
      {"bad_delay", base("0 2 100Gbps 1000nsec 0\n"), 3, "expected a delay like 1000ns or 0.001ms"},
      {"negative_delay", base("0 2 100Gbps -1us 0\n"), 3, "link delay must not be negative, got '-1us'"},
      {"error_rate_high", base("0 2 100Gbps 1us 1.5\n"), 3, "error rate must be in [0,1], got '1.5'"},
      {"error_rate_negative", base("0 2 100Gbps 1us -0.1\n"), 3, "error rate must be in [0,1]"},
      {"error_rate_nan", base("0 2 100Gbps 1us nan\n"), 3, "error rate must be in [0,1]"},
      {"error_rate_word", base("0 2 100Gbps 1us lossy\n"), 3, "expected an error rate"},
      {"four_fields", base(ok_link(0, 2) + "1 3 100Gbps 1us\n"), 4, "link 2 of 3: expected 5 fields"},
      {"six_fields", base("0 2 100Gbps 1us 0 0\n"), 3,
       "expected 5 fields 'a b rate delay error_rate', got 6"},
      {"ends_early", base(ok_link(0, 2) + ok_link(1, 3), 12), 4, "file ends after 2 of 12 links"},
      {"extra_line", base(ok_link(0, 2) + ok_link(1, 3) + ok_link(2, 3) + "\n1 2" + kOk), 7,
       "expected the end of the file after the 3 links declared on line 1, got another line starting '1'"},
      {"unlinked_node", base(ok_link(0, 2) + ok_link(1, 2) + ok_link(0, 1)), 1, "node 3 has no link"},
      {"too_few_links", "9 1 1\n8\n0 8" + std::string(kOk), 1, "9 nodes but only 1 link"},
      {"binary_garbage", base(std::string("0 2 \x01\xff\x00Gbps 1us 0\n", 18)), 3,
       "got '\\x01\\xff\\x00Gbps'"},
  };
  ASSERT_GE(cases.size(), 12u);
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.write(std::string(c.name) + ".txt", c.text);
    try {
      read_hpcc_topology(path);
      ADD_FAILURE() << "no error for " << c.name;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), c.line) << what;
      EXPECT_NE(what.find(path + ":" + std::to_string(c.line) + ": "), std::string::npos) << what;
      EXPECT_NE(what.find(c.phrase), std::string::npos) << what;
    }
  }
}

TEST(TopoFile, MalformedDataFile) {
  const std::string path = (topo_data_dir() / "bad_rate.txt").string();
  try {
    read_hpcc_topology(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(
        std::string(e.what()).find("bad_rate.txt:4: link 2 of 3: expected a rate like 100Gbps, got '100Gbs'"),
        std::string::npos)
        << e.what();
  }
}

TEST(TopoFile, UnreadableFile) {
  ScratchDir dir("unreadable");
  for (const std::string& path : {(dir.path() / "missing.txt").string(), dir.path().string()}) {
    try {
      read_hpcc_topology(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), 0);
      EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
    }
  }
}

TEST(TopoFile, WriterRejectsInconsistentSpecs) {
  std::ostringstream out;
  TopoSpec t = star({.hosts = 2});
  t.links[0].b = 7;
  EXPECT_THROW(write_hpcc_topology(t, out), std::invalid_argument);
  t = star({.hosts = 2});
  t.is_switch.pop_back();
  EXPECT_THROW(write_hpcc_topology(t, out), std::invalid_argument);
  t = star({.hosts = 2});
  t.links[0].error_rate = 2;
  EXPECT_THROW(write_hpcc_topology(t, out), std::invalid_argument);
}

// Random mutations of valid files: only InputError may escape, and whatever parses is consistent.
TEST(TopoFile, FuzzedInputOnlyThrowsInputError) {
  const std::vector<std::string> seeds = {to_text(mercury_victim({.burst_senders = 2})),
                                          to_text(fat_tree({.k = 2})),
                                          "3 1 2\n\n2\n0 2 100Gbps 0.001ms 0\n1 2 25Gb/s 1500ps 1e-3\n"};
  const std::string alphabet = "0123456789 .+-\n\t\rGMKkbps/Bsmunf e";
  std::mt19937 rng(12345);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = seeds[iter % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0:
          s[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 3:
          s[pos] = static_cast<char>(rng() % 256);
          break;
        case 4:
          s.insert(pos, s.substr(rng() % s.size(), rng() % 30));
          break;
      }
    }
    try {
      const TopoSpec t = parse_hpcc_topology(s, "fuzz");
      ++parsed;
      ASSERT_EQ(t.is_switch.size(), static_cast<size_t>(t.num_nodes));
      std::vector<int> deg(t.num_nodes, 0);
      for (const LinkSpec& l : t.links) {
        ASSERT_TRUE(l.a >= 0 && l.a < t.num_nodes && l.b >= 0 && l.b < t.num_nodes && l.a != l.b);
        ASSERT_GT(l.rate.bps, 0);
        ASSERT_GE(l.delay.ps, 0);
        ASSERT_TRUE(l.error_rate >= 0 && l.error_rate <= 1);
        ++deg[l.a], ++deg[l.b];
      }
      for (int d : deg) ASSERT_GT(d, 0);
    } catch (const InputError& e) {
      ++rejected;
      ASSERT_EQ(e.file(), "fuzz");
    } catch (const std::exception& e) {
      FAIL() << "unexpected exception " << e.what() << " for input:\n" << s;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace rocesim
