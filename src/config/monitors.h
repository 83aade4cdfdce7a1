// [monitors]: what a run observes besides its results (stats/monitors.h does the observing). Nothing is
// monitored by default. Keys (all optional):
//   queue_ports = ["S1:S2", "all", ...]   egress queues to sample; "NODE:PEER" = NODE's egress port towards
//                                          PEER (every such port when there are parallel links); "all" =
//                                          every switch egress port
//   queue_interval_us = 10                 queue sampling period
//   input_queue_ports = ["S1:S2", "all"]   input queues to sample, at the same times as queue_ports (needs
//                                          switch.model = "input_output_queued"); "NODE:PEER" = NODE's
//                                          ingress port from PEER (every such port when there are parallel
//                                          links); "all" = every switch ingress port
//   flow_rates = [0, 7, ...] | "all"       flows whose goodput is binned
//   port_throughput = ["S3:R2", ...]       egress ports whose wire throughput is binned ("all" works too)
//   rate_bin_us = 10                       bin width of both
//   pfc = false                            PFC pause/resume events with durations
//   cnp = false                            CNPs received per flow
//   buffer = false                         switch buffer occupancy samples, written as a CDF per switch
//   buffer_interval_us = 10                buffer sampling period
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/time.h"
#include "net/settings.h"
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
  bool all_flows = false;            // flow_rates = "all"
  std::vector<uint64_t> flow_rates;  // sorted, unique
  std::vector<PortRef> port_throughput;
  Time rate_bin = Time::from_us(10);
  bool pfc = false;
  bool cnp = false;
  bool buffer = false;
  Time buffer_interval = Time::from_us(10);

  bool any() const {
    return !queue_ports.empty() || !input_queue_ports.empty() || all_flows || !flow_rates.empty() ||
           !port_throughput.empty() || pfc || cnp || buffer;
  }
};

// Reads [monitors] with the Config getters (values recorded for scenario.resolved.toml; bad port names
// fail with the file and line). `topo` resolves the port names; `model` is switch.model (input queues
// exist only under SwitchModel::kInputOutputQueued).
MonitorSpec read_monitors(Config& c, const TopoSpec& topo, SwitchModel model);

// The display name of a node: topo.node_names[id] when set, else the id in decimal.
std::string monitor_node_name(const TopoSpec& topo, int id);
// The egress ports of `node`, in port order, as (port index, peer node id).
std::vector<std::pair<int, int>> monitor_ports_of(const TopoSpec& topo, int node);
// Resolves "NODE:PEER" (names or ids) or "all" (every switch egress port). Throws std::invalid_argument
// with a message naming the ports NODE has ("no port from S1 to S9; ports of S1 lead to: S2, H1").
std::vector<PortRef> resolve_monitor_ports(const TopoSpec& topo, const std::string& spec);

}  // namespace rocesim
