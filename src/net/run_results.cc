#include "net/run_results.h"

#include <algorithm>

namespace rocesim {

void merge_stats(NetStats& into, const NetStats& o) {
  into.data_drops += o.data_drops;
  into.ctrl_drops += o.ctrl_drops;
  into.wire_drops += o.wire_drops;
  into.unroutable += o.unroutable;
  into.stale_packets += o.stale_packets;
  into.packet_hops += o.packet_hops;
  into.data_packets_sent += o.data_packets_sent;
  into.retransmitted_packets += o.retransmitted_packets;
  into.nacks_sent += o.nacks_sent;
  into.timeouts += o.timeouts;
  into.cnps_sent += o.cnps_sent;
  into.ue_cnps_sent += o.ue_cnps_sent;
  into.cnps_from_switches += o.cnps_from_switches;
  into.cnp_acks_sent += o.cnp_acks_sent;
  into.cnps_received += o.cnps_received;
  into.switch_cnps_received += o.switch_cnps_received;
  into.cnp_acks_received += o.cnp_acks_received;
  into.ecn_echo_acks_sent += o.ecn_echo_acks_sent;
  into.acks_sent += o.acks_sent;
  into.flows_started += o.flows_started;
  into.flows_finished += o.flows_finished;
  into.bytes_delivered += o.bytes_delivered;
  into.max_ingress_bytes = std::max(into.max_ingress_bytes, o.max_ingress_bytes);
  into.max_switch_buffer_bytes = std::max(into.max_switch_buffer_bytes, o.max_switch_buffer_bytes);
  into.out_of_order_packets += o.out_of_order_packets;
  into.switch_messages += o.switch_messages;
  into.link_down_drops += o.link_down_drops;
  into.route_updates += o.route_updates;
  into.retransmitted_bytes += o.retransmitted_bytes;
  into.sacks_sent += o.sacks_sent;
  into.spurious_retransmissions += o.spurious_retransmissions;
  into.timeout_retransmissions += o.timeout_retransmissions;
}

RunResults::PortCounters& RunResults::remote_counters(int node, int port) {
  PortCounters& list = remote_counters_[{node, port}];
  list.clear();
  return list;
}

const RunResults::PortCounters* RunResults::find_remote_counters(int node, int port) const {
  const auto it = remote_counters_.find({node, port});
  return it != remote_counters_.end() ? &it->second : nullptr;
}

}  // namespace rocesim
