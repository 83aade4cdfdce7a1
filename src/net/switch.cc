#include "net/switch.h"

#include <algorithm>

#include "net/network.h"

namespace rocesim {

Switch::Switch(Network& net, int id) : Node(net, id) {}

void Switch::configure(const SwitchSettings& s, Rate host_rate) {
  s_ = s;
  reserve_ = s.reserve_bytes;
  const size_t n = ports_.size();
  ingress_.assign(n * kNumPriorities, {});
  headroom_.assign(n, 0);
  dt_shift_.assign(n, s.dt_shift_at_host_rate);
  ecn_.assign(n, {});
  xoff_.assign(n, s.xoff_bytes);
  xon_.assign(n, s.xon_bytes);
  hdrm_total_ = 0;
  reserve_total_ = 0;
  for (size_t i = 0; i < n; ++i) {
    const Port& p = ports_[i];
    // Headroom absorbs what is in flight after a PAUSE: about one round trip of the link plus a
    // packet being sent at each end [sim: 3 x rate x delay; algorithms.md 1.2].
    headroom_[i] = s.headroom_bytes > 0
                       ? s.headroom_bytes
                       : static_cast<Bytes>(s.headroom_factor * p.rate.bps * p.delay.sec() / 8.0) +
                             (s.headroom_extra_bytes >= 0
                                  ? s.headroom_extra_bytes
                                  : 2 * (net_.nic_settings().mtu_bytes + net_.nic_settings().header_bytes));
    if (p.long_haul) {
      // One BDP of the long-haul link [seed 004; algorithms.md 1.2] and its own static thresholds.
      headroom_[i] = s.long_haul_headroom_bytes > 0
                         ? s.long_haul_headroom_bytes
                         : static_cast<Bytes>(2.0 * p.rate.bps * p.delay.sec() / 8.0) +
                               (s.headroom_extra_bytes >= 0
                                    ? s.headroom_extra_bytes
                                    : 2 * (net_.nic_settings().mtu_bytes + net_.nic_settings().header_bytes));
      if (s.long_haul_xoff_bytes > 0) xoff_[i] = s.long_haul_xoff_bytes;
      if (s.long_haul_xon_bytes > 0) xon_[i] = s.long_haul_xon_bytes;
    }
    // Dynamic threshold: shift at host speed, one less per doubling of port speed [sim].
    int shift = s.dt_shift_at_host_rate;
    for (double r = host_rate.bps * 2; r <= p.rate.bps * 1.0001 && shift > 0; r *= 2) --shift;
    dt_shift_[i] = shift;
    const double scale = s.ecn_scale_with_rate ? p.rate / s.ecn_ref_rate : 1.0;
    ecn_[i] = EgressEcn{static_cast<Bytes>(static_cast<double>(s.kmin_bytes) * scale),
                        static_cast<Bytes>(static_cast<double>(s.kmax_bytes) * scale), s.pmax};
    hdrm_total_ += headroom_[i];
    reserve_total_ += reserve_;  // set aside once per port in the free-buffer term [sim; algorithms.md 1.1]
  }
  mark_rng_ = Rng::stream(net_.seed(), "ecn", static_cast<uint64_t>(id_));
  // Input-and-output queued model (settings.h): PFC thresholds per input queue, crossbar wait rings.
  ioq_ = s.model == SwitchModel::kInputOutputQueued;
  in_dequeue_.assign(n, 0);
  if (ioq_) {
    const size_t nw = n * kNumPriorities;
    voq_ = s.input_queueing == InputQueueing::kVoq;
    const size_t nq = voq_ ? nw * n : nw;  // one queue per (input, priority[, output])
    iq_.assign(nq, {});
    waiting_on_.assign(nq, -1);
    waiters_.assign(n, {});
    for (auto& r : waiters_) r.buf.assign(nw, 0);
    pulling_.assign(n, 0);
    ioq_xoff_.assign(n, 0);
    ioq_xon_.assign(n, 0);
    const Bytes pkt = net_.nic_settings().mtu_bytes + net_.nic_settings().header_bytes;
    for (size_t i = 0; i < n; ++i) {
      // Pause while the headroom still fits in the queue; at least two packets before a pause.
      ioq_xoff_[i] = std::max<Bytes>(s.input_queue_bytes - headroom_[i], 2 * pkt);
      ioq_xon_[i] = std::max<Bytes>(ioq_xoff_[i] - 2 * pkt, 0);
    }
  }
}

Bytes Switch::pfc_threshold(int port) const {
  if (s_.pfc_mode == PfcThresholdMode::kStatic) return xoff_[port];
  const Bytes free_shared = s_.buffer_bytes - hdrm_total_ - reserve_total_ - shared_used_;
  return free_shared > 0 ? (free_shared >> dt_shift_[port]) : 0;
}

int Switch::route(const Packet& p) const {
  auto [ports, n] = net_.routes(id_, p.dst);
  if (n == 0) return -1;
  if (n == 1) return ports[0];
  const int hashed = ports[net_.flow_hash(p, id_) % static_cast<uint64_t>(n)];
  return agent_ ? agent_->select_port(p, ports, n, hashed) : hashed;
}

void Switch::receive(Packet* p, int in_port) {
  if (p->type == PktType::kPfc) {
    handle_pfc(p, in_port);
    return;
  }
  // A switch-to-switch message for our agent: to the neighbour (Switch::send_to_neighbour) or addressed to
  // this switch (Network::inject).
  if (p->type == PktType::kCtrl && ((p->flags & Packet::kFlagSwitchMsg) || p->dst == id_)) {
    if (agent_) agent_->on_switch_message(*p, in_port);
    net_.pool().put(p);
    return;
  }
  p->in_port = static_cast<int16_t>(in_port);
  if (s_.acks_in_data_class && p->prio == 0 && (p->type == PktType::kAck || p->type == PktType::kNack))
    p->prio = p->flow_prio;
  forward(p);
}

void Switch::forward(Packet* p) {
  const int out = route(*p);
  if (out < 0) {
    ++net_.counters().unroutable;
    net_.pool().put(p);
    return;
  }
  if (p->prio == 0) {
    // Control traffic: strict priority, never paused, outside PFC accounting [sim].
    if (agent_) agent_->on_control(*p, out);
    ports_[out].q[0].push(p);
    kick(out);
    return;
  }
  p->out_port = static_cast<int16_t>(out);
  // An ACK/NACK in a data class (nic.ack_priority = "data", switch.acks_in_data_class) is still one.
  if (agent_ && (p->type == PktType::kAck || p->type == PktType::kNack)) agent_->on_control(*p, out);
  if (ioq_ && p->in_port >= 0) {
    ioq_arrive(p, out);
    return;
  }
  if (!admit(p, p->in_port)) {
    ++net_.counters().data_drops;
    credit_release(p->in_port, p->prio, p->size);  // credit mode: the space is free again
    net_.pool().put(p);
    return;
  }
  Port& port = ports_[out];
  port.q[p->prio].push(p);
  port.data_bytes += p->size;
  if (port.data_bytes > port.stats.max_queue_bytes) port.stats.max_queue_bytes = port.data_bytes;
  if (agent_) {
    if (p->in_port >= 0) agent_->on_input_enqueue(*p, p->in_port);
    agent_->on_enqueue(*p, out);
  }
  kick(out);
}

// Ingress admission and accounting (algorithms.md 1.1). Switch-generated data (in_port < 0) is
// only bounded by the total buffer.
bool Switch::admit(Packet* p, int in_port) {
  const Bytes size = p->size;
  if (total_bytes_ + size > s_.buffer_bytes) return false;
  p->acct_prio = p->prio;
  if (in_port < 0) {
    total_bytes_ += size;
    return true;
  }
  IngressCounters& c = ingress_[in_port * kNumPriorities + p->prio];
  if (s_.pfc_mode == PfcThresholdMode::kStatic || s_.credit_enabled) {  // credits bound c.bytes upstream
    if (s_.pfc_enabled && c.bytes + size > xoff_[in_port] + headroom_[in_port]) return false;
    c.bytes += size;
  } else {
    const Bytes thresh = pfc_threshold(in_port);
    if (size + c.hdrm_bytes > headroom_[in_port] && size + shared_of(c) > thresh) return false;
    const Bytes nb = c.bytes + size;
    if (nb <= reserve_) {
      c.bytes = nb;
    } else if (nb - reserve_ > thresh && s_.pfc_enabled) {
      c.hdrm_bytes += size;  // beyond the threshold: lands in headroom
    } else {
      shared_used_ += std::min(size, nb - reserve_);
      c.bytes = nb;
    }
  }
  total_bytes_ += size;
  if (total_bytes_ > net_.counters().max_switch_buffer_bytes) net_.counters().max_switch_buffer_bytes = total_bytes_;
  const Bytes held = c.bytes + c.hdrm_bytes;
  if (held > net_.counters().max_ingress_bytes) net_.counters().max_ingress_bytes = held;
  if (s_.pfc_enabled) maybe_pause(in_port, p->prio);
  return true;
}

void Switch::maybe_pause(int in_port, int prio) {
  IngressCounters& c = ingress_[in_port * kNumPriorities + prio];
  if (c.pause_sent) return;
  bool over;
  if (s_.pfc_mode == PfcThresholdMode::kStatic) over = c.bytes >= xoff_[in_port];
  else over = c.hdrm_bytes > 0 || shared_of(c) >= pfc_threshold(in_port);
  if (over) {
    c.pause_sent = true;
    send_pfc(in_port, prio, true);
  }
}

void Switch::maybe_resume(int in_port, int prio) {
  IngressCounters& c = ingress_[in_port * kNumPriorities + prio];
  if (!c.pause_sent || c.agent_hold) return;
  bool under;
  if (s_.pfc_mode == PfcThresholdMode::kStatic) {
    under = c.bytes <= xon_[in_port];
  } else {
    const Bytes sh = shared_of(c);
    under = c.hdrm_bytes == 0 && (sh == 0 || sh + s_.resume_offset_bytes <= pfc_threshold(in_port));
  }
  if (under) {
    c.pause_sent = false;
    send_pfc(in_port, prio, false);
  }
}

void Switch::hold_pause(int port, int prio, bool hold) {
  IngressCounters& c = ingress_[port * kNumPriorities + prio];
  if (hold == c.agent_hold) return;
  c.agent_hold = hold;
  if (hold) {
    if (!c.pause_sent) {
      c.pause_sent = true;
      send_pfc(port, prio, true);
    }
  } else if (s_.pfc_enabled) {
    maybe_resume(port, prio);
  } else if (c.pause_sent) {
    c.pause_sent = false;
    send_pfc(port, prio, false);
  }
}

// Undo the ingress accounting: headroom first, then shared, then reserve [sim].
void Switch::release(const Packet& p) {
  const Bytes size = p.size;
  total_bytes_ -= size;
  if (p.in_port < 0) return;
  IngressCounters& c = ingress_[p.in_port * kNumPriorities + p.acct_prio];
  credit_release(p.in_port, p.acct_prio, size);
  if (s_.pfc_mode == PfcThresholdMode::kStatic || s_.credit_enabled) {
    c.bytes -= size;
  } else {
    Bytes left = size;
    const Bytes from_hdrm = std::min(left, c.hdrm_bytes);
    c.hdrm_bytes -= from_hdrm;
    left -= from_hdrm;
    if (left > 0) {
      const Bytes from_shared = std::min(left, shared_of(c));
      shared_used_ -= from_shared;
      c.bytes -= left;
    }
  }
  if (s_.pfc_enabled) maybe_resume(p.in_port, p.acct_prio);
}

// RED marking on the egress queue seen at dequeue (algorithms.md 1.3).
void Switch::red_mark(Packet& p, const Port& port) {
  if (p.ecn == kNotEct || p.ecn == kCe) return;
  const EgressEcn& e = ecn_[port.index];
  const Bytes q = port.q[p.prio].bytes;
  bool mark = false;
  if (q > e.kmax) {
    mark = true;
  } else if (q > e.kmin) {
    const double prob = e.kmax > e.kmin ? e.pmax * static_cast<double>(q - e.kmin) / static_cast<double>(e.kmax - e.kmin)
                                        : 1.0;
    mark = mark_rng_.uniform() < prob;
  }
  if (mark) {
    p.ecn = kCe;
    ++ports_[port.index].stats.ecn_marked;
  }
}

void Switch::stamp_int(Packet& p, const Port& port) {
  if (!p.hops || p.n_hops >= kMaxIntHops) return;
  IntHop& h = p.hops[p.n_hops++];
  h.ts = net_.now();
  h.tx_bytes = port.tx_bytes + p.size;
  h.qlen_bytes = port.data_bytes;
  h.rate = port.rate;
  h.extra = 0;
}

Packet* Switch::dequeue(Port& port) {
  if (!port.pfc_q.empty()) return port.pfc_q.pop();
  if (!port.q[0].empty()) return port.q[0].pop();
  if (port.data_bytes == 0) return nullptr;
  for (int k = 0; k < kNumPriorities - 1; ++k) {
    const int prio = 1 + (port.rr_next - 1 + k) % (kNumPriorities - 1);
    if (port.paused[prio] || port.q[prio].empty()) continue;
    if (!credit_ok(port, prio, port.q[prio].head->size)) continue;
    port.rr_next = prio % (kNumPriorities - 1) + 1;
    Packet* p = port.q[prio].pop();
    credit_consume(port, prio, p->size);
    port.data_bytes -= p->size;
    if (ioq_) total_bytes_ -= p->size;  // its input queue was released when it crossed (ioq_move)
    else release(*p);
    if (p->type == PktType::kData) {
      if (!(agent_ && agent_->mark(*p, port.index)) && s_.ecn_enabled) red_mark(*p, port);
      if (s_.int_enabled) stamp_int(*p, port);
    }
    // While set, what is queued at this port now is sent after p (kick's backlog check), not nested.
    in_dequeue_[port.index] = 1;
    if (agent_) agent_->on_dequeue(*p, port.index);
    if (ioq_) ioq_pull(port.index);
    in_dequeue_[port.index] = 0;
    return p;
  }
  return nullptr;
}

bool Switch::has_backlog(const Port& port) const {
  if (!port.pfc_q.empty() || !port.q[0].empty()) return true;
  if (port.data_bytes == 0) return false;
  for (int prio = 1; prio < kNumPriorities; ++prio)
    if (!port.paused[prio] && !port.q[prio].empty()) return true;
  return false;
}

void Switch::on_pfc_change(int port_index, int prio, bool paused) {
  if (agent_) agent_->on_pfc(port_index, prio, paused);
}

// ---------------------------------------------------------------------------------------------------
// Input-and-output queued model (settings.h SwitchModel::kInputOutputQueued; seed 001 sec. 4.1).
// A data packet from a host or switch joins the FIFO input queue of its (ingress port, priority); PFC
// pauses the upstream when that queue reaches Xoff. The head of an input queue crosses to its output
// queue (chosen at arrival) as soon as that has room and no other input waits on it; otherwise the
// input joins the output's wait ring, which the output serves round robin whenever it dequeues. A head
// that waits blocks its whole input queue (head-of-line blocking across outputs).
// With virtual output queues (InputQueueing::kVoq) the same code runs on one queue per (input, priority,
// output), q = w * ports + output: the wait ring of an output then holds the input queues that have a
// packet for it, and a waiting head blocks only packets for the same output. Accounting and PFC stay on
// ingress_[w] (acct_of(q)).

Bytes Switch::input_bytes(int port) const {
  Bytes b = 0;
  for (int prio = 1; prio < kNumPriorities; ++prio) {
    const IngressCounters& c = ingress_[port * kNumPriorities + prio];
    b += c.bytes + c.hdrm_bytes;
  }
  return b;
}

void Switch::ioq_arrive(Packet* p, int out) {
  const int in = p->in_port;
  const int w = in * kNumPriorities + p->prio;
  p->acct_prio = p->prio;
  p->out_port = static_cast<int16_t>(out);
  IngressCounters& c = ingress_[w];
  if (c.bytes + p->size > s_.input_queue_bytes) {
    ++net_.counters().data_drops;
    net_.pool().put(p);
    return;
  }
  const int q = voq_ ? w * static_cast<int>(ports_.size()) + out : w;
  iq_[q].push(p);
  c.bytes += p->size;
  total_bytes_ += p->size;
  if (total_bytes_ > net_.counters().max_switch_buffer_bytes) net_.counters().max_switch_buffer_bytes = total_bytes_;
  if (c.bytes > net_.counters().max_ingress_bytes) net_.counters().max_ingress_bytes = c.bytes;
  if (s_.pfc_enabled && !c.pause_sent && c.bytes >= ioq_xoff_[in]) {
    c.pause_sent = true;
    send_pfc(in, p->prio, true);
  }
  if (agent_) agent_->on_input_enqueue(*p, in);
  ioq_advance(q);
}

// Moves the heads of input queue w while they can cross; else registers w with the output it waits on.
void Switch::ioq_advance(int w) {
  if (waiting_on_[w] >= 0) return;
  while (Packet* h = iq_[w].head) {
    const int out = h->out_port;
    const bool room = ports_[out].data_bytes + h->size <= s_.output_queue_bytes;
    if (room && waiters_[out].n == 0 && !(agent_ && agent_->hold(*h, out))) {
      ioq_move(w, out);
      continue;
    }
    waiting_on_[w] = static_cast<int16_t>(out);
    waiters_[out].push(static_cast<uint32_t>(w));
    if (room) ioq_pull(out);  // others wait (held): let the crossbar choose
    return;
  }
}

// Serves the inputs waiting on `out` round robin while its output queue has room.
void Switch::ioq_pull(int out) {
  if (pulling_[out]) return;
  pulling_[out] = 1;
  WaitRing& r = waiters_[out];
  size_t held = 0;
  bool retried = false;
  while (r.n > 0) {
    if (held >= r.n) {
      if (retried || !agent_ || !agent_->on_crossbar_idle(out)) break;
      retried = true;
      held = 0;
    }
    const int w = r.front();
    const Packet* h = iq_[w].head;
    if (ports_[out].data_bytes + h->size > s_.output_queue_bytes) break;
    r.pop();
    if (agent_ && agent_->hold(*h, out)) {
      r.push(static_cast<uint32_t>(w));
      ++held;
      continue;
    }
    held = 0;
    waiting_on_[w] = -1;
    ioq_move(w, out);
    ioq_advance(w);  // its next head joins the back of a ring (round robin) or crosses elsewhere
  }
  pulling_[out] = 0;
}

void Switch::ioq_move(int q, int out) {
  Packet* p = iq_[q].pop();
  const int w = acct_of(q);
  const int in = w / kNumPriorities;
  IngressCounters& c = ingress_[w];
  c.bytes -= p->size;
  credit_release(in, p->acct_prio, p->size);
  if (s_.pfc_enabled && c.pause_sent && c.bytes <= ioq_xon_[in]) {
    c.pause_sent = false;
    send_pfc(in, p->acct_prio, false);
  }
  Port& port = ports_[out];
  port.q[p->prio].push(p);
  port.data_bytes += p->size;
  if (port.data_bytes > port.stats.max_queue_bytes) port.stats.max_queue_bytes = port.data_bytes;
  if (agent_) agent_->on_enqueue(*p, out);
  if (!in_dequeue_[out]) kick(out);
}

void Switch::crossbar_kick(int out) {
  if (!ioq_) return;
  ioq_pull(out);
}

bool Switch::send_to_neighbour(int port, Packet* p) {
  Port& pt = ports_[port];
  if (!pt.peer->is_switch()) {
    net_.pool().put(p);
    return false;
  }
  p->type = PktType::kCtrl;
  p->flags |= Packet::kFlagSwitchMsg;
  p->prio = 0;
  p->src = id_;
  p->dst = pt.peer->id();
  p->in_port = -1;
  ++net_.counters().switch_messages;
  pt.q[0].push(p);
  if (!in_dequeue_[port]) kick(port);
  return true;
}

}  // namespace rocesim
