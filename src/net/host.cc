#include "net/host.h"

#include <algorithm>
#include <bit>

#include "net/network.h"
#include "net/qp.h"

namespace rocesim {

namespace {
uint64_t qp_arg(uint32_t slot, uint32_t tag) { return (static_cast<uint64_t>(slot) << 32) | tag; }
}  // namespace

Host::Host(Network& net, int id)
    : Node(net, id),
      lossless_fabric_(net.switch_settings().pfc_enabled || net.switch_settings().credit_enabled) {}

void Host::activate(uint32_t slot) {
  Qp& qp = net_.qp(slot);
  if (qp.active || !has_data(qp)) return;
  qp.active = true;
  active_.push_back(slot);
  kick_ports(qp.tx_ports);
}

void Host::deactivate(uint32_t slot) {
  Qp& qp = net_.qp(slot);
  if (!qp.active) return;
  qp.active = false;
  auto it = std::find(active_.begin(), active_.end(), slot);
  if (it != active_.end()) {
    *it = active_.back();
    active_.pop_back();
  }
}

void Host::send_control(Packet* p) {
  int index = 0;
  if (ports_.size() > 1) {
    // A host with several ports: its flow's ports (a receiver's ACK port, a sender's first port).
    if (p->qp < net_.qp_capacity()) {
      const Qp& qp = net_.qp(p->qp);
      if (qp.in_use && qp.tag == p->qp_tag)
        index = id_ == qp.dst ? qp.ack_port : std::countr_zero(qp.tx_ports);
    }
  }
  Port& port = ports_[index];
  if (!credits() && !port.pfc_queued && port.queued == 0 && (p->prio == 0 || !port.paused[p->prio]) &&
      net_.now() >= port.busy_until) {
    // kick() would take it straight back off the queue (queued control goes first): sent without it.
    transmit(port, p, net_.now());
    return;
  }
  port.push(p->prio, p);
  kick(index);
}

bool Host::next_hole(Qp& qp) {
  if (qp.rtx_nxt < qp.snd_una) qp.rtx_nxt = qp.snd_una;
  const Bytes mtu = net_.nic_settings().mtu_bytes;
  const auto window = static_cast<uint64_t>(net_.sack_window_packets());
  const uint64_t* bits = net_.tx_sack_bits(qp.slot);
  while (qp.rtx_nxt < qp.lost_below) {
    const uint64_t i = static_cast<uint64_t>(qp.rtx_nxt / mtu) % window;
    if (((bits[i >> 6] >> (i & 63)) & 1) == 0) return true;
    qp.rtx_nxt += mtu;
  }
  return false;
}

bool Host::has_data(Qp& qp) { return !qp.all_sent() || (net_.selective() && next_hole(qp)); }

Packet* Host::make_data(Qp& qp, uint32_t slot) {
  const NicSettings& nic = net_.nic_settings();
  // Selective repeat sends the packets deemed lost before new data.
  const bool resend = net_.selective() && next_hole(qp);
  const Bytes seq = resend ? qp.rtx_nxt : qp.snd_nxt;
  const Bytes payload = std::min<Bytes>(nic.mtu_bytes, qp.size - seq);
  Packet* p = net_.pool().get();
  p->type = PktType::kData;
  p->prio = qp.prio;
  p->ecn = kEct0;
  p->src = qp.src;
  p->dst = qp.dst;
  p->sport = qp.sport;
  p->dport = qp.dport;
  p->route = qp.fwd_route;
  p->qp = slot;
  p->qp_tag = qp.tag;
  p->seq = seq;
  p->payload = static_cast<uint32_t>(payload);
  Bytes wire = payload + nic.header_bytes;
  if (net_.cc_needs().send_timestamp) wire += nic.timestamp_bytes;
  if (net_.cc_needs().int_stamping) {
    wire += nic.int_base_bytes + kMaxIntHops * nic.int_hop_bytes;
    net_.pool().attach_int(p);
  }
  p->size = static_cast<uint32_t>(wire);
  p->ts = net_.now();
  if (seq + payload >= qp.size) p->flags |= Packet::kFlagLast;
  const bool retransmission = seq < qp.snd_una_max_sent;
  if (retransmission) {
    ++net_.counters().retransmitted_packets;
    net_.counters().retransmitted_bytes += payload;
    ++qp.retransmitted_packets;
    qp.retransmitted_bytes += static_cast<uint64_t>(payload);
    if (seq < qp.rto_below) {
      ++net_.counters().timeout_retransmissions;
      ++qp.timeout_retransmissions;
    }
  }
  if (qp.traced) [[unlikely]] {  // [monitors] packet_trace
    p->flags |= Packet::kFlagTraced;
    net_.trace(*p, id_, 0, retransmission ? TraceEvent::kRetransmit : TraceEvent::kSend);
  }
  if (resend) {
    qp.rtx_nxt = seq + payload;
  } else {
    qp.snd_nxt += payload;
    qp.new_tx_at = net_.now();
  }
  qp.snd_una_max_sent = std::max(qp.snd_una_max_sent, qp.snd_nxt);
  qp.last_tx = net_.now();
  qp.last_tx_size = wire;
  qp.next_avail = net_.now() + tx_time(wire, qp.rate);
  ++net_.counters().data_packets_sent;
  if (qp.cc_traced) [[unlikely]]
    net_.cc_data_sent(qp, *p);
  else
    net_.cc().on_data_sent(qp, *p);
  // The transport timer runs whatever the flow control (NicSettings::rto): nothing else finds a lost tail,
  // a lost retransmission, or (go-back-N) a hole whose NACK the receiver held back or that was lost.
  arm_rto(qp);
  return p;
}

Packet* Host::dequeue(Port& port) {
  if (port.pfc_queued) return port.pop_pfc();
  for (unsigned m = port.queued; m; m &= m - 1) {  // the non-empty queues, in priority order
    const int prio = std::countr_zero(m);
    if (prio != 0 && port.paused[prio]) continue;
    if (!credit_ok(port, prio, port.q[prio].head->size)) continue;
    credit_consume(port, prio, port.q[prio].head->size);
    return port.pop(prio);
  }
  const size_t n = active_.size();
  if (n == 0) return nullptr;
  const Time now = net_.now();
  Time earliest = Time::max();
  // The round robin from rr_ (which may be past the end, when QPs left the list since it was set).
  const size_t start = rr_ < n ? rr_ : rr_ % n;
  for (size_t k = 0; k < n; ++k) {
    const size_t idx = start + k < n ? start + k : start + k - n;
    const uint32_t slot = active_[idx];
    Qp& qp = net_.qp(slot);
    if (((qp.tx_ports >> port.index) & 1) == 0) continue;  // another of the host's ports sends it
    if (port.paused[qp.prio] || (credits() && !credit_ok(port, qp.prio, credit_max_packet()))) continue;
    if (net_.selective()) {
      // A lost packet goes out whatever the windows; new data within the scheme's window and within
      // sack_window_packets of the cumulative ACK (BDP-FC). An ACK will wake us.
      if (!next_hole(qp) && (qp.all_sent() || (qp.window > 0 && qp.in_flight() >= qp.window) ||
                             qp.in_flight() >= net_.sack_window_packets() * net_.nic_settings().mtu_bytes))
        continue;
    } else if (qp.window > 0 && qp.in_flight() >= qp.window) {
      continue;  // an ACK will wake us
    }
    if (qp.next_avail > now) {
      earliest = std::min(earliest, qp.next_avail);
      continue;
    }
    Packet* p = make_data(qp, slot);
    credit_consume(port, p->prio, p->size);
    if (!has_data(qp)) {
      qp.active = false;
      active_[idx] = active_.back();
      active_.pop_back();
      rr_ = idx < active_.size() ? idx : 0;
    } else {
      rr_ = idx + 1 < n ? idx + 1 : 0;
    }
    return p;
  }
  if (earliest != Time::max()) schedule_wake(port, earliest);
  return nullptr;
}

bool Host::has_backlog(const Port& port) const {
  return port.pfc_queued || port.queued != 0 || !active_.empty();
}

void Host::receive(Packet* p, int in_port) {
  if (p->type == PktType::kPfc) {
    handle_pfc(p, in_port);
    return;
  }
  if (p->type == PktType::kData && net_.nic_settings().rx_rate.bps > 0) {
    // The NIC drains its receive buffer at rx_rate; past Xoff it pauses its ToR.
    p->in_port = static_cast<int16_t>(in_port);
    rx_q_.push(p);  // credits for it return to in_port once processed (kRxDone)
    const NicSettings& nic = net_.nic_settings();
    if (rx_q_.bytes >= nic.rx_xoff_bytes && !rx_paused_tor_[p->prio]) {
      rx_paused_tor_[p->prio] = true;
      for (int i = 0; i < static_cast<int>(ports_.size()); ++i) send_pfc(i, p->prio, true);
    }
    if (!rx_busy_) rx_start_next();
    return;
  }
  credit_release(in_port, p->prio, p->size);
  process(p);
}

void Host::rx_start_next() {
  if (rx_q_.empty()) {
    rx_busy_ = false;
    return;
  }
  rx_busy_ = true;
  net_.sim().after(tx_time(rx_q_.head->size, net_.nic_settings().rx_rate), handler_, kRxDone, 0);
}

void Host::on_node_event(uint32_t kind, uint64_t arg) {
  if (kind == kRxDone) {
    Packet* p = rx_q_.pop();
    credit_release(p->in_port, p->prio, p->size);
    const NicSettings& nic = net_.nic_settings();
    for (int prio = 1; prio < kNumPriorities; ++prio) {
      if (rx_paused_tor_[prio] && rx_q_.bytes <= nic.rx_xon_bytes) {
        rx_paused_tor_[prio] = false;
        for (int i = 0; i < static_cast<int>(ports_.size()); ++i) send_pfc(i, prio, false);
      }
    }
    process(p);
    rx_start_next();
    return;
  }
  if (kind == kFlowStart) {
    net_.start_flow_event(static_cast<uint32_t>(arg));
    return;
  }
  if ((kind & 0xff) == kQpTimer) {
    net_.on_qp_timer(*this, kind >> 8, arg);
    return;
  }
  if (kind == kRto) {
    Qp* q = timer_qp(arg);
    if (!q) return;
    Qp& qp = *q;
    qp.rto_armed = false;
    if (qp.snd_una >= qp.size || qp.in_flight() == 0) return;
    if (net_.now() - qp.last_progress >= rto_of(qp)) {
      ++net_.counters().timeouts;
      qp.rto_below = std::max(qp.rto_below, qp.snd_nxt);
      if (net_.selective()) {
        // Every packet sent and neither acknowledged nor SACKed is deemed lost [IRN]. On a lossless fabric
        // only the first [RFC 6298 5.4; RACK, RFC 8985 6.3]: there a packet held behind a pause is far
        // likelier than a lost one; the others get a reorder window when the resend's ACK comes (on_ack).
        const Bytes mtu = net_.nic_settings().mtu_bytes;
        qp.lost_below =
            lossless_fabric_ ? std::max(qp.lost_below, std::min(qp.snd_una + mtu, qp.snd_nxt)) : qp.snd_nxt;
        qp.rtx_nxt = qp.snd_una;
      } else {
        qp.snd_nxt = qp.snd_una;  // go back N
      }
      qp.last_progress = net_.now();
      if (lossless_fabric_ && net_.selective() && qp.rto_backoff < 6) ++qp.rto_backoff;  // read by rto_of
      wake(qp);
    }
    arm_rto(qp);
    return;
  }
  if (kind == kReorder) {
    if (Qp* qp = timer_qp(arg)) on_reorder_timer(*qp);
  }
}

Qp* Host::timer_qp(uint64_t arg) {
  const uint32_t slot = static_cast<uint32_t>(arg >> 32);
  if (slot >= net_.qp_capacity()) return nullptr;
  Qp& qp = net_.qp(slot);
  // The tag first: a stale timer's slot may belong to another host's flow now (another partition's).
  if (!qp.in_use || qp.tag != static_cast<uint32_t>(arg) || qp.sender_done) return nullptr;
  return &qp;
}

void Host::wake(Qp& qp) {
  if (qp.active)
    kick_ports(qp.tx_ports);  // it may have waited for its window: the port has nothing scheduled
  else
    activate(qp.slot);
}

Time Host::reorder_window(const Qp& qp) const {
  const NicSettings& nic = net_.nic_settings();
  if (nic.reorder_window > Time::zero()) return nic.reorder_window;
  // RACK's window (RFC 8985 6.2) is reo_wnd_mult x min_RTT / 4, at most SRTT; ours is reo_mult SRTTs, at
  // most rto_high (NicSettings::reorder_window_srtts says why), or the lateness allowance (twice the lateness
  // this host saw lately, at most reorder_window_max, or reorder_window_max_lossless on a lossless fabric).
  // Before the first RTT sample, the path's base RTT stands for the SRTT.
  const Time srtt = qp.srtt > Time::zero() ? qp.srtt : qp.base_rtt;
  const Time by_srtt = std::min(srtt * qp.reo_mult, nic.rto_high);
  const Time by_lateness = lateness_allowance();
  // On a lossless fabric a hole is far more often a late packet than a lost one: the window has a floor.
  const Time floor = lossless_fabric_ ? nic.reorder_window_lossless : Time::zero();
  return std::max({by_srtt, by_lateness, floor});
}

Time Host::lateness_allowance() const {
  const NicSettings& nic = net_.nic_settings();
  return std::min(learned_lateness() * nic.reorder_window_lateness,
                  lossless_fabric_ ? nic.reorder_window_max_lossless : nic.reorder_window_max);
}

Time Host::learned_lateness() const {
  const Time now = net_.now();
  if (now < late_epoch_end_) return std::max(late_max_, late_max_prev_);
  // The epoch of the last sample ended: it is the previous one now, for one epoch more.
  return now < late_epoch_end_ + net_.nic_settings().lateness_epoch ? late_max_ : Time::zero();
}

void Host::note_if_late(Qp& qp, Bytes seq, Time sent_at) {
  // An original (sent before the SACK that made it a hole arrived; a retransmission is sent after its
  // window ended) of a packet that a later one overtook: its lateness runs from that SACK to now.
  Time since;
  if (seq < qp.lost_below) {
    if (sent_at >= qp.lost_at || seq < qp.rto_below) return;
    since = qp.lost_at;  // deemed lost too early: its retransmission was spurious
  } else if (qp.reo_armed && seq < qp.reo_below && sent_at < qp.reo_at) {
    since = qp.reo_at;
  } else {
    return;
  }
  note_lateness(net_.now() - since);
}

void Host::note_lateness(Time late) {
  const Time now = net_.now();
  const Time epoch = net_.nic_settings().lateness_epoch;
  if (now >= late_epoch_end_) {
    // A new epoch: the one that ended becomes the previous one (or nothing, after an epoch with no sample).
    late_max_prev_ = now < late_epoch_end_ + epoch ? late_max_ : Time::zero();
    late_max_ = Time::zero();
    late_epoch_end_ = now + epoch;
  }
  late_max_ = std::max(late_max_, late);
}

void Host::arm_reorder(Qp& qp, Time at) {
  qp.reo_armed = true;
  net_.sim().at(at, handler_, kReorder | Simulator::kBackground, qp_arg(qp.slot, qp.tag));
}

void Host::on_reorder_timer(Qp& qp) {
  qp.reo_armed = false;
  // The window may have grown since the timer was armed (the host saw later packets meanwhile): wait on.
  const Time until = qp.reo_at + reorder_window(qp);
  if (until > net_.now()) {
    arm_reorder(qp, until);
    return;
  }
  // The packets below reo_below that are still neither ACKed nor SACKed had a reorder window to arrive
  // after a packet sent later was SACKed: they are lost.
  if (qp.reo_below > qp.lost_below) {
    qp.lost_below = qp.reo_below;
    qp.lost_at = qp.reo_at;
  }
  if (qp.reo_next_below > qp.reo_below) {
    qp.reo_below = qp.reo_next_below;
    qp.reo_next_below = 0;
    qp.reo_at = qp.reo_next_at;
    arm_reorder(qp, std::max(net_.now(), qp.reo_at + reorder_window(qp)));
  }
  if (qp.snd_una < qp.size && next_hole(qp)) wake(qp);
}

Time Host::rto_of(const Qp& qp) const {
  const NicSettings& nic = net_.nic_settings();
  if (nic.rto > Time::zero()) return nic.rto;
  // Automatic: never less than rto_min_base_rtts round trips of the flow's path (a long-haul one).
  const Time floor = qp.base_rtt * nic.rto_min_base_rtts;
  if (!net_.selective()) return std::max(nic.gbn_rto, floor);
  const Bytes in_flight_packets = (qp.in_flight() + nic.mtu_bytes - 1) / nic.mtu_bytes;
  const Time irn = std::max(in_flight_packets <= nic.rto_low_packets ? nic.rto_low : nic.rto_high, floor);
  if (!lossless_fabric_ || qp.srtt == Time::zero()) return irn;
  // And at least the lateness allowance past the SRTT: a packet as late as any lately is not lost yet.
  return std::max({irn, qp.srtt + qp.rttvar * 4, qp.srtt + lateness_allowance()}) *
         (int64_t{1} << qp.rto_backoff);
}

void Host::arm_rto(Qp& qp) {
  if (qp.rto_armed) return;
  const Time rto = rto_of(qp);
  qp.rto_armed = true;
  // Background: a finished flow's timer does not keep the run going; an unfinished one keeps every timer
  // running (PartitionedRun::awaits_timers).
  net_.sim().at(qp.last_progress + rto > net_.now() ? qp.last_progress + rto : net_.now() + rto, handler_,
                kRto | Simulator::kBackground, qp_arg(qp.slot, qp.tag));
}

void Host::process(Packet* p) {
  switch (p->type) {
    case PktType::kData:
      on_data(p);
      break;
    case PktType::kAck:
      on_ack(p);
      break;
    case PktType::kNack:
      on_nack(p);
      break;
    case PktType::kCnp:
      on_cnp(p);
      break;
    default:
      net_.pool().put(p);
      break;
  }
}

void Host::send_ack(Qp& qp, const Packet& data, PktType type, uint8_t flags) {
  const NicSettings& nic = net_.nic_settings();
  const CcNeeds& needs = net_.cc_needs();
  Packet* a = net_.pool().get();
  a->type = type;
  a->prio = needs.ack_high_priority ? 0 : qp.prio;
  a->flow_prio = qp.prio;
  a->src = id_;
  a->dst = qp.src;
  a->sport = qp.dport;
  a->dport = qp.sport;
  if (id_ == qp.dst) a->route = qp.rev_route;
  a->qp = data.qp;
  a->qp_tag = qp.tag;
  a->seq = qp.rcv_nxt;
  a->ts = data.ts;
  a->flags = flags;
  if (flags & (Packet::kFlagSack | Packet::kFlagDsack)) a->sack_seq = data.seq;
  if (flags & Packet::kFlagSack) ++net_.counters().sacks_sent;
  if (flags & Packet::kFlagCongestion) ++net_.counters().cnp_acks_sent;
  if (flags & Packet::kFlagEcnEcho) ++net_.counters().ecn_echo_acks_sent;
  Bytes size = nic.ack_bytes;
  if (needs.int_stamping) {
    if (data.hops) {
      net_.pool().attach_int(a);
      a->n_hops = data.n_hops;
      for (int i = 0; i < data.n_hops; ++i) a->hops[i] = data.hops[i];
    }
    size += nic.int_base_bytes + kMaxIntHops * nic.int_hop_bytes;
  }
  a->size = static_cast<uint32_t>(size);
  if (type == PktType::kAck)
    ++net_.counters().acks_sent;
  else
    ++net_.counters().nacks_sent;
  send_control(a);
}

void Host::on_data(Packet* p) {
  Qp* qp = net_.qp_of(*p);
  if (p->flags & Packet::kFlagTraced) [[unlikely]] {  // [monitors] packet_trace
    const TraceDetail d = !qp                     ? TraceDetail::kStale
                          : p->seq == qp->rcv_nxt ? TraceDetail::kInOrder
                          : p->seq > qp->rcv_nxt  ? TraceDetail::kOutOfOrder
                                                  : TraceDetail::kDuplicate;
    net_.trace(*p, id_, 0, TraceEvent::kReceive, d);
  }
  if (!qp) {
    // The flow's receiver had every byte: this is a second copy, the original of a retransmission that
    // overtook it or a retransmission whose original arrived. Either way one copy was sent for nothing.
    ++net_.counters().stale_packets;
    ++net_.counters().spurious_retransmissions;
    net_.pool().put(p);
    return;
  }
  if (net_.selective()) {
    on_data_selective(*qp, *p);
    net_.pool().put(p);
    return;
  }
  const Time now = net_.now();
  if (p->seq == qp->rcv_nxt) {
    qp->rcv_nxt += p->payload;
    if (qp->rcv_nxt >= qp->size) net_.on_flow_received(*qp);
    net_.counters().bytes_delivered += p->payload;
    if (net_.observers().on_data_delivered) net_.notify_delivered(*qp, p->payload);
    if (p->ecn == kCe) qp->rx_ce_pending = true;
    const RxDecision d = net_.cc().on_data_received(*qp, *p);
    if (d.send_cnp) {
      Packet* c = net_.make_cnp(*qp, id_);
      ++qp->cnps_sent;
      ++net_.counters().cnps_sent;
      qp->last_cnp_sent = now;
      send_control(c);
    }
    if (++qp->rx_since_ack >= static_cast<uint32_t>(net_.nic_settings().ack_interval) || d.ack_now ||
        qp->rcv_nxt >= qp->size) {
      uint8_t flags = d.ack_flags;
      if (qp->rx_ce_pending) flags |= Packet::kFlagEcnEcho;
      send_ack(*qp, *p, PktType::kAck, flags);
      qp->rx_since_ack = 0;
      qp->rx_ce_pending = false;
    }
  } else if (p->seq > qp->rcv_nxt) {
    ++net_.counters().out_of_order_packets;  // reordered (adaptive routing) or after a loss
    ++qp->rx_out_of_order;
    // A hole: ask for go-back-N from rcv_nxt, at most once per NACK interval for the same hole.
    if (qp->last_nack_seq != qp->rcv_nxt || now - qp->last_nack >= net_.nic_settings().nack_interval) {
      qp->last_nack_seq = qp->rcv_nxt;
      qp->last_nack = now;
      send_ack(*qp, *p, PktType::kNack, 0);
    }
  } else {
    // Duplicate (after a rewind or a timeout): acknowledge what we have so the sender catches up, as an RC
    // responder answers a duplicate request. Every duplicate is answered: when the ACKs of the flow's end
    // were lost, a sender whose window is smaller than what it missed resends only packets far below
    // rcv_nxt, and without an ACK for them it would time out and resend them for ever.
    ++net_.counters().spurious_retransmissions;
    if (qp->rcv_nxt < qp->size) ++qp->rx_spurious;  // the flow's record: until it has every byte
    send_ack(*qp, *p, PktType::kAck, Packet::kFlagDsack);
  }
  net_.pool().put(p);
}

void Host::on_data_selective(Qp& qp, const Packet& p) {
  const Bytes mtu = net_.nic_settings().mtu_bytes;
  const auto window = static_cast<uint64_t>(net_.sack_window_packets());
  uint64_t* bits = net_.rx_sack_bits(qp.slot);
  if (p.seq == qp.rcv_nxt) {
    // In order: deliver it and the packets held out of order that now follow it.
    Bytes delivered = p.payload;
    qp.rcv_nxt += p.payload;
    bool filled = false;
    while (qp.rcv_nxt < qp.size) {
      const uint64_t i = static_cast<uint64_t>(qp.rcv_nxt / mtu) % window;
      if (((bits[i >> 6] >> (i & 63)) & 1) == 0) break;
      bits[i >> 6] &= ~(uint64_t{1} << (i & 63));
      const Bytes len = std::min(mtu, qp.size - qp.rcv_nxt);
      qp.rcv_nxt += len;
      delivered += len;
      filled = true;
    }
    if (qp.rcv_nxt >= qp.size) net_.on_flow_received(qp);
    net_.counters().bytes_delivered += delivered;
    if (net_.observers().on_data_delivered) net_.notify_delivered(qp, delivered);
    accept_selective(qp, p, filled, false);
  } else if (p.seq > qp.rcv_nxt) {
    ++net_.counters().out_of_order_packets;  // reordered (adaptive routing) or after a loss
    ++qp.rx_out_of_order;
    // The sender never sends sack_window_packets beyond its cumulative ACK, so the packet fits the bitmap.
    if ((p.seq - qp.rcv_nxt) / mtu >= static_cast<Bytes>(window)) return;
    const uint64_t i = static_cast<uint64_t>(p.seq / mtu) % window;
    if ((bits[i >> 6] >> (i & 63)) & 1) {
      // Held already (a retransmission whose original had arrived): SACK it again, marked as a duplicate.
      ++net_.counters().spurious_retransmissions;
      if (qp.rcv_nxt < qp.size) ++qp.rx_spurious;  // the flow's record: until it has every byte
      send_ack(qp, p, PktType::kAck, Packet::kFlagSack | Packet::kFlagDsack);
      return;
    }
    bits[i >> 6] |= uint64_t{1} << (i & 63);
    accept_selective(qp, p, true, true);
  } else {
    // Duplicate (a spurious or timed-out retransmission): acknowledge what we have.
    ++net_.counters().spurious_retransmissions;
    if (qp.rcv_nxt < qp.size) ++qp.rx_spurious;  // the flow's record: until it has every byte
    send_ack(qp, p, PktType::kAck, Packet::kFlagDsack);
  }
}

void Host::accept_selective(Qp& qp, const Packet& p, bool ack_now, bool sack) {
  if (p.ecn == kCe) qp.rx_ce_pending = true;
  const RxDecision d = net_.cc().on_data_received(qp, p);
  if (d.send_cnp) {
    Packet* c = net_.make_cnp(qp, id_);
    ++qp.cnps_sent;
    ++net_.counters().cnps_sent;
    qp.last_cnp_sent = net_.now();
    send_control(c);
  }
  const bool due = ++qp.rx_since_ack >= static_cast<uint32_t>(net_.nic_settings().ack_interval);
  if (due || ack_now || d.ack_now || qp.rcv_nxt >= qp.size) {
    uint8_t flags = d.ack_flags;
    if (qp.rx_ce_pending) flags |= Packet::kFlagEcnEcho;
    if (sack) flags |= Packet::kFlagSack;
    send_ack(qp, p, PktType::kAck, flags);
    qp.rx_since_ack = 0;
    qp.rx_ce_pending = false;
  }
}

void Host::on_ack_selective(Qp& qp, const Packet& ack) {
  const Bytes mtu = net_.nic_settings().mtu_bytes;
  const auto window = static_cast<uint64_t>(net_.sack_window_packets());
  uint64_t* bits = net_.tx_sack_bits(qp.slot);
  const bool learns = net_.nic_settings().loss_detection == NicSettings::LossDetection::kReorderWindow &&
                      net_.nic_settings().reorder_window == Time::zero();
  if (learns && ack.seq > qp.snd_una) note_if_late(qp, qp.snd_una, ack.ts);
  // A SACK, or a D-SACK: an original that came after its retransmission is the latest of all.
  if (learns && (ack.flags & (Packet::kFlagSack | Packet::kFlagDsack)))
    note_if_late(qp, ack.sack_seq, ack.ts);
  if (ack.seq > qp.snd_una) {
    // Forget the SACKs of the packets now acknowledged (at most a window of them).
    for (Bytes s = qp.snd_una; s < ack.seq && s < qp.snd_una + static_cast<Bytes>(window) * mtu; s += mtu) {
      const uint64_t i = static_cast<uint64_t>(s / mtu) % window;
      bits[i >> 6] &= ~(uint64_t{1} << (i & 63));
    }
    qp.snd_una = ack.seq;
    qp.last_progress = net_.now();
    qp.rto_backoff = 0;
    if (qp.snd_nxt < qp.snd_una) qp.snd_nxt = qp.snd_una;
  }
  const NicSettings& nic = net_.nic_settings();
  const Time now = net_.now();
  // An RTT sample: the ACK echoes the send time of the data packet (copy) that triggered it.
  const Time rtt = now - ack.ts;
  if (rtt > Time::zero()) {
    if (qp.srtt == Time::zero()) {
      qp.srtt = rtt;
      qp.rttvar = rtt / 2;
    } else {
      const Time dev = rtt > qp.srtt ? rtt - qp.srtt : qp.srtt - rtt;
      qp.rttvar = qp.rttvar + (dev - qp.rttvar) / 4;
      qp.srtt = qp.srtt + (rtt - qp.srtt) / 8;
    }
    // On a lossless fabric a packet can be late by as much as any packet queued lately: a packet sent now
    // on a path that queues as long as this one did comes that much after one sent on an empty path.
    if (learns && lossless_fabric_ && rtt > qp.base_rtt) note_lateness(rtt - qp.base_rtt);
  }
  // A D-SACK: a retransmission was not needed; widen the reorder window, once per round trip (RFC 8985 6.2).
  if ((ack.flags & Packet::kFlagDsack) && now - qp.reo_mult_at >= qp.srtt && qp.reo_mult < 255) {
    ++qp.reo_mult;
    qp.reo_mult_at = now;
  }
  // The ACK of a packet sent after every outstanding original (a timeout's resend) on a lossless fabric:
  // they get a reorder window to arrive, as if a later packet had been SACKed [RACK, RFC 8985 6.2]; the
  // timeout resent only the first (on_event, kRto).
  if (lossless_fabric_ && ack.ts > qp.new_tx_at && qp.snd_una < qp.snd_nxt && qp.lost_below < qp.snd_nxt &&
      !qp.reo_armed && nic.loss_detection == NicSettings::LossDetection::kReorderWindow) {
    qp.reo_below = qp.snd_nxt;
    qp.reo_at = now;
    arm_reorder(qp, now + reorder_window(qp));
  }
  if ((ack.flags & Packet::kFlagSack) && ack.sack_seq >= qp.snd_una && ack.sack_seq < qp.snd_nxt) {
    const uint64_t i = static_cast<uint64_t>(ack.sack_seq / mtu) % window;
    bits[i >> 6] |= uint64_t{1} << (i & 63);
    if (nic.loss_detection == NicSettings::LossDetection::kDupThresh) {
      // The packets sack_reorder_packets or more below the SACKed one and not SACKed are deemed lost.
      const Bytes lost_below = ack.sack_seq - (nic.sack_reorder_packets - 1) * mtu;
      if (lost_below > qp.lost_below) qp.lost_below = lost_below;
    } else if (ack.sack_seq > qp.lost_below) {
      // The packets below the SACKed one (sent before it) get a reorder window to arrive.
      if (!qp.reo_armed) {
        qp.reo_below = ack.sack_seq;
        qp.reo_at = now;
        arm_reorder(qp, now + reorder_window(qp));
      } else if (ack.sack_seq > qp.reo_below && ack.sack_seq > qp.reo_next_below) {
        qp.reo_next_below = ack.sack_seq;
        qp.reo_next_at = now;
      }
    }
  }
}

void Host::on_ack(Packet* p) {
  Qp* qp = net_.sender_qp_of(*p);
  if (!qp) {
    ++net_.counters().stale_packets;
    net_.pool().put(p);
    return;
  }
  if (p->flags & Packet::kFlagCongestion) ++net_.counters().cnp_acks_received;
  if (net_.selective()) {
    on_ack_selective(*qp, *p);
    net_.cc().on_ack(*qp, *p);
    if (qp->cc_traced) [[unlikely]]
      net_.cc_reacted(*qp, p->flags);
    net_.pool().put(p);
    if (qp->snd_una >= qp->size) {
      net_.on_flow_complete(*qp);
      return;
    }
    if (!has_data(*qp))
      deactivate(qp->slot);
    else if (qp->active)
      kick_ports(qp->tx_ports);
    else
      activate(qp->slot);
    return;
  }
  if (p->seq > qp->snd_una) {
    qp->snd_una = p->seq;
    qp->last_progress = net_.now();
    qp->rto_backoff = 0;
    if (qp->snd_nxt < qp->snd_una) qp->snd_nxt = qp->snd_una;
  }
  net_.cc().on_ack(*qp, *p);
  if (qp->cc_traced) [[unlikely]]
    net_.cc_reacted(*qp, p->flags);
  net_.pool().put(p);
  if (qp->snd_una >= qp->size) {
    net_.on_flow_complete(*qp);
    return;
  }
  if (qp->active) kick_ports(qp->tx_ports);
}

void Host::on_nack(Packet* p) {
  Qp* qp = net_.sender_qp_of(*p);
  if (!qp) {
    ++net_.counters().stale_packets;
    net_.pool().put(p);
    return;
  }
  if (p->seq > qp->snd_una) {
    qp->snd_una = p->seq;
    qp->last_progress = net_.now();
    qp->rto_backoff = 0;
  }
  qp->snd_nxt = qp->snd_una;  // go back N
  net_.cc().on_nack(*qp, *p);
  if (qp->cc_traced) [[unlikely]]
    net_.cc_reacted(*qp);
  net_.pool().put(p);
  if (qp->snd_una >= qp->size) {
    net_.on_flow_complete(*qp);
    return;
  }
  // A QP that waited for its window is still in the send list, with its port idle: wake it.
  wake(*qp);
}

void Host::on_cnp(Packet* p) {
  Qp* qp = net_.sender_qp_of(*p);
  if (qp) {
    ++qp->cnps_received;
    const bool from_switch = (p->flags & Packet::kFlagFromSwitch) != 0;
    ++(from_switch ? net_.counters().switch_cnps_received : net_.counters().cnps_received);
    if (net_.observers().on_cnp_received) net_.notify_cnp(*qp, from_switch);
    net_.cc().on_cnp(*qp, *p);
    if (qp->cc_traced) [[unlikely]]
      net_.cc_reacted(*qp);
  } else {
    ++net_.counters().stale_packets;
  }
  net_.pool().put(p);
}

}  // namespace rocesim
