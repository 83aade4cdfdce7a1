// DCQCN (Zhu et al., SIGCOMM'15): RED/ECN marking at switches (CP), CNPs from the receiver (NP),
// rate decrease / alpha / fast recovery / additive and hyper increase at the sender (RP).
// Rules and defaults: docs/algorithms.md section 2.2. Three variants:
//   mellanox (default) - the NIC timers of the ns-3 HPCC simulator's "Mellanox" model (K = 1 us,
//              T_dec = 4 us, T_inc = 300 us, no byte counter, F = 1, R_AI/R_HAI = 5/50 Mb/s x C/25G,
//              Rmin 1 Gb/s) with the standard notification point: one CNP per flow per 50 us;
//   hpcc_sim - the same reaction point with that simulator's notification point: the receiver flags
//              congestion on the ACK of every CE packet (no CNP spacing);
//   paper    - the paper's timers (K = 55 us, T_dec = 50 us, T_inc = 55 us), 10 MB byte counter, F = 5,
//              R_AI 40 Mb/s, one CNP per flow per 50 us. Tuned for 40 Gb/s: at 100 Gb/s it recovers
//              slowly after a cut (additive increase of 0.7 Gb/s per ms).
#pragma once
#include <array>
#include <span>
#include <string>
#include <vector>

#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

struct DcqcnSettings {
  // Defaults: the "mellanox" variant at 100 Gb/s NICs.
  std::string variant = "mellanox";       // "mellanox", "hpcc_sim" or "paper"
  double g = 1.0 / 256;                   // alpha gain [paper, sim]
  Time alpha_period = Time::from_us(1);   // K: 1 us [sim]; 55 us [paper]
  Time dec_period = Time::from_us(4);     // rate-decrease check: 4 us [sim]; 50 us [paper]
  Time inc_period = Time::from_us(300);   // rate-increase timer: 300 us [sim]; 55 us [paper]
  Bytes byte_counter_bytes = 0;           // B: off [sim]; 10 MB [paper]
  int fast_recovery_steps = 1;            // F: 1 [sim run.py]; 5 [paper]
  Rate rate_ai = Rate::from_mbps(20);     // R_AI: 5 Mb/s x C/25G [sim]; 40 Mb/s [paper]
  Rate rate_hai = Rate::from_mbps(200);   // R_HAI: 50 Mb/s x C/25G [sim]; 10 x R_AI [paper, unverified]
  Rate min_rate = Rate::from_gbps(1);     // floor of the current rate [sim run.py]
  Time cnp_interval = Time::from_us(50);  // NP: at most one CNP per flow per interval [paper]
  bool cnp_on_ack = false;                // NP flags the ACK of every CE packet instead [sim]
  double rate_on_first_cnp = 1.0;         // Rc multiplier at the first CNP [sim]
  bool clamp_target = false;              // Rt = Rc at every cut [paper]; only after an increase [sim]

  // A variant's values for a given NIC speed (the simulator's R_AI and R_HAI scale with C/25G).
  static DcqcnSettings for_variant(const std::string& variant, Rate nic_rate);
  static DcqcnSettings mellanox(Rate nic_rate) { return for_variant("mellanox", nic_rate); }
  static std::vector<std::string> variants() { return {"mellanox", "hpcc_sim", "paper"}; }
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
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  RxDecision on_data_received(Qp& qp, const Packet& data) override;

  // cc_state.csv: the reaction point's variables (schemes built on it declare these first).
  static constexpr std::array<CcVariable, 5> kVariables = {{
      {"alpha", "",
       "alpha, the congestion estimate: 1 at the first CNP, then (1 - g) alpha + g per period K "
       "(+g only when a CNP came in it), as of the row's time"},
      {"target_rate_gbps", "Gb/s",
       "R_T, the target rate: the rate before the last cut, raised by the "
       "additive and hyper increases; each increase moves the rate halfway to it"},
      {"stage", "",
       "0 before the first CNP (line rate), then the stage of the latest increase since the last "
       "cut: 1 fast recovery, 2 additive increase, 3 hyper increase"},
      {"timer_count", "", "T: rate-increase timer expiries since the last cut"},
      {"byte_count", "", "BC: byte-counter expiries since the last cut (0 without a byte counter)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  // Sender state of one QP (public for tests and monitors).
  struct State {
    Rate rc, rt;  // current and target rate
    double alpha = 1.0;
    bool started = false;  // a CNP has arrived: timers run
    bool cnp_since_alpha = false;
    bool cnp_since_dec = false;
    bool dec_pending = false;
    Time alpha_anchor;  // last alpha-update boundary applied
    Time dec_anchor;    // decrease checks happen at dec_anchor + k x dec_period
    int t_cnt = 0;      // rate-increase timer expiries since the last cut
    int bc_cnt = 0;     // byte-counter expiries since the last cut
    Bytes bytes_since_inc = 0;
    uint32_t inc_gen = 0;  // invalidates a pending increase timer after a cut
    bool inc_pending = false;
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 protected:
  enum Timer : uint32_t { kDecrease = 1, kIncrease = 2 };
  // Hooks for schemes that build on DCQCN (TCD, Mercury, PACC).
  virtual void on_increase_event(Qp& qp) { (void)qp; }
  virtual bool increase_allowed(const Qp& qp) const {
    (void)qp;
    return true;
  }
  void congestion_notified(Qp& qp);
  State& st(const Qp& qp) { return st_[qp.slot]; }

 private:
  void catch_up_alpha(State& s, Time now);
  void decrease(Qp& qp);
  void increase_event(Qp& qp);
  void schedule_increase(Qp& qp);
  void apply(Qp& qp);

  DcqcnSettings s_;
  PerQp<State> st_;
};

class KeyReader;
struct SchemeEntry;

// The DCQCN keys of [cc.dcqcn] read at `prefix`, for the schemes whose sender is DCQCN's: the variant, then
// read_dcqcn_keys over its values.
DcqcnSettings read_dcqcn_settings(KeyReader& c, const std::string& prefix, Rate nic_rate);
// The DCQCN keys at `prefix` over `base` (no variant key); `np_keys`: also the notification point's
// cnp_interval_us and cnp_on_ack.
DcqcnSettings read_dcqcn_keys(KeyReader& c, const std::string& prefix, DcqcnSettings base, bool np_keys);
// dcqcn in the scheme registry (cc/registry.h): the reader of [cc.dcqcn] and its hpcc-sim values.
SchemeEntry dcqcn_scheme();

}  // namespace rocesim
