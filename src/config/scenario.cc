#include "config/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string_view>

#include "cc/registry.h"
#include "config/profiles.h"
#include "config/traffic.h"
#include "core/simulator.h"
#include "core/text.h"
#include "net/switch_mmu.h"
#include "stats/monitor_spec.h"
#include "topo/builders.h"
#include "topo/topology_file.h"
#include "workload/cdf.h"
#include "workload/flow_file.h"
#include "workload/generators.h"

namespace rocesim {

namespace {

// Rounds a size to one significant digit (two when it starts with 1), e.g. 73077 -> 70000, 1520 -> 1500.
double round_size(double v) {
  if (v < 1) return 1;
  double mag = std::pow(10.0, std::floor(std::log10(v)));
  if (v / mag < 2) mag /= 10;
  return std::max(1.0, std::round(v / mag) * mag);
}

// Size buckets suited to the scenario's workload: edges at the 50/75/90/95/99th percentiles of the
// first [[traffic]] CDF, rounded; the fixed 10 KB / 100 KB / 1 MB / 10 MB edges otherwise.
std::vector<double> default_size_buckets(const Scenario& s) {
  const std::vector<double> fixed{10e3, 100e3, 1e6, 10e6};
  for (const TrafficSpec& t : s.traffic) {
    if (t.workload_path.empty() || t.size_bytes > 0) continue;
    const SizeCdf cdf = SizeCdf::load(t.workload_path);
    std::vector<double> edges;
    for (double q : {0.5, 0.75, 0.9, 0.95, 0.99}) {
      const double e = round_size(cdf.quantile(q));
      if (edges.empty() || e > edges.back()) edges.push_back(e);
    }
    if (edges.size() >= 2) return edges;
  }
  return fixed;
}

Rate gbps(Config& c, const std::string& key, double def) {
  return Rate::from_gbps(c.get_double(key, def, 1e-6, 1e5));
}

// The [topology] keys, each read here once; a kind's reader below reads the ones it uses.
struct TopologyKeys {
  Config& c;

