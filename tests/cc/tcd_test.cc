// TCD (ternary congestion detection), DCQCN+TCD, and credit-based flow control (CBFC).
#include "cc/tcd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "cc/dcqcn.h"
#include "cc/none.h"
#include "config/scenario.h"
#include "net/host.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kTcdLong = 10'000'000'000LL;

}  // namespace

TEST(Tcd, MaxTonTable) {
  const double want[] = {34.4, 26.96, 24.48};
  const double gbps[] = {40, 100, 200};
  for (int i = 0; i < 3; ++i) {
    const Time m = tcd_max_ton(Rate::from_gbps(gbps[i]), 0.05, 1000, Time::from_us(1));
    std::printf("max(T_on) at %3.0f Gb/s: %.2f us (seed %.2f us)\n", gbps[i], m.us(), want[i]);
    EXPECT_NEAR(m.us(), want[i], 0.005);
  }
  // Xoff - Xon enters through (B1 - B0) / (eps C): 4 MTU at 40 Gb/s adds 8 us.
  EXPECT_NEAR(tcd_max_ton(Rate::from_gbps(40), 0.05, 1000, Time::from_us(1), 4000).us(), 42.4, 0.005);
}

// ---------------------------------------------------------------------------------------------------
// mercury/victim (tcd/victim): F1 (H1 -> R1) is the victim of the pauses the bursts to R2 cause at S3;
// F2 (H2 -> R2) shares R2's port with the bursts. P1 = S1 -> S2, P2 = S2 -> S3, P3 = S3 -> R2.
namespace {

struct VictimRun {
  double f1_before = 0, f1_during = 0;  // F1 goodput 2.5-3 ms and 3-4 ms (bursts), Gb/s
  Rate f1_min_rate;
  uint32_t f1_ce_cnps = 0, f1_ue_cnps = 0, f2_ce_cnps = 0, f2_ue_cnps = 0;
  // Dequeues classified per state during 3-4 ms at P1, P2, P3 (TCD only), and CE/UE marks there.
  uint64_t seen[3][3] = {};
  uint64_t ce[3] = {}, ue[3] = {};
  Bytes max_q[3] = {};
  uint64_t starved_p2 = 0;  // PAUSEs (or credit starvation) S2's port to S3 saw
  uint64_t drops = 0;
  Bytes max_ingress = 0;
  uint64_t bytes_delivered = 0;
  // CNP counts of the run (NetStats) and of F1 (its receiver's count, its sender's, TCD's own UE count).
  uint64_t cnps_sent = 0, ue_cnps_sent = 0;
  uint32_t f1_cnps_sent = 0, f1_cnps_received = 0, f1_ue_sent = 0;
  uint64_t ue_sent_all = 0, ce_cnps_all = 0;  // TCD's per-flow UE-CNPs sent, CE CNPs received, live flows
};

// credit_buffer > 0: credit-based flow control with that per-(ingress, priority) buffer and period t_c.
VictimRun run_victim(std::unique_ptr<CongestionControl> cc, Bytes credit_buffer = 0,
                     Time t_c = Time::zero()) {
  MercuryVictimParams mp;
  const TopoSpec t = mercury_victim(mp);
  // Xoff - Xon = 2 MTU (TCD's recommendation); the DCQCN paper's RED (TCD's K = Kmin).
  SwitchSettings sw = static_pfc_paper_red(100'000, 98'000);
  if (credit_buffer > 0) {
    sw.pfc_enabled = false;
    sw.credit_enabled = true;
    sw.credit_buffer_bytes = credit_buffer;
    sw.credit_period = t_c;
  }
  Network net(t, sw, NicSettings{}, 1, std::move(cc));
  const int r2 = lookup_node(t, "R2"), s1 = lookup_node(t, "S1"), s2 = lookup_node(t, "S2"),
            s3 = lookup_node(t, "S3");
  const int sws[3] = {s1, s2, s3};
  const int ports[3] = {port_towards(net, s1, s2), port_towards(net, s2, s3), port_towards(net, s3, r2)};
  InlineFlows src(victim_flows(t, kTcdLong, 40, 12.5));
  net.set_flow_source(&src);
  auto got = [&](uint64_t id) { return net.find_flow(id)->rcv_nxt; };
  auto gbps = [](Bytes b, double us) { return static_cast<double>(b) * 8.0 / (us * 1e-6) / 1e9; };
  auto agent = [&](int i) { return dynamic_cast<TcdAgent*>(net.sw(sws[i]).agent()); };
  VictimRun r;
  net.run(Time::from_us(2500));
  const Bytes a1 = got(0);
  net.run(Time::from_us(3000));
  const Bytes b1 = got(0);
  uint64_t seen0[3][3] = {};
  for (int i = 0; i < 3; ++i)
    if (agent(i))
      for (int s = 0; s < 3; ++s) seen0[i][s] = agent(i)->counters(ports[i]).seen[s];
  r.f1_min_rate = net.find_flow(0)->rate;
  Ticker sampler(net, Time::from_us(5), [&](Time) {
    r.f1_min_rate = std::min(r.f1_min_rate, net.find_flow(0)->rate);
    for (int i = 0; i < 3; ++i) r.max_q[i] = std::max(r.max_q[i], net.sw(sws[i]).egress_data_bytes(ports[i]));
  });
  net.run(Time::from_us(4000));
  r.f1_before = gbps(b1 - a1, 500);
  r.f1_during = gbps(got(0) - b1, 1000);
  for (int i = 0; i < 3; ++i) {
    if (!agent(i)) continue;
    const auto& c = agent(i)->counters(ports[i]);
    for (int s = 0; s < 3; ++s) r.seen[i][s] = c.seen[s] - seen0[i][s];
    r.ce[i] = c.ce;
    r.ue[i] = c.ue;
  }
  if (auto* tcd = dynamic_cast<DcqcnTcd*>(&net.cc())) {
    r.f1_ce_cnps = tcd->tcd_state(*net.find_flow(0)).ce_cnps_received;
    r.f1_ue_cnps = tcd->tcd_state(*net.find_flow(0)).ue_cnps_received;
    r.f2_ce_cnps = tcd->tcd_state(*net.find_flow(1)).ce_cnps_received;
    r.f2_ue_cnps = tcd->tcd_state(*net.find_flow(1)).ue_cnps_received;
  } else {
    r.f1_ce_cnps = net.find_flow(0)->cnps_received;
    r.f2_ce_cnps = net.find_flow(1)->cnps_received;
  }
  r.starved_p2 = net.sw(s2).port(ports[1]).stats.pause_received;
  r.drops = net.stats().data_drops;
  r.max_ingress = net.stats().max_ingress_bytes;
  r.bytes_delivered = static_cast<uint64_t>(net.stats().bytes_delivered);
  r.cnps_sent = net.stats().cnps_sent;
  r.ue_cnps_sent = net.stats().ue_cnps_sent;
  r.f1_cnps_sent = net.find_flow(0)->cnps_sent;
  r.f1_cnps_received = net.find_flow(0)->cnps_received;
  if (auto* tcd = dynamic_cast<DcqcnTcd*>(&net.cc())) {
    r.f1_ue_sent = tcd->tcd_state(*net.find_flow(0)).ue_cnps_sent;
    for (uint64_t id = 0; const Qp* qp = net.find_flow(id); ++id) {
      r.ue_sent_all += tcd->tcd_state(*qp).ue_cnps_sent;
      r.ce_cnps_all += tcd->tcd_state(*qp).ce_cnps_received;
    }
  }
  return r;
}

void print(const char* name, const VictimRun& r) {
  std::printf(
      "%-10s F1 %.1f -> %.1f Gb/s (min rate %.1f); CNPs F1 CE %u UE %u, F2 CE %u UE %u; "
      "max queue P1/P2/P3 %ld/%ld/%ld KB; pauses at P2 %lu\n",
      name, r.f1_before, r.f1_during, r.f1_min_rate.gbps(), r.f1_ce_cnps, r.f1_ue_cnps, r.f2_ce_cnps,
      r.f2_ue_cnps, static_cast<long>(r.max_q[0] / 1000), static_cast<long>(r.max_q[1] / 1000),
      static_cast<long>(r.max_q[2] / 1000), static_cast<unsigned long>(r.starved_p2));
  const char* names[3] = {"P1 S1->S2", "P2 S2->S3", "P3 S3->R2"};
  for (int i = 0; i < 3; ++i)
    if (r.seen[i][0] + r.seen[i][1] + r.seen[i][2] > 0)
      std::printf(
          "           %s: dequeues non-congestion %lu congestion %lu undetermined %lu; "
          "CE %lu UE %lu\n",
          names[i], static_cast<unsigned long>(r.seen[i][0]), static_cast<unsigned long>(r.seen[i][1]),
          static_cast<unsigned long>(r.seen[i][2]), static_cast<unsigned long>(r.ce[i]),
          static_cast<unsigned long>(r.ue[i]));
}

DcqcnSettings dcqcn40() { return DcqcnSettings::mellanox(Rate::from_gbps(40)); }

}  // namespace

