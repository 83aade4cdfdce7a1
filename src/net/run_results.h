// What a run of the network reports, beyond the state of its nodes: the counters (NetStats, summed over the
// partitions and ranks by PartitionedRun::stats), the records of the finished flows, the labels of the
// traffic classes, the observers told of events between windows, and the scheme counters of switches
// another rank simulated (Network::gather_node_results). RunResults only keeps and hands on: the flows'
// records reach it from PartitionedRun, in event order, between windows.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "net/cc_state.h"
#include "net/flow_record.h"
#include "net/node.h"
#include "net/packet_trace.h"
#include "net/qp.h"

namespace rocesim {

struct NetStats {
  uint64_t data_drops = 0;  // data packets dropped by a switch buffer (must be 0 with PFC)
  // ACKs/NACKs/CNPs dropped by a switch buffer: only those in a data class (nic.ack_priority = "data",
  // switch.acks_in_data_class); the control class (priority 0) is never dropped, outside the accounting.
  uint64_t ctrl_drops = 0;
  uint64_t wire_drops = 0;         // lost to a link's error rate
  uint64_t unroutable = 0;         // no route to the destination
  uint64_t stale_packets = 0;      // packets of already-finished flows (ignored)
  uint64_t packet_hops = 0;        // packets that crossed one link
  uint64_t data_packets_sent = 0;  // by hosts (including retransmissions)
  uint64_t retransmitted_packets = 0;
  uint64_t nacks_sent = 0;
  uint64_t timeouts = 0;
  uint64_t cnps_sent = 0;  // by receivers
  // Of cnps_sent: CNPs that report an undetermined queue (UE-marked data), not congestion (CE).
  uint64_t ue_cnps_sent = 0;
  uint64_t cnps_from_switches = 0;
  // A receiver's congestion notification carried on an ACK instead of a CNP packet (Packet::kFlagCongestion,
  // which a scheme asks for through RxDecision::ack_flags): ACKs sent with the flag.
  uint64_t cnp_acks_sent = 0;
  // Notifications that reached a live flow's sender: CNP packets of receivers, CNP packets of switches, ACKs
  // with the congestion flag. One that arrives after its flow's sender finished counts in stale_packets
  // instead, so each is at most its count sent.
  uint64_t cnps_received = 0;
  uint64_t switch_cnps_received = 0;
  uint64_t cnp_acks_received = 0;
  // ACKs with the ECN-echo flag (Packet::kFlagEcnEcho: a CE-marked packet since the receiver's last ACK).
  uint64_t ecn_echo_acks_sent = 0;
  uint64_t acks_sent = 0;
  uint64_t flows_started = 0;
  uint64_t flows_finished = 0;
  Bytes bytes_delivered = 0;    // in-order payload accepted by receivers
  Bytes max_ingress_bytes = 0;  // peak of any switch (ingress port, priority) counter incl. headroom
  Bytes max_switch_buffer_bytes = 0;
  // Data packets that reached their receiver ahead of the next expected byte.
  uint64_t out_of_order_packets = 0;
  uint64_t switch_messages = 0;   // switch-to-switch control messages sent
  Bytes retransmitted_bytes = 0;  // payload of retransmitted data packets
  uint64_t sacks_sent = 0;        // selective repeat: ACKs carrying a SACK (also counted in acks_sent)
  // Data packets that reached their receiver again (a retransmission whose original had arrived).
  uint64_t spurious_retransmissions = 0;
  // Retransmissions sent after a timeout, of packets sent before it (the rest were deemed lost by a NACK,
  // a SACK or the reorder window).
  uint64_t timeout_retransmissions = 0;
  uint64_t link_down_drops = 0;  // packets (and PFC frames) lost on failed links (net/link_events.h)
  uint64_t route_updates = 0;    // route recomputations after link failures and recoveries
};

// Adds `o` into `into`: counts add up, peaks take the larger.
void merge_stats(NetStats& into, const NetStats& o);

// Optional observers, off unless set; the hot path pays one branch when unset. They are called between
// simulation windows (core/simulator.h), in the order of the events that caused them, with the clock at
// the time of that event; they must not change the network.
struct NetObservers {
  std::function<void(const Node&, int port, int prio, bool pause, Time)> on_pfc_rx;  // frame received
  std::function<void(const FlowRecord&)> on_flow_finished;
  std::function<void(const Qp&, bool from_switch)> on_cnp_received;  // a CNP reached a live flow's sender
  std::function<void(const Qp&, Bytes payload)> on_data_delivered;   // in-order payload reached the receiver
  // A link failed (down) or came back: once per end (`port` of `node`), at the event's time
  // (net/link_events.h; called between windows, before the pauses of a failed link are cleared).
  std::function<void(const Node&, int port, bool down, Time)> on_link_change;
  // A traced flow's sender state as its scheme reacted (Network::set_cc_trace with rows).
  std::function<void(const CcStateRow&)> on_cc_state;
};

class RunResults {
 public:
  // (name, value) pairs of a scheme's counters of one switch port (SwitchAgent::port_counters).
  using PortCounters = std::vector<std::pair<const char*, double>>;

  NetObservers& observers() { return obs_; }
  // A flow finished: its record is kept (unless set_keep_finished(false)) and goes to the observer.
  void flow_finished(const FlowRecord& r) {
    if (keep_finished_) finished_.push_back(r);
    if (obs_.on_flow_finished) obs_.on_flow_finished(r);
  }
  const std::vector<FlowRecord>& finished() const { return finished_; }
  void set_keep_finished(bool keep) { keep_finished_ = keep; }
  const std::vector<std::string>& class_labels() const { return class_labels_; }
  void set_class_labels(std::vector<std::string> l) { class_labels_ = std::move(l); }

  // The scheme counters of port `port` of switch `node`, simulated by another rank: empties them for
  // filling (add_remote_counter), or finds them (nullptr when none came).
  PortCounters& remote_counters(int node, int port);
  const PortCounters* find_remote_counters(int node, int port) const;
  // [monitors] packet_trace (net/packet_trace.h): the rows of the traced packets, or nullptr when none are.
  PacketTrace* packet_trace() { return trace_.get(); }
  const PacketTrace* packet_trace() const { return trace_.get(); }
  void set_packet_trace(std::unique_ptr<PacketTrace> t) { trace_ = std::move(t); }
  // Adds a counter to `into` (a list of remote_counters), keeping its name here.
  void add_remote_counter(PortCounters& into, const std::string& name, double value) {
    into.emplace_back(counter_names_.insert(name).first->c_str(), value);
  }

 private:
  NetObservers obs_;
  std::vector<FlowRecord> finished_;
  bool keep_finished_ = true;
  std::vector<std::string> class_labels_{"default"};
  std::map<std::pair<int, int>, PortCounters> remote_counters_;  // (node, port) -> counters
  std::set<std::string> counter_names_;                          // owns the names of remote_counters_
  std::unique_ptr<PacketTrace> trace_;
};

}  // namespace rocesim