  static std::string key(const char* name) { return std::string("topology.") + name; }
  int count(const char* name, int def, int lo, int hi) {
    return static_cast<int>(c.get_int(key(name), def, lo, hi));
  }
  // Keys several kinds share.
  Rate host_rate(Rate def) { return gbps(c, key("host_rate_gbps"), def.gbps()); }
  Rate fabric_rate(Rate def) { return gbps(c, key("fabric_rate_gbps"), def.gbps()); }
  Time link_delay(Time def) { return c.get_us(key("link_delay_us"), def); }
  Rate rate(Rate def) { return gbps(c, key("rate_gbps"), def.gbps()); }
  Time host_delay(Time def) { return c.get_us(key("host_delay_us"), def); }
  // The fat-trees' k (even).
  int k(int def) {
    const int v = count("k", def, 2, 64);
    if (v % 2) c.fail(key("k"), "k must be even");
    return v;
  }
  // The links of the switched fabrics: host_rate_gbps, fabric_rate_gbps, link_delay_us.
  template <class Params>
  void fabric_links(Params& p) {
    p.host_rate = host_rate(p.host_rate);
    p.fabric_rate = fabric_rate(p.fabric_rate);
    p.delay = link_delay(p.delay);
  }
};

TopoSpec read_topology_file(TopologyKeys& t) {
  if (!t.c.has("topology.file"))
    t.c.fail("topology.kind", "kind = \"file\" needs topology.file (an ns-3 topology file)");
  return read_hpcc_topology(resolve_path(t.c, t.c.get_string("topology.file", "")));
}

TopoSpec read_dumbbell(TopologyKeys& t) {
  DumbbellParams p;
  p.senders = t.count("senders", p.senders, 1, 4096);
  p.receivers = t.count("receivers", p.receivers, 1, 4096);
  p.host_rate = t.host_rate(p.host_rate);
  p.bottleneck_rate = gbps(t.c, t.key("bottleneck_rate_gbps"), p.bottleneck_rate.gbps());
  p.host_delay = t.host_delay(p.host_delay);
  p.bottleneck_delay = t.c.get_us(t.key("bottleneck_delay_us"), p.bottleneck_delay);
  return dumbbell(p);
}

TopoSpec read_star(TopologyKeys& t) {
  StarParams p;
  p.hosts = t.count("hosts", p.hosts, 2, 4096);
  p.rate = t.rate(p.rate);
  p.delay = t.link_delay(p.delay);
  return star(p);
}

TopoSpec read_leaf_spine(TopologyKeys& t) {
  LeafSpineParams p;
  p.leaves = t.count("leaves", p.leaves, 1, 1024);
  p.spines = t.count("spines", p.spines, 1, 1024);
  p.hosts_per_leaf = t.count("hosts_per_leaf", p.hosts_per_leaf, 1, 1024);
  t.fabric_links(p);
  return leaf_spine(p);
}

TopoSpec read_fat_tree(TopologyKeys& t) {
  FatTreeParams p;
  p.k = t.k(p.k);
  t.fabric_links(p);
  return fat_tree(p);
}

TopoSpec read_fat_tree_3tier(TopologyKeys& t) {
  FatTree3TierParams p;
  p.pods = t.count("pods", p.pods, 1, 256);
  p.tors_per_pod = t.count("tors_per_pod", p.tors_per_pod, 1, 256);
  p.aggs_per_pod = t.count("aggs_per_pod", p.aggs_per_pod, 1, 256);
  p.hosts_per_tor = t.count("hosts_per_tor", p.hosts_per_tor, 1, 1024);
  p.cores = t.count("cores", p.cores, 1, 1024);
  if (p.cores % p.aggs_per_pod) t.c.fail(t.key("cores"), "must be a multiple of aggs_per_pod");
  t.fabric_links(p);
  return fat_tree_3tier(p);
}

TopoSpec read_cross_dc(TopologyKeys& t) {
  CrossDcParams p;
  p.k = t.k(p.k);
  p.hosts_per_edge = t.count("hosts_per_edge", p.hosts_per_edge, 0, 1024);
  t.fabric_links(p);
  p.long_haul_rate = gbps(t.c, t.key("long_haul_rate_gbps"), p.long_haul_rate.gbps());
  p.long_haul_delay = t.c.get_us(t.key("long_haul_delay_us"), p.long_haul_delay);
  return cross_dc(p);
}

TopoSpec read_mercury_victim(TopologyKeys& t) {
  MercuryVictimParams p;
  p.host_rate_h12 = gbps(t.c, t.key("h12_rate_gbps"), p.host_rate_h12.gbps());
  p.rate = t.rate(p.rate);
  p.switch_delay = t.c.get_us(t.key("switch_delay_us"), p.switch_delay);
  p.host_delay = t.host_delay(p.host_delay);
  p.burst_senders = t.count("burst_senders", p.burst_senders, 0, 256);
  p.bursts_via_switch = t.c.get_bool(t.key("bursts_via_switch"), p.bursts_via_switch);
  return mercury_victim(p);
}

// GPU clusters (topo/builders.h gpu_cluster): rail_optimized, multi_plane (planes >= 2) and gpu_clos (three
// tiers).
TopoSpec read_gpu_cluster(TopologyKeys& t, int planes, bool three_tier) {
  GpuClusterParams p;
  p.planes = planes;
  p.three_tier = three_tier;
  if (three_tier) p.servers_per_pod = 2;
  p.servers = t.count("servers", p.servers, 1, 1 << 20);
  p.gpus_per_server = t.count("gpus_per_server", p.gpus_per_server, 1, 64);
  p.nics_per_server = t.count("nics_per_server", p.gpus_per_server, 1, 64);
  if (p.gpus_per_server % p.nics_per_server)
    t.c.fail(
        t.key("nics_per_server"),
        fmt::format("must divide gpus_per_server ({}): each NIC serves as many GPUs", p.gpus_per_server));
  if (t.c.has(t.key("rails")) && t.count("rails", p.nics_per_server, 1, 64) != p.nics_per_server)
    t.c.fail(t.key("rails"),
             "one rail per NIC of a server: rails must equal nics_per_server (default "
             "gpus_per_server)");
  p.planes = t.count("planes", p.planes, planes, 7);
  p.servers_per_pod = t.count("servers_per_pod", p.servers_per_pod, 0, 1 << 20);
  if (p.servers_per_pod > 0 && p.servers % p.servers_per_pod)
    t.c.fail(t.key("servers_per_pod"), fmt::format("servers ({}) must be a multiple of it", p.servers));
  p.spines = t.count("spines", p.spines, 0, 1 << 16);
  if (three_tier) p.cores = t.count("cores", p.cores, 0, 1 << 16);
  p.oversubscription = t.c.get_double(t.key("oversubscription"), p.oversubscription, 1, 1024);
  p.nic_rate = gbps(t.c, t.key("nic_rate_gbps"), p.nic_rate.gbps());
  p.nvlink_rate = gbps(t.c, t.key("nvlink_rate_gbps"), p.nvlink_rate.gbps());
  p.fabric_rate = t.fabric_rate(p.fabric_rate);
  p.delay = t.link_delay(p.delay);
  p.nvlink_delay = t.c.get_us(t.key("nvlink_delay_us"), p.nvlink_delay);
  const GpuClusterShape g = gpu_cluster_shape(p);
  if (three_tier && g.cores % g.spines)
    t.c.fail(t.key("cores"), fmt::format("must be a multiple of spines per pod ({})", g.spines));
  return gpu_cluster(p);
}
TopoSpec read_rail_optimized(TopologyKeys& t) { return read_gpu_cluster(t, 1, false); }
TopoSpec read_multi_plane(TopologyKeys& t) { return read_gpu_cluster(t, 2, false); }
TopoSpec read_gpu_clos(TopologyKeys& t) { return read_gpu_cluster(t, 1, true); }

// The topology kinds (topology.kind), in the order `rocesim list` and the messages give them, with their
// readers.
struct TopologyKind {
  const char* name;
  TopoSpec (*read)(TopologyKeys&);
};
constexpr TopologyKind kTopologyKinds[] = {
    {"dumbbell", read_dumbbell},
    {"star", read_star},
    {"leaf_spine", read_leaf_spine},
    {"fat_tree", read_fat_tree},
    {"fat_tree_3tier", read_fat_tree_3tier},
    {"mercury_victim", read_mercury_victim},
    {"file", read_topology_file},
    {"cross_dc", read_cross_dc},
    {"rail_optimized", read_rail_optimized},
    {"multi_plane", read_multi_plane},
    {"gpu_clos", read_gpu_clos},
};

TopoSpec read_topology(Config& c) {
  const std::string kind = c.get_string("topology.kind", "dumbbell", topology_kinds());
  TopologyKeys keys{c};
  // get_string accepts only the kinds of the table.
  return std::find_if(std::begin(kTopologyKinds), std::end(kTopologyKinds),
                      [&](const TopologyKind& k) { return kind == k.name; })
      ->read(keys);
}

// A key whose value names one of `names` (in the order the messages list them): the value named. Its
// default is the name of `def`.
template <class T>
T choice(Config& c, const std::string& key, T def, std::initializer_list<std::pair<const char*, T>> names) {
  std::vector<std::string> allowed;
  std::string def_name;
  for (const auto& [name, value] : names) {
    allowed.emplace_back(name);
    if (value == def && def_name.empty()) def_name = name;
  }
  const std::string v = c.get_string(key, def_name, allowed);
  for (const auto& [name, value] : names)
    if (v == name) return value;
  return def;  // not reached: get_string accepts only the names
}

// [switch]: the buffer and the link-level flow control, "pfc", "credit" (InfiniBand-style CBFC,
// net/credit.h) or "none" (the default follows switch.pfc).
void read_switch_flow_control(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.buffer_bytes = c.get_int(k + "buffer_bytes", s.buffer_bytes, 10'000, int64_t{1} << 40);
  s.pfc_enabled = c.get_bool(k + "pfc", s.pfc_enabled);
  const std::string fc_def = s.credit_enabled ? "credit" : s.pfc_enabled ? "pfc" : "none";
  const std::string fc = c.get_string(k + "flow_control", fc_def, {"pfc", "credit", "none"});
  s.pfc_enabled = fc == "pfc";
  s.credit_enabled = fc == "credit";
  s.credit_buffer_bytes =
      c.get_int(k + "credit_buffer_bytes", s.credit_buffer_bytes, 10'000, int64_t{1} << 40);
  s.credit_period = c.get_us(k + "credit_period_us", s.credit_period, 0.001);
}

// [switch]: the PFC thresholds (dynamic or static Xoff / Xon) and headroom.
void read_switch_pfc(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.pfc_mode = choice(c, k + "pfc_mode", s.pfc_mode,
                      {{"dynamic", PfcThresholdMode::kDynamic}, {"static", PfcThresholdMode::kStatic}});
  s.reserve_bytes = c.get_int(k + "reserve_bytes", s.reserve_bytes, 0, int64_t{1} << 32);
  s.resume_offset_bytes = c.get_int(k + "resume_offset_bytes", s.resume_offset_bytes, 0, int64_t{1} << 32);
  s.dt_shift_at_host_rate = static_cast<int>(c.get_int(k + "dt_shift", s.dt_shift_at_host_rate, 0, 16));
  s.xoff_bytes = c.get_int(k + "xoff_bytes", s.xoff_bytes, 1, int64_t{1} << 40);
  s.xon_bytes = c.get_int(k + "xon_bytes", s.xon_bytes, 0, int64_t{1} << 40);
  if (s.xon_bytes > s.xoff_bytes)
    c.fail(k + "xon_bytes", fmt::format("must not exceed xoff_bytes ({})", s.xoff_bytes));
  s.headroom_bytes = c.get_int(k + "headroom_bytes", s.headroom_bytes, 0, int64_t{1} << 40);
  s.headroom_factor = c.get_double(k + "headroom_factor", s.headroom_factor, 0, 100);
  s.headroom_extra_bytes =
      c.get_int(k + "headroom_extra_bytes", s.headroom_extra_bytes, -1, int64_t{1} << 40);
}

// [switch]: ECN marking (RED between kmin and kmax, optionally scaled with the port's rate).
void read_switch_ecn(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.ecn_enabled = c.get_bool(k + "ecn", s.ecn_enabled);
  s.kmin_bytes = c.get_int(k + "kmin_bytes", s.kmin_bytes, 0, int64_t{1} << 40);
  s.kmax_bytes = c.get_int(k + "kmax_bytes", s.kmax_bytes, 0, int64_t{1} << 40);
  if (s.kmax_bytes < s.kmin_bytes)
    c.fail(k + "kmax_bytes", fmt::format("must be >= kmin_bytes ({})", s.kmin_bytes));
  s.pmax = c.get_double(k + "pmax", s.pmax, 0, 1);
  s.ecn_scale_with_rate = c.get_bool(k + "ecn_scale_with_rate", s.ecn_scale_with_rate);
  s.ecn_ref_rate = gbps(c, k + "ecn_ref_rate_gbps", s.ecn_ref_rate.gbps());
}

// [switch]: the headroom and PFC thresholds of long-haul ports.
void read_switch_long_haul(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.long_haul_headroom_bytes =
      c.get_int(k + "long_haul_headroom_bytes", s.long_haul_headroom_bytes, 0, int64_t{1} << 40);
  s.long_haul_xoff_bytes = c.get_int(k + "long_haul_xoff_bytes", s.long_haul_xoff_bytes, 0, int64_t{1} << 40);
  s.long_haul_xon_bytes = c.get_int(k + "long_haul_xon_bytes", s.long_haul_xon_bytes, 0, int64_t{1} << 40);
  if (s.long_haul_xoff_bytes > 0 && s.long_haul_xon_bytes > s.long_haul_xoff_bytes)
    c.fail(k + "long_haul_xon_bytes",
           fmt::format("must not exceed long_haul_xoff_bytes ({})", s.long_haul_xoff_bytes));
}

// [switch]: the architecture (shared buffer, or input and output queues) and its queues.
void read_switch_model(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.model = choice(c, k + "model", s.model,
                   {{"shared_buffer", SwitchModel::kSharedBuffer},
                    {"input_output_queued", SwitchModel::kInputOutputQueued}});
  s.input_queue_bytes = c.get_int(k + "input_queue_bytes", s.input_queue_bytes, 2'000, int64_t{1} << 40);
  s.output_queue_bytes = c.get_int(k + "output_queue_bytes", s.output_queue_bytes, 2'000, int64_t{1} << 40);
  if (s.model == SwitchModel::kInputOutputQueued && s.credit_enabled)
    c.fail(k + "model", "input_output_queued supports flow_control = \"pfc\" or \"none\", not \"credit\"");
  s.input_queueing = choice(c, k + "input_queueing", s.input_queueing,
                            {{"fifo", InputQueueing::kFifo}, {"voq", InputQueueing::kVoq}});
  if (s.input_queueing == InputQueueing::kVoq && s.model != SwitchModel::kInputOutputQueued)
    c.fail(k + "input_queueing", "\"voq\" needs model = \"input_output_queued\"");
}

// [switch]: routing (net/path_select.h), independent of the scheme.
void read_switch_routing(Config& c, SwitchSettings& s) {
  const std::string k = "switch.";
  s.routing = choice(c, k + "routing", s.routing,
                     {{"ecmp", Routing::kEcmp},
                      {"flowlet", Routing::kFlowlet},
                      {"spray", Routing::kSpray},
                      {"adaptive", Routing::kAdaptive}});
  s.ecmp_hash = choice(c, k + "ecmp_hash", s.ecmp_hash,
                       {{"rocesim", EcmpHash::kRocesim}, {"hpcc_sim", EcmpHash::kHpccSim}});
  s.ecmp_seed = c.get_int(k + "ecmp_seed", s.ecmp_seed, -1, int64_t{1} << 62);
  s.flowlet_gap = c.get_us(k + "flowlet_gap_us", s.flowlet_gap, 0, 1e7);
  s.flowlet_table_size =
      static_cast<int>(c.get_int(k + "flowlet_table_size", s.flowlet_table_size, 1, int64_t{1} << 24));
  if ((s.flowlet_table_size & (s.flowlet_table_size - 1)) != 0)
    c.fail(k + "flowlet_table_size", "expected a power of two");
  s.spray = choice(c, k + "spray", s.spray,
                   {{"random", SprayMode::kRandom}, {"round_robin", SprayMode::kRoundRobin}});
  s.adaptive_per_flowlet =
      choice(c, k + "adaptive_granularity", s.adaptive_per_flowlet, {{"packet", false}, {"flowlet", true}});
  s.adaptive_avoid_paused = c.get_bool(k + "adaptive_avoid_paused", s.adaptive_avoid_paused);
  s.failure_detection = c.get_us(k + "failure_detection_us", s.failure_detection, 0, 1e9);
}

// [switch], in the order of its groups of keys.
void read_switch(Config& c, SwitchSettings& s) {
  read_switch_flow_control(c, s);
  read_switch_pfc(c, s);
  read_switch_ecn(c, s);
  s.acks_in_data_class = c.get_bool("switch.acks_in_data_class", s.acks_in_data_class);
  read_switch_long_haul(c, s);
  read_switch_model(c, s);
  read_switch_routing(c, s);
}

void read_nic(Config& c, NicSettings& n) {
  const std::string k = "nic.";
  n.mtu_bytes = c.get_int(k + "mtu_bytes", n.mtu_bytes, 64, 9000);
  n.header_bytes = c.get_int(k + "header_bytes", n.header_bytes, 0, 1000);
  n.ack_bytes = c.get_int(k + "ack_bytes", n.ack_bytes, 1, 1500);
  n.cnp_bytes = c.get_int(k + "cnp_bytes", n.cnp_bytes, 1, 1500);
  n.ack_interval = static_cast<int>(c.get_int(k + "ack_interval", n.ack_interval, 1, 1 << 20));
  n.nack_interval = c.get_us(k + "nack_interval_us", n.nack_interval);
  n.rto = c.get_us(k + "rto_us", n.rto);
  n.gbn_rto = c.get_us(k + "gbn_rto_us", n.gbn_rto, 0.001);
  n.rto_min_base_rtts = static_cast<int>(c.get_int(k + "rto_min_base_rtts", n.rto_min_base_rtts, 0, 1000));
  n.data_priority = static_cast<int>(c.get_int(k + "data_priority", n.data_priority, 1, 7));
  n.rx_rate = Rate::from_gbps(c.get_double(k + "rx_rate_gbps", n.rx_rate.gbps(), 0, 1e5));
  n.rx_xoff_bytes = c.get_int(k + "rx_xoff_bytes", n.rx_xoff_bytes, 1, int64_t{1} << 40);
  n.rx_xon_bytes = c.get_int(k + "rx_xon_bytes", n.rx_xon_bytes, 0, int64_t{1} << 40);
  if (n.rx_xon_bytes > n.rx_xoff_bytes) c.fail(k + "rx_xon_bytes", "must not exceed rx_xoff_bytes");
  n.int_hop_bytes = c.get_int(k + "int_hop_bytes", n.int_hop_bytes, 0, 1000);
  n.int_base_bytes = c.get_int(k + "int_base_bytes", n.int_base_bytes, 0, 1000);
  n.timestamp_bytes = c.get_int(k + "timestamp_bytes", n.timestamp_bytes, 0, 1000);
  using Nic = NicSettings;
  n.ack_priority = choice(c, k + "ack_priority", Nic::AckPriority::kScheme,
                          {{"scheme", Nic::AckPriority::kScheme},
                           {"high", Nic::AckPriority::kHigh},
                           {"data", Nic::AckPriority::kData}});
  n.loss_recovery =
      choice(c, k + "loss_recovery", n.loss_recovery,
             {{"go_back_n", Nic::LossRecovery::kGoBackN}, {"selective", Nic::LossRecovery::kSelective}});
  n.sack_window_packets =
      static_cast<int>(c.get_int(k + "sack_window_packets", n.sack_window_packets, 0, 1 << 20));
  n.loss_detection =
      choice(c, k + "loss_detection", n.loss_detection,
             {{"rack", Nic::LossDetection::kReorderWindow}, {"dupthresh", Nic::LossDetection::kDupThresh}});
  n.reorder_window = c.get_us(k + "reorder_window_us", n.reorder_window);
  n.reorder_window_srtts =
      static_cast<int>(c.get_int(k + "reorder_window_srtts", n.reorder_window_srtts, 1, 255));
  n.reorder_window_lateness =
      static_cast<int>(c.get_int(k + "reorder_window_lateness", n.reorder_window_lateness, 0, 1000));
  n.reorder_window_max = c.get_us(k + "reorder_window_max_us", n.reorder_window_max);
  n.reorder_window_max_lossless =
      c.get_us(k + "reorder_window_max_lossless_us", n.reorder_window_max_lossless);
  n.lateness_epoch = c.get_us(k + "lateness_epoch_us", n.lateness_epoch, 0.001);
  n.reorder_window_lossless = c.get_us(k + "reorder_window_lossless_us", n.reorder_window_lossless);
  n.sack_reorder_packets =
      static_cast<int>(c.get_int(k + "sack_reorder_packets", n.sack_reorder_packets, 1, 1 << 20));
  n.rto_low = c.get_us(k + "rto_low_us", n.rto_low, 0.001);
  n.rto_high = c.get_us(k + "rto_high_us", n.rto_high, 0.001);
  n.rto_low_packets = static_cast<int>(c.get_int(k + "rto_low_packets", n.rto_low_packets, 0, 1 << 20));
  n.ideal_fct_hpcc_ns =
      choice(c, k + "ideal_fct", n.ideal_fct_hpcc_ns, {{"exact", false}, {"hpcc_ns", true}});
  n.source_ports =
      choice(c, k + "source_ports", n.source_ports,
             {{"per_host", Nic::SourcePorts::kPerHost}, {"per_pair", Nic::SourcePorts::kPerPair}});
  n.port_spread = choice(c, k + "port_spread", n.port_spread,
                         {{"flow_hash", Nic::PortSpread::kFlowHash}, {"spray", Nic::PortSpread::kSpray}});
}

}  // namespace

std::string resolve_path(const Config& c, const std::string& p) {
  if (p.empty()) return p;
  std::filesystem::path fp(p);
  if (fp.is_absolute()) return p;
  return (std::filesystem::path(c.dir()) / fp).lexically_normal().string();
}

// The node `v` names in `topo`: its id (digits) or its name; fails at `key` when there is none.
static int node_id(Config& c, const TopoSpec& topo, const std::string& key, const std::string& v) {
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    const int id = v.size() < 9 ? std::stoi(v) : -1;
    if (id < 0 || id >= topo.num_nodes)
      c.fail(key, fmt::format("node id {} out of range 0..{}", v, topo.num_nodes - 1));
    return id;
  }
  const int id = lookup_node(topo, v);
  if (id < 0) c.fail(key, fmt::format("no node named '{}' in this topology", v));
  return id;
}

int host_id(Config& c, const TopoSpec& topo, const std::string& key, const std::string& v) {
  const int id = node_id(c, topo, key, v);
  if (topo.is_switch[id]) c.fail(key, fmt::format("node '{}' is a switch; flows run between hosts", v));
  return id;
}

int node_ref(Config& c, const TopoSpec& topo, const std::string& key) {
  return host_id(c, topo, key, c.get_id_or_name(key));
}

uint16_t class_index(std::vector<std::string>& labels, const std::string& name) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == name) return static_cast<uint16_t>(i);
  labels.push_back(name);
  return static_cast<uint16_t>(labels.size() - 1);
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> n;
  for (const auto& e : scheme_registry()) n.push_back(e.name);
  return n;
}
std::vector<std::string> topology_kinds() {
  std::vector<std::string> names;
  for (const TopologyKind& k : kTopologyKinds) names.emplace_back(k.name);
  return names;
}

// The top-level keys (name, seed, duration, ...), then a check that every top-level key is known.
static void read_top_level(Config& c, Scenario& s) {
  s.file = c.file();
  s.name = c.get_string("name", std::filesystem::path(c.file()).stem().string());
  s.description = c.get_string("description", "");
  s.seed = static_cast<uint64_t>(c.get_int("seed", 1, 0, int64_t{1} << 62));
  s.duration = Time::from_ms(c.get_double("duration_ms", 10, 1e-6, 1e7));
  s.stop_when_done = c.get_bool("stop_when_done", true);
  // Threads of one run (docs/parallel.md): results do not depend on it. Left out, the run chooses by the
  // fabric's size (Network::kThreadsAuto), and the resolved file leaves it out too.
  const char* env_threads = std::getenv("ROCESIM_THREADS");
  if (c.has("threads")) {
    s.threads = static_cast<int>(c.get_int("threads", 1, 0, 1024));
  } else if (env_threads != nullptr && *env_threads != '\0') {
    // The environment's default for runs that leave threads out (as OMP_NUM_THREADS is OpenMP's).
    int n = -1;
    const std::string_view v(env_threads);
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 0 || n > 1024)
      throw InputError("ROCESIM_THREADS", 0,
                       fmt::format("'{}': expected an integer in [0, 1024] (0 = every core), or unset it "
                                   "to let each run choose by its fabric's size",
                                   v));
    s.threads = n;
    c.note("threads", fmt::format("left out: {} from $ROCESIM_THREADS", n));
  } else {
    s.threads = Scenario::kThreadsAuto;
    c.note("threads",
           "left out: every core for a fabric of 1,000 ports and nodes or more, else one "
           "(docs/parallel.md, \"Threads by default\")");
  }
  // The barrier's spin, a measuring knob read by the simulator (docs/parallel.md): a bad value is refused
  // here, before anything runs.
  try {
    (void)Simulator::barrier_spin(1);
  } catch (const std::invalid_argument& e) {
    throw InputError("ROCESIM_BARRIER_SPIN_US", 0, e.what());
  }
  // Partitions the fabric is cut into (docs/parallel.md); 0 = chosen by the network. Results do not depend on
  // it.
  s.partitions = static_cast<int>(c.get_int("partitions", 0, 0, 65536));
  // The profile was applied before reading (config/profiles.h); recorded when there is one.
  if (c.has("profile")) (void)c.get_string("profile", "", profile_names());
  // A misspelled table or key is the first error, before anything its absence causes (e.g. [topolgy]
  // leaving the default topology, too small for the traffic).
  c.reject_unknown_top_level({"name", "description", "seed", "threads", "partitions", "duration_ms",
                              "stop_when_done", "profile", "topology", "switch", "nic", "cc", "flows",
                              "flow_file", "traffic", "output", "monitors", "events"});
}

// [topology], [switch] (with the scheme's switch defaults), [nic] and [cc].
static void read_fabric(Config& c, Scenario& s) {
  s.topo = read_topology(c);
  // A drop probability for every link (a topology file's fifth column sets it per link; this key, when
  // given, replaces it everywhere). Failures of single links: [[events]] action = "loss".
  if (c.has("topology.link_loss")) {
    const double loss = c.get_double("topology.link_loss", 0, 0, 1);
    for (LinkSpec& l : s.topo.links) l.error_rate = loss;
  }
  c.reject_unknown_keys("topology");  // a misspelled key before any error its default causes
  if (s.topo.num_hosts() < 2) c.fail("topology.kind", "the topology needs at least two hosts");
  // The scheme's own switch settings (cc/registry.h SwitchDefaultsFn) are the defaults of [switch].
  s.scheme = c.get_string("cc.scheme", s.scheme, scheme_names());
  const SchemeEntry* scheme = find_scheme(s.scheme);
  if (scheme->switch_defaults)
    if (const std::string what = scheme->switch_defaults(s.sw); !what.empty())
      c.note("switch", what + "; the scheme's switch defaults, used where [switch] does not set the key");
  read_switch(c, s.sw);
  c.reject_unknown_keys("switch");
  read_nic(c, s.nic);
  c.reject_unknown_keys("nic");

  Rate nic_rate{0};
  for (const auto& l : s.topo.links)
    if (!s.topo.is_switch[l.a] || !s.topo.is_switch[l.b]) nic_rate = std::max(nic_rate, l.rate);
  s.scheme_factory = scheme->read(c, SchemeContext{nic_rate, Time::zero()});
  // [cc.<name>] tables of schemes not selected are read (and checked) too, so that one scenario can carry
  // several schemes' settings and be swept over cc.scheme.
  for (const auto& e : scheme_registry())
    if (e.name != s.scheme && c.has("cc." + e.name)) (void)e.read(c, SchemeContext{nic_rate, Time::zero()});
  c.reject_unknown_keys("cc", scheme_names());
}

// With PFC on, every switch's shared buffer must hold its ports' headroom (and, under dynamic thresholds,
// their reserves) and a packet more: else a paused port's in-flight bytes find no room (drops in a lossless
// fabric) and the dynamic PFC threshold is 0 (docs/models.md A4).
static void check_switch_buffers(Config& c, const Scenario& s) {
  const std::vector<BufferSetAside> short_of =
      switches_short_of_buffer(s.topo, s.sw, s.nic.mtu_bytes + s.nic.header_bytes);
  if (short_of.empty()) return;
  const BufferSetAside& b = short_of.front();  // the largest need
  const bool dynamic = s.sw.pfc_mode == PfcThresholdMode::kDynamic;
  std::string parts;
  for (const BufferSetAside::Ports& k : b.kinds)
    parts += fmt::format("{}{} x {} B ({} Gb/s, {} us{})", parts.empty() ? "" : " + ", k.count,
                         k.headroom_bytes, k.rate.gbps(), k.delay.us(), k.long_haul ? ", long haul" : "");
  const std::string rule =
      s.sw.headroom_bytes > 0
          ? fmt::format("switch.headroom_bytes = {} per port", s.sw.headroom_bytes)
          : fmt::format("switch.headroom_factor {} x rate x link delay + {} B", s.sw.headroom_factor,
                        s.sw.headroom_extra_bytes >= 0 ? s.sw.headroom_extra_bytes : 2 * b.packet_bytes);
  const std::string reserves =
      dynamic ? fmt::format(" + reserves {} x {} B = {} B", b.ports, s.sw.reserve_bytes, b.reserve_bytes)
              : "";
  const std::string others = short_of.size() == 2 ? std::string(" (1 more switch is short too)")
                             : short_of.size() > 2
                                 ? fmt::format(" ({} more switches are short too)", short_of.size() - 1)
                                 : std::string();
  c.fail("switch.buffer_bytes",
         fmt::format("switch '{}' has {} B of buffer, less than its {} ports' PFC headroom{} and one packet "
                     "({} B): headroom {} B = {} [{}]{} + one packet {} B{}. With PFC on it would drop "
                     "packets{}. Raise switch.buffer_bytes to at least {}, or lower switch.headroom_bytes / "
                     "switch.headroom_factor, or turn PFC off (switch.flow_control = \"none\")",
                     monitor_node_name(s.topo, b.node), s.sw.buffer_bytes, b.ports,
                     dynamic ? " and reserves" : "", b.needed_bytes(), b.headroom_bytes, parts, rule,
                     reserves, b.packet_bytes, others,
                     dynamic ? " and its dynamic PFC threshold would be 0" : "", b.needed_bytes()));
}

static std::unique_ptr<HpccFlowFile> open_flow_file(const Scenario& s);

// The data priorities (1-7) the scenario's flows use, one bit each: every enabled [[traffic]] table's and
// every [[flows]] entry's priority, and with `flow_file` every line's pg of the flow file (0 is the control
// class: outside flow control, not counted). Packets keep their flow's priority through the fabric (ACKs in
// a data class take their flow's too), so these are the only (port, priority) counters that ever fill.
static unsigned data_priorities_in_use(const Scenario& s, bool flow_file) {
  unsigned bits = 0;
  const auto add = [&](int prio) {
    if (prio >= 1 && prio < kNumPriorities) bits |= 1u << prio;
  };
  for (const TrafficSpec& t : s.traffic)
    if (t.enabled) add(t.priority);
  for (const FlowSpec& f : s.inline_flows) add(f.priority);
  if (flow_file && !s.flow_file.empty()) {
    const auto file = open_flow_file(s);
    for (FlowSpec f; file->next(f);) add(f.priority);
  }
  return bits;
}

// The worst case the flow control must make lossless (docs/models.md A4, A6, A7): with credits, every
// switch's buffer must hold the credits it grants, credit_buffer_bytes per ingress port and data priority
// in use; under static PFC thresholds, Xoff + headroom per ingress port and data priority in use; under the
// input-and-output queued model, every input queue its port's headroom above an Xoff of two packets. Each
// (port, priority) can be full at once (an incast through every port), and beyond the buffer
// SwitchMmu::admit drops. Priorities: those the flows use (data_priorities_in_use), not all 7: a pair that
// carries no data holds nothing, and counting all 7 would refuse every scenario whose buffer was sized for
// the one data class the seeds and [sim] use. The flow file is read only when all 7 would not fit.
static void check_flow_control_commitments(Config& c, const Scenario& s) {
  const Bytes pkt = s.nic.mtu_bytes + s.nic.header_bytes;
  const SwitchSettings& sw = s.sw;
  if (const std::vector<InputQueueShort> q = switches_short_of_input_queue(s.topo, sw, pkt); !q.empty()) {
    const InputQueueShort& w = q.front();
    c.fail(c.has("switch.input_queue_bytes") ? "switch.input_queue_bytes" : "switch.model",
           fmt::format("switch '{}' has input queues of {} B (switch.input_queue_bytes), less than its {} "
                       "port(s)' PFC headroom {} B ({} Gb/s, {} us{}) + two packets {} B = {} B: the queue "
                       "pauses at two packets and what is in flight after the PAUSE does not fit, so PFC "
                       "would drop packets{}. Raise switch.input_queue_bytes to at least {}, or lower "
                       "switch.headroom_bytes / switch.headroom_factor, or turn PFC off "
                       "(switch.flow_control = \"none\")",
                       monitor_node_name(s.topo, w.node), sw.input_queue_bytes, w.port.count,
                       w.port.headroom_bytes, w.port.rate.gbps(), w.port.delay.us(),
                       w.port.long_haul ? ", long haul" : "", 2 * pkt, w.needed_bytes(),
                       q.size() > 1 ? fmt::format(" ({} more switches are short too)", q.size() - 1) : "",
                       w.needed_bytes()));
  }
  // The scheme's switch agents may raise the long-haul ports' Xoff (LSCC, HPCC*, SWING): count theirs.
  const std::unique_ptr<CongestionControl> cc = s.make_scheme();
  if (switches_over_committed(s.topo, sw, pkt, kNumPriorities - 1, cc.get()).empty()) return;
  const unsigned bits = data_priorities_in_use(s, true);
  const int prios = std::popcount(bits);
  const std::vector<BufferCommitted> over = switches_over_committed(s.topo, sw, pkt, prios, cc.get());
  if (over.empty()) return;
  const BufferCommitted& b = over.front();  // the largest commitment
  std::string listed;
  for (int p = 1; p < kNumPriorities; ++p)
    if (bits & (1u << p)) listed += fmt::format("{}{}", listed.empty() ? "" : ", ", p);
  const std::string prio_text =
      fmt::format("{} data priorit{} in use ({})", prios, prios == 1 ? "y" : "ies", listed);
  const std::string others = over.size() == 2 ? std::string(" (1 more switch is over too)")
                             : over.size() > 2
                                 ? fmt::format(" ({} more switches are over too)", over.size() - 1)
                                 : std::string();
  const Bytes max_pair = b.max_per_pair_bytes(sw.buffer_bytes);
  if (sw.credit_enabled) {
    const std::string lower =
        max_pair >= 10'000 ? fmt::format(" or lower switch.credit_buffer_bytes to at most {}", max_pair) : "";
    c.fail(c.has("switch.credit_buffer_bytes") ? "switch.credit_buffer_bytes" : "switch.buffer_bytes",
           fmt::format("switch '{}' grants more credit than its buffer holds: {} ports x {} B "
                       "(switch.credit_buffer_bytes) x {} = {} B, above its switch.buffer_bytes {} B{}. "
                       "Every ingress port and priority may fill its credits at once, so the switch would "
                       "drop packets under credit-based flow control. Raise switch.buffer_bytes to at "
                       "least {}{}",
                       monitor_node_name(s.topo, b.node), b.ports, b.per_pair_bytes, prio_text,
                       b.committed_bytes(), sw.buffer_bytes, others, b.committed_bytes(), lower));
  }
  std::string parts;
  for (const BufferSetAside::Ports& k : b.kinds)
    parts += fmt::format("{}{} x {} B ({} Gb/s, {} us{})", parts.empty() ? "" : " + ", k.count,
                         k.headroom_bytes, k.rate.gbps(), k.delay.us(), k.long_haul ? ", long haul" : "");
  const std::string own_source =
      b.scheme_xoff_ports > 0
          ? fmt::format("set by cc.scheme = \"{}\": {}", s.scheme, cc->long_haul_thresholds_keys())
          : std::string("switch.long_haul_xoff_bytes");
  const std::string xoff_text =
      b.own_xoff_ports > 0
          ? fmt::format("Xoff {} x {} B (switch.xoff_bytes) + {} long-haul, {} B in all ({})",
                        b.ports - b.own_xoff_ports, b.per_pair_bytes, b.own_xoff_ports, b.own_xoff_bytes,
                        own_source)
          : fmt::format("Xoff {} x {} B (switch.xoff_bytes)", b.ports, b.per_pair_bytes);
  const std::string scheme_hint =
      b.scheme_xoff_ports > 0 ? fmt::format(", or lower the scheme's long-haul Xoff ({})", own_source) : "";
  const std::string lower =
      max_pair >= pkt ? fmt::format(" or lower switch.xoff_bytes (and xon_bytes) to at most {}", max_pair)
                      : "";  // an Xoff below one packet would pause at every packet
  c.fail(c.has("switch.xoff_bytes") ? "switch.xoff_bytes" : "switch.buffer_bytes",
         fmt::format("switch '{}' has {} B of buffer (switch.buffer_bytes), less than its {} ports can hold "
                     "under static PFC thresholds: ({} + headroom {} B = {}) x {} = {} B{}. Every ingress "
                     "port and priority may fill to Xoff and then its headroom at once, so PFC would drop "
                     "packets before or after its PAUSE. Raise switch.buffer_bytes to at least {}{}{}",
                     monitor_node_name(s.topo, b.node), sw.buffer_bytes, b.ports, xoff_text, b.headroom_bytes,
                     parts, prio_text, b.committed_bytes(), others, b.committed_bytes(), lower, scheme_hint));
}

// [[flows]], sorted by start time (stable: equal starts keep their order).
static void read_inline_flows(Config& c, Scenario& s) {
  const size_t nflows = c.table_array_size("flows");
  for (size_t i = 0; i < nflows; ++i) {
    const std::string k = fmt::format("flows[{}].", i);
    FlowSpec f;
    f.src = node_ref(c, s.topo, k + "src");
    f.dst = node_ref(c, s.topo, k + "dst");
    if (f.src == f.dst) c.fail(k + "dst", "a flow needs two different hosts");
    f.size_bytes = c.get_int(k + "size_bytes", 1'000'000, 1, int64_t{1} << 50);
    f.start = c.get_us(k + "start_us", 0);
    f.priority = static_cast<int>(c.get_int(k + "priority", s.nic.data_priority, 1, 7));
    f.class_id = class_index(s.class_labels, c.get_string(k + "class", "default"));
    s.inline_flows.push_back(f);
  }
  c.reject_unknown_keys("flows");
  std::stable_sort(s.inline_flows.begin(), s.inline_flows.end(),
                   [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
}

// [[events]]: link failures, recoveries, rate and loss changes (net/link_events.h).
static void read_events(Config& c, Scenario& s) {
  const size_t n = c.table_array_size("events");
  for (size_t i = 0; i < n; ++i) {
    const std::string k = fmt::format("events[{}].", i);
    LinkEvent e;
    const std::string table = fmt::format("events[{}]", i);  // missing keys: the table's line
    if (!c.has(k + "at_us")) c.fail(table, "at_us missing: the event's time in microseconds");
    e.at = c.get_us(k + "at_us", 0.0, 0, 1e12);
    if (!c.has(k + "link"))
      c.fail(table, "link missing: the link's two nodes, e.g. link = [\"leaf0\", \"spine1\"]");
    const std::vector<std::string> ends = c.get_id_or_name_list(k + "link");
    if (ends.size() != 2)
      c.fail(k + "link", fmt::format("expected two node names or ids, got {}", ends.size()));
    int id[2];
    for (int j = 0; j < 2; ++j) id[j] = node_id(c, s.topo, k + "link", ends[j]);
    e.a = id[0];
    e.b = id[1];
    const bool linked = std::any_of(s.topo.links.begin(), s.topo.links.end(), [&](const LinkSpec& l) {
      return (l.a == e.a && l.b == e.b) || (l.a == e.b && l.b == e.a);
    });
    if (!linked)
      c.fail(k + "link", fmt::format("'{}' and '{}' are not linked in this topology", ends[0], ends[1]));
    if (!c.has(k + "action")) c.fail(table, "action missing: \"down\", \"up\", \"rate\" or \"loss\"");
    const std::string action = c.get_string(k + "action", "down", {"down", "up", "rate", "loss"});
    if (action == "down") e.action = LinkEvent::Action::kDown;
    if (action == "up") e.action = LinkEvent::Action::kUp;
    if (action == "rate") {
      e.action = LinkEvent::Action::kRate;
      if (!c.has(k + "rate_gbps")) c.fail(table, "rate_gbps missing: action = \"rate\" needs the new rate");
      e.rate = gbps(c, k + "rate_gbps", 0);
    }
    if (action == "loss") {
      e.action = LinkEvent::Action::kLoss;
      if (!c.has(k + "loss")) c.fail(table, "loss missing: action = \"loss\" needs the drop probability");
      e.loss = c.get_double(k + "loss", 0, 0, 1);
    }
    if (action != "rate" && c.has(k + "rate_gbps"))
      c.fail(k + "rate_gbps", "only read with action = \"rate\"");
    if (action != "loss" && c.has(k + "loss")) c.fail(k + "loss", "only read with action = \"loss\"");
    if ((action == "down" || action == "loss") && s.sw.credit_enabled)
      c.fail(k + "action",
             "link failures and losses are not supported with switch.flow_control = \"credit\"");
    s.events.push_back(e);
  }
  c.reject_unknown_keys("events");
  std::stable_sort(s.events.begin(), s.events.end(),
                   [](const LinkEvent& a, const LinkEvent& b) { return a.at < b.at; });
}

// [output]: the FCT statistics' size buckets and short-flow limit, fct.txt; and [monitors].
static void read_output(Config& c, Scenario& s) {
  s.size_buckets.clear();
  for (double e : c.get_double_list("output.size_buckets_bytes", default_size_buckets(s), 1, 1e15))
    s.size_buckets.push_back(static_cast<Bytes>(e));
  for (size_t i = 1; i < s.size_buckets.size(); ++i)
    if (s.size_buckets[i] <= s.size_buckets[i - 1])
      c.fail("output.size_buckets_bytes", "bucket edges must increase strictly");
  s.short_flow_bytes = c.get_int("output.short_flow_bytes", s.short_flow_bytes, 1, int64_t{1} << 50);
  s.write_hpcc_fct = c.get_bool("output.fct_hpcc", false);
  s.transport_columns =
      c.get_bool("output.transport_columns", s.nic.loss_recovery == NicSettings::LossRecovery::kSelective);
  s.monitors = read_monitors(c, s.topo, s.sw.model, s.class_labels);
  for (const std::string& label : s.monitors.trace_classes)
    if (std::find(s.class_labels.begin(), s.class_labels.end(), label) == s.class_labels.end())
      c.fail("monitors.packet_trace.classes",
             fmt::format("no traffic class '{}': this scenario's classes are {}", label,
                         fmt::join(s.class_labels, ", ")));
}

// Combinations that run but that a researcher should know cost more than they seem to (printed by
// `validate` and `run`, kept in summary.json's warnings).
static void warn_combinations(Scenario& s) {
  const bool per_packet =
      s.sw.routing == Routing::kSpray || (s.sw.routing == Routing::kAdaptive && !s.sw.adaptive_per_flowlet);
  if (per_packet && s.nic.loss_recovery == NicSettings::LossRecovery::kGoBackN)
    s.warnings.push_back(fmt::format(
        "switch.routing = \"{}\" reorders packets, and nic.loss_recovery = \"go_back_n\" is a RoCE NIC "
        "without out-of-order placement: its receiver drops every packet that arrives ahead of the next "
        "expected one and the sender resends from there, so most packets may be sent again and flows run "
        "many times slower (docs/models.md A10). Set nic.loss_recovery = \"selective\" for a NIC that "
        "keeps them",
        s.sw.routing == Routing::kSpray ? "spray" : "adaptive"));
}

static Scenario build(Config& c) {
  Scenario s;
  read_top_level(c, s);
  read_fabric(c, s);
  warn_combinations(s);
  check_switch_buffers(c, s);
  read_events(c, s);
  read_inline_flows(c, s);
  // start_times alone (profile hpcc-sim sets it in every scenario) does not declare a flow file.
  const bool start_times_only = c.has("flow_file.start_times") && !c.has("flow_file.path");
  s.flow_start_times = choice(c, "flow_file.start_times", FlowStartTimes::kExact,
                              {{"exact", FlowStartTimes::kExact}, {"hpcc_sim", FlowStartTimes::kHpccSim}});
  if (c.has("flow_file") && !start_times_only) {
    const std::string p = c.get_string("flow_file.path", "");
    if (p.empty()) c.fail("flow_file.path", "missing: the ns-3 flow file to read");
    s.flow_file = resolve_path(c, p);
  }
  c.reject_unknown_keys("flow_file");
  read_traffic(c, s);
  c.reject_unknown_keys("traffic");
  if (s.inline_flows.empty() && s.flow_file.empty() && s.traffic.empty())
    c.fail("flows", "the scenario declares no flows: add [[flows]], [flow_file] or [[traffic]]");
  check_flow_control_commitments(c, s);
  read_output(c, s);

  c.reject_unknown_keys();
  c.set_resolved("seed", toml::value<int64_t>(static_cast<int64_t>(s.seed)));
  s.resolved = c.resolved();
  for (const auto& [key, text] : c.notes()) s.resolved_notes += "# " + key + ": " + text + "\n";
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  const std::optional<std::string> text = read_text(path);
  if (!text) throw InputError(path, 0, "cannot open scenario file");
  return load_scenario_text(*text, path, overrides);
}

Scenario load_scenario_text(std::string_view text, const std::string& name,
                            const std::vector<std::string>& overrides) {
  const AppliedProfile profile = apply_profile(text, name, overrides);  // profile defaults, then --set
  return with_profile_errors(profile, [&] {
    Config c = Config::parse(text, name, profile.overrides);
    return build(c);
  });
}

// The scenario's ns-3 flow file, read with its start-time rule; its hosts are the topology's non-switches.
static std::unique_ptr<HpccFlowFile> open_flow_file(const Scenario& s) {
  std::vector<bool> is_host(s.topo.is_switch.size());
  for (size_t i = 0; i < is_host.size(); ++i) is_host[i] = !s.topo.is_switch[i];
  auto file = std::make_unique<HpccFlowFile>(s.flow_file, is_host);
  file->set_start_times(s.flow_start_times);
  return file;
}

ListedFlows scan_listed_flows(const Scenario& s) {
  ListedFlows r;
  const auto add = [&](const FlowSpec& f) {
    ++r.flows;
    r.after_end += f.start >= s.duration ? 1 : 0;
    r.first_start = std::min(r.first_start, f.start);
    r.last_start = std::max(r.last_start, f.start);
  };
  for (const FlowSpec& f : s.inline_flows) add(f);
  if (!s.flow_file.empty()) {
    const auto file = open_flow_file(s);
    for (FlowSpec f; file->next(f);) add(f);
  }
  return r;
}

namespace {
// A time in ms for messages: "10", "2000.000123".
std::string ms_text(Time t) {
  std::string v = fmt::format("{:.6f}", t.ms());
  while (v.back() == '0') v.pop_back();
  if (v.back() == '.') v.pop_back();
  return v;
}
}  // namespace

std::string no_flow_before_end_message(const Scenario& s, Time first_start, Time last_start) {
  return fmt::format(
      "no flow starts before the end of the run: the run ends at {} ms (duration_ms) and the first flow "
      "starts "
      "at {} ms{}; set duration_ms above {} (e.g. --set duration_ms={}) or move the flows' start times",
      ms_text(s.duration), ms_text(first_start),
      s.flow_file.empty() ? "" : " (" + s.flow_file + "; ns-3 flow files usually start at 2 s)",
      ms_text(first_start), ms_text(last_start + s.duration));
}

std::string flows_after_end_message(const Scenario& s, uint64_t after_end, uint64_t total, Time last_start) {
  return fmt::format(
      "{} of {} flows start after the end of the run at {} ms (duration_ms) and are not run (the last starts "
      "at "
      "{} ms): set duration_ms above {} to run them",
      after_end, total, ms_text(s.duration), ms_text(last_start), ms_text(last_start));
}

std::unique_ptr<CongestionControl> Scenario::make_scheme() const { return scheme_factory(); }

namespace {
// Keeps the CDFs alive as long as the generators that sample them.
class OwningMerged : public FlowSource {
 public:
  MergedSource merged;
  std::vector<std::unique_ptr<SizeCdf>> cdfs;
  bool next(FlowSpec& out) override { return merged.next(out); }
};
}  // namespace

std::unique_ptr<DagRunner> Scenario::make_dependent_flows() const {
  auto runner = std::make_unique<DagRunner>();
  add_traffic_jobs(*this, *runner);
  if (runner->num_jobs() == 0) return nullptr;
  return runner;
}

std::unique_ptr<FlowSource> Scenario::make_flow_source() const {
  auto src = std::make_unique<OwningMerged>();
  if (!inline_flows.empty()) src->merged.add(std::make_unique<InlineFlows>(inline_flows));
  if (!flow_file.empty()) {
    src->merged.add(open_flow_file(*this));
  }
  add_traffic_sources(*this, src->merged, src->cdfs);
  return src;
}

}  // namespace rocesim
