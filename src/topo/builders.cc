// Topology builders; see builders.h for shapes, defaults and their sources.
#include "topo/builders.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rocesim {
namespace {

constexpr int64_t kMaxElements = 10'000'000;  // nodes or links; guards int overflow and runaway memory

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

void require_rate(Rate r, const char* builder, const char* field) {
  require(std::isfinite(r.bps) && r.bps > 0,
          std::string(builder) + ": " + field + " must be a positive rate");
}

void require_delay(Time t, const char* builder, const char* field) {
  require(t.ps >= 0, std::string(builder) + ": " + field + " must not be negative");
}

void require_count(int64_t n, int64_t min, const char* builder, const char* field) {
  require(n >= min, std::string(builder) + ": " + field + " must be at least " + std::to_string(min));
}

void require_size(int64_t nodes, int64_t links, const char* builder) {
  require(nodes <= kMaxElements && links <= kMaxElements,
          std::string(builder) + ": more than 10 million nodes or links requested");
}

// Collects nodes (hosts first by construction of each builder) and links, then names unnamed nodes
// "h<i>" / "s<j>" by their rank among hosts / switches.
class Assembler {
 public:
  Assembler(std::string name, int64_t nodes, int64_t links) {
    spec_.name = std::move(name);
    spec_.is_switch.reserve(static_cast<size_t>(nodes));
    spec_.node_names.reserve(static_cast<size_t>(nodes));
    spec_.host_group.reserve(static_cast<size_t>(nodes));
    spec_.links.reserve(static_cast<size_t>(links));
  }

  int add_host(int group, std::string name = {}) { return add(false, group, std::move(name)); }
  int add_switch(std::string name = {}) { return add(true, -1, std::move(name)); }

  void link(int a, int b, Rate rate, Time delay) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.rate = rate;
    l.delay = delay;
    spec_.links.push_back(l);
  }

  // Labels node `id` (added already) as in pod `pod` (TopoSpec::pod); nodes never labelled are in none.
  void set_pod(int id, int pod) {
    spec_.pod.resize(static_cast<size_t>(spec_.num_nodes), -1);
    spec_.pod[id] = pod;
  }

  TopoSpec finish() && {
    if (!spec_.pod.empty()) spec_.pod.resize(static_cast<size_t>(spec_.num_nodes), -1);
    int hosts = 0, switches = 0;
    for (int i = 0; i < spec_.num_nodes; ++i) {
      const bool sw = spec_.is_switch[i];
      const int rank = sw ? switches++ : hosts++;
      if (spec_.node_names[i].empty()) spec_.node_names[i] = (sw ? "s" : "h") + std::to_string(rank);
    }
    return std::move(spec_);
  }

 private:
  int add(bool is_switch, int group, std::string name) {
    spec_.is_switch.push_back(is_switch);
    spec_.host_group.push_back(group);
    spec_.node_names.push_back(std::move(name));
    return spec_.num_nodes++;
  }

  TopoSpec spec_;
};

}  // namespace

TopoSpec dumbbell(const DumbbellParams& p) {
  const char* kName = "dumbbell";
  require_count(p.senders, 1, kName, "senders");
  require_count(p.receivers, 1, kName, "receivers");
  require_rate(p.host_rate, kName, "host_rate");
  require_rate(p.bottleneck_rate, kName, "bottleneck_rate");
  require_delay(p.host_delay, kName, "host_delay");
  require_delay(p.bottleneck_delay, kName, "bottleneck_delay");
  const int64_t hosts = int64_t{p.senders} + p.receivers;
  require_size(hosts + 2, hosts + 1, kName);

  Assembler as(kName, hosts + 2, hosts + 1);
  for (int i = 0; i < p.senders; ++i) as.add_host(0);
  for (int i = 0; i < p.receivers; ++i) as.add_host(1);
  const int sw_a = as.add_switch();
  const int sw_b = as.add_switch();
  for (int i = 0; i < p.senders; ++i) as.link(i, sw_a, p.host_rate, p.host_delay);
  for (int i = 0; i < p.receivers; ++i) as.link(p.senders + i, sw_b, p.host_rate, p.host_delay);
  as.link(sw_a, sw_b, p.bottleneck_rate, p.bottleneck_delay);
  return std::move(as).finish();
}

