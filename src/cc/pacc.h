// PACC (Zhong et al., INFOCOM'22) as digested in docs/algorithms.md section 2.8: the switch is
// both congestion and notification point. Every T_upd each egress (port, priority) runs a PI controller
// on its queue, p = clamp(p + a (q - Q_ref) + b (q - q_old), 0, 1), and hands out CNPs in proportion to
// each flow's packets in the period: credit += p x pkts, a CNP to the flow's source when credit >= 1
// (at most one per flow per period; the fractional credit carries over). The reaction point is DCQCN's,
// unchanged; receivers send no CNPs and switches do no RED marking.
// Only T_upd = 80 us is confirmed (Mercury paper); Q_ref, the gains, the cap on p and the RP's target clamp
// are our interpretation and calibration (see PaccSettings).
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cc/dcqcn.h"
#include "core/simulator.h"
#include "net/node.h"

namespace rocesim {

struct PaccSettings {
  // Reaction point: DCQCN (algorithms.md 2.2), Mellanox timers, but with the paper's Rt = Rc at every cut
  // [interp]: with at most one switch CNP per flow per 80 us the increase timer (300 us) never fires
  // during congestion, so the Mellanox rule would keep Rt at line rate and fast recovery would jump
  // halfway back to it as soon as the CNPs stop (the 8-to-1 incast then swings between an empty queue and
  // the PFC limit instead of settling).
  DcqcnSettings rp = pacc_rp(Rate::from_gbps(100));
  Time period = Time::from_us(80);  // T_upd [Mercury paper: "80 us by default"]
  Bytes q_ref_bytes = 0;            // Q_ref; 0 = the port's ECN Kmin [interp]
  // PI gains per byte of queue, as multiples of 1/BDP (BDP = port rate x the network's longest base RTT):
  // a = a_per_bdp / BDP per period, b = b_per_bdp / BDP [interp: algorithms.md 2.8's starting point,
  // kept after calibration: with anti_windup the 8-, 4- and 16-to-1 incasts settle at 0.95-1.0 Q_ref].
  double a_per_bdp = 0.25;
  double b_per_bdp = 1.0;
  // p is capped at 1 / (packets of the period's heaviest flow) and does not rise in a period without
  // arrivals [interp]: beyond the cap that flow already gets a CNP every period and CNPs stop being
  // proportional to packets. At 100 Gb/s each of N flows sends ~950 / N packets per period, so p only
  // matters below ~N / 950; without the cap the integral winds up towards 1 while the queue sits at the
  // PFC limit and then keeps sending CNPs long after it has drained.
  bool anti_windup = true;
  int idle_periods = 2;  // flow-table entries idle this many periods are dropped

  static DcqcnSettings pacc_rp(Rate nic_rate) {
    DcqcnSettings d = DcqcnSettings::mellanox(nic_rate);
    d.clamp_target = true;
    return d;
  }
};

class Pacc : public Dcqcn {
 public:
  explicit Pacc(const PaccSettings& s) : Dcqcn(s.rp), ps_(s) {}
  std::string name() const override { return "pacc"; }
  CcNeeds needs() const override;
  const PaccSettings& pacc_settings() const { return ps_; }

  // No receiver CNPs: the switches notify.
  RxDecision on_data_received(Qp& qp, const Packet& data) override {
    (void)qp;
    (void)data;
    return {};
  }
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;

 private:
  PaccSettings ps_;
};

// The per-switch PI controller and flow table (public for tests and monitors).
class PaccAgent : public SwitchAgent, public EventHandler {
 public:
  PaccAgent(CcServices& net, Switch& sw, const PaccSettings& s);
  void on_enqueue(Packet& p, int port) override;
  void on_event(uint32_t kind, uint64_t arg) override;

  uint64_t cnps_sent() const { return cnps_sent_; }
  double p(int port, int prio) const { return q_[idx(port, prio)].p; }
  Bytes q_ref(int port) const { return q_ref_[port]; }
  double gain_a(int port) const { return a_[port]; }
  double gain_b(int port) const { return b_[port]; }

 private:
  struct FlowEntry {
    uint32_t pkts = 0;
    int idle = 0;
    double credit = 0;
  };
  struct QueueState {
    double p = 0;
    Bytes q_old = 0;
    bool listed = false;                            // in active_
    std::unordered_map<uint64_t, FlowEntry> flows;  // key: (QP slot << 32) | QP tag
    uint64_t last_key = 0;                          // the entry of the last packet (bursts of one flow)
    FlowEntry* last = nullptr;
  };
  static size_t idx(int port, int prio) { return static_cast<size_t>(port) * kNumPriorities + prio; }
  void update(size_t i);

  CcServices& net_;
  Switch& sw_;
  PaccSettings s_;
  uint32_t handler_ = 0;
  bool timer_armed_ = false;
  std::vector<QueueState> q_;   // [port * kNumPriorities + prio]
  std::vector<size_t> active_;  // queues with state worth updating
  std::vector<Bytes> q_ref_;    // per port
  std::vector<double> a_, b_;   // per port
  uint64_t cnps_sent_ = 0;
};

struct SchemeEntry;
// pacc in the scheme registry (cc/registry.h): the reader of [cc.pacc] and its switch defaults (pacc.cc).
SchemeEntry pacc_scheme();

}  // namespace rocesim
