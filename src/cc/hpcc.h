// HPCC (Li et al., SIGCOMM'19): every switch egress appends an INT record (timestamp, cumulative tx
// bytes, queue length, link rate) to data packets; the receiver echoes the records on the ACK; the
// sender estimates the utilisation U of the most loaded hop (queue drain plus tx rate), smooths it over
// T, and sets a window W = Wc / (U / eta) + W_AI (multiplicative, or Wc + W_AI while U < eta for fewer
// than maxStage rounds), paced at W / T. Per ACK it reacts from the reference window Wc ("fast react");
// once per RTT (ack.seq > lastUpdateSeq) the result becomes the new Wc.
// Rules and defaults: docs/algorithms.md section 2.5 and the ns-3 HPCC simulator's CC_MODE 3 as
// its run.py configures it (docs/hpcc-sim-compat.md): single rate (MULTI_RATE 0), no sampling.
//
// T = the topology's longest base RTT (GLOBAL_T 1), W_init = C_nic x T, W_AI = R_AI x T.
// INT bytes (2 + 5 x 8) count on the wire of data packets and ACKs (net/host.cc, when int_stamping).
//
// Fairness: flows converge to equal shares only through W_AI. Near equilibrium a flow's window follows
// W = W x eta/U + W_AI, so a flow settles where 1 - eta/U = W_AI/W: with the simulator's R_AI (40 Mb/s
// at 100 Gb/s, 0.04 % of C per RTT) a difference of 0.01 % between the U two flows sample (their INT
// phases at a paced, near-empty queue) holds them about 10 % apart, and 4 flows drift much further
// (tests/cc/baselines_test.cc). The paper's W_AI = W_init (1 - eta)/N converges within a few ms.
#pragma once
#include <array>
#include <span>
#include <string>
#include <vector>

#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

struct HpccSettings {
  // Defaults: the simulator's run.py at 100 Gb/s NICs.
  double eta = 0.95;                   // target utilisation [paper, sim U_TARGET]
  int max_stage = 0;                   // additive rounds before MI [sim run.py MI_THRESH 0]; 5 [paper]
  Rate rate_ai = Rate::from_mbps(40);  // R_AI: 10 Mb/s x C/25G [sim run.py]; W_AI = R_AI x T
  Time t = Time::zero();               // T; zero = the topology's longest base RTT [sim GLOBAL_T 1]
  Rate min_rate = Rate::from_gbps(1);  // floor of W / T [sim run.py MIN_RATE 1000 Mb/s]
  bool fast_react = true;              // react on every ACK from Wc [sim FAST_REACT 1]
  double u_init = 1.0;                 // U of a new QP [sim]

  // The simulator's R_AI for a NIC speed (10 Mb/s x C/25G).
  static HpccSettings for_nic_rate(Rate nic_rate);
  // The paper's choices: maxStage 5 and W_AI = W_init (1 - eta) / N for N expected flows on a link,
  // i.e. R_AI = C_nic (1 - eta) / N.
  static HpccSettings paper(Rate nic_rate, int expected_flows);
};

class Hpcc : public CongestionControl {
 public:
  explicit Hpcc(const HpccSettings& s) : s_(s) {}
  std::string name() const override { return "hpcc"; }
  CcNeeds needs() const override {
    CcNeeds n;
    n.int_stamping = true;
    n.ack_high_priority = false;  // ACKs in the data class [sim ACK_HIGH_PRIO 0; algorithms.md 1.6]
    n.ecn_marking = false;        // HPCC ignores ECN
    n.window = true;
    return n;
  }
  const HpccSettings& settings() const { return s_; }
  Time t() const { return t_; }

  void attach(CcServices& net) override;
  void on_flow_start(Qp& qp) override;
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  void on_ack(Qp& qp, const Packet& ack) override;

  // cc_state.csv: U, the reference window and the stage (W, paced at W / T, is window_bytes).
  static constexpr std::array<CcVariable, 3> kVariables = {{
      {"u", "",
       "U, the smoothed utilisation of the most loaded hop (qlen / (B T) + txRate / B); W shrinks "
       "while U > eta"},
      {"wc_bytes", "bytes", "Wc, the reference window, updated once per RTT"},
      {"inc_stage", "", "incStage, additive rounds in a row while U < eta (up to maxStage)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  // Sender state of one QP (public for tests and monitors).
  struct State {
    double wc = 0;   // reference window (bytes)
    double w = 0;    // current window (bytes)
    double u = 1.0;  // smoothed utilisation estimate
    int inc_stage = 0;
    Bytes last_update_seq = 0;
    bool have_ref = false;  // hop records of a previous ACK are stored
    int n_hops = 0;
    IntHop hop[kMaxIntHops];  // L: the last ACK's records
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 protected:
  // Algorithm 1 MeasureInflight: the largest hop utilisation u = qlen / (B T) + txRate / B between the INT
  // records `now` and `then` of `n` hops, and that hop's interval tau; false when no hop advanced.
  static bool max_utilization(const IntHop* now, const IntHop* then, int n, Time t, double& u_max, Time& tau);
  // Algorithm 1: U = (1 - tau/T) U + (tau/T) u_max, then ComputeWind: Wc / (U / eta) + W_AI when U >= eta or
  // after maxStage additive steps (stage 0), else Wc + W_AI (stage inc_stage + 1); clamped to
  // [minRate, lineRate] x T. Updates `u`, sets `stage`, returns W.
  double compute_window(const Qp& qp, double& u, double wc, int inc_stage, double u_max, Time tau,
                        int& stage) const;
  // Sets the window W (and the pacing rate W / T); HPCC* (cc/hpcc_star.h) takes min(W, W*) here.
  virtual void apply(Qp& qp, double w);

 private:
  HpccSettings s_;
  Time t_;  // T
  PerQp<State> st_;
};

class KeyReader;
struct SchemeEntry;
struct SwitchSettings;

// The HPCC keys of [cc.hpcc] (eta, max_stage, rate_ai_mbps, t_us, min_rate_mbps, fast_react, u_init) at
// `prefix` over `base` (also HPCC*'s, cc/hpcc_star.h).
HpccSettings read_hpcc_keys(KeyReader& c, const std::string& prefix, HpccSettings base);
// The switch settings HPCC and HPCC* expect: INT stamping, no ECN.
std::string switch_defaults_hpcc(SwitchSettings& s);
// hpcc in the scheme registry (cc/registry.h): the reader of [cc.hpcc], its switch defaults and its
// hpcc-sim values (hpcc.cc).
SchemeEntry hpcc_scheme();

}  // namespace rocesim
