// GPU-cluster builders (topo/builders.h gpu_cluster: rail_optimized, multi_plane, gpu_clos), their tiers and
// bisection (topo/tiers.h), and node kinds in topology files.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "topo/builders.h"
#include "topo/tiers.h"
#include "topo/topology_file.h"

namespace rocesim {
namespace {

int count_kind(const TopoSpec& t, NodeKind k) {
  int n = 0;
  for (int i = 0; i < t.num_nodes; ++i) n += t.kind_of(i) == k ? 1 : 0;
  return n;
}

struct ShapeCase {
  GpuClusterParams p;
  int pods, spines, cores;  // expected, worked by hand from the builder's rule
};

// Spines from oversubscription are ceil(servers_per_pod x nic_rate / planes / (oversubscription x
// fabric_rate)); cores spines x ceil(gpus_per_server / oversubscription).
const std::vector<ShapeCase>& shape_cases() {
  static const std::vector<ShapeCase> cases = {
      {{.servers = 4, .gpus_per_server = 8}, 1, 4, 0},  // 4 x 400G down per leaf: 4 x 400G up
      {{.servers = 8, .gpus_per_server = 4, .servers_per_pod = 4, .oversubscription = 2}, 2, 2, 0},
      {{.servers = 6, .gpus_per_server = 2, .planes = 2, .servers_per_pod = 3}, 2, 2, 0},  // 3 x 200G
      {{.servers = 4, .gpus_per_server = 4, .servers_per_pod = 2, .three_tier = true}, 2, 2, 8},
      {{.servers = 8,
        .gpus_per_server = 8,
        .planes = 2,
        .servers_per_pod = 4,
        .spines = 3,
        .cores = 6,
        .three_tier = true},
       2,
       3,
       6},
      {{.servers = 3, .gpus_per_server = 1}, 1, 3, 0},  // no NVSwitch
  };
  return cases;
}

// Node and link counts against their closed forms: S servers of G GPUs, P planes, D pods, X spines per plane
// (two tiers) or A aggregation switches per pod and plane and C cores per plane (three tiers).
TEST(GpuCluster, CountsMatchTheirClosedForms) {
  for (const ShapeCase& c : shape_cases()) {
    const GpuClusterParams& p = c.p;
    SCOPED_TRACE(::testing::Message() << "servers " << p.servers << " gpus " << p.gpus_per_server
                                      << " planes " << p.planes << " three_tier " << p.three_tier);
    const GpuClusterShape g = gpu_cluster_shape(p);
    EXPECT_EQ(g.pods, c.pods);
    EXPECT_EQ(g.spines, c.spines);
    EXPECT_EQ(g.cores, c.cores);
    const TopoSpec t = gpu_cluster(p);
    const int64_t S = p.servers, G = p.gpus_per_server, P = p.planes, D = c.pods;
    const int64_t nvs = G > 1 ? S : 0;
    int64_t nodes = 0, links = 0;
    if (p.three_tier) {
      const int64_t A = c.spines, C = c.cores;
      nodes = S * G + nvs + P * (D * G + D * A + C);
      links = S * G * P + (nvs ? S * G : 0) + P * (D * G * A + D * A * (C / A));
    } else {
      const int64_t X = c.spines;
      nodes = S * G + nvs + P * (D * G + X);
      links = S * G * P + (nvs ? S * G : 0) + P * D * G * X;
    }
    EXPECT_EQ(t.num_nodes, nodes);
    EXPECT_EQ(static_cast<int64_t>(t.links.size()), links);
    EXPECT_EQ(t.num_hosts(), S * G);
    EXPECT_EQ(count_kind(t, NodeKind::kGpu), S * G);
    EXPECT_EQ(count_kind(t, NodeKind::kNvSwitch), nvs);
    // Every GPU: P NIC ports to P different leaves at nic_rate / P, then one NVLink to its server's NVSwitch.
    std::vector<std::vector<const LinkSpec*>> of(static_cast<size_t>(t.num_nodes));
    for (const LinkSpec& l : t.links) {
      of[l.a].push_back(&l);
      of[l.b].push_back(&l);
    }
    for (int h = 0; h < S * G; ++h) {
      ASSERT_EQ(static_cast<int64_t>(of[h].size()), P + (nvs ? 1 : 0)) << "GPU " << h;
      for (int64_t k = 0; k < P; ++k) {
        const int peer = of[h][k]->a == h ? of[h][k]->b : of[h][k]->a;
        EXPECT_EQ(t.kind_of(peer), NodeKind::kSwitch);
        EXPECT_DOUBLE_EQ(of[h][k]->rate.gbps(), 400.0 / static_cast<double>(P));
      }
      if (nvs) {
        const int peer = of[h][P]->b;
        EXPECT_EQ(t.kind_of(peer), NodeKind::kNvSwitch);
        EXPECT_EQ(peer, S * G + h / G);  // its server's
        EXPECT_DOUBLE_EQ(of[h][P]->rate.gbps(), 3600.0);
      }
    }
  }
}

// GPU g of every server of a pod hangs off the same leaf (its rail switch), a different one per rail.
TEST(GpuCluster, RailsShareTheirLeafWithinAPod) {
  const GpuClusterParams p{.servers = 8, .gpus_per_server = 4, .servers_per_pod = 4};
  const TopoSpec t = gpu_cluster(p);
  auto leaf_of = [&](int gpu) {
    for (const LinkSpec& l : t.links)
      if (l.a == gpu) return l.b;  // its first link: the NIC's
    return -1;
  };
  for (int s = 0; s < 8; ++s)
    for (int g = 0; g < 4; ++g) {
      EXPECT_EQ(leaf_of(s * 4 + g), leaf_of((s / 4) * 16 + g)) << "server " << s << " rail " << g;
      EXPECT_EQ(t.host_group[s * 4 + g], (s / 4) * 4 + g);
      if (g > 0) {
        EXPECT_NE(leaf_of(s * 4 + g), leaf_of(s * 4));
      }
    }
}

// The bisection validate prints against its formula: half the NIC capacity on a non-blocking fabric;
// half the leaves' spine uplinks when the fabric is oversubscribed across pods.
TEST(GpuCluster, BisectionMatchesTheFormula) {
  {  // rail_optimized, one pod: same-rail traffic never climbs; the NICs bound it: 32 x 400G / 2.
    const TierSummary s = summarize_tiers(gpu_cluster({.servers = 4, .gpus_per_server = 8}));
    ASSERT_EQ(s.tiers.size(), 3u);
    EXPECT_EQ(s.tiers[0].kinds[static_cast<int>(NodeKind::kGpu)], 32);
    EXPECT_EQ(s.tiers[0].kinds[static_cast<int>(NodeKind::kNvSwitch)], 4);
    EXPECT_EQ(s.tiers[0].inner_links, 32);  // NVLinks
    EXPECT_EQ(s.tiers[0].parts, 4);         // servers
    EXPECT_EQ(s.tiers[1].nodes, 8);         // leaves
    EXPECT_EQ(s.tiers[1].up_links, 8 * 4);  // to 4 spines
    EXPECT_EQ(s.tiers[2].nodes, 4);
    EXPECT_DOUBLE_EQ(s.bisection_bps, 32 * 400e9 / 2);
    EXPECT_EQ(s.bisection_tier, 0);
  }
  {  // oversubscribed 2:1 across two pods: 8 leaves x 2 spine uplinks x 400G / 2 = 3.2 Tb/s < 6.4 Tb/s
    const TopoSpec t =
        gpu_cluster({.servers = 8, .gpus_per_server = 4, .servers_per_pod = 4, .oversubscription = 2});
    const TierSummary s = summarize_tiers(t);
    ASSERT_EQ(s.tiers.size(), 3u);
    EXPECT_EQ(s.tiers[1].up_links, 16);  // the spine uplinks: half the leaves' 4 x 400G downlinks
    EXPECT_DOUBLE_EQ(s.tiers[1].up_bps, 16 * 400e9);
    EXPECT_EQ(s.tiers[1].parts, 2);  // pods
    EXPECT_DOUBLE_EQ(s.bisection_bps, 8 * 2 * 400e9 / 2);
    EXPECT_EQ(s.bisection_tier, 1);
  }
  {  // multi_plane: 16 GPUs x 2 x 200G ports, two planes of leaves
    const TierSummary s = summarize_tiers(gpu_cluster({.servers = 4, .gpus_per_server = 4, .planes = 2}));
    EXPECT_EQ(s.tiers[1].nodes, 2 * 4);
    EXPECT_EQ(s.tiers[0].up_links, 32);
    EXPECT_DOUBLE_EQ(s.bisection_bps, 16 * 400e9 / 2);
  }
  {  // gpu_clos 2 pods, cores oversubscribed 4:1 at the aggregation tier: 2 pods x 2 aggs x 1 core uplink
    const TopoSpec t = gpu_cluster({.servers = 4,
                                    .gpus_per_server = 4,
                                    .servers_per_pod = 2,
                                    .spines = 2,
                                    .cores = 2,
                                    .three_tier = true});
    const TierSummary s = summarize_tiers(t);
    ASSERT_EQ(s.tiers.size(), 4u);
    EXPECT_EQ(s.tiers[2].up_links, 4);
    EXPECT_DOUBLE_EQ(s.bisection_bps, 4 * 400e9 / 2);
    EXPECT_EQ(s.bisection_tier, 2);
  }
  {  // a fat-tree (k = 4, non-blocking): 16 hosts x 100G / 2
    const TierSummary s = summarize_tiers(fat_tree({.k = 4}));
    EXPECT_DOUBLE_EQ(s.bisection_bps, 16 * 100e9 / 2);
  }
  // A dumbbell's bottleneck joins two leaves: not a layered Clos, no bisection claimed.
  EXPECT_EQ(summarize_tiers(dumbbell()).bisection_tier, -1);
  const std::vector<std::string> lines = describe_tiers(summarize_tiers(gpu_cluster({.servers = 4})));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "tier 0: 32 gpu, 4 nvswitch; 32 links inside at 3600 Gb/s; 32 links up at 400 Gb/s; 4 parts "
            "up to here");
  EXPECT_EQ(lines[3], "bisection: 6400 Gb/s (half the capacity of tier 0's uplinks)");
}

TEST(GpuCluster, BadParametersThrow) {
  EXPECT_THROW(gpu_cluster({.servers = 5, .servers_per_pod = 2}), std::invalid_argument);
  EXPECT_THROW(gpu_cluster({.planes = 8}), std::invalid_argument);
  EXPECT_THROW(gpu_cluster({.oversubscription = 0.5}), std::invalid_argument);
  EXPECT_THROW(gpu_cluster({.servers_per_pod = 2, .spines = 2, .cores = 3, .three_tier = true}),
               std::invalid_argument);
}

// A topology file names GPUs and NVSwitches after its links; write_hpcc_topology writes them back.
TEST(GpuCluster, TopologyFileKindsRoundTrip) {
  const TopoSpec t = gpu_cluster({.servers = 2, .gpus_per_server = 2});
  std::ostringstream out;
  write_hpcc_topology(t, out);
  EXPECT_NE(out.str().find("\ngpu 0 1 2 3\nnvswitch 4 5\n"), std::string::npos) << out.str();
  const TopoSpec back = parse_hpcc_topology(out.str(), "t.txt");
  EXPECT_EQ(back.kind, t.kind);
  EXPECT_EQ(back.links.size(), t.links.size());
  // Without kind lines: no kinds (hosts and switches).
  EXPECT_TRUE(parse_hpcc_topology("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n", "p.txt").kind.empty());
  struct Bad {
    const char* line;
    const char* phrase;
  };
  for (const Bad& b : {Bad{"gpu 2", "node 2 is a switch"}, Bad{"nvswitch 0", "node 0 is not a switch"},
                       Bad{"gpu 0 0", "given a kind twice"}, Bad{"gpu", "at least one node id"},
                       Bad{"gpu 7", "out of range"}, Bad{"tpu 0", "only lines of node kinds"}}) {
    SCOPED_TRACE(b.line);
    try {
      parse_hpcc_topology(std::string("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n") + b.line + "\n",
                          "bad.txt");
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 5);
      EXPECT_NE(std::string(e.what()).find(b.phrase), std::string::npos) << e.what();
    }
  }
  // A header declaring far more nodes than the links reach fails before a kind line allocates per node.
  try {
    parse_hpcc_topology("2000000000 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\ngpu 0\n", "huge.txt");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("some node has no link"), std::string::npos) << e.what();
  }
}

