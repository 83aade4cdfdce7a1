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
//   cc_state = { flows = [0, 7] | "all",   the scheme's state of these flows over time (cc_state.csv):
//     classes = ["incast"],                and of the flows of these traffic classes; a row every
//     period_us = 10, max_rows = 1000000 } period_us, or each time the scheme reacts (period_us = 0);
//                                          at most max_rows rows
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/time.h"
#include "net/settings.h"
#include "stats/monitor_spec.h"
#include "topo/topology.h"

namespace rocesim {

// Reads [monitors] with the Config getters (values recorded for scenario.resolved.toml; bad port names
// fail with the file and line). `topo` resolves the port names; `model` is switch.model (input queues
// exist only under SwitchModel::kInputOutputQueued); `class_labels` are the traffic classes cc_state.classes
// names.
MonitorSpec read_monitors(Config& c, const TopoSpec& topo, SwitchModel model,
                          const std::vector<std::string>& class_labels);

// The egress ports of `node`, in port order, as (port index, peer node id).
std::vector<std::pair<int, int>> monitor_ports_of(const TopoSpec& topo, int node);
// Resolves "NODE:PEER" (names or ids) or "all" (every switch egress port). Throws std::invalid_argument
// with a message naming the ports NODE has ("no port from S1 to S9; ports of S1 lead to: S2, H1").
std::vector<PortRef> resolve_monitor_ports(const TopoSpec& topo, const std::string& spec);

}  // namespace rocesim
