#include "config/monitors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "topo/builders.h"

namespace rocesim {

namespace {

// A node by name, or by id in decimal; -1 when there is no such node.
int find_node(const TopoSpec& topo, const std::string& ref) {
  const int id = lookup_node(topo, ref);
  if (id >= 0) return id;
  if (ref.empty() || ref.size() > 9 || ref.find_first_not_of("0123456789") != std::string::npos) return -1;
  const int v = std::stoi(ref);
  return v < topo.num_nodes ? v : -1;
}

void add_unique(std::vector<PortRef>& out, const PortRef& p) {
  if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
}

std::vector<PortRef> read_ports(Config& c, const TopoSpec& topo, const std::string& key) {
  std::vector<PortRef> out;
  for (const std::string& spec : c.get_string_list(key, {})) {
    try {
      for (const PortRef& p : resolve_monitor_ports(topo, spec)) add_unique(out, p);
    } catch (const std::invalid_argument& e) {
      c.fail(key, e.what());
    }
  }
  return out;
}

Time interval(Config& c, const std::string& key) { return c.get_us(key, 10, 1e-3); }

// An array of flow ids (sorted and made unique), or "all" (`all` set, no ids).
std::vector<uint64_t> read_flow_ids(Config& c, const std::string& key, bool& all) {
  std::vector<uint64_t> out;
  all = false;
  std::vector<double> ids;
  try {
    ids = c.get_double_list(key, {}, 0, 9e15);
  } catch (const InputError&) {
    try {
      (void)c.get_string(key, "", {"all"});
    } catch (const InputError&) {
      c.fail(key, "expected an array of flow ids (integers >= 0) or \"all\"");
    }
    all = true;
    return out;
  }
  toml::array resolved;
  for (double d : ids) {
    if (std::floor(d) != d) c.fail(key, fmt::format("flow ids are integers >= 0 (got {})", d));
    out.push_back(static_cast<uint64_t>(d));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  for (uint64_t id : out) resolved.push_back(static_cast<int64_t>(id));
  c.set_resolved(key, std::move(resolved));
  return out;
}

// packet_trace = { flows = [ids], classes = ["label"], max_rows = N } (net/packet_trace.h). The class labels
// are checked against the traffic's by the scenario reader (config/scenario.cc).
void read_packet_trace(Config& c, MonitorSpec& m) {
  const std::string k = "monitors.packet_trace";
  if (!c.has(k)) return;
  if (!c.has(k + ".flows") && !c.has(k + ".classes"))
    c.fail(k,
           "expected a table naming the flows to trace: packet_trace = { flows = [ids from flows.csv] } "
           "or { classes = [\"traffic class\"] }, with an optional max_rows");
  m.packet_trace = true;
  if (c.has(k + ".flows")) {
    const std::string fk = k + ".flows";
    toml::array resolved;
    for (double d : c.get_double_list(fk, {}, 0, 9e15)) {
      if (std::floor(d) != d) c.fail(fk, fmt::format("flow ids are integers >= 0 (got {})", d));
      m.trace_flows.push_back(static_cast<uint64_t>(d));
    }
    std::sort(m.trace_flows.begin(), m.trace_flows.end());
    m.trace_flows.erase(std::unique(m.trace_flows.begin(), m.trace_flows.end()), m.trace_flows.end());
    for (uint64_t id : m.trace_flows) resolved.push_back(static_cast<int64_t>(id));
    c.set_resolved(fk, std::move(resolved));
  }
  if (c.has(k + ".classes")) m.trace_classes = c.get_string_list(k + ".classes", {});
  m.trace_max_rows = static_cast<uint64_t>(c.get_int(k + ".max_rows", 1'000'000, 1, int64_t{1} << 40));
}

}  // namespace

std::vector<std::pair<int, int>> monitor_ports_of(const TopoSpec& topo, int node) {
  // The same order as Fabric::build_nodes: one port per link end, links in order, end a before end b.
  std::vector<std::pair<int, int>> ports;
  for (const LinkSpec& l : topo.links) {
    if (l.a == node) ports.emplace_back(static_cast<int>(ports.size()), l.b);
    if (l.b == node) ports.emplace_back(static_cast<int>(ports.size()), l.a);
  }
  return ports;
}

std::vector<PortRef> resolve_monitor_ports(const TopoSpec& topo, const std::string& spec) {
  std::vector<PortRef> out;
  if (spec == "all") {
    for (int n = 0; n < topo.num_nodes; ++n) {
      if (!topo.is_switch[n]) continue;
      for (auto [port, peer] : monitor_ports_of(topo, n)) out.push_back({n, port, peer});
    }
    return out;
  }
  const auto colon = spec.find(':');
  if (colon == std::string::npos || spec.find(':', colon + 1) != std::string::npos)
    throw std::invalid_argument(fmt::format(
        "'{}' is not a port: expected \"NODE:PEER\" (NODE's egress port towards PEER) or \"all\"", spec));
  const std::string a = spec.substr(0, colon);
  const std::string b = spec.substr(colon + 1);
  const int node = find_node(topo, a);
  if (node < 0)
    throw std::invalid_argument(fmt::format("no node named '{}' in this topology (port '{}')", a, spec));
  const int peer = find_node(topo, b);
  const auto ports = monitor_ports_of(topo, node);
  for (auto [port, p] : ports)
    if (p == peer) out.push_back({node, port, p});
  if (out.empty()) {
    std::vector<std::string> leads;
    for (auto [port, p] : ports) {
      std::string name = monitor_node_name(topo, p);
      if (std::find(leads.begin(), leads.end(), name) == leads.end()) leads.push_back(std::move(name));
    }
    throw std::invalid_argument(
        fmt::format("no port from {} to {}; ports of {} lead to: {}", a, b, a,
                    leads.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(leads, ", "))));
  }
  return out;
}

MonitorSpec read_monitors(Config& c, const TopoSpec& topo, SwitchModel model,
                          const std::vector<std::string>& class_labels) {
  const std::string k = "monitors.";
  MonitorSpec m;
  m.queue_ports = read_ports(c, topo, k + "queue_ports");
  m.queue_interval = interval(c, k + "queue_interval_us");
  const std::string ik = k + "input_queue_ports";
  m.input_queue_ports = read_ports(c, topo, ik);
  if (!m.input_queue_ports.empty() && model != SwitchModel::kInputOutputQueued)
    c.fail(ik,
           "needs switch.model = \"input_output_queued\" (only that model has input queues; this "
           "scenario's switch.model is \"shared_buffer\")");
  for (const PortRef& p : m.input_queue_ports)
    if (!topo.is_switch[p.node])
      c.fail(ik, fmt::format("{} is a host: input queues are at switches (\"SWITCH:PEER\" = SWITCH's ingress "
                             "port from PEER)",
                             monitor_node_name(topo, p.node)));

  // flow_rates: an array of flow ids, or "all".
  m.flow_rates = read_flow_ids(c, k + "flow_rates", m.all_flows);

  m.port_throughput = read_ports(c, topo, k + "port_throughput");
  m.rate_bin = interval(c, k + "rate_bin_us");
  m.pfc = c.get_bool(k + "pfc", false);
  m.cnp = c.get_bool(k + "cnp", false);
  m.buffer = c.get_bool(k + "buffer", false);
  m.buffer_interval = interval(c, k + "buffer_interval_us");

  // cc_state = { flows = [...] | "all", classes = [...], period_us = 10, max_rows = 1000000 }
  const std::string ck = k + "cc_state.";
  m.cc_state_flows = read_flow_ids(c, ck + "flows", m.cc_state_all);
  for (const std::string& label : c.get_string_list(ck + "classes", {})) {
    const auto it = std::find(class_labels.begin(), class_labels.end(), label);
    if (it == class_labels.end())
      c.fail(ck + "classes", fmt::format("no traffic class '{}' in this scenario; its classes: {}", label,
                                         fmt::join(class_labels, ", ")));
    m.cc_state_classes.push_back(static_cast<uint16_t>(it - class_labels.begin()));
  }
  std::sort(m.cc_state_classes.begin(), m.cc_state_classes.end());
  m.cc_state_classes.erase(std::unique(m.cc_state_classes.begin(), m.cc_state_classes.end()),
                           m.cc_state_classes.end());
  m.cc_state_period = c.get_us(ck + "period_us", m.cc_state_period, 0);
  if (m.cc_state_period > Time::zero() && m.cc_state_period < Time::from_ns(1))
    c.fail(ck + "period_us", "expected 0 (a row at every reaction of the scheme) or at least 0.001 us");
  m.cc_state_max_rows = static_cast<uint64_t>(
      c.get_int(ck + "max_rows", static_cast<int64_t>(m.cc_state_max_rows), 1, int64_t{1} << 40));
  read_packet_trace(c, m);
  return m;
}

}  // namespace rocesim
