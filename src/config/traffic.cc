#include "config/traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "topo/builders.h"
#include "workload/chakra.h"
#include "workload/collectives.h"
#include "workload/dependency_trace.h"
#include "workload/flow_file.h"
#include "workload/patterns.h"
#include "workload/simai.h"

namespace rocesim {

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 50;
constexpr uint16_t kIncastDport = 200;  // as in ns-3 HPCC flow files

const std::vector<std::string>& pattern_names() {
  static const std::vector<std::string> names{"all_to_all", "groups",           "permutation", "incast",
                                              "hotspot",    "set_to_set",       "long_lived",  "burst",
                                              "collective", "dependency_trace", "chakra",      "simai"};
  return names;
}

// Patterns whose flows wait for other flows (DagRunner jobs rather than FlowSources).
bool is_job_pattern(const std::string& p) {
  return p == "collective" || p == "dependency_trace" || p == "chakra" || p == "simai";
}

void resolved_note(Config& c, const std::string& key, const std::string& note) { c.note(key, note); }

// "h12" -> ("h", 12); "7" -> ("", 7). False without trailing digits.
bool split_suffix(const std::string& v, std::string& prefix, int64_t& num) {
  size_t i = v.size();
  while (i > 0 && v[i - 1] >= '0' && v[i - 1] <= '9') --i;
  if (i == v.size() || v.size() - i > 9) return false;
  prefix = v.substr(0, i);
  num = std::stoll(v.substr(i));
  return true;
}

// Appends the host(s) `v` names: one node, or a range "first..last" ("h0..h15", "B1..B8", "0..15").
void expand(Config& c, const TopoSpec& topo, const std::string& key, const std::string& v,
            std::vector<int>& out) {
  const size_t dots = v.find("..");
  if (dots == std::string::npos) {
    out.push_back(host_id(c, topo, key, v));
    return;
  }
  std::string pa, pb;
  int64_t na = 0, nb = 0;
  if (!split_suffix(v.substr(0, dots), pa, na) || !split_suffix(v.substr(dots + 2), pb, nb) || pa != pb)
    c.fail(key,
           fmt::format("bad range '{}': expected first..last with one prefix, e.g. \"h0..h15\" or \"0..15\"",
                       v));
  if (nb < na) c.fail(key, fmt::format("range '{}' runs backwards", v));
  if (nb - na >= topo.num_nodes) c.fail(key, fmt::format("range '{}' is longer than the topology", v));
  for (int64_t i = na; i <= nb; ++i) out.push_back(host_id(c, topo, key, pa + std::to_string(i)));
}

// A list of hosts: one node, or an array of node names / ids / ranges. No host twice.
std::vector<int> host_list(Config& c, const TopoSpec& topo, const std::string& key) {
  std::vector<int> out;
  if (c.has(key + "[0]")) {
    // Config has no getter for arrays mixing names and ids: this marks `key` as read (and records an
    // all-string array); a mixed array makes it throw, harmlessly, and the elements are read one by one.
    try {
      (void)c.get_string_list(key, {});
    } catch (const InputError&) {
    }
    for (size_t i = 0; c.has(fmt::format("{}[{}]", key, i)); ++i) {
      const std::string ek = fmt::format("{}[{}]", key, i);
      expand(c, topo, ek, c.get_id_or_name(ek), out);
    }
  } else {
    expand(c, topo, key, c.get_id_or_name(key), out);
  }
  std::vector<int> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    c.fail(key, fmt::format("host '{}' listed twice", topo.node_names.size() > static_cast<size_t>(*d)
                                                          ? topo.node_names[*d]
                                                          : std::to_string(*d)));
  return out;
}

std::vector<int> hosts_or_all(Config& c, const TopoSpec& topo, const std::string& key) {
  if (c.has(key)) return host_list(c, topo, key);
  resolved_note(c, key, "all hosts");
  return topo.hosts();
}

// Hosts whose topo.host_group is one of the listed group indexes.
std::vector<int> hosts_of_groups(Config& c, const TopoSpec& topo, const std::string& key) {
  if (topo.host_group.empty()) c.fail(key, "this topology has no host groups; list the hosts instead");
  const std::vector<double> groups =
      c.has(key + "[0]") || !c.has(key)
          ? c.get_double_list(key, {}, 0, 1e9)
          : std::vector<double>{static_cast<double>(c.get_int(key, 0, 0, 1 << 30))};
  if (groups.empty()) c.fail(key, "expected at least one host_group index");
  std::vector<int> out;
  for (double g : groups) {
    if (std::floor(g) != g) c.fail(key, fmt::format("host_group indexes are integers, got {}", g));
    const size_t before = out.size();
    for (int h : topo.hosts())
      if (topo.host_group.size() > static_cast<size_t>(h) && topo.host_group[h] == static_cast<int>(g))
        out.push_back(h);
    if (out.size() == before) c.fail(key, fmt::format("no host is in host_group {}", g));
  }
  std::vector<int> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    c.fail(key, "a group is listed twice");
  return out;
}

// `name` (a host list) or `name_group` (host_group indexes): exactly one.
std::vector<int> host_set(Config& c, const TopoSpec& topo, const std::string& k, const std::string& name) {
  const bool list = c.has(k + name), group = c.has(k + name + "_group");
  if (list && group) c.fail(k + name + "_group", fmt::format("give either {0} or {0}_group, not both", name));
  if (!list && !group)
    c.fail(k + "pattern",
           fmt::format("set_to_set needs {0} (hosts) or {0}_group (host_group indexes)", name));
  return list ? host_list(c, topo, k + name) : hosts_of_groups(c, topo, k + name + "_group");
}

// size_bytes (fixed) or workload (sampled), not both. Keeps the CDF loaded in `cdf`.
void read_sizes(Config& c, const std::string& k, TrafficSpec& t, std::unique_ptr<SizeCdf>& cdf) {
  if (c.has(k + "size_bytes")) {
    if (c.has(k + "workload"))
      c.fail(k + "workload",
             "give either size_bytes (one size for every flow) or workload (sampled sizes), not both");
    t.size_bytes = c.get_int(k + "size_bytes", 0, 1, kMaxBytes);
    t.workload.clear();
    return;
  }
  t.workload = c.get_string(k + "workload", t.workload);
  try {
    const std::string w = resolve_path(c, t.workload);
    t.workload_path =
        resolve_workload(std::filesystem::exists(w) ? w : t.workload, data_dir_or_env(ROCESIM_DATA_DIR));
    cdf = std::make_unique<SizeCdf>(SizeCdf::load(t.workload_path));
  } catch (const InputError& e) {
    c.fail(k + "workload", e.what());
  }
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string label(const TopoSpec& topo, int id) {
  return topo.node_names.size() > static_cast<size_t>(id) && !topo.node_names[id].empty()
             ? topo.node_names[id]
             : std::to_string(id);
}

void read_groups(Config& c, const std::string& k, TrafficSpec& t) {
  const int64_t n = static_cast<int64_t>(t.hosts.size());
  if (n < 2) c.fail(k + "hosts", "groups needs at least 2 hosts");
  const bool by_count = c.has(k + "groups"), by_size = c.has(k + "group_size");
  if (by_count == by_size)
    c.fail(k + (by_count ? "group_size" : "pattern"),
           "groups needs exactly one of groups (number of groups) or group_size (hosts per group)");
  t.group_of.assign(t.hosts.size(), 0);
  if (by_count) {
    const int64_t g = c.get_int(k + "groups", 1, 1, n / 2);  // n / 2: every group gets >= 2 hosts
    for (int64_t j = 0; j < g; ++j)
      for (int64_t i = j * n / g; i < (j + 1) * n / g; ++i) t.group_of[i] = static_cast<int>(j);
  } else {
    const int64_t size = c.get_int(k + "group_size", 2, 2, n);
    if (n % size != 0)
      c.fail(k + "group_size",
             fmt::format("{} hosts do not split into groups of {}; use groups = <count> for "
                         "near-equal groups",
                         n, size));
    for (int64_t i = 0; i < n; ++i) t.group_of[i] = static_cast<int>(i / size);
  }
}

void read_incast(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  const TopoSpec& topo = s.topo;
  const bool listed = c.has(k + "senders");
  t.src = hosts_or_all(c, topo, k + "senders");
  if (c.has(k + "dst")) {
    t.dst = {node_ref(c, topo, k + "dst")};
  } else {
    resolved_note(c, k + "dst", "random host per round");
  }
  const int64_t avail =
      static_cast<int64_t>(t.src.size()) - (t.dst.empty() || contains(t.src, t.dst[0]) ? 1 : 0);
  if (avail < 1) c.fail(listed ? k + "senders" : k + "dst", "no sender other than the receiver");
  if (!listed && !c.has(k + "fan_in"))
    c.fail(k + "pattern", "incast needs fan_in (senders per round) or a senders list");
  t.fan_in = static_cast<int>(c.get_int(k + "fan_in", avail, 1, avail));
  if (c.has(k + "period_us")) {
    t.period = c.get_us(k + "period_us", 0, 1e-6);
  } else {
    resolved_note(c, k + "period_us", "none (one round)");
  }
  const bool periodic = t.period > Time::zero();
  t.rounds = static_cast<uint64_t>(c.get_int(k + "rounds", periodic ? 0 : 1, 0, int64_t{1} << 40));
  if (!periodic && t.rounds > 1) c.fail(k + "rounds", "more than one round needs period_us");
  t.jitter = c.get_us(k + "jitter_us", 0, 0, periodic ? t.period.us() : 1e9);
}

void read_hotspot(Config& c, Scenario& s, size_t index, const std::string& k, TrafficSpec& t) {
  const size_t n = t.hosts.size();
  t.hot_fraction = c.get_double(k + "hot_fraction", t.hot_fraction, 0, 1);
  if (c.has(k + "hot_hosts") && c.has(k + "hot_share"))
    c.fail(k + "hot_share", "give either hot_hosts (a list) or hot_share (a share of the hosts), not both");
  if (c.has(k + "hot_hosts")) {
    t.hot = host_list(c, s.topo, k + "hot_hosts");
    for (int h : t.hot)
      if (!contains(t.hosts, h))
        c.fail(k + "hot_hosts",
               fmt::format("hot host '{}' is not one of the participating hosts", label(s.topo, h)));
  } else {
    const double share = c.get_double(k + "hot_share", 0.125, 1e-9, 1);
    const size_t count =
        std::max<size_t>(1, static_cast<size_t>(std::llround(share * static_cast<double>(n))));
    Rng rng = Rng::stream(s.seed, fmt::format("traffic{}.hot", index));
    t.hot = random_subset(t.hosts, std::min(count, n), rng);
    std::sort(t.hot.begin(), t.hot.end());
  }
  if (n < t.hot.size() + 2)
    c.fail(k + (c.has(k + "hot_hosts") ? "hot_hosts" : "hot_share"),
           fmt::format("{} of {} hosts are hot; at least 2 must stay non-hot", t.hot.size(), n));
  t.hot_class_id = class_index(s.class_labels, c.get_string(k + "hot_class", "hot"));
  t.bg_to_all = c.get_bool(k + "background_to_all", t.bg_to_all);
}

void read_set_to_set(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  t.src = host_set(c, s.topo, k, "src");
  t.dst = host_set(c, s.topo, k, "dst");
  for (int h : t.src)
    if (t.dst.size() == 1 && t.dst[0] == h)
      c.fail(k + "dst", fmt::format("source '{}' is the only destination", label(s.topo, h)));
  t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
  if (!c.has(k + "load_of")) {
    resolved_note(c, k + "load_of", "each source's link rate");
    return;
  }
  t.load_of = Rate::from_gbps(c.get_double(k + "load_of", 0, 1e-6, 1e5));
  const auto rates = host_link_rates(s.topo);
  const Rate each = t.load_of * t.load / static_cast<double>(t.src.size());
  for (int h : t.src)
    if (each.bps > rates[h].bps * (1 + 1e-9))
      c.fail(k + "load_of",
             fmt::format("{} x {} Gb/s over {} sources is {:.3f} Gb/s each, more than host '{}' "
                         "link ({} Gb/s)",
                         t.load, t.load_of.gbps(), t.src.size(), each.gbps(), label(s.topo, h),
                         rates[h].gbps()));
}

void read_long_lived(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  const size_t n = c.table_array_size(k + "flows");
  if (n == 0)
    c.fail(k + "pattern",
           "long_lived needs [[traffic.flows]] tables (src, dst, start_us, size_bytes or stop_us)");
  const Bytes table_size = c.has(k + "size_bytes") ? c.get_int(k + "size_bytes", 0, 1, kMaxBytes) : 0;
  const bool table_stop = c.has(k + "stop_us");
  const double table_rate = c.has(k + "rate_gbps") ? c.get_double(k + "rate_gbps", 0, 1e-6, 1e5) : 0;
  const auto rates = host_link_rates(s.topo);
  for (size_t j = 0; j < n; ++j) {
    const std::string fk = fmt::format("{}flows[{}].", k, j);
    FlowSpec f;
    f.src = node_ref(c, s.topo, fk + "src");
    f.dst = node_ref(c, s.topo, fk + "dst");
    if (f.src == f.dst) c.fail(fk + "dst", "a flow needs two different hosts");
    f.start = c.get_us(fk + "start_us", t.start);
    const bool own_size = c.has(fk + "size_bytes"), own_stop = c.has(fk + "stop_us");
    if (own_size && own_stop) c.fail(fk + "stop_us", "give either size_bytes or stop_us, not both");
    if (own_size || (!own_stop && table_size > 0)) {
      f.size_bytes = c.get_int(fk + "size_bytes", table_size, 1, kMaxBytes);
    } else if (own_stop || table_stop) {
      const Time stop = c.get_us(fk + "stop_us", t.stop);
      if (stop <= f.start)
        c.fail(own_stop ? fk + "stop_us" : k + "stop_us", "stop must be after the flow's start");
      const double def_rate = table_rate > 0 ? table_rate : std::min(rates[f.src], rates[f.dst]).gbps();
      const Rate rate = Rate::from_gbps(c.get_double(fk + "rate_gbps", def_rate, 1e-6, 1e5));
      f.size_bytes = std::max<Bytes>(1, bytes_in(rate, stop - f.start));
      resolved_note(c, fk + "size_bytes", std::to_string(f.size_bytes) + " (from stop_us)");
    } else {
      c.fail(fk + "src", "a long-lived flow needs size_bytes or stop_us (here or in its [[traffic]] table)");
    }
    f.priority = t.priority;
    f.class_id = t.class_id;
    t.flows.push_back(f);
  }
  std::stable_sort(t.flows.begin(), t.flows.end(),
                   [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
}

void read_burst(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t,
                std::unique_ptr<SizeCdf>& cdf) {
  const int dst = node_ref(c, s.topo, k + "dst");
  t.dst = {dst};
  if (c.has(k + "senders")) {
    t.src = host_list(c, s.topo, k + "senders");
    if (contains(t.src, dst))
      c.fail(k + "senders", fmt::format("the receiver '{}' is also a sender", label(s.topo, dst)));
  } else {
    resolved_note(c, k + "senders", "all hosts but dst");
    for (int h : s.topo.hosts())
      if (h != dst) t.src.push_back(h);
  }
  t.count = static_cast<uint64_t>(c.get_int(k + "count", 1, 0, int64_t{1} << 40));
  read_sizes(c, k, t, cdf);
  if (c.has(k + "gap_us")) {
    t.gap = c.get_us(k + "gap_us", 0);
    if (t.count == 0 && t.gap == Time::zero())
      c.fail(k + "gap_us", "count = 0 (until stop) needs gap_us > 0");
  } else if (t.size_bytes == 0 && t.count != 1) {
    c.fail(k + "pattern", "burst with sizes from a workload needs gap_us (back to back needs size_bytes)");
  } else {
    resolved_note(c, k + "gap_us", "back to back (size_bytes at the sender's link rate)");
  }
}

// An InputError's message without the "<input>: " that errors without a file carry.
std::string without_input_prefix(const InputError& e) {
  std::string what = e.what();
  if (what.rfind("<input>: ", 0) == 0) what.erase(0, 9);
  return what;
}

// Per node: a host's fastest link other than an NVLink (its NIC; a NIC shared by GPUs, kind kNic: its ports'
// rate over its GPUs, each one's share when all send), its NVLink's rate (zero without one) and its NVSwitch
// (-1 without one).
struct HostRates {
  std::vector<Rate> nic, nvlink;
  std::vector<int> nvswitch;
};
HostRates host_rates(const TopoSpec& topo) {
  HostRates h;
  h.nic.assign(static_cast<size_t>(topo.num_nodes), Rate{0});
  h.nvlink.assign(h.nic.size(), Rate{0});
  h.nvswitch.assign(h.nic.size(), -1);
  std::vector<double> nic_up_bps(h.nic.size(), 0), nic_gpus(h.nic.size(), 0);
  for (const auto& l : topo.links)
    for (auto [x, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
      if (topo.kind_of(x) == NodeKind::kNic)
        (topo.is_switch[other] ? nic_up_bps[x] : nic_gpus[x]) += topo.is_switch[other] ? l.rate.bps : 1;
  for (const auto& l : topo.links)
    for (auto [x, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (topo.is_switch[x]) continue;
      const bool nv = topo.kind_of(other) == NodeKind::kNvSwitch;
      Rate& r = nv ? h.nvlink[x] : h.nic[x];
      const bool shared = topo.kind_of(other) == NodeKind::kNic;
      r = std::max(r, shared ? Rate{std::min(l.rate.bps, nic_up_bps[other] / nic_gpus[other])} : l.rate);
      if (nv) h.nvswitch[x] = other;
    }
  return h;
}

// A collective's rates: B (the NIC: the slowest rank's fastest link other than its NVLink; the NVLink rate
// when every rank is on one server) and B_nv (the slowest rank's NVLink; zero without GPU servers).
std::pair<Rate, Rate> collective_rates(const TopoSpec& topo, const std::vector<int>& hosts) {
  const HostRates h = host_rates(topo);
  Rate b{0}, b_nv{0};
  bool one_server = true;
  for (int x : hosts) {
    if (h.nic[x].bps > 0 && (b.bps == 0 || h.nic[x] < b)) b = h.nic[x];
    if (h.nvlink[x].bps > 0 && (b_nv.bps == 0 || h.nvlink[x] < b_nv)) b_nv = h.nvlink[x];
    one_server = one_server && h.nvswitch[x] >= 0 && h.nvswitch[x] == h.nvswitch[hosts[0]];
  }
  if (one_server || b.bps == 0) b = b_nv;
  return {b, b_nv};
}

// timeline_iteration: the iteration job_timeline.csv shows (0, the first, up to iterations - 1).
void read_timeline_iteration(Config& c, const std::string& k, TrafficSpec& t) {
  const int64_t last = static_cast<int64_t>(t.iterations) - 1;
  if (c.has(k + "timeline_iteration") && c.get_int(k + "timeline_iteration", 0, 0, int64_t{1} << 30) > last)
    c.fail(k + "timeline_iteration",
           fmt::format("the job runs {} iteration{}, numbered from 0: timeline_iteration must be at most {}",
                       t.iterations, t.iterations == 1 ? "" : "s", last));
  t.timeline_iteration = static_cast<uint32_t>(c.get_int(k + "timeline_iteration", 0, 0, last));
}

void read_collective(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  if (!c.has(k + "collective"))
    c.fail(k + "pattern", fmt::format("pattern = \"collective\" needs collective = one of {}",
                                      fmt::join(collective_names(), ", ")));
  t.collective = c.get_string(k + "collective", "", collective_names());
  t.hosts = hosts_or_all(c, s.topo, k + "hosts");
  if (t.hosts.size() < 2) c.fail(k + "hosts", "a collective needs at least 2 hosts");
  const auto servers = gpu_servers(s.topo);
  t.placement = c.get_string(k + "placement", "listed", placement_names());
  try {
    t.hosts = place_ranks(t.hosts, servers, t.placement);
  } catch (const InputError& e) {
    c.fail(k + "placement", without_input_prefix(e));
  }
  t.pxn = c.get_bool(k + "pxn", false);
  if (t.pxn && servers.empty())
    c.fail(
        k + "pxn",
        "pxn = true needs GPU servers (GPUs linked to an NVSwitch: topology kind rail_optimized, multi_plane "
        "or gpu_clos, or a topology file naming them)");
  if (t.pxn && (t.collective == "hierarchical_ring_allreduce" || t.collective == "tree_allreduce"))
    c.fail(k + "pxn",
           fmt::format("pxn applies to the flat algorithms: {} already keeps every flow between servers on "
                       "its rail; drop pxn or use ring_allreduce",
                       t.collective));
  if (!c.has(k + "bytes")) c.fail(k + "pattern", "a collective needs bytes (the per-rank buffer)");
  t.size_bytes = c.get_int(k + "bytes", 0, 1, kMaxBytes);
  t.chunks = static_cast<int>(c.get_int(k + "chunks", 1, 1, 1 << 16));
  t.iterations = static_cast<uint64_t>(c.get_int(k + "iterations", 1, 1, int64_t{1} << 30));
  read_timeline_iteration(c, k, t);
  t.compute = c.get_us(k + "compute_us", 0);
  t.step_latency = c.get_us(k + "step_latency_us", 0);
  for (int h : t.hosts)
    if (!(host_link_rates(s.topo)[h].bps > 0))
      c.fail(k + "hosts", fmt::format("host '{}' has no link", label(s.topo, h)));
}

// Hosts of a dependency trace: a node name of the topology or a node id, either a host.
HostResolver trace_hosts(const TopoSpec& topo) {
  auto names = std::make_shared<std::unordered_map<std::string, int>>();
  for (size_t i = 0; i < topo.node_names.size(); ++i)
    if (!topo.node_names[i].empty()) names->emplace(topo.node_names[i], static_cast<int>(i));
  return [&topo, names](const std::string& v) -> int {
    int id = -1;
    if (auto it = names->find(v); it != names->end()) {
      id = it->second;
    } else if (std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
               v.size() < 10) {
      id = std::stoi(v);
      if (id >= topo.num_nodes)
        throw std::invalid_argument(
            fmt::format("no node {} (the topology has {} nodes)", id, topo.num_nodes));
    } else {
      std::vector<std::string> hosts;
      for (int h : topo.hosts())
        if (static_cast<size_t>(h) < topo.node_names.size()) hosts.push_back(topo.node_names[h]);
      throw std::invalid_argument("no such host in the topology" + did_you_mean(v, hosts));
    }
    if (topo.is_switch[id]) throw std::invalid_argument("is a switch, not a host");
    return id;
  };
}

void read_trace(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  if (!c.has(k + "file"))
    c.fail(k + "pattern", "pattern = \"dependency_trace\" needs file = a CSV or JSON Lines dependency trace");
  t.trace_path = resolve_path(c, c.get_string(k + "file", ""));
  // Read whole once here, so that a bad line is an error before the run (it names the trace's file and line).
  t.size_bytes = read_dependency_trace(t.trace_path, trace_hosts(s.topo)).total_bytes();
}

// A training job (chakra, simai): the rank-to-host map, the collectives' options, read and compiled here so
// that every problem is an error before the run.
void read_training(Config& c, const Scenario& s, const std::string& k, TrafficSpec& t) {
  const bool chakra = t.pattern == "chakra";
  const double scale = c.get_double(k + "compute_scale", 1.0, 0, 1e6);
  t.iterations = static_cast<uint64_t>(c.get_int(k + "iterations", 1, 1, int64_t{1} << 30));
  read_timeline_iteration(c, k, t);
  t.chunks = static_cast<int>(c.get_int(k + "chunks", 1, 1, 1 << 16));
  t.step_latency = c.get_us(k + "step_latency_us", 0);
  TrainingOptions o;
  o.chunks = t.chunks;
  o.step_latency = t.step_latency;
  o.allreduce = c.get_string(
      k + "allreduce", "ring_allreduce",
      {"ring_allreduce", "halving_doubling_allreduce", "hierarchical_ring_allreduce", "tree_allreduce"});
  o.servers = gpu_servers(s.topo);
  if (o.servers.empty() && (o.allreduce == "hierarchical_ring_allreduce" || o.allreduce == "tree_allreduce"))
    c.fail(k + "allreduce",
           fmt::format("allreduce = \"{}\" needs GPU servers (GPUs linked to an NVSwitch: topology kind "
                       "rail_optimized, multi_plane or gpu_clos, or a topology file naming them)",
                       o.allreduce));
  {
    HostRates h = host_rates(s.topo);
    o.link = std::move(h.nic);
    o.nvlink = std::move(h.nvlink);
  }
  TrainingGraph g;
  try {
    if (chakra) {
      if (!c.has(k + "files"))
        c.fail(k + "pattern",
               "pattern = \"chakra\" needs files = a folder of .et files, a pattern such as \"trace.*.et\" "
               "or a list of files in rank order");
      if (c.has(k + "files[0]")) {
        for (const std::string& f : c.get_string_list(k + "files", {}))
          t.trace_files.push_back(resolve_path(c, f));
      } else {
        t.trace_files = chakra_trace_files(resolve_path(c, c.get_string(k + "files", "")));
      }
      std::map<std::string, std::vector<int>> groups;
      const size_t ng = c.table_array_size(k + "groups");
      for (size_t i = 0; i < ng; ++i) {
        const std::string gk = fmt::format("{}groups[{}].", k, i);
        if (!c.has(gk + "name") || !c.has(gk + "ranks"))
          c.fail(gk + "name", "a process group needs name (its pg_name) and ranks (in collective order)");
        std::vector<int> ranks;
        for (double r : c.get_double_list(gk + "ranks", {}, 0, 1 << 24)) {
          if (std::floor(r) != r) c.fail(gk + "ranks", fmt::format("ranks are integers, got {}", r));
          ranks.push_back(static_cast<int>(r));
        }
        if (!groups.emplace(c.get_string(gk + "name", ""), std::move(ranks)).second)
          c.fail(gk + "name", "process group named twice");
      }
      g = read_chakra_trace(t.trace_files, groups, scale);
    } else {
      if (!c.has(k + "file"))
        c.fail(k + "pattern", "pattern = \"simai\" needs file = a SimAI (AICB) workload file");
      t.trace_path = resolve_path(c, c.get_string(k + "file", ""));
      const int mb = static_cast<int>(c.get_int(k + "micro_batches", 0, 0, 1 << 20));
      SimaiWorkload w = read_simai_workload(t.trace_path, scale, mb);
      if (mb == 0)
        resolved_note(c, k + "micro_batches",
                      w.pp > 1 ? fmt::format("ga of the file: {}", w.micro_batches)
                               : std::string("1 (pp = 1: the one pass SimAI simulates)"));
      g = std::move(w.graph);
    }
  } catch (const InputError& e) {
    c.fail(k + (chakra ? "files" : "file"), e.what());
  }
  const size_t nranks = g.ranks.size();
  if (c.has(k + "ranks")) {
    t.hosts = host_list(c, s.topo, k + "ranks");
    if (t.hosts.size() != nranks)
      c.fail(k + "ranks", fmt::format("lists {} hosts for the trace's {} ranks", t.hosts.size(), nranks));
  } else {
    const std::vector<int> all = s.topo.hosts();
    if (all.size() < nranks)
      c.fail(k + "pattern",
             fmt::format("the trace has {} ranks but the topology only {} hosts", nranks, all.size()));
    t.hosts.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(nranks));
    resolved_note(c, k + "ranks", fmt::format("rank i on the i-th host (the first {} hosts)", nranks));
  }
  for (int h : t.hosts)
    if (!(o.link[h].bps > 0)) c.fail(k + "ranks", fmt::format("host '{}' has no link", label(s.topo, h)));
  o.hosts = t.hosts;
  try {
    auto compiled = std::make_shared<CompiledTraining>(compile_training(g, o));
    t.size_bytes = compiled->dag.total_bytes();
    t.training = std::move(compiled);
  } catch (const InputError& e) {
    c.fail(k + (chakra ? "files" : "file"), e.what());
  }
}

}  // namespace

CollectiveParams collective_params(const Scenario& s, const TrafficSpec& t) {
  CollectiveParams p;
  p.algorithm = t.collective;
  p.hosts = t.hosts;
  p.bytes = t.size_bytes;
  p.chunks = t.chunks;
  p.step_latency = t.step_latency;
  p.servers = gpu_servers(s.topo);
  p.gpus_per_rail = gpus_per_nic(s.topo);
  p.pxn = t.pxn;
  return p;
}

void add_traffic_jobs(const Scenario& s, DagRunner& runner) {
  for (size_t i = 0; i < s.traffic.size(); ++i) {
    const TrafficSpec& t = s.traffic[i];
    if (!is_job_pattern(t.pattern) || !t.enabled) continue;
    DagJob j;
    j.name = t.job;
    j.start = t.start;
    j.priority = t.priority;
    j.class_id = t.class_id;
    if (t.pattern == "collective") {
      const CollectiveParams p = collective_params(s, t);
      j.kind = t.collective;
      j.dag = build_collective(p);
      j.iterations = static_cast<uint32_t>(t.iterations);
      j.timeline_iteration = t.timeline_iteration;
      j.gap = t.compute;
      j.ranks = static_cast<int>(t.hosts.size());
      j.bytes_per_rank = t.size_bytes;
      j.bus_factor = bus_bandwidth_factor(t.collective, j.ranks);
      const auto [link, nvlink] = collective_rates(s.topo, t.hosts);
      j.ideal = collective_ideal_time(p, link, nvlink);
    } else if (t.pattern == "chakra" || t.pattern == "simai") {
      j.kind = t.pattern;
      j.dag = t.training->dag;
      j.spans = t.training->spans;
      j.iterations = static_cast<uint32_t>(t.iterations);
      j.timeline_iteration = t.timeline_iteration;
      j.ranks = static_cast<int>(t.hosts.size());
      j.bytes_per_rank = j.dag.total_bytes();
    } else {
      j.kind = "trace";
      std::vector<std::string> types;
      j.dag = read_dependency_trace(t.trace_path, trace_hosts(s.topo), &types);
      j.spans = trace_collective_spans(j.dag, types);
      std::vector<int> hosts;
      for (uint32_t f = 0; f < j.dag.size(); ++f) {
        hosts.push_back(j.dag.flow(f).src);
        hosts.push_back(j.dag.flow(f).dst);
      }
      std::sort(hosts.begin(), hosts.end());
      j.ranks = static_cast<int>(std::unique(hosts.begin(), hosts.end()) - hosts.begin());
      j.bytes_per_rank = j.dag.total_bytes();  // a trace's flows' start_us count from the table's start_us
    }
    runner.add(std::move(j));
  }
}

std::vector<Rate> host_link_rates(const TopoSpec& topo) {
  std::vector<Rate> r(static_cast<size_t>(topo.num_nodes), Rate{0});
  for (const auto& l : topo.links) {
    if (!topo.is_switch[l.a]) r[l.a] = std::max(r[l.a], l.rate);
    if (!topo.is_switch[l.b]) r[l.b] = std::max(r[l.b], l.rate);
  }
  return r;
}

namespace {

// Job names label collectives.csv, summary.json and the jobs' classes: two tables with one name would merge
// them, so a name (given, or the default job<index>) is refused when an earlier table has it.
void reject_duplicate_job(const Config& c, const Scenario& s, size_t i, const std::string& name) {
  const auto where = [&](size_t t) {
    const std::string k = fmt::format("traffic[{}].", t);
    const std::string key = k + (c.has(k + "job") ? "job" : "pattern");
    const int line = c.line_of(key);
    return line > 0 ? fmt::format("{} (line {})", key, line) : key;
  };
  for (size_t j = 0; j < i && j < s.traffic.size(); ++j)
    if (is_job_pattern(s.traffic[j].pattern) && s.traffic[j].job == name)
      c.fail(fmt::format("traffic[{}].{}", i, c.has(fmt::format("traffic[{}].job", i)) ? "job" : "pattern"),
             fmt::format("job '{}' is also the job of {}; each [[traffic]] job needs its own name (job = "
                         "\"...\"), which labels its rows in collectives.csv and summary.json",
                         name, where(j)));
}

// The keys every [[traffic]] table takes: pattern, enabled, job, class, priority, start_us, and (not for
// jobs, which run until they are done) stop_us and max_flows.
void read_traffic_common(Config& c, Scenario& s, size_t i, const std::string& k, TrafficSpec& t) {
  t.pattern = c.get_string(k + "pattern", t.pattern, pattern_names());
  t.enabled = c.get_bool(k + "enabled", true);
  const bool job = is_job_pattern(t.pattern);
  if (job) {
    t.job = c.get_string(k + "job", fmt::format("job{}", i));
    reject_duplicate_job(c, s, i, t.job);
  }
  // A job's flows carry its label as their class unless the table names one.
  t.class_id = class_index(s.class_labels, c.get_string(k + "class", job ? t.job : "default"));
  t.priority = static_cast<int>(c.get_int(k + "priority", s.nic.data_priority, 1, 7));
  t.start = c.get_us(k + "start_us", 0);
  if (job) {
    for (const char* key : {"stop_us", "max_flows"})
      if (c.has(k + key))
        c.fail(k + key, fmt::format("{} does not apply to pattern = \"{}\": its flows run until the job "
                                    "is done (set iterations, or the run's duration_ms)",
                                    key, t.pattern));
  } else {
    t.stop = c.has(k + "stop_us") ? c.get_us(k + "stop_us", 0) : Time::max();
    if (!c.has(k + "stop_us")) resolved_note(c, k + "stop_us", "end of run");
    if (t.stop <= t.start) c.fail(k + "stop_us", "must be after start_us");
    t.max_flows = static_cast<uint64_t>(c.get_int(k + "max_flows", 0, 0, int64_t{1} << 40));
  }
}

// The keys of the table's pattern (and its flow sizes: `cdf` gets the workload's CDF when it has one).
void read_pattern_keys(Config& c, Scenario& s, size_t i, const std::string& k, TrafficSpec& t,
                       std::unique_ptr<SizeCdf>& cdf) {
  const std::string& p = t.pattern;
  if (p == "all_to_all" || p == "groups" || p == "permutation" || p == "hotspot") {
    t.hosts = hosts_or_all(c, s.topo, k + "hosts");
    if (t.hosts.size() < 2) c.fail(k + "hosts", "needs at least 2 hosts");
  }
  if (p == "all_to_all") {
    t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
    read_sizes(c, k, t, cdf);
  } else if (p == "groups") {
    read_groups(c, k, t);
    t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
    read_sizes(c, k, t, cdf);
  } else if (p == "permutation") {
    Rng rng = Rng::stream(s.seed, fmt::format("traffic{}.partner", i));
    for (int d : random_derangement(t.hosts.size(), rng)) t.dst.push_back(t.hosts[d]);
    t.long_lived = c.get_bool(k + "long_lived", false);
    if (t.long_lived) {
      if (!c.has(k + "size_bytes"))
        c.fail(k + "long_lived", "long_lived = true needs size_bytes (each flow's size)");
      t.size_bytes = c.get_int(k + "size_bytes", 0, 1, kMaxBytes);
    } else {
      t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
      read_sizes(c, k, t, cdf);
    }
  } else if (p == "incast") {
    read_incast(c, s, k, t);
    read_sizes(c, k, t, cdf);
  } else if (p == "hotspot") {
    t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
    read_hotspot(c, s, i, k, t);
    read_sizes(c, k, t, cdf);
  } else if (p == "set_to_set") {
    read_set_to_set(c, s, k, t);
    read_sizes(c, k, t, cdf);
  } else if (p == "long_lived") {
    read_long_lived(c, s, k, t);
  } else if (p == "burst") {
    read_burst(c, s, k, t, cdf);
  } else if (p == "collective") {
    read_collective(c, s, k, t);
  } else if (p == "dependency_trace") {
    read_trace(c, s, k, t);
  } else if (p == "chakra" || p == "simai") {
    read_training(c, s, k, t);
  }
}

}  // namespace

void read_traffic(Config& c, Scenario& s) {
  const size_t ntraffic = c.table_array_size("traffic");
  for (size_t i = 0; i < ntraffic; ++i) {
    const std::string k = fmt::format("traffic[{}].", i);
    TrafficSpec t;
    std::unique_ptr<SizeCdf> cdf;
    read_traffic_common(c, s, i, k, t);
    read_pattern_keys(c, s, i, k, t, cdf);
    const bool job = is_job_pattern(t.pattern);
    if (t.pattern == "collective") {
      try {
        (void)build_collective(collective_params(s, t));
      } catch (const InputError& e) {
        c.fail(k + "collective", without_input_prefix(e));
      }
    }
    s.traffic.push_back(std::move(t));
    if (job) continue;
    // Whatever the key checks above let through, the generator's own checks catch here.
    try {
      (void)make_traffic_source(s, i, cdf.get());
    } catch (const InputError& e) {
      c.fail(k + "pattern", without_input_prefix(e));
    }
  }
}

namespace {

// What a table's generator is made of: the table, the parameters every pattern shares, the hosts' rates.
struct SourceContext {
  SourceContext(const Scenario& s, size_t index, const SizeCdf* sizes)
      : s(s), t(s.traffic.at(index)), topo(s.topo), sizes(sizes), rates(host_link_rates(s.topo)) {
    common.flow.sizes = sizes;
    common.flow.fixed_size = t.size_bytes;
    common.flow.priority = t.priority;
    common.flow.class_id = t.class_id;
    common.start = t.start;
    common.stop = std::min(t.stop, s.duration);
    common.max_flows = t.max_flows;
    common.seed = s.seed;
    common.stream = fmt::format("traffic{}", index);
  }

  Rate rate_of(int h) const {
    if (h < 0 || h >= topo.num_nodes || !(rates[h].bps > 0))
      throw InputError("", 0, fmt::format("host {} has no link", h));
    return rates[h];
  }

  // Each sender a Poisson process at the table's load of its link rate.
  PoissonParams poisson(const std::vector<int>& senders) const {
    PoissonParams p;
    static_cast<PatternCommon&>(p) = common;
    p.senders = senders;
    for (int h : senders) p.offered.push_back(rate_of(h) * t.load);
    return p;
  }

  const Scenario& s;
  const TrafficSpec& t;
  const TopoSpec& topo;
  const SizeCdf* sizes;
  std::vector<Rate> rates;
  PatternCommon common;
};

std::unique_ptr<FlowSource> all_to_all_source(const SourceContext& x) {
  const TrafficSpec& t = x.t;
  PoissonParams p = x.poisson(t.hosts);
  const bool uniform =
      std::all_of(p.offered.begin(), p.offered.end(), [&](Rate r) { return r == p.offered[0]; });
  if (!uniform || x.sizes == nullptr || t.size_bytes > 0)  // per-host rates or fixed sizes: same process
    return std::make_unique<GroupsPoisson>(std::move(p), std::vector<int>(t.hosts.size(), 0));
  PoissonAllToAllParams a;
  a.hosts = t.hosts;
  a.sizes = x.sizes;
  a.host_rate = x.rate_of(t.hosts[0]);
  a.load = t.load;
  a.start = t.start;
  a.stop = x.common.stop;
  a.max_flows = t.max_flows;
  a.priority = t.priority;
  a.class_id = t.class_id;
  a.seed = x.s.seed;
  a.stream = x.common.stream;
  return std::make_unique<PoissonAllToAll>(std::move(a));
}

std::unique_ptr<FlowSource> permutation_source(const SourceContext& x) {
  const TrafficSpec& t = x.t;
  if (!t.long_lived) return std::make_unique<PermutationPoisson>(x.poisson(t.hosts), t.dst);
  std::vector<FlowSpec> flows;
  for (size_t i = 0; i < t.hosts.size() && (t.max_flows == 0 || i < t.max_flows); ++i) {
    FlowSpec f;
    f.src = t.hosts[i];
    f.dst = t.dst[i];
    f.priority = t.priority;
    f.class_id = t.class_id;
    f.size_bytes = t.size_bytes;
    f.start = t.start;
    flows.push_back(f);
  }
  return std::make_unique<InlineFlows>(std::move(flows));
}

std::unique_ptr<FlowSource> set_to_set_source(const SourceContext& x) {
  const TrafficSpec& t = x.t;
  PoissonParams p = x.poisson(t.src);
  if (t.load_of.bps > 0)
    for (Rate& r : p.offered) r = t.load_of * t.load / static_cast<double>(t.src.size());
  return std::make_unique<SetPoisson>(std::move(p), t.dst);
}

std::unique_ptr<FlowSource> incast_source(const SourceContext& x) {
  const TrafficSpec& t = x.t;
  IncastParams p;
  static_cast<PatternCommon&>(p) = x.common;
  p.senders = t.src;
  p.fan_in = t.fan_in;
  p.dst = t.dst.empty() ? -1 : t.dst[0];
  if (t.dst.empty()) p.receivers = x.topo.hosts();
  p.period = t.period;
  p.rounds = t.rounds;
  p.jitter = t.jitter;
  p.flow.dport = kIncastDport;
  return std::make_unique<IncastRounds>(std::move(p));
}

std::unique_ptr<FlowSource> burst_source(const SourceContext& x) {
  const TrafficSpec& t = x.t;
  BurstParams p;
  static_cast<PatternCommon&>(p) = x.common;
  p.senders = t.src;
  for (int h : t.src) p.gap.push_back(t.gap >= Time::zero() ? t.gap : tx_time(t.size_bytes, x.rate_of(h)));
  p.dst = t.dst.at(0);
  p.count = t.count;
  return std::make_unique<BurstTrains>(std::move(p));
}

}  // namespace

std::unique_ptr<FlowSource> make_traffic_source(const Scenario& s, size_t index, const SizeCdf* sizes) {
  const SourceContext x(s, index, sizes);
  const TrafficSpec& t = x.t;
  const std::string& pat = t.pattern;
  if (pat == "all_to_all") return all_to_all_source(x);
  if (pat == "groups") return std::make_unique<GroupsPoisson>(x.poisson(t.hosts), t.group_of);
  if (pat == "permutation") return permutation_source(x);
  if (pat == "hotspot")
    return std::make_unique<HotspotPoisson>(x.poisson(t.hosts), t.hot, t.hot_fraction, t.hot_class_id,
                                            t.bg_to_all);
  if (pat == "set_to_set") return set_to_set_source(x);
  if (pat == "incast") return incast_source(x);
  if (pat == "burst") return burst_source(x);
  if (pat == "long_lived") {
    std::vector<FlowSpec> flows = t.flows;
    if (t.max_flows != 0 && flows.size() > t.max_flows) flows.resize(t.max_flows);
    return std::make_unique<InlineFlows>(std::move(flows));
  }
  throw InputError("", 0, fmt::format("unknown traffic pattern '{}'", pat));
}

void add_traffic_sources(const Scenario& s, MergedSource& merged,
                         std::vector<std::unique_ptr<SizeCdf>>& cdfs) {
  for (size_t i = 0; i < s.traffic.size(); ++i) {
    const TrafficSpec& t = s.traffic[i];
    if (is_job_pattern(t.pattern) || !t.enabled) continue;  // add_traffic_jobs; switched off
    const SizeCdf* sizes = nullptr;
    if (!t.workload_path.empty()) {
      cdfs.push_back(std::make_unique<SizeCdf>(SizeCdf::load(t.workload_path)));
      sizes = cdfs.back().get();
    }
    merged.add(make_traffic_source(s, i, sizes));
  }
}

}  // namespace rocesim