// Shared NICs (docs/models.md A14): 4 servers of 8 GPUs and 4 x 400G NICs, two GPUs per NIC. Nodes: 32 GPUs,
// 4 NVSwitches, 16 NICs, 4 rail leaves (one per NIC rail), 4 spines (4 x 400G down per leaf) = 60. Links:
// 32 GPU-NIC, 16 NIC-leaf, 32 NVLinks, 4 x 4 leaf-spine = 96.
TEST(GpuCluster, SharedNicsCountsAndWiring) {
  const TopoSpec t = gpu_cluster({.servers = 4, .gpus_per_server = 8, .nics_per_server = 4});
  EXPECT_EQ(t.num_nodes, 60);
  EXPECT_EQ(t.links.size(), 96u);
  EXPECT_EQ(count_kind(t, NodeKind::kGpu), 32);
  EXPECT_EQ(count_kind(t, NodeKind::kNvSwitch), 4);
  EXPECT_EQ(count_kind(t, NodeKind::kNic), 16);
  EXPECT_EQ(count_kind(t, NodeKind::kSwitch), 8);
  for (int h = 0; h < 32; ++h) {
    // GPU g of server s: its first link to NIC s * 4 + g / 2 (ids 36..51) at 400G, then its NVLink.
    const LinkSpec& pcie = t.links[static_cast<size_t>(h)];
    EXPECT_EQ(pcie.a, h);
    EXPECT_EQ(pcie.b, 36 + (h / 8) * 4 + (h % 8) / 2) << h;
    EXPECT_DOUBLE_EQ(pcie.rate.gbps(), 400.0);
    EXPECT_EQ(t.links[static_cast<size_t>(48 + h)].b, 32 + h / 8);  // after 32 GPU-NIC and 16 NIC-leaf links
    EXPECT_EQ(t.host_group[h], (h % 8) / 2);                        // its NIC's rail leaf
  }
  for (int c = 0; c < 16; ++c) {
    const LinkSpec& up = t.links[static_cast<size_t>(32 + c)];
    EXPECT_EQ(up.a, 36 + c);
    EXPECT_EQ(up.b, 52 + c % 4) << c;  // NIC k of every server on rail leaf k
    EXPECT_DOUBLE_EQ(up.rate.gbps(), 400.0);
  }
  // gpu_servers: a server's 8 GPUs, by local index.
  const auto servers = gpu_servers(t);
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  // Tiers: the NICs are tier 0 (inside their server); tier 0's links up are the NICs' 16.
  const TierSummary s = summarize_tiers(t);
  ASSERT_EQ(s.tiers.size(), 3u);
  EXPECT_EQ(s.tiers[0].kinds[static_cast<int>(NodeKind::kNic)], 16);
  EXPECT_EQ(s.tiers[0].parts, 4);
  EXPECT_EQ(s.tiers[0].up_links, 16);
  EXPECT_EQ(s.tiers[1].nodes, 4);
  EXPECT_DOUBLE_EQ(s.bisection_bps, 16 * 400e9 / 2);
  EXPECT_EQ(describe_tiers(s)[0],
            "tier 0: 32 gpu, 4 nvswitch, 16 nic; 64 links inside at 400 Gb/s, 3600 Gb/s; 16 links up at 400 "
            "Gb/s; "
            "4 parts up to here");
  // Two NICs of two ports (multi_plane), three tiers: closed forms again.
  const TopoSpec mp = gpu_cluster({.servers = 2, .gpus_per_server = 8, .nics_per_server = 2, .planes = 2});
  // 16 GPUs + 2 NVSwitches + 4 NICs + per plane 2 leaves + 1 spine (2 x 200G down) = 28 nodes; links:
  // 16 GPU-NIC + 4 x 2 NIC ports + 16 NVLinks + 2 planes x 2 leaf-spine = 44.
  EXPECT_EQ(mp.num_nodes, 28);
  EXPECT_EQ(mp.links.size(), 44u);
  const TopoSpec clos = gpu_cluster(
      {.servers = 4, .gpus_per_server = 8, .nics_per_server = 2, .servers_per_pod = 2, .three_tier = true});
  // 2 aggregation switches per pod (2 x 400G down per leaf), cores 2 x ceil(2 rails / 1) = 4: 32 GPUs + 4
  // NVSwitches + 8 NICs + 2 pods x (2 leaves + 2 aggs) + 4 cores = 56 nodes; links: 32 + 8 + 32 + 4 leaves x
  // 2 aggs + 4 aggs x 2 cores = 88.
  EXPECT_EQ(gpu_cluster_shape({.servers = 4,
                               .gpus_per_server = 8,
                               .nics_per_server = 2,
                               .servers_per_pod = 2,
                               .three_tier = true})
                .cores,
            4);
  EXPECT_EQ(clos.num_nodes, 56);
  EXPECT_EQ(clos.links.size(), 88u);
}

