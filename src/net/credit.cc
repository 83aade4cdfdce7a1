// Credit-based flow control: the Node methods declared in net/node.h (see net/credit.h).
#include "net/credit.h"

#include <algorithm>

#include "net/network.h"

namespace rocesim {

Bytes Node::credit_max_packet() const {
  const NicSettings& nic = net_.nic_settings();
  Bytes b = nic.mtu_bytes + nic.header_bytes;
  if (net_.cc_needs().int_stamping) b += nic.int_base_bytes + kMaxIntHops * nic.int_hop_bytes;
  return std::max(b, nic.ack_bytes + nic.int_base_bytes + kMaxIntHops * nic.int_hop_bytes);
}

bool Node::credit_check(Port& port, int prio, Bytes size) {
  const SwitchSettings& s = net_.switch_settings();
  const PortCredit& c = credit_[port.index];
  if (c.sent[prio] + size <= s.credit_buffer_bytes + c.peer_freed[prio]) return true;
  if (!port.paused[prio]) {
    port.paused[prio] = true;
    port.paused_since[prio] = net_.now();
    ++port.stats.pause_received;
    on_pfc_change(port.index, prio, true);
    // Logged like a received PAUSE (pfc.csv "pause" = credit-starved under credits).
    if (net_.observers().on_pfc_rx) net_.notify_pfc(*this, port.index, prio, true);
  }
  return false;
}

void Node::credit_free(int in_port, int prio, Bytes size) {
  const SwitchSettings& s = net_.switch_settings();
  credit_[in_port].freed[prio] += size;
  if (credit_tick_pending_) return;
  credit_tick_pending_ = true;
  // The next tick of a free-running T_c clock.
  const int64_t tc = s.credit_period.ps;
  net_.sim().at(Time::from_ps((net_.now().ps / tc + 1) * tc), handler_, kCreditTick, 0);
}

void Node::credit_tick() {
  credit_tick_pending_ = false;
  for (Port& port : ports_) {
    PortCredit& c = credit_[port.index];
    for (int prio = 1; prio < kNumPriorities; ++prio) {
      if (c.freed[prio] == c.advertised[prio]) continue;
      c.advertised[prio] = c.freed[prio];
      Packet* f = net_.pool().get();
      f->type = PktType::kPfc;
      f->flags = Packet::kFlagCredit;
      f->prio = 0;
      f->size = static_cast<uint32_t>(net_.nic_settings().pfc_bytes);
      f->src = id_;
      f->dst = port.peer->id();
      f->pfc_class = static_cast<uint8_t>(prio);
      f->seq = c.freed[prio];
      ++port.stats.resume_sent;
      port.push_pfc(f);
      kick(port.index);
    }
  }
}

void Node::handle_credit(Packet* p, int in_port) {
  Port& port = ports_[in_port];
  const int prio = p->pfc_class;
  PortCredit& c = credit_[in_port];
  c.peer_freed[prio] = std::max(c.peer_freed[prio], static_cast<Bytes>(p->seq));
  net_.pool().put(p);
  if (!port.paused[prio]) return;
  const Bytes need = port.q[prio].head ? port.q[prio].head->size : credit_max_packet();
  const Bytes limit = net_.switch_settings().credit_buffer_bytes + c.peer_freed[prio];
  if (c.sent[prio] + need > limit) return;
  port.end_pause(prio, net_.now());
  on_pfc_change(in_port, prio, false);
  // Logged like a received RESUME (pfc.csv "resume" = credit refill, with the starved time).
  if (net_.observers().on_pfc_rx) net_.notify_pfc(*this, in_port, prio, false);
  kick(in_port);
}

}  // namespace rocesim
