// The link-segmented loop shared by LSCC and HPCC* (LSCC paper, docs/algorithms.md 3.4 and 3.5): the
// two modules at the DC egress switches of a long-haul link (LinkSpec::long_haul).
//  - Rate calculation (Alg. 1) at the *receiving* egress switch, on the long-haul port's ingress: every T
//    it measures BR (long-haul ingress bytes the switch forwarded in the last T, over T) and the ingress
//    queue Q_cur of that port, and computes the rate R the far side should admit so that the queue returns
//    to Q_ref once the N = 2D / T adjustments already in flight (Ra_list) have landed; R moves at most
//    delta R per period and stays in [R_min, R_max]. R goes back across the link in a feedback message
//    (a generic switch-to-switch control packet, top priority), quantised to the unit delta F.
//  - Rate limiting at the *sending* egress switch, on the long-haul port's egress: a pseudo queue Q* fed by
//    the actual input of internal flows and drained at the latest feedback rate R_fb (Eq. 10). Since
//    R_max < C_long, Q* is longer than the real queue: a virtual bottleneck near the sources. What the
//    scheme does when Q* passes Q*_ref is the subclass's (LSCC: direct CNPs; HPCC*: direct INT).
// Every egress switch with a long-haul port runs both modules (traffic flows both ways). No allocation per
// packet: Q* is drained lazily (Q* -= R_fb x elapsed at each access).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/simulator.h"
#include "core/time.h"
#include "net/cc_api.h"

namespace rocesim {

class Switch;

struct LsccRateSettings {
  Time period = Time::from_us(200);      // T [LSCC paper's ns-3: 200 us]
  Bytes q_ref_bytes = 2'000'000;         // Q_ref [LSCC paper's micro-benchmarks: 2 MB; large scale 5 MB]
  Bytes q_star_ref_bytes = 2'000'000;    // Q*_ref [LSCC paper: = Q_ref]
  Rate delta_r = Rate::from_gbps(1);     // delta R [LSCC paper's ns-3: 1 Gb/s]
  Rate min_rate = Rate::from_gbps(1);    // R_min [interp, algorithms.md 3.4 (d)]
  double max_rate_fraction = 0.95;       // R_max = 0.95 x C_long [interp]
  Rate rate_unit = Rate::from_mbps(10);  // delta F, the feedback message's rate unit [interp]
  Time rtt = Time::zero();               // long-haul RTT 2D for N = 2D / T; zero = 2 x link delay
  Bytes message_bytes = 64;              // feedback message (an ICMP packet) on the wire [interp]
  // Lowest static PFC Xoff of the long-haul ports (raised at start when the switch's is lower); zero =
  // 4 x Q_ref [interp: the seed's large-scale runs hold Q_ref = 5 MB, report no long-haul PAUSE under LSCC
  // and buffer samples "mostly below 10 MB", so its long-haul Xoff must have been above its queue peaks;
  // ours reach 17 MB in lscc/load at 50 %].
  Bytes long_haul_xoff_bytes = 0;
};

// The long-haul ingress port's static PFC thresholds under the loop: Xoff raised to long_haul_xoff_bytes
// (4 x Q_ref when 0) where the switch's own is lower, keeping its Xoff - Xon hysteresis. The agent installs
// them; the schemes' CongestionControl::long_haul_thresholds returns them for the buffer check.
PfcThresholds lscc_long_haul_thresholds(const LsccRateSettings& s, PfcThresholds own);
// The keys that decide them, for the buffer check's message.
inline constexpr const char* kLsccLongHaulXoffKeys = "long_haul_xoff_bytes (0: 4 x q_ref_bytes)";

// Algorithm 1 of the seed, one instance per long-haul port: pure arithmetic, tested in isolation.
class LsccRateCalc {
 public:
  LsccRateCalc() = default;
  LsccRateCalc(Time period, Bytes q_ref, Rate delta_r, Rate r_min, Rate r_max, int n);
  // One period: `br` = bottleneck rate over the last T, `q_cur` = ingress queue now. Returns R.
  Rate step(Rate br, Bytes q_cur);
  Rate last() const { return Rate::from_bps(r_last_); }
  int n() const { return static_cast<int>(ra_.size()); }
  double ra_sent() const;  // sum of Ra_list (bits/s)