TEST(Tcd, VictimPortIsUndeterminedAndOnlyTheCongestedFlowIsCut) {
  const VictimRun tcd = run_victim(std::make_unique<DcqcnTcd>(dcqcn40(), TcdSettings{}));
  const VictimRun dcqcn = run_victim(std::make_unique<Dcqcn>(dcqcn40()));
  print("DCQCN+TCD", tcd);
  print("DCQCN", dcqcn);
  EXPECT_GT(tcd.f1_before, 18.0);
  EXPECT_GT(tcd.starved_p2, 0u);  // PFC spread the congestion to S2
  // P1 and P2 carry only paused traffic: undetermined, never CE; P3 (the real bottleneck) is congestion.
  EXPECT_GT(tcd.seen[0][2], 0u);
  EXPECT_GT(tcd.seen[1][2], 0u);
  EXPECT_EQ(tcd.ce[0], 0u);
  EXPECT_GT(tcd.ue[0] + tcd.ue[1], 0u);
  EXPECT_GT(tcd.seen[2][1], 0u);
  EXPECT_GT(tcd.ce[2], 0u);
  // The victim gets only UE-CNPs; the congested flow gets CNPs.
  EXPECT_EQ(tcd.f1_ce_cnps, 0u);
  EXPECT_GT(tcd.f1_ue_cnps, 0u);
  EXPECT_GT(tcd.f2_ce_cnps, 0u);
  // Plain DCQCN marks (and cuts) the victim.
  EXPECT_GT(dcqcn.f1_ce_cnps, 0u);
  EXPECT_LT(dcqcn.f1_min_rate.gbps(), tcd.f1_min_rate.gbps());
  EXPECT_GT(tcd.f1_during, dcqcn.f1_during + 1.0);
  EXPECT_EQ(tcd.drops, 0u);
  EXPECT_EQ(dcqcn.drops, 0u);
}