TopoSpec star(const StarParams& p) {
  const char* kName = "star";
  require_count(p.hosts, 1, kName, "hosts");
  require_rate(p.rate, kName, "rate");
  require_delay(p.delay, kName, "delay");
  require_size(int64_t{p.hosts} + 1, p.hosts, kName);

  Assembler as(kName, int64_t{p.hosts} + 1, p.hosts);
  for (int i = 0; i < p.hosts; ++i) as.add_host(0);
  const int sw = as.add_switch();
  for (int i = 0; i < p.hosts; ++i) as.link(i, sw, p.rate, p.delay);
  return std::move(as).finish();
}

TopoSpec leaf_spine(const LeafSpineParams& p) {
  const char* kName = "leaf_spine";
  require_count(p.leaves, 1, kName, "leaves");
  require_count(p.spines, 1, kName, "spines");
  require_count(p.hosts_per_leaf, 1, kName, "hosts_per_leaf");
  require_rate(p.host_rate, kName, "host_rate");
  require_rate(p.fabric_rate, kName, "fabric_rate");
  require_delay(p.delay, kName, "delay");
  const int64_t hosts = int64_t{p.leaves} * p.hosts_per_leaf;
  const int64_t nodes = hosts + p.leaves + p.spines;
  const int64_t links = hosts + int64_t{p.leaves} * p.spines;
  require_size(nodes, links, kName);

  Assembler as(kName, nodes, links);
  for (int l = 0; l < p.leaves; ++l)
    for (int h = 0; h < p.hosts_per_leaf; ++h) as.add_host(l);
  const int first_leaf = static_cast<int>(hosts);
  const int first_spine = first_leaf + p.leaves;
  for (int i = 0; i < p.leaves + p.spines; ++i) as.add_switch();
  for (int h = 0; h < hosts; ++h) as.link(h, first_leaf + h / p.hosts_per_leaf, p.host_rate, p.delay);
  for (int l = 0; l < p.leaves; ++l)
    for (int s = 0; s < p.spines; ++s) as.link(first_leaf + l, first_spine + s, p.fabric_rate, p.delay);
  return std::move(as).finish();
}

TopoSpec fat_tree(const FatTreeParams& p) {
  const char* kName = "fat_tree";
  require(p.k >= 2 && p.k % 2 == 0, "fat_tree: k must be even and at least 2");
  require(p.k <= 1000, "fat_tree: k must be at most 1000");  // keeps k^3 in range before require_size
  require_rate(p.host_rate, kName, "host_rate");
  require_rate(p.fabric_rate, kName, "fabric_rate");
  require_delay(p.delay, kName, "delay");
  const int k = p.k, half = k / 2;
  const int64_t hosts = int64_t{k} * k * k / 4;
  const int64_t nodes = hosts + int64_t{5} * k * k / 4;
  require_size(nodes, 3 * hosts, kName);

  Assembler as(kName, nodes, 3 * hosts);
  const int edges = k * half;  // also the number of aggregation switches
  for (int e = 0; e < edges; ++e)
    for (int h = 0; h < half; ++h) as.add_host(e);
  const int first_edge = static_cast<int>(hosts);
  const int first_agg = first_edge + edges;
  const int first_core = first_agg + edges;
  for (int i = 0; i < 2 * edges + half * half; ++i) as.add_switch();
  for (int h = 0; h < hosts; ++h) as.set_pod(h, h / half / half);
  for (int e = 0; e < edges; ++e) {
    as.set_pod(first_edge + e, e / half);
    as.set_pod(first_agg + e, e / half);
  }

  for (int h = 0; h < hosts; ++h) as.link(h, first_edge + h / half, p.host_rate, p.delay);
  for (int e = 0; e < edges; ++e) {
    const int pod = e / half;
    for (int j = 0; j < half; ++j)
      as.link(first_edge + e, first_agg + pod * half + j, p.fabric_rate, p.delay);
  }
  for (int a = 0; a < edges; ++a) {
    const int j = a % half;  // position of the aggregation switch inside its pod
    for (int c = 0; c < half; ++c) as.link(first_agg + a, first_core + j * half + c, p.fabric_rate, p.delay);
  }
  return std::move(as).finish();
}

