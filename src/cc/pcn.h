// PCN (Cheng et al., NSDI'20): congestion control that tells PFC-spread queues from real congestion.
// Rules: docs/algorithms.md section 2.7, after the paper and its public ns-3 re-implementation.
//   CP  NP-ECN at every switch egress (port, priority): a packet that sat in the queue through a PAUSE is
//       never marked (on RESUME the queue's packet count becomes the "paused" counter, decremented per
//       dequeue); any other ECT packet is marked CE when more than K_np packets remain behind it.
//   NP  the receiver looks at each flow every T_np: if it got packets, it sends a CNP carrying the rate
//       it received (recRate, Mb/s, in cc_value) and the ECE flag (cc_flags & kEce) when more than 95 %
//       of them were CE. The timer starts at a flow's first packet and stops after an empty period
//       (the next packet restarts it).
//   RP  ECE: rate = max(Rmin, min(rate, recRate x (1 - w_min))), w = w_min;
//       no ECE: rate = min(C, (1 - w) rate + w C), w = (1 - w) w + w w_max (w climbs towards w_max).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

struct PcnSettings {
  Time np_period = Time::from_us(50);    // T_np, receiver identification period [sim; paper]
  double ece_fraction = 0.95;            // CE share of a period's packets that makes a flow congested [sim]
  double w_min = 1.0 / 128;              // [paper, unverified]; the public ns-3 code declares 1/256
                                         //   (written as the integer expression 1/256, which is 0)
  double w_max = 0.5;                    // [sim; paper design]
  Rate min_rate = Rate::from_mbps(100);  // floor of the sending rate [sim]
  uint32_t k_np_pkts = 0;                // NP-ECN: mark when more packets than this remain queued [sim]
};

class Pcn : public CongestionControl {
 public:
  static constexpr uint32_t kEce = 1;  // CNP cc_flags bit: the flow is congested

  explicit Pcn(const PcnSettings& s) : s_(s) {}
  std::string name() const override { return "pcn"; }
  CcNeeds needs() const override;
  const PcnSettings& settings() const { return s_; }

  void on_flow_start(Qp& qp) override;
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  void on_flow_allocated(Qp& qp) override { st_.start(*net_, qp); }  // the NP's counters start at zero
  void on_cnp(Qp& qp, const Packet& cnp) override;
  void on_timer(Qp& qp, uint32_t kind) override;
  RxDecision on_data_received(Qp& qp, const Packet& data) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;

  // Per-QP state: the sender's (rate, w) and the receiver's counters live in the same slot.
  struct State {
    // sender
    Rate rate;
    double w = 0;
    Rate rec_rate;            // recRate of the last CNP with ECE (for monitors)
    uint32_t ece_cnps = 0;    // CNPs with ECE received
    uint32_t plain_cnps = 0;  // CNPs without ECE received
    // receiver
    uint32_t rec_num = 0;
    uint32_t ecn_num = 0;
    Bytes rec_bytes = 0;
    Bytes last_size = 0;
    Time last_arrival;
    Time inter_arrival;
    bool timer_running = false;
  };
  const State& state(const Qp& qp) const { return st_[qp.slot]; }
  // cc_state.csv: the increase weight, the last receive rate reported and the CNPs of either kind.
  static constexpr std::array<CcVariable, 4> kVariables = {{
      {"w", "", "w, the weight of the increase towards line rate (w_min after a cut, climbing to w_max)"},
      {"rec_rate_gbps", "Gb/s", "recRate of the last CNP with ECE: the rate its receiver got (0: none yet)"},
      {"ece_cnps", "", "CNPs with ECE received (the flow is congested: rate cut to recRate)"},
      {"plain_cnps", "", "CNPs without ECE received (not congested: increase)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

 private:
  enum Timer : uint32_t { kRxPeriod = 1 };
  void end_of_period(Qp& qp);

  PcnSettings s_;
  PerQp<State> st_;
};

// The NP-ECN switch agent (public for tests).
class PcnAgent : public SwitchAgent {
 public:
  PcnAgent(Switch& sw, const PcnSettings& s);
  void on_pfc(int port, int prio, bool paused) override;
  bool mark(Packet& p, int port) override;

  // Packets left unmarked because they sat through a PAUSE.
  uint64_t paused_unmarked() const { return paused_unmarked_; }

 private:
  Switch& sw_;
  uint32_t k_np_;
  std::vector<uint32_t> paused_counter_;  // [port * kNumPriorities + prio]
  uint64_t paused_unmarked_ = 0;
};

struct SchemeEntry;
// pcn in the scheme registry (cc/registry.h): the reader of [cc.pcn] and its switch defaults (pcn.cc).
SchemeEntry pcn_scheme();

}  // namespace rocesim
