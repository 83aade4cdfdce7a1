// LSCC (LSCC paper, "link-segmented congestion control" across datacenters), as specified in
// docs/algorithms.md 3.4. The long-haul link splits each cross-DC control loop in two:
//  - far segment: the rate calculation module at the receiving DC's egress switch (Alg. 1, cc/lscc_rate.h)
//    turns its long-haul ingress queue into a virtual bottleneck rate R, fed back every T;
//  - near segment: the rate limiting module at the sending DC's egress switch (Alg. 2) runs a pseudo queue
//    Q* drained at R; every T_dcnp, while Q* >= Q*_ref, it sends "direct CNPs" (ordinary CNPs from the
//    switch) to the sources of the flows in its flow table whose CNP flag is set (a normal CNP from the
//    remote receiver passed by, or the packet arrived CE-marked by local congestion, which the switch then
//    clears) or which have sent less than the long-flow threshold (> BDP of the long-haul link, so every
//    flow is held by direct CNPs while it starts). A flag expires flag_hold after the CNP that set it;
//    ResetTable every T drops flows idle for a period (see LsccSettings::flag_hold).
// Sources run DCQCN unchanged (cc/dcqcn; values: LsccSettings::sender_defaults); receivers send normal
// CNPs at a coarser interval, normal_cnp_multiple x T_dcnp (10 in the seed; 0 = none, "infinity").
// ECN marking is off at the rate-calculation hop (packets that came over the long-haul link) [LSCC paper].
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/dcqcn.h"
#include "cc/lscc_rate.h"

namespace rocesim {

struct LsccSettings {
  // The sources' DCQCN [interp]: the seed only says "favourable values according to Mellanox's
  // recommendations". We use the DCQCN paper's timers (K = 55 us, T_dec = 50 us, T_inc = 55 us), rates
  // (R_AI 40 Mb/s, R_HAI 400 Mb/s) and target rule (Rt = Rc at every cut: without it the four flows of
  // lscc/stability keep +-25 % apart) with the Mellanox NIC's fast recovery F = 1 and no byte counter: with
  // the simulator's Mellanox timers (K = 1 us, T_inc = 300 us, R_AI 8 Mb/s at 40G) the sources cannot
  // follow an increase of the feedback rate (the seed's Eq. 12 bound delta R < M T R_AI / T_i fails by
  // 50x) and lscc/stability cycles with the queue at 0 and 80 % utilisation (scenarios/lscc/README.md).
  static DcqcnSettings sender_defaults() {
    DcqcnSettings d = DcqcnSettings::for_variant("mellanox", Rate::from_gbps(40));
    d.alpha_period = Time::from_us(55);
    d.dec_period = Time::from_us(50);
    d.inc_period = Time::from_us(55);
    d.rate_ai = Rate::from_mbps(40);
    d.rate_hai = Rate::from_mbps(400);
    d.clamp_target = true;
    return d;
  }
  // Sources: DCQCN with the Mellanox-recommended values [LSCC paper: "favourable values according to
  // Mellanox's recommendations"] = cc/dcqcn.h "mellanox"; the NP spacing is set from the two below.
  DcqcnSettings rp = sender_defaults();
  LsccRateSettings rate;                         // T, Q_ref, Q*_ref, delta R, R_min/R_max (cc/lscc_rate.h)
  Time direct_cnp_interval = Time::from_us(50);  // T_dcnp [interp; algorithms.md 3.4 (d)]
  double normal_cnp_multiple = 10;               // normal CNP interval / T_dcnp [LSCC paper: 10]; 0 = never
  double long_flow_bdp = 1.2;     // long-flow threshold in BDPs of the long-haul link [seed: "> BDP"]
  Bytes long_flow_bytes = 0;      // explicit threshold; 0 = long_flow_bdp x BDP
  int flow_table_entries = 1024;  // fixed flow-table capacity per switch [interp]
  // How long a CNP flag stays set after the CNP (or CE mark) that set it; zero = 2 x the normal-CNP
  // interval (1 ms; T_dcnp x 20 when normal CNPs are off) [interp: the seed's ResetTable(T) would clear
  // the flags every T = 200 us, which leaves a long flow that gets a normal CNP every 500 us unflagged
  // most of the time, and the pseudo queue grows without bound in lscc/stability once the flows pass the
  // long-flow threshold].
  Time flag_hold = Time::zero();
  bool mark_at_rate_calc = false;  // RED at the rate-calculation hop [LSCC paper: disabled]
};

class Lscc : public Dcqcn {
 public:
  explicit Lscc(const LsccSettings& s);
  std::string name() const override { return "lscc"; }
  const LsccSettings& lscc_settings() const { return ls_; }
  RxDecision on_data_received(Qp& qp, const Packet& data) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;
  PfcThresholds long_haul_thresholds(Rate, Time, Bytes, PfcThresholds own) const override {
    return lscc_long_haul_thresholds(ls_.rate, own);
  }
  std::string long_haul_thresholds_keys() const override {
    return std::string("[cc.lscc] ") + kLsccLongHaulXoffKeys;
  }

 private:
  static DcqcnSettings sender_settings(const LsccSettings& s);
  LsccSettings ls_;
};

// Both LSCC modules at an egress switch (public for tests and figures).
class LsccAgent : public LsccSwitchAgent {
 public:
  LsccAgent(CcServices& net, Switch& sw, const LsccSettings& s);
  void on_enqueue(Packet& p, int port) override;
  void on_control(Packet& p, int port) override;
  bool mark(Packet& p, int port) override;

  uint64_t direct_cnps() const { return direct_cnps_; }
  uint64_t table_overflows() const { return overflows_; }
  int table_size() const { return used_; }

 protected:
  void on_period() override;
  void on_subclass_event(uint32_t kind, uint64_t arg) override;

 private:
  enum : uint32_t { kDirectCnp = kSubclass };
  // Flow table entry (Table I: 4-tuple, CNP flag, TxBytes) plus the QP a CNP addresses and bookkeeping.
  struct Entry {
    int32_t sip = -1, dip = -1;
    uint16_t sport = 0, dport = 0;
    bool used = false;
    bool cnp = false;  // set by a CNP or CE mark within the last flag_hold
    Time flagged_at;
    int16_t lport = -1;  // index into lp_ of the long-haul egress the flow uses
    uint32_t qp = 0, tag = 0;
    Bytes tx_bytes = 0;
    Time last_seen;
  };
  Entry* find(int32_t sip, int32_t dip, uint16_t sport, uint16_t dport, bool insert);
  void send_direct_cnps();
  void reset_table();

  LsccSettings ls_;
  Bytes long_flow_th_ = 0;
  Time flag_hold_;
  std::vector<Entry> table_;    // open addressing, capacity a power of two
  std::vector<Entry> scratch_;  // for rebuilding at ResetTable (sized once)
  size_t mask_ = 0;
  int used_ = 0;
  uint64_t direct_cnps_ = 0, overflows_ = 0;
};

struct SchemeEntry;
// lscc in the scheme registry (cc/registry.h): the reader of [cc.lscc] (lscc.cc).
SchemeEntry lscc_scheme();

}  // namespace rocesim