TopoSpec fat_tree_3tier(const FatTree3TierParams& p) {
  const char* kName = "fat_tree_3tier";
  require_count(p.pods, 1, kName, "pods");
  require_count(p.tors_per_pod, 1, kName, "tors_per_pod");
  require_count(p.aggs_per_pod, 1, kName, "aggs_per_pod");
  require_count(p.hosts_per_tor, 1, kName, "hosts_per_tor");
  require_count(p.cores, 1, kName, "cores");
  require(p.cores % p.aggs_per_pod == 0, "fat_tree_3tier: cores must be a multiple of aggs_per_pod");
  require_rate(p.host_rate, kName, "host_rate");
  require_rate(p.fabric_rate, kName, "fabric_rate");
  require_delay(p.delay, kName, "delay");
  const int64_t tors = int64_t{p.pods} * p.tors_per_pod;
  const int64_t aggs = int64_t{p.pods} * p.aggs_per_pod;
  const int64_t hosts = tors * p.hosts_per_tor;
  const int64_t per_agg = p.cores / p.aggs_per_pod;  // cores each aggregation switch reaches
  const int64_t nodes = hosts + tors + aggs + p.cores;
  const int64_t links = hosts + tors * p.aggs_per_pod + aggs * per_agg;
  require(tors <= kMaxElements && aggs <= kMaxElements, "fat_tree_3tier: too many switches");
  require_size(nodes, links, kName);

  Assembler as(kName, nodes, links);
  for (int t = 0; t < tors; ++t)
    for (int h = 0; h < p.hosts_per_tor; ++h) as.add_host(t);
  const int first_tor = static_cast<int>(hosts);
  const int first_agg = first_tor + static_cast<int>(tors);
  const int first_core = first_agg + static_cast<int>(aggs);
  for (int64_t i = 0; i < tors + aggs + p.cores; ++i) as.add_switch();
  for (int h = 0; h < hosts; ++h) as.set_pod(h, h / p.hosts_per_tor / p.tors_per_pod);
  for (int t = 0; t < tors; ++t) as.set_pod(first_tor + t, t / p.tors_per_pod);
  for (int a = 0; a < aggs; ++a) as.set_pod(first_agg + a, a / p.aggs_per_pod);

  // Same link order as fat.txt: host-ToR, then ToR-agg (ToR-major), then agg-core (agg-major).
  for (int h = 0; h < hosts; ++h) as.link(h, first_tor + h / p.hosts_per_tor, p.host_rate, p.delay);
  for (int t = 0; t < tors; ++t) {
    const int pod = t / p.tors_per_pod;
    for (int j = 0; j < p.aggs_per_pod; ++j)
      as.link(first_tor + t, first_agg + pod * p.aggs_per_pod + j, p.fabric_rate, p.delay);
  }
  for (int a = 0; a < aggs; ++a) {
    const int j = a % p.aggs_per_pod;
    for (int c = 0; c < per_agg; ++c)
      as.link(first_agg + a, first_core + j * static_cast<int>(per_agg) + c, p.fabric_rate, p.delay);
  }
  return std::move(as).finish();
}