// UE-CNPs are CNPs: counted in the run's cnps_sent (summary.json cnp.sent_by_receivers), and on their own
// (cnp.ue_cnps_sent), and in the flow's cnps_sent, as its sender counts them received.
TEST(Tcd, UeCnpsAreCountedAsCnps) {
  const VictimRun r = run_victim(std::make_unique<DcqcnTcd>(dcqcn40(), TcdSettings{}));
  std::printf("[tcd] CNPs sent %lu, of which UE %lu; F1: sent %u (UE %u), received %u\n",
              static_cast<unsigned long>(r.cnps_sent), static_cast<unsigned long>(r.ue_cnps_sent),
              r.f1_cnps_sent, r.f1_ue_sent, r.f1_cnps_received);
  EXPECT_GT(r.f1_ue_sent, 0u);
  EXPECT_EQ(r.f1_cnps_sent, r.f1_ue_sent);        // the victim gets only UE-CNPs
  EXPECT_GE(r.f1_cnps_sent, r.f1_cnps_received);  // (those still on their way are not received yet)
  EXPECT_GE(r.ue_cnps_sent, r.ue_sent_all);       // flows finished earlier sent some too
  EXPECT_GE(r.cnps_sent, r.ue_cnps_sent + r.ce_cnps_all);
  EXPECT_GT(r.cnps_sent, r.ue_cnps_sent);  // and F2 got DCQCN's CNPs
  // DCQCN alone sends no UE-CNPs.
  EXPECT_EQ(run_victim(std::make_unique<Dcqcn>(dcqcn40())).ue_cnps_sent, 0u);
}

