// What a run's monitors observe ([monitors]; config/monitors.h reads it from a scenario, stats/monitors.h
// does the observing).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "topo/topology.h"

namespace rocesim {

// One port (its egress towards `peer`, or its ingress from `peer`), numbered as Network numbers a node's
// ports (the order of topo.links touching it).
struct PortRef {
  int node = -1;
  int port = -1;
  int peer = -1;
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

struct MonitorSpec {
  std::vector<PortRef> queue_ports;  // resolved, "all" expanded, duplicates removed
  Time queue_interval = Time::from_us(10);
  std::vector<PortRef> input_queue_ports;  // switch ingress ports, as queue_ports, same sample times
  bool all_flows = false;                  // flow_rates = "all"
  std::vector<uint64_t> flow_rates;        // sorted, unique
  std::vector<PortRef> port_throughput;
  Time rate_bin = Time::from_us(10);
  bool pfc = false;
  bool cnp = false;
  bool buffer = false;
  Time buffer_interval = Time::from_us(10);
  // cc_state: the scheme's state of these flows over time (cc_state.csv).
  bool cc_state_all = false;                 // cc_state.flows = "all"
  std::vector<uint64_t> cc_state_flows;      // flow ids, sorted, unique
  std::vector<uint16_t> cc_state_classes;    // class ids (indices of the class labels), sorted, unique
  Time cc_state_period = Time::from_us(10);  // zero: a row each time the scheme reacts
  uint64_t cc_state_max_rows = 1'000'000;    // rows kept; the rest are counted and dropped
  // packet_trace = { flows = [...], classes = [...], max_rows = N }: packet timelines (net/packet_trace.h).
  bool packet_trace = false;
  std::vector<uint64_t> trace_flows;       // sorted, unique
  std::vector<std::string> trace_classes;  // traffic class labels
  uint64_t trace_max_rows = 1'000'000;

  bool cc_state() const { return cc_state_all || !cc_state_flows.empty() || !cc_state_classes.empty(); }
  bool any() const {
    return !queue_ports.empty() || !input_queue_ports.empty() || all_flows || !flow_rates.empty() ||
           !port_throughput.empty() || pfc || cnp || buffer || cc_state() || packet_trace;
  }
};

// The display name of a node: topo.node_names[id] when set, else the id in decimal.
std::string monitor_node_name(const TopoSpec& topo, int id);

}  // namespace rocesim