TopoSpec mercury_victim(const MercuryVictimParams& p) {
  const char* kName = "mercury_victim";
  require_rate(p.host_rate_h12, kName, "host_rate_h12");
  require_rate(p.rate, kName, "rate");
  require_delay(p.switch_delay, kName, "switch_delay");
  require_delay(p.host_delay, kName, "host_delay");
  require_count(p.burst_senders, 0, kName, "burst_senders");
  const bool via_s4 = p.bursts_via_switch && p.burst_senders > 0;
  const int64_t nodes = int64_t{7} + p.burst_senders + (via_s4 ? 1 : 0);
  require_size(nodes, nodes - 1, kName);

  Assembler as(kName, nodes, nodes - 1);
  const int h1 = as.add_host(0, "H1");
  const int h2 = as.add_host(0, "H2");
  const int r1 = as.add_host(2, "R1");
  const int r2 = as.add_host(2, "R2");
  const int first_burst = h1 + 4;
  for (int i = 0; i < p.burst_senders; ++i) as.add_host(3, "B" + std::to_string(i + 1));
  const int s1 = as.add_switch("S1");
  const int s2 = as.add_switch("S2");
  const int s3 = as.add_switch("S3");
  as.link(h1, s1, p.host_rate_h12, p.host_delay);
  as.link(h2, s1, p.host_rate_h12, p.host_delay);
  as.link(s1, s2, p.rate, p.switch_delay);
  as.link(s2, s3, p.rate, p.switch_delay);
  as.link(r1, s3, p.rate, p.host_delay);
  as.link(r2, s3, p.rate, p.host_delay);
  if (via_s4) {
    const int s4 = as.add_switch("S4");
    for (int i = 0; i < p.burst_senders; ++i) as.link(first_burst + i, s4, p.rate, p.host_delay);
    as.link(s4, s3, p.rate, p.switch_delay);
  } else {
    // Each burst sender on its own S3 port (scenarios.md: "attached to S3 through a separate port").
    for (int i = 0; i < p.burst_senders; ++i) as.link(first_burst + i, s3, p.rate, p.host_delay);
  }
  return std::move(as).finish();
}

TopoSpec cross_dc(const CrossDcParams& p) {
  const char* kName = "cross_dc";
  require_count(p.k, 2, kName, "k");
  require(p.k % 2 == 0, "cross_dc: k must be even");
  require_count(p.hosts_per_edge, 0, kName, "hosts_per_edge");
  require_rate(p.host_rate, kName, "host_rate");
  require_rate(p.fabric_rate, kName, "fabric_rate");
  require_rate(p.long_haul_rate, kName, "long_haul_rate");
  require_delay(p.delay, kName, "delay");
  require_delay(p.long_haul_delay, kName, "long_haul_delay");
  const int k = p.k, half = k / 2;
  const int hpe = p.hosts_per_edge > 0 ? p.hosts_per_edge : half;
  const int64_t edges = int64_t{k} * half;  // per DC; also aggregation switches per DC
  const int64_t cores = int64_t{half} * half;
  const int64_t hosts = edges * hpe;  // per DC
  const int64_t sw_per_dc = 2 * edges + cores;
  const int64_t nodes = 2 * (hosts + sw_per_dc) + 2;
  const int64_t links = 2 * (hosts + edges * half + edges * half + cores) + 1;
  require_size(nodes, links, kName);

  Assembler as(kName, nodes, links);
  for (int dc = 0; dc < 2; ++dc)
    for (int e = 0; e < edges; ++e)
      for (int h = 0; h < hpe; ++h)
        as.add_host(dc * static_cast<int>(edges) + e,
                    std::string(dc ? "b" : "a") + std::to_string(e * hpe + h));
  int first_sw[2];
  for (int dc = 0; dc < 2; ++dc) {
    const std::string pre = dc ? "b_" : "a_";
    first_sw[dc] = as.add_switch(pre + "tor0");
    for (int e = 1; e < edges; ++e) as.add_switch(pre + "tor" + std::to_string(e));
    for (int a = 0; a < edges; ++a) as.add_switch(pre + "agg" + std::to_string(a));
    for (int c = 0; c < cores; ++c) as.add_switch(pre + "core" + std::to_string(c));
  }
  const int egress[2] = {as.add_switch("egress_a"), as.add_switch("egress_b")};
  for (int dc = 0; dc < 2; ++dc)
    for (int e = 0; e < edges; ++e) {
      const int pod = dc * k + e / half;
      for (int h = 0; h < hpe; ++h) as.set_pod(dc * static_cast<int>(hosts) + e * hpe + h, pod);
      as.set_pod(first_sw[dc] + e, pod);
      as.set_pod(first_sw[dc] + static_cast<int>(edges) + e, pod);
    }
  for (int dc = 0; dc < 2; ++dc) {
    const int h0 = dc * static_cast<int>(hosts);
    for (int h = 0; h < hosts; ++h) as.link(h0 + h, first_sw[dc] + h / hpe, p.host_rate, p.delay);
  }
  for (int dc = 0; dc < 2; ++dc) {
    const int fe = first_sw[dc], fa = fe + static_cast<int>(edges), fc = fa + static_cast<int>(edges);
    for (int e = 0; e < edges; ++e)
      for (int j = 0; j < half; ++j) as.link(fe + e, fa + (e / half) * half + j, p.fabric_rate, p.delay);
    for (int a = 0; a < edges; ++a)
      for (int c = 0; c < half; ++c) as.link(fa + a, fc + (a % half) * half + c, p.fabric_rate, p.delay);
    for (int c = 0; c < cores; ++c) as.link(fc + c, egress[dc], p.fabric_rate, p.delay);
  }
  as.link(egress[0], egress[1], p.long_haul_rate, p.long_haul_delay);
  TopoSpec t = std::move(as).finish();
  t.links.back().long_haul = true;
  return t;
}

