// DCQCN (Zhu et al., SIGCOMM'15): RED/ECN marking at switches (CP), CNPs from the receiver (NP),
// rate decrease / alpha / fast recovery / additive and hyper increase at the sender (RP).
// Rules and defaults: shared/docs/algorithms.md section 2.2. Two variants:
//   paper    - the paper's timers (K = 55 us, T_dec = 50 us, T_inc = 55 us), 10 MB byte counter, F = 5,
//              one CNP per flow per 50 us at the receiver;
//   mellanox - the ns-3 HPCC simulator's "Mellanox" model (K = 1 us, T_dec = 4 us, T_inc = 300 us),
//              no byte counter, F = 1, the receiver flags congestion on the ACK of every CE packet.
#pragma once
#include <string>
#include <vector>

#include "net/cc_api.h"

namespace rocesim {

struct DcqcnSettings {
  std::string variant = "paper";           // "paper" or "mellanox"
  double g = 1.0 / 256;                    // alpha gain [paper, sim]
  Time alpha_period = Time::from_us(55);   // K [paper]; 1 us [sim]
  Time dec_period = Time::from_us(50);     // rate-decrease check [paper: = CNP spacing]; 4 us [sim]
  Time inc_period = Time::from_us(55);     // rate-increase timer T [paper]; 300 us [sim]
  Bytes byte_counter_bytes = 10'000'000;   // B [paper]; 0 = off [sim]
  int fast_recovery_steps = 5;             // F [paper]; 1 [sim run.py]
  Rate rate_ai = Rate::from_mbps(40);      // R_AI [paper]; 5 Mb/s x C/25G [sim]
  Rate rate_hai = Rate::from_mbps(400);    // R_HAI [10 x R_AI, unverified]; 50 Mb/s x C/25G [sim]
  Rate min_rate = Rate::from_mbps(100);    // floor of the current rate [sim code default]; 1 Gb/s in run.py
  Time cnp_interval = Time::from_us(50);   // NP: at most one CNP per flow per interval [paper]
  bool cnp_on_ack = false;                 // NP flags the ACK of every CE packet instead [sim]
  double rate_on_first_cnp = 1.0;          // Rc multiplier at the first CNP [sim]
  bool clamp_target = true;                // Rt = Rc at every cut [paper]; only after an increase [sim]

  // The "mellanox" variant's values for a given NIC speed (scales R_AI and R_HAI with C/25G).
  static DcqcnSettings mellanox(Rate nic_rate);
};

class Dcqcn : public CongestionControl {
 public:
  explicit Dcqcn(const DcqcnSettings& s) : s_(s) {}
  std::string name() const override { return "dcqcn"; }
  const DcqcnSettings& settings() const { return s_; }

  void on_flow_start(Qp& qp) override;
  void on_data_sent(Qp& qp, Packet& p) override;
  void on_ack(Qp& qp, const Packet& ack) override;
  void on_cnp(Qp& qp, const Packet& cnp) override;
  void on_timer(Qp& qp, uint32_t kind) override;
  RxDecision on_data_received(Qp& qp, const Packet& data) override;

  // Sender state of one QP (public for tests and monitors).
  struct State {
    Rate rc, rt;                  // current and target rate
    double alpha = 1.0;
    bool started = false;         // a CNP has arrived: timers run
    bool cnp_since_alpha = false;
    bool cnp_since_dec = false;
    bool dec_pending = false;
    Time alpha_anchor;            // last alpha-update boundary applied
    Time dec_anchor;              // decrease checks happen at dec_anchor + k x dec_period
    int t_cnt = 0;                // rate-increase timer expiries since the last cut
    int bc_cnt = 0;               // byte-counter expiries since the last cut
    Bytes bytes_since_inc = 0;
    uint32_t inc_gen = 0;         // invalidates a pending increase timer after a cut
    bool inc_pending = false;
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 protected:
  enum Timer : uint32_t { kDecrease = 1, kIncrease = 2 };
  // Hooks for schemes that build on DCQCN (TCD, Mercury, PACC).
  virtual void on_increase_event(Qp& qp) { (void)qp; }
  virtual bool increase_allowed(const Qp& qp) const { (void)qp; return true; }
  void congestion_notified(Qp& qp);
  State& st(const Qp& qp) { return st_[qp.slot]; }

 private:
  void catch_up_alpha(State& s, Time now);
  void decrease(Qp& qp);
  void increase_event(Qp& qp);
  void schedule_increase(Qp& qp);
  void apply(Qp& qp);

  DcqcnSettings s_;
  std::vector<State> st_;
};

}  // namespace rocesim
