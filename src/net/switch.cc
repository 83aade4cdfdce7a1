#include "net/switch.h"

#include "net/network.h"

namespace rocesim {

Switch::Switch(Network& net, int id) : Node(net, id) {}

void Switch::configure(const SwitchSettings& s, Rate host_rate) {
  s_ = s;
  crossbar_.configure();
  mmu_.configure(host_rate, crossbar_.on());
  egress_.configure();
  // A NIC that GPUs share (NodeKind::kNic, docs/models.md A14) picks among its ports (its planes) as a GPU's
  // own NIC would, by NicSettings::port_spread and not by the fabric's routing: a flow's 5-tuple hash, or
  // per packet the port that can send it soonest (the least-loaded: fewest bytes queued, then an idle
  // wire, one not paused first), as a host's ports each take a sprayed flow's next packet when free.
  SwitchSettings paths = s_;
  if (net_.topo().kind_of(id_) == NodeKind::kNic) {
    const bool spray = net_.nic_settings().port_spread == NicSettings::PortSpread::kSpray;
    paths.routing = spray ? Routing::kAdaptive : Routing::kEcmp;
    paths.adaptive_per_flowlet = false;
    paths.adaptive_avoid_paused = true;
  }
  paths_.configure(paths, net_.seed(), id_);
  in_dequeue_.assign(ports_.size(), 0);
}

int Switch::route(Packet& p) {
  // Its sender gave it this hop's port (Packet::route): what the look-up below would give.
  if (const unsigned cached = p.route & 0xFF; cached != 0xFF) {
    p.route = p.route >> 8 | uint64_t{0xFF} << 56;
    return static_cast<int>(cached);
  }
  auto [ports, n] = net_.routes(id_, p.dst);
  if (n == 0) return -1;
  if (n == 1) return ports[0];
  const int chosen = paths_.choose(ports_, p, ports, n, net_.flow_hash(p, id_), net_.now());
  if (!input_agent_) return chosen;
  // The scheme has the last word, among the ports routing allows now (a port it remembers may have
  // failed since: then routing's choice stands).
  const int port = input_agent_->select_port(p, ports, n, chosen);
  return port == chosen || PathSelector::contains(ports, n, port) ? port : chosen;
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
  // The ingress counters do not depend on the route: their misses overlap its look-up.
  if (p->prio != 0) mmu_.prefetch(in_port, p->prio);
  if (s_.acks_in_data_class && p->prio == 0 && (p->type == PktType::kAck || p->type == PktType::kNack))
    p->prio = p->flow_prio;
  forward(p);
}

// Routes the packet; control traffic goes straight to its egress, data through the crossbar (input-and-output
// queued model) or the shared buffer's admission to the egress queue of its priority.
void Switch::forward(Packet* p) {
  const int out = route(*p);
  if (out < 0) {
    ++net_.counters().unroutable;
    if (p->traced()) [[unlikely]]
      net_.trace(*p, id_, -1, TraceEvent::kDrop, TraceDetail::kUnroutable);
    net_.pool().put(p);
    return;
  }
  Port& port = ports_[out];
  // The out port's lines that queueing and kick() read: fetched while admission runs.
  __builtin_prefetch(&port);
  __builtin_prefetch(reinterpret_cast<const char*>(&port) + 64);
  __builtin_prefetch(&port.q[p->prio]);
  if (p->prio == 0) {
    // Control traffic: strict priority, never paused, outside PFC accounting [sim].
    if (agent_) agent_->on_control(*p, out);
    if (!(port.queued & 1u) && !port.pfc_queued && net_.now() >= port.busy_until) {
      // kick() would take it straight back off the queue (control goes first): sent without the queue.
      transmit(port, p, net_.now());
      return;
    }
    port.push(0, p);
    kick(out);
    return;
  }
  // An ACK/NACK in a data class (nic.ack_priority = "data", switch.acks_in_data_class) is still one.
  if (agent_ && (p->type == PktType::kAck || p->type == PktType::kNack)) agent_->on_control(*p, out);
  if (crossbar_.on() && p->in_port >= 0) {
    crossbar_.arrive(p, out);
    return;
  }
  if (!mmu_.admit(p, p->in_port)) {
    // An ACK/NACK/CNP in a data class is admitted, and dropped, as data is; counted as what it is.
    ++(p->type == PktType::kData ? net_.counters().data_drops : net_.counters().ctrl_drops);
    if (p->traced()) [[unlikely]]
      net_.trace(*p, id_, out, TraceEvent::kDrop, TraceDetail::kBuffer);
    credit_release(p->in_port, p->prio, p->size);  // credit mode: the space is free again
    net_.pool().put(p);
    return;
  }
  if (!agent_ && !crossbar_.on() && !s_.credit_enabled && port.queued == 0 && !port.pfc_queued &&
      !port.paused[p->prio] && net_.now() >= port.busy_until) {
    send_at_once(p, port);
    return;
  }
  enqueue_output(p, out);
  if (input_agent_ && p->in_port >= 0) {
    p->out_port = static_cast<int16_t>(out);  // set only here: it is in the packet's second cache line
    input_agent_->on_input_enqueue(*p, p->in_port);
  }
  if (agent_) agent_->on_enqueue(*p, out);
  kick(out);
}

// Without agents, input queues or credits, a data packet that finds its egress idle, nothing queued there
// and its priority not paused would be queued, dequeued by kick() and sent at once: this does what those
// three do, in their order, but the queue's push and pop (a cache line a large fabric misses), and RED
// sees the empty queue it would see.
void Switch::send_at_once(Packet* p, Port& port) {
  if (Bytes{p->size} > port.max_queue_bytes) port.max_queue_bytes = p->size;
  port.rr_next = static_cast<uint8_t>(p->prio == kNumPriorities - 1 ? 1 : p->prio + 1);
  mmu_.release(*p);
  if (p->type == PktType::kData) {
    const uint8_t ecn = p->ecn;
    egress_.on_departure_unqueued(*p, port);
    if (p->flags & Packet::kFlagTraced) [[unlikely]] {  // queued and dequeued at once
      trace_enqueue(*p, port);
      trace_dequeue(*p, port, ecn);
    }
  }
  transmit(port, p, net_.now());
}

Packet* Switch::dequeue(Port& port) {
  if (Packet* c = EgressScheduler::next_control(port)) return c;
  if (port.data_bytes == 0) return nullptr;
  egress_.prefetch_ecn(port.index);  // its miss overlaps the queue head's
  Packet* p = egress_.next_data(port);
  if (!p) return nullptr;
  if (crossbar_.on())
    mmu_.output_dequeued(p->size);
  else
    mmu_.release(*p);
  if (p->type == PktType::kData) {
    const uint8_t ecn = p->ecn;
    egress_.on_departure(*p, port, agent_.get());
    if (p->flags & Packet::kFlagTraced) [[unlikely]]
      trace_dequeue(*p, port, ecn);
  }
  // While set, what is queued at this port now is sent after p (kick's backlog check), not nested.
  in_dequeue_[port.index] = 1;
  if (agent_) agent_->on_dequeue(*p, port.index);
  if (crossbar_.on()) crossbar_.pull(port.index);
  in_dequeue_[port.index] = 0;
  return p;
}

// [monitors] packet_trace: a traced packet joins the egress queue of its priority (not yet pushed), and
// notes that priority's paused time for its dequeue.
void Switch::trace_enqueue(Packet& p, const Port& port) {
  const Time now = net_.now();
  p.trace_paused_ps = port.paused_time_of(p.prio, now).ps;
  net_.trace(p, id_, port.index, TraceEvent::kEnqueue, TraceDetail::kNone, port.q[p.prio].bytes);
}

// It left (`ecn`: its codepoint before the departure's marking): how long its priority was paused meanwhile,
// and a mark row when the departure marked it.
void Switch::trace_dequeue(Packet& p, const Port& port, uint8_t ecn) {
  const Time paused = port.paused_time_of(p.prio, net_.now()) - Time{p.trace_paused_ps};
  net_.trace(p, id_, port.index, TraceEvent::kDequeue, TraceDetail::kNone, port.q[p.prio].bytes, paused);
  if (p.ecn == kCe && ecn != kCe) net_.trace(p, id_, port.index, TraceEvent::kMark);
}

void Switch::on_pfc_change(int port_index, int prio, bool paused) {
  paused_egresses_ += paused ? 1 : -1;
  if (agent_) agent_->on_pfc(port_index, prio, paused);
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
  pt.push(0, p);
  if (!in_dequeue_[port]) kick(port);
  return true;
}

}  // namespace rocesim
