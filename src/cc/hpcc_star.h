// HPCC* (LSCC paper section V, docs/algorithms.md 3.5): HPCC with LSCC's near-source loop.
//  - The rate calculation module is LSCC's (cc/lscc_rate.h): the receiving DC's egress switch feeds back
//    the virtual bottleneck rate R every T.
//  - The rate limiting module sends "direct INT" instead of direct CNPs (and keeps no flow table): for
//    every internal data packet it forwards onto the long-haul link it copies the packet's INT records of
//    the local DC into a control packet to the source and appends one record for the pseudo queue
//    {qLen = Q*, B* = R_fb, ts, txBytes of the long-haul port}; the data packet's INT stack is then
//    emptied, so the ACK echoes only the remote DC's hops.
//  - The sender runs HPCC twice: W from the ACKs (the far loop, cc/hpcc) and W* from direct INT (the near
//    loop, the same update with the pseudo hop's bandwidth B*); it sends with min(W, W*).
// The near loop's "once per RTT" reference update happens when a direct INT reports a data packet sent
// after the previous reference update [interp of the seed's snd_una rule, algorithms.md 3.5 (c)].
// Direct INT travels as a switch-generated CNP-type packet tagged kDirectIntTag (it is counted with the
// switch CNPs in the run statistics).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/hpcc.h"
#include "cc/lscc_rate.h"
#include "cc/per_qp.h"

namespace rocesim {

struct HpccStarSettings {
  HpccSettings hpcc;      // both loops [LSCC paper: eta 95 %]
  LsccRateSettings rate;  // the rate calculation module, as LSCC's
};

class HpccStar : public Hpcc {
 public:
  static constexpr uint32_t kDirectIntTag = 0x1B7;  // Packet::cc_flags of a direct INT

  explicit HpccStar(const HpccStarSettings& s) : Hpcc(s.hpcc), hs_(s) {}
  std::string name() const override { return "hpcc_star"; }
  void on_flow_start(Qp& qp) override;
  void on_cnp(Qp& qp, const Packet& cnp) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;
  PfcThresholds long_haul_thresholds(Rate, Time, Bytes, PfcThresholds own) const override {
    return lscc_long_haul_thresholds(hs_.rate, own);
  }
  std::string long_haul_thresholds_keys() const override {
    return std::string("[cc.hpcc_star] ") + kLsccLongHaulXoffKeys;
  }

  // cc_state.csv: HPCC's variables (the far loop's), then both windows and the near loop's U (the window
  // used, min(W, W*), is window_bytes).
  static constexpr auto kVariables = join_variables(
      Hpcc::kVariables,
      std::array<CcVariable, 3>{{
          {"far_w_bytes", "bytes", "W, the far loop's window (from the ACKs' INT)"},
          {"near_w_bytes", "bytes", "W*, the near loop's window (from direct INT; 0: none yet)"},
          {"near_u", "", "U* of the near loop (its local hops and the pseudo queue)"},
      }});
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;

  // Near-loop window W* of a QP (0 = none yet) and the far-loop W.
  double near_window(const Qp& qp) const { return near_.has(qp.slot) ? near_[qp.slot].w : 0; }
  double far_window(const Qp& qp) const { return far_w_.has(qp.slot) ? far_w_[qp.slot] : 0; }

 protected:
  void apply(Qp& qp, double w) override;

 private:
  struct Near {
    double wc = 0, w = 0, u = 1;
    int inc_stage = 0;
    Time last_update;  // reference update time (data packets sent after it close the "RTT")
    bool have_ref = false;
    int n_hops = 0;
    IntHop hop[kMaxIntHops];
  };
  HpccStarSettings hs_;
  PerQp<Near> near_;
  PerQp<double> far_w_;
};

// The LSCC modules with direct INT (public for tests).
class HpccStarAgent : public LsccSwitchAgent {
 public:
  HpccStarAgent(CcServices& net, Switch& sw, const LsccRateSettings& s) : LsccSwitchAgent(net, sw, s) {}
  void on_dequeue(Packet& p, int port) override;
  uint64_t direct_ints() const { return direct_ints_; }

 private:
  uint64_t direct_ints_ = 0;
};

struct SchemeEntry;
// hpcc_star in the scheme registry (cc/registry.h): the reader of [cc.hpcc_star], with HPCC's switch
// defaults (hpcc_star.cc).
SchemeEntry hpcc_star_scheme();

}  // namespace rocesim
