#include "net/switch_egress.h"

#include <bit>
#include <limits>

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

void EgressScheduler::configure() {
  const std::vector<Port>& ports = sw_.ports_;
  ecn_.assign(ports.size(), {});
  marks_empty_ = false;
  // A NIC that GPUs share (NodeKind::kNic, docs/models.md A14) marks nothing: its queues are the NIC's own
  // transmit arbitration among its GPUs' queue pairs, which back-pressure (PFC, standing for PCIe credits)
  // shares out, not a fabric queue that congestion control should see. Nor is it a hop of HPCC's INT, which
  // the switches of the path push: it stamps no record, so a path through shared NICs carries as many as
  // the same path with a NIC per GPU.
  const bool shared_nic = sw_.net_.topo().kind_of(sw_.id_) == NodeKind::kNic;
  stamps_int_ = s_.int_enabled && !shared_nic;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (shared_nic) {
      set_ecn(static_cast<int>(i),
              EgressEcn{std::numeric_limits<Bytes>::max(), std::numeric_limits<Bytes>::max(), 0.0});
      continue;
    }
    const double scale = s_.ecn_scale_with_rate ? ports[i].rate / s_.ecn_ref_rate : 1.0;
    set_ecn(static_cast<int>(i),
            EgressEcn{static_cast<Bytes>(static_cast<double>(s_.kmin_bytes) * scale),
                      static_cast<Bytes>(static_cast<double>(s_.kmax_bytes) * scale), s_.pmax});
  }
  mark_rng_ = Rng::stream(sw_.net_.seed(), "ecn", static_cast<uint64_t>(sw_.id_));
}

Packet* EgressScheduler::next_data(Port& port) {
  const bool credits = s_.credit_enabled;  // else credit_ok and credit_consume do nothing
  // The non-empty data queues from rr_next up to 7, then from 1: the round robin's order, without
  // touching the queues (four cache lines) that hold nothing.
  const unsigned mask = port.queued & 0xfeu;
  const unsigned from = mask & (0xffu << port.rr_next);
  for (unsigned left = from | (mask & ~(0xffu << port.rr_next)) << 8; left; left &= left - 1) {
    const int prio = std::countr_zero(left) & 7;
    if (port.paused[prio]) continue;
    if (credits && !sw_.credit_ok(port, prio, port.q[prio].head->size)) continue;
    port.rr_next = static_cast<uint8_t>(prio == kNumPriorities - 1 ? 1 : prio + 1);
    Packet* p = port.pop(prio);
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