// nics_per_server = gpus_per_server (or 0) is the one-NIC-per-GPU network, link for link.
TEST(GpuCluster, OneNicPerGpuIsTheDefault) {
  for (const bool three : {false, true}) {
    const TopoSpec a = gpu_cluster({.servers = 4, .servers_per_pod = 2, .three_tier = three});
    const TopoSpec b =
        gpu_cluster({.servers = 4, .nics_per_server = 8, .servers_per_pod = 2, .three_tier = three});
    EXPECT_EQ(a.num_nodes, b.num_nodes);
    ASSERT_EQ(a.links.size(), b.links.size());
    for (size_t i = 0; i < a.links.size(); ++i) {
      EXPECT_EQ(a.links[i].a, b.links[i].a);
      EXPECT_EQ(a.links[i].b, b.links[i].b);
    }
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.host_group, b.host_group);
  }
}

TEST(GpuCluster, BadNicsPerServerThrowsNamingIt) {
  for (const int n : {3, 16, -1}) {
    try {
      gpu_cluster({.gpus_per_server = 8, .nics_per_server = n});
      ADD_FAILURE() << n;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("nics_per_server"), std::string::npos) << e.what();
    }
  }
}

// A shared NIC's kind survives a topology file.
TEST(GpuCluster, TopologyFileNicKindRoundTrips) {
  const TopoSpec t = gpu_cluster({.servers = 2, .gpus_per_server = 2, .nics_per_server = 1});
  std::ostringstream out;
  write_hpcc_topology(t, out);
  EXPECT_NE(out.str().find("\ngpu 0 1 2 3\nnvswitch 4 5\nnic 6 7\n"), std::string::npos) << out.str();
  const TopoSpec back = parse_hpcc_topology(out.str(), "t.txt");
  EXPECT_EQ(back.kind, t.kind);
}

}  // namespace
}  // namespace rocesim