GpuClusterShape gpu_cluster_shape(const GpuClusterParams& p) {
  GpuClusterShape g;
  const int per_pod = p.servers_per_pod > 0 ? p.servers_per_pod : p.servers;
  g.pods = per_pod > 0 ? p.servers / per_pod : 1;
  const double port_bps = p.nic_rate.bps / std::max(p.planes, 1);
  const double over = p.oversubscription > 0 ? p.oversubscription : 1.0;
  g.spines =
      p.spines > 0
          ? p.spines
          : std::max(1, static_cast<int>(std::ceil(per_pod * port_bps / (over * p.fabric_rate.bps) - 1e-9)));
  if (p.three_tier) {
    const int rails = p.nics_per_server > 0 ? p.nics_per_server : p.gpus_per_server;
    const int per_agg = std::max(1, static_cast<int>(std::ceil(rails / over - 1e-9)));
    g.cores = p.cores > 0 ? p.cores : g.spines * per_agg;
  }
  return g;
}

TopoSpec gpu_cluster(const GpuClusterParams& p) {
  const char* kName = p.three_tier ? "gpu_clos" : p.planes > 1 ? "multi_plane" : "rail_optimized";
  require_count(p.servers, 1, kName, "servers");
  require_count(p.gpus_per_server, 1, kName, "gpus_per_server");
  require_count(p.nics_per_server, 0, kName, "nics_per_server");
  require(
      p.nics_per_server == 0 || p.gpus_per_server % p.nics_per_server == 0,
      std::string(kName) + ": nics_per_server must divide gpus_per_server (each NIC serves as many GPUs)");
  require_count(p.planes, 1, kName, "planes");
  require_count(p.servers_per_pod, 0, kName, "servers_per_pod");
  require_count(p.spines, 0, kName, "spines");
  require_count(p.cores, 0, kName, "cores");
  require(p.planes <= 7, std::string(kName) + ": planes must be at most 7 (a GPU's ports: planes + NVLink)");
  require(std::isfinite(p.oversubscription) && p.oversubscription >= 1,
          std::string(kName) + ": oversubscription must be at least 1");
  require_rate(p.nic_rate, kName, "nic_rate");
  require_rate(p.nvlink_rate, kName, "nvlink_rate");
  require_rate(p.fabric_rate, kName, "fabric_rate");
  require_delay(p.delay, kName, "delay");
  require_delay(p.nvlink_delay, kName, "nvlink_delay");
  const int per_pod = p.servers_per_pod > 0 ? p.servers_per_pod : p.servers;
  require(p.servers % per_pod == 0, std::string(kName) + ": servers must be a multiple of servers_per_pod");
  const GpuClusterShape g = gpu_cluster_shape(p);
  require(!p.three_tier || g.cores % g.spines == 0,
          std::string(kName) + ": cores must be a multiple of spines (aggregation switches per pod)");
  const int64_t G = p.gpus_per_server, P = p.planes, S = p.servers;
  const int64_t N = p.nics_per_server > 0 ? p.nics_per_server : G;  // NICs per server: the rails
  const int64_t per_nic = G / N;                                    // GPUs sharing a NIC
  const bool shared = N < G;  // NICs are nodes of their own (kNic switches), else each GPU's own ports
  const int64_t gpus = S * G;
  const int64_t nvswitches = G > 1 ? S : 0;
  const int64_t nics = shared ? S * N : 0;
  const int64_t leaves = int64_t{g.pods} * N;  // per plane
  const int64_t spines = p.three_tier ? int64_t{g.pods} * g.spines : g.spines;
  const int64_t cores = g.cores;
  const int64_t nodes = gpus + nvswitches + nics + P * (leaves + spines + cores);
  const int64_t per_core = p.three_tier ? cores / g.spines : 0;  // cores each aggregation switch links
  const int64_t links = (shared ? gpus + nics * P : gpus * P) + (nvswitches ? gpus : 0) +
                        P * (p.three_tier ? leaves * g.spines + spines * per_core : leaves * spines);
  require_size(nodes, links, kName);

  Assembler as(kName, nodes, links);
  for (int64_t h = 0; h < gpus; ++h) {
    const int64_t server = h / G;
    as.add_host(static_cast<int>((server / per_pod) * N + (h % G) / per_nic));
  }
  const int first_nvs = static_cast<int>(gpus);
  for (int64_t i = 0; i < nvswitches; ++i) as.add_switch();
  const int first_nic = first_nvs + static_cast<int>(nvswitches);
  for (int64_t i = 0; i < nics; ++i) as.add_switch();
  std::vector<int> first_leaf(static_cast<size_t>(P)), first_spine(static_cast<size_t>(P)),
      first_core(static_cast<size_t>(P));
  for (int64_t pl = 0; pl < P; ++pl) {
    first_leaf[pl] = as.add_switch();
    for (int64_t i = 1; i < leaves; ++i) as.add_switch();
    first_spine[pl] = first_leaf[pl] + static_cast<int>(leaves);
    for (int64_t i = 0; i < spines; ++i) as.add_switch();
    first_core[pl] = first_spine[pl] + static_cast<int>(spines);
    for (int64_t i = 0; i < cores; ++i) as.add_switch();
  }
  const Rate port_rate{p.nic_rate.bps / static_cast<double>(P)};
  if (!shared) {
    // A GPU's NIC ports first (its ports 0 .. planes-1), then its NVLink.
    for (int64_t h = 0; h < gpus; ++h) {
      const int64_t server = h / G, rail = h % G;
      const int64_t leaf = (server / per_pod) * G + rail;
      for (int64_t pl = 0; pl < P; ++pl)
        as.link(static_cast<int>(h), first_leaf[pl] + static_cast<int>(leaf), port_rate, p.delay);
    }
  } else {
    // A GPU's link to its NIC (its port 0, then its NVLink), then each NIC's ports, plane order.
    for (int64_t h = 0; h < gpus; ++h)
      as.link(static_cast<int>(h), first_nic + static_cast<int>((h / G) * N + (h % G) / per_nic), p.nic_rate,
              p.nvlink_delay);
    for (int64_t c = 0; c < nics; ++c) {
      const int64_t server = c / N, rail = c % N;
      const int64_t leaf = (server / per_pod) * N + rail;
      for (int64_t pl = 0; pl < P; ++pl)
        as.link(first_nic + static_cast<int>(c), first_leaf[pl] + static_cast<int>(leaf), port_rate, p.delay);
    }
  }
  if (nvswitches)
    for (int64_t h = 0; h < gpus; ++h)
      as.link(static_cast<int>(h), first_nvs + static_cast<int>(h / G), p.nvlink_rate, p.nvlink_delay);
  for (int64_t pl = 0; pl < P; ++pl) {
    for (int64_t l = 0; l < leaves; ++l) {
      const int64_t pod = l / N;
      for (int64_t j = 0; j < g.spines && p.three_tier; ++j)
        as.link(first_leaf[pl] + static_cast<int>(l), first_spine[pl] + static_cast<int>(pod * g.spines + j),
                p.fabric_rate, p.delay);
      for (int64_t j = 0; j < spines && !p.three_tier; ++j)
        as.link(first_leaf[pl] + static_cast<int>(l), first_spine[pl] + static_cast<int>(j), p.fabric_rate,
                p.delay);
    }
    for (int64_t a = 0; a < spines && p.three_tier; ++a) {
      const int64_t j = a % g.spines;
      for (int64_t c = 0; c < per_core; ++c)
        as.link(first_spine[pl] + static_cast<int>(a), first_core[pl] + static_cast<int>(j * per_core + c),
                p.fabric_rate, p.delay);
    }
  }
  TopoSpec t = std::move(as).finish();
  t.kind.assign(static_cast<size_t>(t.num_nodes), NodeKind::kSwitch);
  for (int64_t h = 0; h < gpus; ++h) t.kind[static_cast<size_t>(h)] = NodeKind::kGpu;
  for (int64_t i = 0; i < nvswitches; ++i) t.kind[static_cast<size_t>(first_nvs + i)] = NodeKind::kNvSwitch;
  for (int64_t i = 0; i < nics; ++i) t.kind[static_cast<size_t>(first_nic + i)] = NodeKind::kNic;
  return t;
}

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::kHost:
      return "host";
    case NodeKind::kSwitch:
      return "switch";
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kNic:
      return "nic";
  }
  return "?";
}

