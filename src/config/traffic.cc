#include "config/traffic.h"

#include <filesystem>

#include <fmt/format.h>

namespace rocesim {

namespace {
Time us(Config& c, const std::string& key, double def, double lo = 0, double hi = 1e9) {
  return Time::from_us(c.get_double(key, def, lo, hi));
}
}  // namespace

void read_traffic(Config& c, Scenario& s) {
  const size_t ntraffic = c.table_array_size("traffic");
  const auto hosts = s.topo.hosts();
  for (size_t i = 0; i < ntraffic; ++i) {
    const std::string k = fmt::format("traffic[{}].", i);
    TrafficSpec t;
    t.pattern = c.get_string(k + "pattern", t.pattern, {"all_to_all"});
    t.workload = c.get_string(k + "workload", t.workload);
    try {
      const std::string w = resolve_path(c, t.workload);
      t.workload_path = resolve_workload(std::filesystem::exists(w) ? w : t.workload, ROCESIM_DATA_DIR);
      (void)SizeCdf::load(t.workload_path);
    } catch (const InputError& e) {
      c.fail(k + "workload", e.what());
    }
    t.load = c.get_double(k + "load", t.load, 1e-6, 1.0);
    t.start = us(c, k + "start_us", 0);
    t.stop = c.has(k + "stop_us") ? us(c, k + "stop_us", 0) : Time::max();
    if (!c.has(k + "stop_us")) c.set_resolved(k + "stop_us", toml::value<std::string>("end of run"));
    t.max_flows = static_cast<uint64_t>(c.get_int(k + "max_flows", 0, 0, int64_t{1} << 40));
    t.priority = static_cast<int>(c.get_int(k + "priority", s.nic.data_priority, 1, 7));
    t.class_id = class_index(s.class_labels, c.get_string(k + "class", "default"));
    t.hosts = hosts;
    s.traffic.push_back(t);
  }
}

void add_traffic_sources(const Scenario& s, MergedSource& merged, std::vector<std::unique_ptr<SizeCdf>>& cdfs) {
  const TopoSpec& topo = s.topo;
  uint64_t i = 0;
  for (const TrafficSpec& t : s.traffic) {
    cdfs.push_back(std::make_unique<SizeCdf>(SizeCdf::load(t.workload_path)));
    PoissonAllToAllParams p;
    p.hosts = t.hosts;
    p.sizes = cdfs.back().get();
    Rate host_rate{0};
    for (const auto& l : topo.links)
      if (!topo.is_switch[l.a] || !topo.is_switch[l.b]) host_rate = std::max(host_rate, l.rate);
    p.host_rate = host_rate;
    p.load = t.load;
    p.start = t.start;
    p.stop = std::min(t.stop, s.duration);
    p.max_flows = t.max_flows;
    p.priority = t.priority;
    p.class_id = t.class_id;
    p.seed = s.seed;
    p.stream = fmt::format("traffic{}", i++);
    merged.add(std::make_unique<PoissonAllToAll>(p));
  }
}

}  // namespace rocesim
