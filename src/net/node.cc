#include "net/node.h"

#include "net/network.h"

namespace rocesim {

Node::Node(Network& net, int id) : net_(net), id_(id), credits_(net.switch_settings().credit_enabled) {}

void Node::schedule_wake(Port& port, Time t) {
  if (t < port.next_wake) {
    port.next_wake = t;
    net_.sim().at(t, handler_, tx_attempt_kind(), reinterpret_cast<uint64_t>(&port));
  }
}

void Node::kick(int port_index) {
  Port& port = ports_[port_index];
  const Time now = net_.now();
  if (now < port.busy_until) {
    schedule_wake(port, port.busy_until);
    return;
  }
  if (Packet* p = dequeue(port)) transmit(port, p, now);
}

void Node::start_tx(Port& port, Packet* p, Time now) {
  port.busy_until =
      now + (port.ps_per_byte ? Time{int64_t{p->size} * port.ps_per_byte} : tx_time(p->size, port.rate));
  p->t_sent = now;
  p->t_arrive = port.busy_until + port.delay;
  port.tx_bytes += p->size;
  ++port.tx_packets;
  if (port.down) [[unlikely]] {  // a failed link: what is sent is lost (PFC frames too, uncounted)
    if (p->traced()) net_.trace(*p, id_, port.index, TraceEvent::kDrop, TraceDetail::kLinkDown);
    lose_to_failure(p);
    return;
  }
  if (p->type == PktType::kPfc && !(p->flags & Packet::kFlagCredit)) {
    ++port.pfc_tx[p->pfc_class];
    port.pfc_tx_last_pause[p->pfc_class] = p->pfc_pause;
  }
  // A lossy wire: the loss is drawn as the packet leaves (the same draws whatever the partitions).
  if (port.error_rate > 0 && p->type != PktType::kPfc &&
      (loss_filter_ && loss_filter_port_ == port.index ? loss_filter_(*p, loss_filter_ctx_)
                                                       : port.loss_rng.uniform() < port.error_rate)) {
    ++net_.counters().wire_drops;
    if (p->traced()) [[unlikely]]
      net_.trace(*p, id_, port.index, TraceEvent::kDrop, TraceDetail::kWire);
    net_.pool().put(p);
    return;
  }
  // Its arrival is an event of the peer (in whichever partition): the sending port is not touched again.
  net_.sim().at_keyed(p->t_arrive, handler_, Simulator::kDeliverySeq + static_cast<uint64_t>(port.index),
                      port.peer_handler, port.peer_arrive_kind, reinterpret_cast<uint64_t>(p));
}

bool Node::lost_to_failure(const Port& port, Packet* p) {
  if (!port.down && p->t_sent >= port.cut_at) return false;
  if (p->traced()) net_.trace(*p, id_, port.index, TraceEvent::kDrop, TraceDetail::kLinkDown);
  lose_to_failure(p);
  return true;
}

void Node::lose_to_failure(Packet* p) {
  ++net_.counters().link_down_drops;
  net_.pool().put(p);
}

void Node::send_pfc(int port_index, int prio, bool pause) {
  Packet* f = net_.pool().get();
  f->type = PktType::kPfc;
  f->prio = 0;
  f->size = static_cast<uint32_t>(net_.nic_settings().pfc_bytes);
  f->src = id_;
  f->dst = ports_[port_index].peer->id();
  f->pfc_class = static_cast<uint8_t>(prio);
  f->pfc_pause = pause;
  Port& port = ports_[port_index];
  if (pause)
    ++port.stats.pause_sent;
  else
    ++port.stats.resume_sent;
  port.push_pfc(f);
  kick(port_index);
}

void Node::handle_pfc(Packet* p, int in_port) {
  if (p->flags & Packet::kFlagCredit) {
    handle_credit(p, in_port);
    return;
  }
  Port& port = ports_[in_port];
  const int prio = p->pfc_class;
  const bool pause = p->pfc_pause;
  ++port.pfc_rx[prio];
  net_.pool().put(p);
  const Time now = net_.now();
  if (net_.observers().on_pfc_rx) net_.notify_pfc(*this, in_port, prio, pause);
  if (pause) {
    ++port.stats.pause_received;
    if (!port.paused[prio]) {
      port.paused[prio] = true;
      port.paused_since[prio] = now;
      on_pfc_change(in_port, prio, true);
    }
  } else if (port.paused[prio]) {
    port.end_pause(prio, now);
    on_pfc_change(in_port, prio, false);
    kick(in_port);
  }
}

void Node::on_event(uint32_t kind, uint64_t arg) {
  if (kind & Simulator::kArgIsAddress) {
    if ((kind & 0xff) == kTxAttempt) {  // the port in arg
      Port& port = *reinterpret_cast<Port*>(arg);
      if (net_.now() >= port.next_wake) port.next_wake = Time::max();
      kick(port.index);
      return;
    }
    // An arrival: the port in the kind, the packet in arg.
    const int port = static_cast<int>((kind & ~Simulator::kArgIsAddress) >> 8);
    Packet* p = reinterpret_cast<Packet*>(arg);
    if (any_cut_ && ports_[port].cut && lost_to_failure(ports_[port], p)) [[unlikely]]
      return;
    ++net_.counters().packet_hops;
    receive(p, port);
    return;
  }
  switch (kind) {
    case kCreditTick:
      credit_tick();
      break;
    default:
      on_node_event(kind, arg);
  }
}

}  // namespace rocesim
