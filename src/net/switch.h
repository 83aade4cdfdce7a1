// An output-queued switch with a shared buffer (Broadcom-style MMU, as the ns-3 HPCC simulator models it):
// every data packet is accounted to its ingress (port, priority) for PFC and to its egress queue for
// ECN and INT. PFC thresholds are static (Xoff/Xon) or dynamic (alpha x free shared buffer) with
// per-port headroom; see shared/docs/algorithms.md section 1.1-1.4.
#pragma once
#include <memory>
#include <vector>

#include "core/rng.h"
#include "net/cc_api.h"
#include "net/node.h"
#include "net/settings.h"

namespace rocesim {

struct IngressCounters {
  Bytes bytes = 0;        // reserve + shared bytes held by this (port, priority)
  Bytes hdrm_bytes = 0;   // bytes that landed in headroom
  bool pause_sent = false;
  bool agent_hold = false; // a switch agent holds this (port, priority) paused (Switch::hold_pause)
};

struct EgressEcn {
  Bytes kmin = 0, kmax = 0;
  double pmax = 0;
};

class Switch : public Node {
 public:
  Switch(Network& net, int id);
  bool is_switch() const override { return true; }
  void receive(Packet* p, int in_port) override;

  // Called by Network after ports are wired.
  void configure(const SwitchSettings& s, Rate host_rate);
  void set_agent(std::unique_ptr<SwitchAgent> a) { agent_ = std::move(a); }
  SwitchAgent* agent() { return agent_.get(); }

  // Enqueues a packet at an egress port, as forwarding would (used for switch-generated packets).
  void forward(Packet* p);

  // Read access for schemes, monitors and tests.
  const IngressCounters& ingress(int port, int prio) const { return ingress_[port * kNumPriorities + prio]; }
  Bytes egress_bytes(int port, int prio) const { return ports_[port].q[prio].bytes; }
  Bytes egress_data_bytes(int port) const { return ports_[port].data_bytes; }
  Bytes buffer_used() const { return total_bytes_; }
  Bytes shared_used() const { return shared_used_; }
  Bytes headroom(int port) const { return headroom_[port]; }
  Bytes pfc_threshold(int port) const;
  const EgressEcn& ecn(int port) const { return ecn_[port]; }
  void set_ecn(int port, const EgressEcn& e) { ecn_[port] = e; }
  // Per-port static PFC thresholds (long-haul ports get SwitchSettings::long_haul_*; agents may override).
  Bytes xoff(int port) const { return xoff_[port]; }
  Bytes xon(int port) const { return xon_[port]; }
  void set_port_thresholds(int port, Bytes xoff, Bytes xon) { xoff_[port] = xoff; xon_[port] = xon; }
  // An agent holds (hold = true) ingress `port`'s priority `prio` paused towards the upstream neighbour:
  // a PAUSE goes out now unless one is out already, and the switch's own RESUME waits until the agent
  // releases the hold (hold = false) and the buffer rule allows it (PFC relay of long-haul links).
  void hold_pause(int port, int prio, bool hold);

 protected:
  Packet* dequeue(Port& port) override;
  bool has_backlog(const Port& port) const override;
  void on_pfc_change(int port_index, int prio, bool paused) override;

 private:
  int route(const Packet& p) const;
  bool admit(Packet* p, int in_port);
  void release(const Packet& p);
  void maybe_pause(int in_port, int prio);
  void maybe_resume(int in_port, int prio);
  void red_mark(Packet& p, const Port& port);
  void stamp_int(Packet& p, const Port& port);
  Bytes shared_of(const IngressCounters& c) const { return c.bytes > reserve_ ? c.bytes - reserve_ : 0; }

  SwitchSettings s_;
  Bytes reserve_ = 0;
  std::vector<IngressCounters> ingress_;   // [port * 8 + prio]
  std::vector<Bytes> headroom_;            // per port
  std::vector<int> dt_shift_;              // per port
  std::vector<EgressEcn> ecn_;             // per port
  std::vector<Bytes> xoff_, xon_;          // per port (static mode)
  Bytes hdrm_total_ = 0;
  Bytes reserve_total_ = 0;
  Bytes shared_used_ = 0;
  Bytes total_bytes_ = 0;
  Rng mark_rng_;
  std::unique_ptr<SwitchAgent> agent_;
};

}  // namespace rocesim
