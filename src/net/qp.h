// One RC queue pair: the sender state at the source NIC and the receiver state at the destination
// NIC of one flow. Both live in the same pooled slot, which is freed when the sender completes.
#pragma once
#include <cstdint>

#include "core/time.h"
#include "net/packet.h"

namespace rocesim {

struct Qp {
  bool in_use = false;   // allocated (from the window boundary before its start until the one after its end)
  bool started = false;  // its start event has run at the source
  bool sender_done = false;  // the sender has seen every byte acknowledged
  bool cc_traced = false;    // [monitors] cc_state follows this flow (Network::set_cc_trace)
  bool traced = false;       // its data packets carry Packet::kFlagTraced ([monitors] packet_trace)
  uint32_t slot = 0;         // own index in the QP pool
  uint64_t flow_id = 0;
  uint32_t tag = 0;      // low 32 bits of flow_id, carried by packets to detect stale slots
  int src = 0, dst = 0;  // node ids
  uint16_t sport = 0, dport = 0;
  // The switches' egress ports of its data's path and of its ACKs' and CNPs' path back, as Packet::route
  // holds them (Network::cached_route; Packet::kNoRoute where routes are not fixed per flow).
  uint64_t fwd_route = Packet::kNoRoute;
  uint64_t rev_route = Packet::kNoRoute;
  uint8_t prio = 3;
  uint16_t class_id = 0;
  // The source host's ports its data leaves by (a bit per port: one, or all those it sprays over,
  // NicSettings::port_spread), and the destination host's port its ACKs and CNPs leave by.
  uint8_t tx_ports = 1;
  uint8_t ack_port = 0;
  uint32_t name_id = 0;  // FlowSpec::name_id, for the record
  Bytes size = 0;
  Time start;
  Time ideal_fct;
  Rate line_rate;  // the source NIC's link rate
  Time base_rtt;   // the path's base RTT (schemes use it; HPCC uses the topology maximum)

  // Sender
  Bytes snd_nxt = 0;           // next byte to send
  Bytes snd_una = 0;           // first byte not yet acknowledged
  Bytes snd_una_max_sent = 0;  // highest byte ever sent (to count retransmissions)
  Rate rate;                   // pacing rate set by the scheme
  Bytes window = 0;            // bytes in flight allowed; 0 = no window
  Time next_avail;             // pacing: earliest time of the next data packet
  Time last_tx;                // when the last data packet left
  Time new_tx_at;              // when the last packet sent for the first time left
  Bytes last_tx_size = 0;
  Time last_progress;  // last time snd_una advanced (retransmission timeout)
  bool rto_armed = false;
  bool active = false;  // in the source host's send list
  uint64_t retransmitted_bytes = 0;
  uint32_t retransmitted_packets = 0;
  uint32_t cnps_received = 0;
  // Selective repeat (NicSettings::LossRecovery::kSelective; Network::tx_sack_bits holds what was SACKed):
  // the unacknowledged packets below lost_below that were not SACKed are deemed lost, and those from
  // rtx_nxt on are still to be retransmitted. snd_nxt never rewinds (it stays the highest byte sent).
  Bytes rtx_nxt = 0;
  Bytes lost_below = 0;
  // Loss detection by a reorder window (NicSettings::LossDetection::kReorderWindow, RACK): the packets below
  // reo_below are deemed lost when its timer (reo_armed) fires unless ACKed or SACKed by then;
  // reo_next_below, SACKed at reo_next_at while the timer ran, is the next candidate.
  Bytes reo_below = 0;
  Bytes reo_next_below = 0;
  Time reo_at;  // when the SACK that armed the timer for reo_below arrived
  Time reo_next_at;
  Time lost_at;      // reo_at of the window that last deemed packets lost (their originals came before it)
  Time reo_mult_at;  // when reo_mult (the window in SRTTs, NicSettings::reorder_window_srtts) last grew
  Time srtt;         // smoothed RTT of the echoed send times of its ACKs (RFC 6298's 1/8; zero: none yet)
  Time rttvar;       // their mean deviation (RFC 6298's 1/4)
  uint8_t reo_mult = 1;
  uint8_t rto_backoff = 0;  // timeouts since snd_una last advanced: the RTO doubles for each (RFC 6298 5.5)
  bool reo_armed = false;
  uint32_t ecn_echoes = 0;  // ACKs with ECN-Echo the sender got; counted only while cc_traced
  // Either recovery: a retransmission below this byte, sent after a timeout, is a timeout's resend.
  Bytes rto_below = 0;
  uint32_t timeout_retransmissions = 0;
  // ACKs carrying a congestion notification (Packet::kFlagCongestion) the sender got; only while cc_traced.
  uint32_t cnp_acks = 0;

  // Receiver
  Bytes rcv_nxt = 0;  // next expected byte
  uint32_t rx_since_ack = 0;
  bool rx_ce_pending = false;  // a CE-marked packet arrived since the last ACK
  Time last_nack;
  Bytes last_nack_seq = -1;
  Time last_cnp_sent = Time{-(int64_t{1} << 62)};
  uint32_t cnps_sent = 0;
  uint32_t rx_out_of_order = 0;  // data packets that arrived ahead of rcv_nxt (either loss recovery)
  // Data packets that arrived again (their original had arrived) before the receiver had every byte:
  // later ones count only in the run's total (across ranks the receiver's count travels when it is done).
  uint32_t rx_spurious = 0;

  Bytes in_flight() const { return snd_nxt - snd_una; }
  bool all_sent() const { return snd_nxt >= size; }
};

}  // namespace rocesim
