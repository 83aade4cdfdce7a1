// RCM (RCM paper; algorithms.md 3.2) and the input-and-output queued switch model it runs on.
#include "cc/rcm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cc/dcqcn.h"
#include "cc/none.h"
#include "net/checks.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kRcmLong = 10'000'000'000LL;

SwitchSettings ioq_switch() {
  SwitchSettings sw;
  sw.model = SwitchModel::kInputOutputQueued;
  sw.kmin_bytes = 20'000;  // the rcm scenarios' RED on 100 KB output queues
  sw.kmax_bytes = 80'000;
  sw.pmax = 0.2;
  sw.ecn_scale_with_rate = false;
  return sw;
}

// rcm/incast-burst: h0..h3 (on s0) -> h4 from t = 0, entering s1 by one port; h5 (on s1) -> h4, 250 KB
// at 150 us. Goodput per flow at h4 in 2 us bins, from 100 us.
struct BurstRun {
  std::vector<std::vector<double>> gbps;  // [bin][flow 0..4]
  RcmAgent::Counters s0, s1;
  uint64_t drops = 0, switch_cnps = 0, switch_messages = 0;
  Time rcc_since;  // first time s1's port to h4 ran RCC after the burst started
};

BurstRun run_burst(std::unique_ptr<CongestionControl> cc) {
  DumbbellParams dp;
  dp.senders = 4;
  dp.receivers = 2;
  const TopoSpec t = dumbbell(dp);
  Network net(t, ioq_switch(), NicSettings{}, 1, std::move(cc));
  const int s1 = lookup_node(t, "s1");
  std::vector<FlowSpec> flows;
  for (int h = 0; h < 4; ++h) flows.push_back(flow(h, 4, kRcmLong));
  flows.push_back(flow(5, 4, 250'000, Time::from_us(150)));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  BurstRun r;
  std::vector<Bytes> last(5, 0);
  const int out = port_towards(net, s1, 4);
  net.observers().on_data_delivered = [&](const Qp& qp, Bytes b) {
    if (qp.flow_id < 5) last[qp.flow_id] += b;
  };
  Ticker tick(net, Time::from_us(100), Time::from_us(2), [&](Time now) {
    std::vector<double> g(5);
    for (int i = 0; i < 5; ++i) g[i] = static_cast<double>(last[i]) * 8 / 2e-6 / 1e9;
    std::fill(last.begin(), last.end(), 0);
    r.gbps.push_back(g);
    auto* a = dynamic_cast<RcmAgent*>(net.sw(s1).agent());
    if (a && a->in_rcc(out) && r.rcc_since == Time::zero() && now > Time::from_us(150)) r.rcc_since = now;
  });
  net.run(Time::from_us(200), false);
  if (auto* a = dynamic_cast<RcmAgent*>(net.sw(s1).agent())) r.s1 = a->counters();
  if (auto* a = dynamic_cast<RcmAgent*>(net.sw(lookup_node(t, "s0")).agent())) r.s0 = a->counters();
  r.drops = net.stats().data_drops;
  r.switch_cnps = net.stats().cnps_from_switches;
  r.switch_messages = net.stats().switch_messages;
  return r;
}

// rcm/victim (RCM paper Fig. 7) on the k = 12 fat-tree: S1..S4 = h3, h4, h0, h1 -> D0 = h39 and the victim
// Sv = h2 -> Dv = h9, long flows (ECMP seed 1 maps S1, S2, Sv through one aggregation switch).
std::vector<FlowSpec> rcm_victim_flows() {
  const Bytes big = 100'000'000'000LL;
  return {flow(3, 39, big), flow(4, 39, big), flow(0, 39, big), flow(1, 39, big), flow(2, 9, big)};
}

// Mean goodput of `flow` over bins [t0, t1) us (bins start at 100 us, 2 us wide).
double mean_gbps(const BurstRun& r, int flow, double t0, double t1) {
  double sum = 0;
  int n = 0;
  for (size_t b = 0; b < r.gbps.size(); ++b) {
    const double t = 100 + 2.0 * static_cast<double>(b);
    if (t < t0 || t >= t1) continue;
    sum += r.gbps[b][static_cast<size_t>(flow)];
    ++n;
  }
  return n ? sum / n : 0;
}

}  // namespace

// The input-and-output queued model stays lossless under an 8:1 incast: no drop, every input queue below
// its 100 KB limit (PFC pauses at limit - headroom), every output queue below its limit, --check clean.
TEST(SwitchModel, IoqIncastLosslessWithinLimits) {
  DumbbellParams dp;
  dp.senders = 8;
  dp.receivers = 1;
  const TopoSpec t = dumbbell(dp);
  SwitchSettings sw = ioq_switch();
  sw.ecn_enabled = false;
  Network net(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
  std::vector<FlowSpec> flows;
  for (int h = 0; h < 8; ++h) flows.push_back(flow(h, 8, 400'000));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  CheckOptions co;
  co.invariants = true;
  // Every microsecond, however many packets are queued (CheckOptions::invariant_cost_per_packet).
  co.invariant_cost_per_packet = Time::zero();
  NetChecker checker(net, co);
  Bytes max_out = 0;
  Ticker tick(net, Time::from_us(1), [&](Time) {
    for (int s : {9, 10})
      for (const Port& p : net.sw(s).ports()) max_out = std::max(max_out, p.data_bytes);
  });
  net.run(Time::from_ms(2));
  checker.finish();
  EXPECT_FALSE(checker.failed()) << checker.failure().message;
  EXPECT_EQ(net.stats().data_drops, 0u);
  EXPECT_EQ(net.stats().flows_finished, 8u);
  EXPECT_GT(net.stats().max_ingress_bytes, 50'000);  // the queues did fill
  EXPECT_LE(net.stats().max_ingress_bytes, 100'000);
  EXPECT_GT(max_out, 90'000);
  EXPECT_LE(max_out, 100'000);
  EXPECT_GT(net.node(9).port(0).stats.pause_sent + net.node(10).port(0).stats.pause_sent, 0u);
  EXPECT_GT(checker.invariant_checks(), 100u);
}

// The crossbar serves inputs round robin: a burst entering s1 by its own port takes half the output
// while four incast flows share the other input (RCM paper Fig. 6: 50 and 12.5 Gb/s), under DCQCN.
TEST(SwitchModel, IoqCrossbarRoundRobinAmongInputs) {
  const BurstRun r = run_burst(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(Rate::from_gbps(100))));
  EXPECT_EQ(r.drops, 0u);
  const double burst = mean_gbps(r, 4, 160, 190);
  EXPECT_NEAR(burst, 47, 5);
  for (int f = 0; f < 4; ++f) EXPECT_NEAR(mean_gbps(r, f, 160, 190), 12.5, 3) << "incast flow " << f;
}

// Fig. 6 with RCM: s1 detects the burst and enters RCC within a few us, and cuts the burst at the switch
// (its goodput below DCQCN's by >= 25 %; about the paper's 25 Gb/s once the 100 KB output queue filled
// before the cut has drained, from 170 us) while the incast flows get the difference; no host is involved
// (the CNs stay between switches).
TEST(Rcm, BurstCutAtSwitchIncastRecovers) {
  const BurstRun d = run_burst(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(Rate::from_gbps(100))));
  const BurstRun r = run_burst(std::make_unique<Rcm>(RcmSettings{}));
  EXPECT_EQ(r.drops, 0u);
  ASSERT_GT(r.rcc_since, Time::zero());
  EXPECT_LE(r.rcc_since, Time::from_us(158));  // burst starts at 150 us (+ 1 hop)
  EXPECT_GT(r.s1.holds, 20u);
  const double burst_rcm = mean_gbps(r, 4, 160, 190), burst_dcqcn = mean_gbps(d, 4, 160, 190);
  double incast_rcm = 0, incast_dcqcn = 0;
  for (int f = 0; f < 4; ++f) {
    incast_rcm += mean_gbps(r, f, 160, 190);
    incast_dcqcn += mean_gbps(d, f, 160, 190);
  }
  EXPECT_LT(burst_rcm, 0.75 * burst_dcqcn) << burst_rcm << " vs " << burst_dcqcn;
  EXPECT_NEAR(mean_gbps(r, 4, 170, 190), 25, 6);
  // Hop by hop: s1's input from s0 sends CNs to s0 (its other input faces a host: none there).
  EXPECT_GT(r.s1.cn_sent, 0u);
  EXPECT_LE(r.s0.cn_received, r.s1.cn_sent);  // a few may be on the wire when the run stops
  EXPECT_GE(r.s0.cn_received + 5, r.s1.cn_sent);
  EXPECT_EQ(r.switch_messages, r.s0.cn_sent + r.s1.cn_sent);
  EXPECT_EQ(r.switch_cnps, 0u);  // nothing from a switch reaches a host
  EXPECT_GT(incast_rcm, incast_dcqcn + 3) << incast_rcm << " vs " << incast_dcqcn;
}

// SAR (seed sec. 3.4): on a leaf with two spine uplinks, once the hashed uplink is congested (two severe
// CNs naming flow X as harmful), a new non-harmful flow takes the other uplink, the harmful flow stays,
// and a running flow keeps its port until a flowlet gap. With SAR off nothing moves.
TEST(Rcm, SarDetoursOnlyNonHarmfulFlows) {
  for (bool sar : {true, false}) {
    LeafSpineParams lp;
    lp.leaves = 2;
    lp.spines = 2;
    lp.hosts_per_leaf = 2;
    const TopoSpec t = leaf_spine(lp);
    RcmSettings rs;
    rs.sar = sar;
    rs.sar_flowlet_gap = Time::from_us(5);
    Network net(t, ioq_switch(), NicSettings{}, 1, std::make_unique<Rcm>(rs));
    auto& rcm = dynamic_cast<Rcm&>(net.cc());
    const int leaf0 = 4;
    auto* a = dynamic_cast<RcmAgent*>(net.sw(leaf0).agent());
    ASSERT_NE(a, nullptr);
    auto [ports, n] = net.routes(leaf0, 2);  // towards a host of leaf 1: one port per spine
    ASSERT_EQ(n, 2);
    const int hashed = ports[0], other = ports[1];
    Packet harmful_pkt, new_pkt, running_pkt;
    harmful_pkt.qp = 1;
    new_pkt.qp = 2;
    running_pkt.qp = 3;
    EXPECT_EQ(a->select_port(running_pkt, ports, n, hashed), hashed);  // starts before the congestion
    for (int k = 0; k < 2; ++k) {  // two severe CNs from the spine behind `hashed`, naming flow 1
      Packet cn;
      cn.type = PktType::kCtrl;
      cn.cc_value = 60;
      cn.cc_flags = rcm.cn_alloc();
      rcm.cn(cn.cc_flags).n = 1;
      rcm.cn(cn.cc_flags).id[0] = RcmAgent::flow_key(harmful_pkt);
      a->on_switch_message(cn, hashed);
    }
    ASSERT_TRUE(a->remote_flag(hashed));
    EXPECT_TRUE(a->harmful(hashed, RcmAgent::flow_key(harmful_pkt)));
    EXPECT_EQ(a->select_port(harmful_pkt, ports, n, hashed), hashed);  // harmful: never detoured
    EXPECT_EQ(a->select_port(running_pkt, ports, n, hashed), hashed);  // no gap: keeps its port
    EXPECT_EQ(a->select_port(new_pkt, ports, n, hashed), sar ? other : hashed);
    EXPECT_EQ(a->select_port(new_pkt, ports, n, hashed), sar ? other : hashed);  // and stays there
    EXPECT_EQ(a->select_port(harmful_pkt, ports, 1, hashed), hashed);  // one path: nothing to choose
    EXPECT_EQ(a->counters().sar_detours_of_harmful, 0u);
    EXPECT_EQ(a->counters().sar_detours, sar ? 1u : 0u);
  }
}

// Ablation switch: without CRD nothing is detected, so no CN, no RCC, and the burst keeps DCQCN's rate.
TEST(Rcm, WithoutCrdNothingHappens) {
  RcmSettings rs;
  rs.crd = false;
  const BurstRun r = run_burst(std::make_unique<Rcm>(rs));
  const BurstRun d = run_burst(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(Rate::from_gbps(100))));
  EXPECT_EQ(r.switch_messages, 0u);
  EXPECT_EQ(r.s1.rcc_entries, 0u);
  EXPECT_EQ(r.s1.holds, 0u);
  EXPECT_NEAR(mean_gbps(r, 4, 160, 190), mean_gbps(d, 4, 160, 190), 0.01);
}

// rcm/victim (RCM paper Fig. 7) on the k = 12 fat-tree: S1 = h3, S2 = h4 (via SW_L1_5 = agg 509, then two
// different cores) and S3 = h0, S4 = h1 (via agg 504) send to D0 = h39; Sv = h2 -> h9 shares e0's uplink
// to 509 with S1 and S2. Once the incast's back-pressure reaches 509, its congested input from e0 sends
// CNs naming the harmful flows of every congested output it feeds (S1's and S2's core ports), and e0's
// uplink (edge point) holds S1 and S2 but not Sv. Before the fix the CN carried only the root's IDs
// (often S4 alone, which never crosses e0's uplink to 509), so RCC at e0 had nothing to hold.
TEST(Rcm, VictimEdgeHoldsIncastFlowsNotVictim) {
  const TopoSpec t = fat_tree({});
  RcmSettings rs;
  rs.sar = false;  // the flows stay on their ECMP paths (SAR may move S1 or S2 at a PFC-made flowlet gap)
  Network net(t, ioq_switch(), NicSettings{}, 1, std::make_unique<Rcm>(rs));
  InlineFlows src(rcm_victim_flows());
  net.set_flow_source(&src);
  const int e0 = 432, agg = 509;           // fat_tree k = 12: hosts 0..431, edges 432.., aggregations 504..
  ASSERT_GE(port_towards(net, e0, 2), 0);  // h0..h5 hang off e0
  const int up = port_towards(net, e0, agg);
  ASSERT_GE(up, 0);
  auto* a = dynamic_cast<RcmAgent*>(net.sw(e0).agent());
  ASSERT_NE(a, nullptr);
  std::vector<uint64_t> key(5, 0);
  std::vector<bool> seen(5, false);
  int samples = 0, edge = 0, right = 0, some = 0, victim_harmful = 0;
  const Time from = Time::from_us(1200), to = Time::from_us(2000);  // ~0.2 s Release
  Ticker tick(net, Time::from_us(2), [&](Time now) {
    for (const Packet* q = net.sw(e0).ports()[up].q[3].head; q; q = q->next)
      if (q->qp_tag < 5) {
        key[q->qp_tag] = RcmAgent::flow_key(*q);
        seen[q->qp_tag] = true;
      }
    if (now < from || !seen[0] || !seen[1] || !seen[4]) return;
    ++samples;
    if (!a->remote_flag(up)) return;  // an edge point of the region (CNs from 509)
    ++edge;
    const bool h1 = a->harmful(up, key[0]), h2 = a->harmful(up, key[1]), hv = a->harmful(up, key[4]);
    if (h1 && h2 && !hv) ++right;
    if ((h1 || h2) && !hv) ++some;
    if (hv) ++victim_harmful;
  });
  net.run(to, false);
  EXPECT_GT(samples, 100);
  EXPECT_GT(edge, samples / 2) << "e0's uplink is an edge point most of the time";
  EXPECT_GT(right, edge * 7 / 10) << right << " of " << edge;  // both (else one of them: a CN from
  EXPECT_GT(some, edge * 95 / 100) << some << " of " << edge;  // only one congested core port)
  EXPECT_LT(victim_harmful, edge / 20) << victim_harmful << " of " << edge;
}

namespace {

// rcm/victim (RCM paper Fig. 7) with back-pressure alone: the switches mark no ECN, so the hosts' DCQCN
// never cuts and only PFC (and, under RCM, the switches' hop-by-hop control) acts. The paper's DCQCN
// curve, Sv ~25 Gb/s, is exactly that head-of-line outcome of PFC. VOQ inputs, as in the paper.
// S1..S4 = h3, h4, h0, h1 -> D0 = h39; Sv = h2 -> Dv = h9 shares e0's uplink with S1 and S2.
// Goodput of each flow over [0.5 ms, 2 ms).
struct VictimRates {
  std::vector<double> gbps;  // flows 0..3 = S1..S4, 4 = Sv
  uint64_t drops = 0, out_of_order = 0;
};

VictimRates run_victim_pfc(std::unique_ptr<CongestionControl> cc) {
  SwitchSettings sw = ioq_switch();
  sw.input_queueing = InputQueueing::kVoq;
  sw.ecn_enabled = false;
  Network net(fat_tree({}), sw, NicSettings{}, 1, std::move(cc));
  InlineFlows src(rcm_victim_flows());
  net.set_flow_source(&src);
  const Time from = Time::from_us(500), to = Time::from_us(2000);
  std::vector<Bytes> bytes(5, 0);
  net.observers().on_data_delivered = [&](const Qp& qp, Bytes b) {
    if (qp.flow_id < 5 && net.now() >= from) bytes[qp.flow_id] += b;
  };
  net.run(to, false);
  VictimRates r;
  for (Bytes b : bytes) r.gbps.push_back(static_cast<double>(b) * 8 / (to - from).sec() / 1e9);
  r.drops = net.stats().data_drops;
  r.out_of_order = net.stats().out_of_order_packets;
  return r;
}

}  // namespace

// Fig. 7: under PFC alone the victim Sv gets about a third of e0's uplink (the incast flows' 25 Gb/s,
// head-of-line blocking); RCM's switches hold S1 and S2 at e0 (edge of the region), so Sv gets near its
// max-min fair share, 100 - 2 x 25 = 50 Gb/s, and the incast flows keep theirs.
TEST(Rcm, VictimNearFairShareUnlikeDcqcn) {
  const VictimRates d =
      run_victim_pfc(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(Rate::from_gbps(100))));
  const VictimRates r = run_victim_pfc(std::make_unique<Rcm>(RcmSettings{}));
  RcmSettings no_rcc;
  no_rcc.rcc = false;
  const VictimRates n = run_victim_pfc(std::make_unique<Rcm>(no_rcc));
  std::printf(
      "Sv 0.5-2 ms: DCQCN %.1f, RCM %.1f, RCM without RCC %.1f Gb/s; RCM incast %.1f %.1f %.1f %.1f\n",
      d.gbps[4], r.gbps[4], n.gbps[4], r.gbps[0], r.gbps[1], r.gbps[2], r.gbps[3]);
  EXPECT_EQ(d.drops + r.drops + n.drops, 0u);
  EXPECT_LT(d.gbps[4], 30) << "DCQCN (PFC alone): head-of-line blocking holds Sv near 25 Gb/s";
  EXPECT_GT(r.gbps[4], 40) << "RCM: Sv near its fair 50 Gb/s";
  EXPECT_LT(r.gbps[4], 55) << "and not above it (e0's uplink also carries S1 and S2)";
  EXPECT_LT(n.gbps[4], 30) << "without RCC nothing holds S1/S2 at e0";
  for (int f = 0; f < 4; ++f) EXPECT_NEAR(r.gbps[static_cast<size_t>(f)], 24, 3) << "incast flow " << f;
  EXPECT_EQ(r.out_of_order, 0u);
}
