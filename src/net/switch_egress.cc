#include "net/switch_egress.h"

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

void EgressScheduler::configure() {
  const std::vector<Port>& ports = sw_.ports_;
  ecn_.assign(ports.size(), {});
  for (size_t i = 0; i < ports.size(); ++i) {
    const double scale = s_.ecn_scale_with_rate ? ports[i].rate / s_.ecn_ref_rate : 1.0;
    ecn_[i] = EgressEcn{static_cast<Bytes>(static_cast<double>(s_.kmin_bytes) * scale),
                        static_cast<Bytes>(static_cast<double>(s_.kmax_bytes) * scale), s_.pmax};
  }
  mark_rng_ = Rng::stream(sw_.net_.seed(), "ecn", static_cast<uint64_t>(sw_.id_));
}

Packet* EgressScheduler::next_data(Port& port) {
  const bool credits = s_.credit_enabled;  // else credit_ok and credit_consume do nothing
  int prio = port.rr_next;                 // 1..7
  for (int k = 0; k < kNumPriorities - 1; ++k, prio = prio == kNumPriorities - 1 ? 1 : prio + 1) {
    if (port.paused[prio] || port.q[prio].empty()) continue;
    if (credits && !sw_.credit_ok(port, prio, port.q[prio].head->size)) continue;
    port.rr_next = prio == kNumPriorities - 1 ? 1 : prio + 1;
    Packet* p = port.q[prio].pop();
    if (credits) sw_.credit_consume(port, prio, p->size);
    port.data_bytes -= p->size;
    return p;
  }
  return nullptr;
}

// One INT hop record (algorithms.md 1.4): when the packet leaves, the port's bytes sent including it, its
// egress queue and its rate.
void EgressScheduler::stamp_int(Packet& p, const Port& port) {
  if (!p.hops || p.n_hops >= kMaxIntHops) return;
  IntHop& h = p.hops[p.n_hops++];
  h.ts = sw_.net_.now();
  h.tx_bytes = port.tx_bytes + p.size;
  h.qlen_bytes = port.data_bytes;
  h.rate = port.rate;
  h.extra = 0;
}

}  // namespace rocesim
