// SWING (TPDS'22, "PFC relay" for long-haul lossless RDMA), as docs/algorithms.md 2.10 reads it
// (the paper text was not available: [interp]). A relay sits at each end of the long-haul link, modelled
// here as an agent on the two DC egress switches; hosts and in-DC switches are unchanged (hosts send at
// line rate: the seed's SWING baseline runs without end-to-end congestion control).
//  - Downstream relay R_d (the receiving egress switch): its long-haul ingress buffer uses
//    X_off = B_d - C x RTT - 2 MTU and an early X_on = C x RTT (resume one long RTT early, so the long
//    link does not idle while data waits); and a PAUSE from its own DC (on any in-DC egress) is relayed at
//    once across the long-haul link; the matching RESUME is relayed when no in-DC egress is paused any more
//    (and the buffer is under X_on).
//  - Upstream relay R_u (the sending egress switch): a PAUSE from R_d on the long-haul egress is relayed at
//    once to every in-DC ingress of that switch (the only traffic it forwards onto the long link), and
//    released with the RESUME; its own ingress runs ordinary PFC.
// The switch keeps its own PFC rules underneath (Switch::hold_pause adds the relay's pauses).
#pragma once
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "net/cc_api.h"

namespace rocesim {

class Switch;

struct SwingSettings {
  double buffer_bdp = 2.2;        // relay buffer B_d in long-haul BDPs [algorithms.md 2.10 (d): >= 2 BDP]
  double xon_bdp = 1.0;           // X_on = C x RTT [algorithms.md 2.10 (c)]
  bool relay_in_dc_pause = true;  // relay PAUSE/RESUME between the DC and the long-haul link
};

class Swing : public CongestionControl {
 public:
  explicit Swing(const SwingSettings& s) : s_(s) {}
  std::string name() const override { return "swing"; }
  CcNeeds needs() const override {
    CcNeeds n;
    n.ecn_marking = false;
    return n;
  }
  void on_flow_start(Qp& qp) override { qp.rate = qp.line_rate; }
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;
  PfcThresholds long_haul_thresholds(Rate rate, Time delay, Bytes packet_bytes,
                                     PfcThresholds) const override {
    return relay_thresholds(s_, rate, delay, packet_bytes);
  }
  std::string long_haul_thresholds_keys() const override { return "[cc.swing] buffer_bdp and xon_bdp"; }
  // R_d's thresholds on a long-haul ingress of `rate` and one-way `delay` [algorithms.md 2.10 (c)]:
  // X_on = xon_bdp x C x RTT (early resume), X_off = B_d - C x RTT - 2 MTU (the BDP headroom above it is the
  // switch's long-haul headroom).
  static PfcThresholds relay_thresholds(const SwingSettings& s, Rate rate, Time delay, Bytes packet_bytes);

  // cc_state.csv: hosts keep no state but their line rate (the relays' state is per switch port, pfc.csv).
  static constexpr std::array<CcVariable, 1> kVariables = {{
      {"line_rate_gbps", "Gb/s",
       "the sender's NIC line rate, at which the flow always sends (no end-to-end "
       "congestion control)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override { out[0] = qp.line_rate.gbps(); }

 private:
  SwingSettings s_;
};

class SwingAgent : public SwitchAgent {
 public:
  SwingAgent(CcServices& net, Switch& sw, const SwingSettings& s);
  void on_pfc(int port, int prio, bool paused) override;
  uint64_t relayed_pauses() const { return relayed_; }

 private:
  CcServices& net_;
  Switch& sw_;
  SwingSettings s_;
  std::vector<int> long_ports_;
  std::vector<bool> is_long_;
  int in_dc_paused_[8] = {};  // per priority: in-DC egress ports currently paused by the DC
  uint64_t relayed_ = 0;
};

struct SchemeEntry;
// swing in the scheme registry (cc/registry.h): the reader of [cc.swing] and its switch defaults
// (swing.cc).
SchemeEntry swing_scheme();

}  // namespace rocesim
