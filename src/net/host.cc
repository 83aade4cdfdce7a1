#include "net/host.h"

#include <algorithm>

#include "net/network.h"
#include "net/qp.h"

namespace rocesim {

namespace {
uint64_t qp_arg(uint32_t slot, uint32_t tag) { return (static_cast<uint64_t>(slot) << 32) | tag; }
}  // namespace

Host::Host(Network& net, int id) : Node(net, id) {}

void Host::activate(uint32_t slot) {
  Qp& qp = net_.qp(slot);
  if (qp.active || qp.all_sent()) return;
  qp.active = true;
  active_.push_back(slot);
  kick(0);
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
  ports_[0].q[p->prio].push(p);
  kick(0);
}

Packet* Host::make_data(Qp& qp, uint32_t slot) {
  const NicSettings& nic = net_.nic_settings();
  const Bytes payload = std::min<Bytes>(nic.mtu_bytes, qp.size - qp.snd_nxt);
  Packet* p = net_.pool().get();
  p->type = PktType::kData;
  p->prio = qp.prio;
  p->ecn = kEct0;
  p->src = qp.src;
  p->dst = qp.dst;
  p->sport = qp.sport;
  p->dport = qp.dport;
  p->qp = slot;
  p->qp_tag = qp.tag;
  p->seq = qp.snd_nxt;
  p->payload = static_cast<uint32_t>(payload);
  Bytes wire = payload + nic.header_bytes;
  if (net_.cc_needs().send_timestamp) wire += nic.timestamp_bytes;
  if (net_.cc_needs().int_stamping) {
    wire += nic.int_base_bytes + kMaxIntHops * nic.int_hop_bytes;
    net_.pool().attach_int(p);
  }
  p->size = static_cast<uint32_t>(wire);
  p->ts = net_.now();
  if (qp.snd_nxt + payload >= qp.size) p->flags |= Packet::kFlagLast;
  const bool retransmission = qp.snd_nxt < qp.snd_una_max_sent;
  if (retransmission) {
    ++net_.counters().retransmitted_packets;
    qp.retransmitted_bytes += static_cast<uint64_t>(payload);
  }
  qp.snd_nxt += payload;
  qp.snd_una_max_sent = std::max(qp.snd_una_max_sent, qp.snd_nxt);
  qp.last_tx = net_.now();
  qp.last_tx_size = wire;
  qp.next_avail = net_.now() + tx_time(wire, qp.rate);
  ++net_.counters().data_packets_sent;
  net_.cc().on_data_sent(qp, *p);
  if (net_.nic_settings().rto > Time::zero() ||
      (!net_.switch_settings().pfc_enabled && !net_.switch_settings().credit_enabled))
    arm_rto(qp);
  return p;
}

Packet* Host::dequeue(Port& port) {
  if (!port.pfc_q.empty()) return port.pfc_q.pop();
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    if (port.q[prio].empty() || (prio != 0 && port.paused[prio])) continue;
    if (!credit_ok(port, prio, port.q[prio].head->size)) continue;
    credit_consume(port, prio, port.q[prio].head->size);
    return port.q[prio].pop();
  }
  const size_t n = active_.size();
  if (n == 0) return nullptr;
  const Time now = net_.now();
  Time earliest = Time::max();
  for (size_t k = 0; k < n; ++k) {
    const size_t idx = (rr_ + k) % n;
    const uint32_t slot = active_[idx];
    Qp& qp = net_.qp(slot);
    if (port.paused[qp.prio] || !credit_ok(port, qp.prio, credit_max_packet())) continue;
    if (qp.window > 0 && qp.in_flight() >= qp.window) continue;  // an ACK will wake us
    if (qp.next_avail > now) {
      earliest = std::min(earliest, qp.next_avail);
      continue;
    }
    Packet* p = make_data(qp, slot);
    credit_consume(port, p->prio, p->size);
    if (qp.all_sent()) {
      qp.active = false;
      active_[idx] = active_.back();
      active_.pop_back();
      rr_ = active_.empty() ? 0 : idx % active_.size();
    } else {
      rr_ = (idx + 1) % n;
    }
    return p;
  }
  if (earliest != Time::max()) schedule_wake(port, earliest);
  return nullptr;
}

bool Host::has_backlog(const Port& port) const {
  if (!port.pfc_q.empty() || !active_.empty()) return true;
  for (int prio = 0; prio < kNumPriorities; ++prio)
    if (!port.q[prio].empty()) return true;
  return false;
}