std::vector<std::vector<int>> gpu_servers(const TopoSpec& topo) {
  std::vector<int> server_of(static_cast<size_t>(topo.num_nodes), -1);
  int servers = 0;
  for (int i = 0; i < topo.num_nodes; ++i)
    if (topo.kind_of(i) == NodeKind::kNvSwitch) server_of[static_cast<size_t>(i)] = servers++;
  std::vector<std::vector<int>> out(static_cast<size_t>(servers));
  for (const LinkSpec& l : topo.links) {
    const int a = l.a, b = l.b;
    if (server_of[static_cast<size_t>(a)] >= 0 && !topo.is_switch[static_cast<size_t>(b)])
      out[static_cast<size_t>(server_of[static_cast<size_t>(a)])].push_back(b);
    if (server_of[static_cast<size_t>(b)] >= 0 && !topo.is_switch[static_cast<size_t>(a)])
      out[static_cast<size_t>(server_of[static_cast<size_t>(b)])].push_back(a);
  }
  for (auto& gpus : out) {
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  }
  return out;
}

int gpus_per_nic(const TopoSpec& topo) {
  std::vector<int> gpus(static_cast<size_t>(topo.num_nodes), 0);
  int most = 1;
  for (const LinkSpec& l : topo.links)
    for (auto [x, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
      if (topo.kind_of(x) == NodeKind::kNic && !topo.is_switch[static_cast<size_t>(other)])
        most = std::max(most, ++gpus[static_cast<size_t>(x)]);
  return most;
}

int lookup_node(const TopoSpec& topo, std::string_view name) {
  const int n = std::min(topo.num_nodes, static_cast<int>(topo.node_names.size()));
  for (int i = 0; i < n; ++i)
    if (topo.node_names[i] == name) return i;
  return -1;
}

}  // namespace rocesim
