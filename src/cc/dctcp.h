// DCTCP (Alizadeh et al., SIGCOMM'10) adapted to RDMA QPs: the receiver echoes CE on every ACK, the
// sender keeps alpha, an EWMA (gain g) of the fraction of ECN-echo ACKs per window of data, cuts by
// (1 - alpha/2) at most once per window on an ECN echo and otherwise adds one step per window.
// Rules and defaults: docs/algorithms.md section 2.3. Two modes:
//   rate   (default) - the ns-3 HPCC simulator's CC_MODE 8: the state is a pacing rate that starts at
//            line rate, AI = DCTCP_RATE_AI (615 Mb/s) per window; with rate_window (its HAS_WIN = 1,
//            VAR_WIN = 1) bytes in flight are also limited to rate x T, T = the longest base RTT;
//   window - the paper's TCP form: a congestion window that starts at C_nic x T, grows by one MTU per
//            window and is cut by (1 - alpha/2); the NIC is not paced (line rate under the window).
//
// Switch side: DCTCP needs step marking at one threshold K, which a scheme cannot set (CcNeeds only
// turns RED on or off). The scenario sets it: switch.kmin_bytes = switch.kmax_bytes = K, switch.pmax = 1.
// [sim]: K = 30 KB x C/10G, i.e. 300 KB at 100 Gb/s with ecn_scale_with_rate giving 1200 KB at 400 Gb/s
// (scenarios/baselines/dctcp.toml). The paper's K is about C x RTT / 7 (65 packets at 10 Gb/s).
#pragma once
#include <array>
#include <span>
#include <string>
#include <vector>

#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

struct DctcpSettings {
  std::string mode = "rate";            // "rate" [sim CC_MODE 8] or "window" [paper]
  double g = 1.0 / 16;                  // alpha gain [paper, sim EWMA_GAIN 0.0625]
  double alpha_init = 1.0;              // alpha of a new QP [sim]
  Rate rate_ai = Rate::from_mbps(615);  // rate mode: increase per window [sim run.py: 1 MTU per 13 us]
  Rate min_rate = Rate::from_gbps(1);   // rate mode: floor [sim run.py MIN_RATE 1000 Mb/s]
  bool rate_window = true;              // rate mode: window = rate x T [sim HAS_WIN 1, VAR_WIN 1]
  Time t = Time::zero();                // T; zero = the topology's longest base RTT [sim GLOBAL_T 1]
  Bytes min_cwnd_bytes = 1000;          // window mode: floor of cwnd (one MTU) [paper]

  static std::vector<std::string> modes() { return {"rate", "window"}; }
};

class Dctcp : public CongestionControl {
 public:
  explicit Dctcp(const DctcpSettings& s) : s_(s), window_mode_(s.mode == "window") {}
  std::string name() const override { return "dctcp"; }
  // ACKs share the data class in the simulator's DCTCP runs [sim ACK_HIGH_PRIO 0; algorithms.md 1.6].
  CcNeeds needs() const override {
    CcNeeds n;
    n.ack_high_priority = false;
    n.window = window_mode_ || s_.rate_window;
    return n;
  }
  const DctcpSettings& settings() const { return s_; }

  void attach(CcServices& net) override;
  void on_flow_start(Qp& qp) override;
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  void on_ack(Qp& qp, const Packet& ack) override;

  // cc_state.csv: the variables of its state (the rate and the window have columns of their own).
  static constexpr std::array<CcVariable, 3> kVariables = {{
      {"alpha", "", "alpha, the EWMA (gain g) of the fraction of ECN-echo ACKs per window"},
      {"marked_fraction", "", "F, the fraction of ECN-echo ACKs in the last complete window"},
      {"cwr", "", "1 from a cut until the data sent before it is acknowledged (no other cut), else 0"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  // Sender state of one QP (public for tests and monitors).
  struct State {
    double alpha = 1.0;
    Rate rate;                  // rate mode: current rate
    double cwnd = 0;            // window mode: congestion window (bytes)
    bool started = false;       // the first window boundary was seen
    Bytes last_update_seq = 0;  // alpha is updated when an ACK passes this (snd_nxt at the last update)
    uint32_t acks = 0;          // ACKs in the current window
    uint32_t marked = 0;        // of which ECN echoes
    bool cwr = false;           // cut once per window: until an ACK passes high_seq
    Bytes high_seq = 0;
    double last_fraction = 0;  // F of the last completed window (for tests)
    uint32_t windows = 0;      // alpha updates so far
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 private:
  void apply(Qp& qp);

  DctcpSettings s_;
  bool window_mode_;
  Time t_;  // T used for windows
  PerQp<State> st_;
};

struct SchemeEntry;
// dctcp in the scheme registry (cc/registry.h): the reader of [cc.dctcp], step marking at K and its
// hpcc-sim values (dctcp.cc).
SchemeEntry dctcp_scheme();

}  // namespace rocesim