void Host::receive(Packet* p, int in_port) {
  (void)in_port;
  if (p->type == PktType::kPfc) {
    handle_pfc(p, 0);
    return;
  }
  if (p->type == PktType::kData && net_.nic_settings().rx_rate.bps > 0) {
    // The NIC drains its receive buffer at rx_rate; past Xoff it pauses its ToR.
    rx_q_.push(p);  // credits for it return once processed (kRxDone)
    const NicSettings& nic = net_.nic_settings();
    if (rx_q_.bytes >= nic.rx_xoff_bytes && !rx_paused_tor_[p->prio]) {
      rx_paused_tor_[p->prio] = true;
      send_pfc(0, p->prio, true);
    }
    if (!rx_busy_) rx_start_next();
    return;
  }
  credit_release(0, p->prio, p->size);
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
    credit_release(0, p->prio, p->size);
    const NicSettings& nic = net_.nic_settings();
    for (int prio = 1; prio < kNumPriorities; ++prio) {
      if (rx_paused_tor_[prio] && rx_q_.bytes <= nic.rx_xon_bytes) {
        rx_paused_tor_[prio] = false;
        send_pfc(0, prio, false);
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
    const uint32_t slot = static_cast<uint32_t>(arg >> 32);
    if (slot >= net_.qp_capacity()) return;
    Qp& qp = net_.qp(slot);
    if (!qp.in_use || qp.sender_done || qp.tag != static_cast<uint32_t>(arg)) return;
    qp.rto_armed = false;
    if (qp.snd_una >= qp.size || qp.in_flight() == 0) return;
    const Time rto = net_.nic_settings().rto > Time::zero() ? net_.nic_settings().rto : Time::from_ms(1);
    if (net_.now() - qp.last_progress >= rto) {
      ++net_.counters().timeouts;
      qp.snd_nxt = qp.snd_una;  // go back N
      qp.last_progress = net_.now();
      activate(slot);
    }
    arm_rto(qp);
  }
}

void Host::arm_rto(Qp& qp) {
  if (qp.rto_armed) return;
  const Time rto = net_.nic_settings().rto > Time::zero() ? net_.nic_settings().rto : Time::from_ms(1);
  qp.rto_armed = true;
  net_.sim().at(qp.last_progress + rto > net_.now() ? qp.last_progress + rto : net_.now() + rto, handler_,
                kRto, qp_arg(qp.slot, qp.tag));
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
  a->qp = data.qp;
  a->qp_tag = qp.tag;
  a->seq = qp.rcv_nxt;
  a->ts = data.ts;
  a->flags = flags;
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
  if (!qp) {
    ++net_.counters().stale_packets;
    net_.pool().put(p);
    return;
  }
  const Time now = net_.now();
  if (p->seq == qp->rcv_nxt) {
    qp->rcv_nxt += p->payload;
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
    // A hole: ask for go-back-N from rcv_nxt, at most once per NACK interval for the same hole.
    if (qp->last_nack_seq != qp->rcv_nxt || now - qp->last_nack >= net_.nic_settings().nack_interval) {
      qp->last_nack_seq = qp->rcv_nxt;
      qp->last_nack = now;
      send_ack(*qp, *p, PktType::kNack, 0);
    }
  } else {
    // Duplicate (after a timeout): acknowledge what we have so the sender catches up.
    if (p->seq + p->payload >= qp->rcv_nxt) send_ack(*qp, *p, PktType::kAck, 0);
  }
  net_.pool().put(p);
}

void Host::on_ack(Packet* p) {
  Qp* qp = net_.sender_qp_of(*p);
  if (!qp) {
    ++net_.counters().stale_packets;
    net_.pool().put(p);
    return;
  }
  if (p->seq > qp->snd_una) {
    qp->snd_una = p->seq;
    qp->last_progress = net_.now();
    if (qp->snd_nxt < qp->snd_una) qp->snd_nxt = qp->snd_una;
  }
  net_.cc().on_ack(*qp, *p);
  net_.pool().put(p);
  if (qp->snd_una >= qp->size) {
    net_.on_flow_complete(*qp);
    return;
  }
  if (qp->active) kick(0);
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
  }
  qp->snd_nxt = qp->snd_una;  // go back N
  net_.cc().on_nack(*qp, *p);
  net_.pool().put(p);
  if (qp->snd_una >= qp->size) {
    net_.on_flow_complete(*qp);
    return;
  }
  activate(qp->slot);
}

void Host::on_cnp(Packet* p) {
  Qp* qp = net_.sender_qp_of(*p);
  if (qp) {
    ++qp->cnps_received;
    if (net_.observers().on_cnp_received) net_.notify_cnp(*qp, (p->flags & Packet::kFlagFromSwitch) != 0);
    net_.cc().on_cnp(*qp, *p);
  } else {
    ++net_.counters().stale_packets;
  }
  net_.pool().put(p);
}

}  // namespace rocesim