 private:
  double t_sec_ = 0;
  double q_ref_bits_ = 0;
  double delta_r_ = 0, r_min_ = 0, r_max_ = 0;
  double r_last_ = 0;
  bool started_ = false;    // a period with traffic has been seen (R_last initialised)
  std::vector<double> ra_;  // Ra_list as a ring: ra_[head_] is Ra_list[0]
  size_t head_ = 0;
};

// Both modules at one egress switch. Subclasses add the near-source notification.
class LsccSwitchAgent : public SwitchAgent, public EventHandler {
 public:
  static constexpr uint32_t kFeedbackTag = 0x15CC;  // Packet::cc_flags of a feedback-rate message

  // Raises the long-haul ports' static Xoff/Xon (lscc_long_haul_thresholds).
  LsccSwitchAgent(CcServices& net, Switch& sw, const LsccRateSettings& s);
  // True when the switch has at least one long-haul port (else the scheme installs no agent).
  static bool has_long_haul(Switch& sw);

  void on_enqueue(Packet& p, int port) override;
  void on_dequeue(Packet& p, int port) override;
  void on_switch_message(const Packet& p, int in_port) override;
  void on_event(uint32_t kind, uint64_t arg) override;

  // Read access for tests, monitors and the scenarios' figures.
  bool is_long(int port) const { return lp_of_[port] >= 0; }
  Bytes pseudo_queue(int port);         // Q* of the long-haul egress `port` now
  Rate feedback_rate(int port) const;   // R_fb received for that egress
  Rate computed_rate(int port) const;   // R last computed for that port's ingress
  Bytes ingress_queue(int port) const;  // Q_cur of that port's ingress
  uint64_t messages_sent() const { return messages_sent_; }

 protected:
  enum Kind : uint32_t { kPeriod = 0, kSubclass = 1 };
  struct LongPort {
    int port = -1;
    int peer = -1;  // the far egress switch
    LsccRateCalc calc;
    Bytes br_bytes = 0;  // long-haul ingress bytes forwarded in this period
    double q_star = 0;   // pseudo queue (bytes)
    Time q_star_at;      // when q_star was last drained
    Rate r_fb;           // latest feedback rate for this egress
  };
  // Index into lp_ of a port, or -1.
  int long_index(int port) const {
    return port >= 0 && port < static_cast<int>(lp_of_.size()) ? lp_of_[port] : -1;
  }
  // Internal = arrived from inside this DC (a host or an in-DC switch port), not from a long-haul link.
  bool internal(const Packet& p) const { return p.in_port >= 0 && lp_of_[p.in_port] < 0; }
  void drain(LongPort& l);
  // Background timer (never keeps an otherwise finished run alive).
  void schedule(Time after, uint32_t kind, uint64_t arg = 0);
  virtual void on_period() {}
  virtual void on_subclass_event(uint32_t kind, uint64_t arg) {
    (void)kind;
    (void)arg;
  }

  CcServices& net_;
  Switch& sw_;
  LsccRateSettings s_;
  std::vector<LongPort> lp_;
  std::vector<int> lp_of_;  // per port: index into lp_ or -1
  uint32_t handler_ = 0;
  uint64_t messages_sent_ = 0;

 private:
  void period();
};

class KeyReader;
// The keys of the link-segmented loop (period_us, q_ref_bytes, ..., long_haul_xoff_bytes) at `prefix`
// ([cc.lscc] and [cc.hpcc_star] both take them).
LsccRateSettings read_lscc_rate_settings(KeyReader& c, const std::string& prefix);

}  // namespace rocesim
