// TCD (Zhang et al., SIGCOMM'21): ternary congestion detection at switch egress ports of lossless
// networks, and DCQCN+TCD. Rules: docs/algorithms.md section 2.9 (flowchart reconstructed from
// the seed's Fig. 9).
//   Switch  per egress (port, priority): ON/OFF tracking from the flow-control hook (PFC PAUSE/RESUME, or
//           credit starvation/refill under CBFC). At each dequeue of a data packet, T_on = time since the
//           last OFF period ended (infinite if never paused); T_on < max(T_on) => Undetermined and the
//           packet gets UE (ECT(1)) unless already CE. Leaving ON-OFF with LAST_STATE Undetermined: every
//           timer period T = max(T_on) compare the queue with the one recorded at the timer start; a queue
//           that did not decrease and exceeds K => CE and Congestion; below K_low => NonCongestion.
//           Determined states: single threshold K (CE above it). CE is never downgraded.
//   NP      a CNP for CE (DCQCN's 50 us spacing); a UE-CNP (cc_flags & kUeCnp) for a UE-only packet,
//           at most one per flow per cnp_interval as well.
//   RP      DCQCN; on a UE-CNP no rate cut, and increase events are suppressed (rate held, stage frozen)
//           until no UE-CNP arrived for one T_inc [interp].
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/dcqcn.h"
#include "cc/per_qp.h"
#include "net/cc_api.h"

namespace rocesim {

// max(T_on) under PFC (algorithms.md 2.9): (B1 - B0) / (eps C) + tau (1 + 1 / (2 eps)),
// tau = 2 MTU / C + 2 t_p, B1 - B0 = Xoff - Xon. Reproduces 34.4 / 26.96 / 24.48 us at 40/100/200 Gb/s
// with eps 0.05, MTU 1000 B, t_p 1 us, Xoff - Xon = 2 MTU.
Time tcd_max_ton(Rate c, double epsilon, Bytes mtu, Time t_p, Bytes xoff_minus_xon);
inline Time tcd_max_ton(Rate c, double epsilon, Bytes mtu, Time t_p) {
  return tcd_max_ton(c, epsilon, mtu, t_p, 2 * mtu);
}

struct TcdSettings {
  double epsilon = 0.05;             // [TCD paper: 0.05; 0.04 in the DPDK testbed]
  Bytes xoff_minus_xon_bytes = 0;    // B1 - B0; 0 = static PFC's Xoff - Xon, else 2 MTU [TCD paper]
  Time max_ton = Time::zero();       // 0 = the formula per port (rate, link delay as t_p, NIC MTU);
                                     //   under credit flow control: the credit period T_c [TCD paper]
  Time timer_period = Time::zero();  // T; 0 = max(T_on) of the port [TCD paper]
  Bytes k_bytes = 0;                 // K; 0 = the port's DCQCN Kmin (single threshold) [algorithms.md 2.9]
  Bytes k_low_bytes = 0;             // K_low; 0 = K [interp]
};

enum class TcdState : uint8_t { kNonCongestion, kCongestion, kUndetermined };

// The switch agent (public for tests).
class TcdAgent : public SwitchAgent {
 public:
  TcdAgent(Switch& sw, CcServices& net, const TcdSettings& s);
  void on_pfc(int port, int prio, bool paused) override;
  bool mark(Packet& p, int port) override;

  TcdState state(int port, int prio) const { return st_[idx(port, prio)].last_state; }
  Time max_ton(int port) const { return max_ton_[port]; }
  // Per egress port: packets marked CE / UE here, and dequeues classified in each state.
  struct Counters {
    uint64_t ce = 0, ue = 0;
    uint64_t seen[3] = {};  // by TcdState after the decision
  };
  const Counters& counters(int port) const { return cnt_[port]; }
  void port_counters(int port, std::vector<std::pair<const char*, double>>& out) const override;

 private:
  struct PortPrio {
    bool paused = false;
    bool ever_paused = false;
    Time off_end;  // end of the latest OFF period
    Time timer_start;
    Bytes q_rec = 0;
    TcdState last_state = TcdState::kNonCongestion;
  };
  static size_t idx(int port, int prio) { return static_cast<size_t>(port) * 8 + static_cast<size_t>(prio); }

  Switch& sw_;
  CcServices& net_;
  TcdSettings s_;
  std::vector<PortPrio> st_;
  std::vector<Time> max_ton_, period_;
  std::vector<Bytes> k_, k_low_;
  std::vector<Counters> cnt_;
};

class DcqcnTcd : public Dcqcn {
 public:
  static constexpr uint32_t kUeCnp = 1;  // CNP cc_flags bit: undetermined, not congestion

  DcqcnTcd(const DcqcnSettings& d, const TcdSettings& t) : Dcqcn(d), t_(t) {}
  std::string name() const override { return "dcqcn_tcd"; }
  const TcdSettings& tcd_settings() const { return t_; }

  void on_flow_start(Qp& qp) override;
  void on_flow_allocated(Qp& qp) override;
  void on_cnp(Qp& qp, const Packet& cnp) override;
  void on_timer(Qp& qp, uint32_t kind) override;
  RxDecision on_data_received(Qp& qp, const Packet& data) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;

  // cc_state.csv: DCQCN's variables, then the hold and the two kinds of CNP.
  static constexpr auto kVariables = join_variables(
      Dcqcn::kVariables,
      std::array<CcVariable, 3>{{
          {"increase_held", "", "1 while increases are held (a UE-CNP came within the last T_inc), else 0"},
          {"ue_cnps", "", "UE-CNPs received (undetermined: no cut, increases held)"},
          {"ce_cnps", "", "CE-CNPs received (congestion: DCQCN's cut)"},
      }});
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  struct TcdState2 {
    Time last_ue_cnp_sent = Time{-(int64_t{1} << 62)};  // receiver side; none yet
    Time hold_until;                                    // sender side: no increase before this
    uint32_t ue_cnps_sent = 0;
    uint32_t ue_cnps_received = 0;
    uint32_t ce_cnps_received = 0;
  };
  const TcdState2& tcd_state(const Qp& qp) const { return ts_[qp.slot]; }

 protected:
  bool increase_allowed(const Qp& qp) const override;

 private:
  TcdSettings t_;
  PerQp<TcdState2> ts_;
};

struct SchemeEntry;
// dcqcn_tcd in the scheme registry (cc/registry.h): the reader of [cc.dcqcn_tcd] (tcd.cc).
SchemeEntry dcqcn_tcd_scheme();

}  // namespace rocesim
