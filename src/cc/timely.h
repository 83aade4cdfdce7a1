// TIMELY (Mittal et al., SIGCOMM'15): a rate-based, delay-gradient scheme run by the sender NIC alone.
// The RTT is taken from each ACK's echo of its data packet's send time (ACKs travel at high priority,
// so it is the data path's delay); once per RTT the smoothed RTT difference, normalised by minRTT,
// drives additive increase (hyper-active after N consecutive increases) or multiplicative decrease,
// with T_low / T_high guards. Rules and defaults: docs/algorithms.md section 2.4, as the ns-3
// HPCC simulator's CC_MODE 7 runs it (docs/hpcc-sim-compat.md). No ECN, no window, no switch agent.
//
// EWMA direction: rttDiff = (1 - alpha) x rttDiff + alpha x newDiff with alpha = 0.875, i.e. the newest
// difference weighs 0.875 (light smoothing). This is the form of the paper's Algorithm 1 and of the
// simulator's code (UpdateRateTimely); we keep its weight on the new sample.
//
// Increase steps: the simulator adds delta (RATE_AI) for the first 5 consecutive increases and the
// constant RATE_HAI from then on, in the T_low branch too (hai_below_tlow); the paper's Algorithm 1
// adds only delta below T_low and N x delta (N = 5) in the gradient branch once in HAI mode.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

struct TimelySettings {
  // Defaults: the simulator's run.py at 100 Gb/s NICs.
  double alpha = 0.875;                  // EWMA weight of the newest RTT difference [sim, paper]
  double beta = 0.8;                     // multiplicative decrease factor [sim, paper]
  Time t_low = Time::from_us(50);        // below: always increase [sim, paper]
  Time t_high = Time::from_us(500);      // above: decrease by beta x (1 - T_high/rtt) [sim, paper]
  Time min_rtt = Time::from_us(20);      // gradient normaliser [sim, paper]
  Rate delta = Rate::from_mbps(100);     // additive step: 10 Mb/s x C/10G [sim run.py]; 10 Mb/s [paper]
  Rate hai_step = Rate::from_mbps(500);  // hyper-active step: 50 Mb/s x C/10G [sim run.py] (= 5 delta)
  int hai_after = 5;                     // consecutive increases before HAI [sim, paper]
  bool hai_below_tlow = true;            // HAI steps also below T_low [sim]; false = paper
  Rate min_rate = Rate::from_gbps(1);    // floor [sim run.py MIN_RATE 1000 Mb/s]

  // The simulator's steps for a NIC speed (delta and HAI scale with C/10G).
  static TimelySettings for_nic_rate(Rate nic_rate);
};

class Timely : public CongestionControl {
 public:
  explicit Timely(const TimelySettings& s) : s_(s) {}
  std::string name() const override { return "timely"; }
  CcNeeds needs() const override {
    CcNeeds n;
    n.ecn_marking = false;       // delay only
    n.ack_high_priority = true;  // RTT = data-path delay [sim ACK_HIGH_PRIO 1]
    n.send_timestamp = true;     // the RTT sample's send time travels in the data packet
    return n;
  }
  const TimelySettings& settings() const { return s_; }

  void on_flow_start(Qp& qp) override;
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  void on_ack(Qp& qp, const Packet& ack) override;

  // cc_state.csv: the RTT, its gradient and the increase count (the rate is a column of its own).
  static constexpr std::array<CcVariable, 4> kVariables = {{
      {"rtt_us", "us", "the latest RTT sample (0: none yet)"},
      {"rtt_diff_us", "us", "rttDiff, the EWMA of the differences between consecutive per-RTT samples"},
      {"gradient", "", "rttDiff / minRTT, the normalised gradient of the last update"},
      {"increase_count", "",
       "N, consecutive increases (hyper-active steps from hai_after on; 0 after a cut)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  // Sender state of one QP (public for tests and monitors).
  struct State {
    Rate rc;                    // current rate
    bool started = false;       // the first RTT sample is stored
    Time prev_rtt;              // RTT at the last update
    double rtt_diff_ps = 0;     // smoothed RTT difference (ps)
    int inc_stage = 0;          // consecutive increases
    Bytes last_update_seq = 0;  // update once per RTT: when an ACK passes this
    Time last_rtt;              // most recent sample (for tests)
    uint32_t decreases = 0;     // rate cuts so far (for tests)
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 private:
  TimelySettings s_;
  PerQp<State> st_;
};

struct SchemeEntry;
// timely in the scheme registry (cc/registry.h): the reader of [cc.timely], no ECN marking and its hpcc-sim
// values (timely.cc).
SchemeEntry timely_scheme();

}  // namespace rocesim