// ---------------------------------------------------------------------------------------------------
// Credit-based flow control

// Credit-based flow control instead of PFC: 100 KB per (ingress, priority), credits returned every 10 us.
SwitchSettings credit_switch() {
  SwitchSettings sw;
  sw.pfc_enabled = false;
  sw.credit_enabled = true;
  sw.credit_buffer_bytes = 100'000;
  sw.credit_period = Time::from_us(10);
  return sw;
}

TEST(Cbfc, IncastIsLosslessAndBoundedByTheCreditBuffer) {
  const int n = 16;
  const TopoSpec t = star({.hosts = n + 1, .rate = Rate::from_gbps(100), .delay = Time::from_us(1)});
  const SwitchSettings sw = credit_switch();
  Network net(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
  std::vector<FlowSpec> flows;
  const Bytes size = 1'000'000;
  for (int i = 0; i < n; ++i) flows.push_back(flow(i, n, size));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  net.run(Time::from_ms(20));
  const int s0 = n + 1;
  uint64_t starved = 0;
  for (auto& p : net.sw(s0).ports()) starved += p.stats.pause_received;
  uint64_t host_starved = 0;
  for (int i = 0; i < n; ++i) host_starved += net.host(i).port(0).stats.pause_received;
  std::printf(
      "CBFC 16:1 incast: %lu/%d flows done, %ld bytes delivered, drops %lu, max ingress %ld B "
      "(credit buffer %ld), host starvation events %lu, switch %lu\n",
      static_cast<unsigned long>(net.stats().flows_finished), n,
      static_cast<long>(net.stats().bytes_delivered), static_cast<unsigned long>(net.stats().data_drops),
      static_cast<long>(net.stats().max_ingress_bytes), static_cast<long>(sw.credit_buffer_bytes),
      static_cast<unsigned long>(host_starved), static_cast<unsigned long>(starved));
  EXPECT_EQ(net.stats().flows_finished, static_cast<uint64_t>(n));
  EXPECT_EQ(net.stats().bytes_delivered, size * n);
  EXPECT_EQ(net.stats().data_drops, 0u);
  EXPECT_EQ(net.stats().timeouts, 0u);
  EXPECT_LE(net.stats().max_ingress_bytes, sw.credit_buffer_bytes);
  EXPECT_GT(net.stats().max_ingress_bytes, sw.credit_buffer_bytes / 2);  // the buffer was used
  EXPECT_GT(host_starved, 0u);                                           // the senders were held back
}

// With the TCD testbed's 800 KB per ingress, DCQCN cuts F2 before S3's ingress from S2 fills, so no
// credit starvation spreads; a 150 KB buffer with T_c = 20 us (above C (T_c + RTT) at 40 Gb/s) does spread.
TEST(Cbfc, TcdClassifiesTheVictimPortUndetermined) {
  const Bytes buf = 150'000;
  const VictimRun r =
      run_victim(std::make_unique<DcqcnTcd>(dcqcn40(), TcdSettings{}), buf, Time::from_us(20));
  const VictimRun d = run_victim(std::make_unique<Dcqcn>(dcqcn40()), buf, Time::from_us(20));
  print("TCD/CBFC", r);
  print("DCQCN/CBFC", d);
  EXPECT_GT(r.starved_p2, 0u);  // S3 ran S2 out of credits
  EXPECT_GT(r.seen[1][2], 0u);  // P2 undetermined
  EXPECT_GT(r.seen[2][1], 0u);  // P3 congestion
  EXPECT_GT(r.f2_ce_cnps, 0u);
  EXPECT_EQ(r.f1_ce_cnps, 0u);
  EXPECT_EQ(r.drops, 0u);
  EXPECT_LE(r.max_ingress, buf);
  EXPECT_EQ(d.drops, 0u);
  EXPECT_GT(r.f1_during, d.f1_during);
}

TEST(Cbfc, FlowControlKeySelectsCreditsAndKeepsSwitchPfcWorking) {
  const std::string base =
      "[topology]\nkind = \"star\"\n[[traffic]]\nsize_bytes = 1000\nload = 0.1\nstop_us = 10\n";
  const Scenario c = load_scenario_text(
      base + "[switch]\nflow_control = \"credit\"\ncredit_buffer_bytes = 300000\ncredit_period_us = 30\n",
      "c.toml");
  EXPECT_TRUE(c.sw.credit_enabled);
  EXPECT_FALSE(c.sw.pfc_enabled);
  EXPECT_EQ(c.sw.credit_buffer_bytes, 300'000);
  EXPECT_EQ(c.sw.credit_period, Time::from_us(30));
  const Scenario n = load_scenario_text(base + "[switch]\npfc = false\n", "n.toml");
  EXPECT_FALSE(n.sw.pfc_enabled);
  EXPECT_FALSE(n.sw.credit_enabled);
  const Scenario p = load_scenario_text(base, "p.toml");
  EXPECT_TRUE(p.sw.pfc_enabled);
  EXPECT_FALSE(p.sw.credit_enabled);
  EXPECT_THROW(load_scenario_text(base + "[switch]\nflow_control = \"xon\"\n", "x.toml"), std::exception);
  // TCD's bound under credits is T_c.
  const TopoSpec t = star({.hosts = 3});
  SwitchSettings sw = c.sw;
  Network net(t, sw, NicSettings{}, 1, std::make_unique<DcqcnTcd>(dcqcn40(), TcdSettings{}));
  auto* a = dynamic_cast<TcdAgent*>(net.sw(3).agent());
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->max_ton(0), Time::from_us(30));
}

// Credit starvation reaches the PFC observer (and so pfc.csv) as pause/resume: one pause per starved
// interval, one resume per refill, and the intervals add up to the ports' paused time.
TEST(Cbfc, StarvationIsReportedLikePauseAndResume) {
  const int n = 8;
  const TopoSpec t = star({.hosts = n + 1, .rate = Rate::from_gbps(100), .delay = Time::from_us(1)});
  Network net(t, credit_switch(), NicSettings{}, 1, std::make_unique<NoCc>());
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i) flows.push_back(flow(i, n, 500'000));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  uint64_t pauses = 0, resumes = 0;
  int64_t starved_ps = 0;
  std::vector<int64_t> since(static_cast<size_t>(n + 2) * 64 * kNumPriorities, -1);
  net.observers().on_pfc_rx = [&](const Node& node, int port, int prio, bool pause, Time now) {
    int64_t& s = since[(static_cast<size_t>(node.id()) * 64 + port) * kNumPriorities + prio];
    if (pause) {
      ++pauses;
      EXPECT_EQ(s, -1);  // a pause only while not starved
      s = now.ps;
    } else {
      ++resumes;
      ASSERT_GE(s, 0);  // a resume only after a pause
      starved_ps += now.ps - s;
      s = -1;
    }
  };
  net.run(Time::from_ms(20));
  uint64_t received = 0;
  int64_t paused_ps = 0;
  for (int i = 0; i <= n + 1; ++i) {  // the hosts and the switch
    for (auto& p : net.node(i).ports()) {
      received += p.stats.pause_received;
      paused_ps += p.stats.paused_time.ps;
    }
  }
  std::printf("CBFC 8:1 incast: %lu starved intervals, %lu refills, %.1f us starved\n",
              static_cast<unsigned long>(pauses), static_cast<unsigned long>(resumes), starved_ps / 1e6);
  EXPECT_EQ(net.stats().flows_finished, static_cast<uint64_t>(n));
  EXPECT_GT(pauses, 0u);
  EXPECT_EQ(pauses, resumes);  // every flow finished, so every starved port was refilled
  EXPECT_EQ(pauses, received);
  EXPECT_EQ(starved_ps, paused_ps);
}
