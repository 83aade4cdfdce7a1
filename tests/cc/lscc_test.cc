// Cross-datacenter RDMA (LSCC paper; algorithms.md 2.10, 3.4, 3.5): the long-haul fabric (BDP headroom,
// per-port PFC thresholds), LSCC's rate calculation (Alg. 1) and loops, HPCC*'s direct INT, SWING's relay.
#include "cc/lscc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "app/run.h"
#include "cc/hpcc_star.h"
#include "cc/none.h"
#include "cc/swing.h"
#include "config/scenario.h"
#include "core/error.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kLsccLong = 100'000'000'000LL;

// The LSCC paper's micro-benchmark fabric, shrunk: k = 2 fat-trees with two hosts per ToR (4 hosts per DC).
TopoSpec tiny_cross_dc() { return cross_dc({.k = 2, .hosts_per_edge = 2}); }

// Static PFC 300/100 KB in the DCs, 5 MB / 4.8 MB on long-haul ports [LSCC paper].
SwitchSettings lscc_switch() {
  SwitchSettings sw;
  sw.pfc_mode = PfcThresholdMode::kStatic;
  sw.xoff_bytes = 300'000;
  sw.xon_bytes = 100'000;
  sw.long_haul_xoff_bytes = 5'000'000;
  sw.long_haul_xon_bytes = 4'800'000;
  sw.buffer_bytes = 80'000'000;
  return sw;
}

int long_port(Network& net, int sw) {
  for (auto& p : net.sw(sw).ports())
    if (p.long_haul) return p.index;
  return -1;
}

}  // namespace

TEST(LsccRateCalc, StartsAtTheFirstBrThenMovesByDeltaRUpToRmax) {
  // R_last starts at the first measured BR; with Q = Q_ref, a jump of BR moves R by delta R per period.
  LsccRateCalc c(Time::from_us(200), 2'000'000, Rate::from_gbps(1), Rate::from_gbps(1), Rate::from_gbps(190),
                 10);
  EXPECT_EQ(c.n(), 10);
  EXPECT_DOUBLE_EQ(c.step(Rate{}, 0).gbps(), 190);  // no traffic yet: nothing measured, R_max stands
  EXPECT_DOUBLE_EQ(c.step(Rate::from_gbps(40), 2'000'000).gbps(), 40);
  EXPECT_DOUBLE_EQ(c.step(Rate::from_gbps(100), 2'000'000).gbps(), 41);
  EXPECT_DOUBLE_EQ(c.step(Rate::from_gbps(100), 2'000'000).gbps(), 42);
  for (int i = 0; i < 400; ++i) c.step(Rate::from_gbps(500), 2'000'000);
  EXPECT_DOUBLE_EQ(c.last().gbps(), 190);  // R_max
}

// Alg. 1 in a closed loop with sources that send exactly R after one long-haul RTT (N periods): from a
// queue of 6 MB and a rate step, the queue returns to Q_ref and R to BR (the in-flight list makes the
// loop dead-beat up to the delta R clamp).
TEST(LsccRateCalc, ClosedLoopSettlesAtQrefAndBr) {
  const int n = 10;
  const double t = 200e-6, br = 40e9;
  LsccRateCalc c(Time::from_us(200), 2'000'000, Rate::from_gbps(1), Rate::from_gbps(1), Rate::from_gbps(190),
                 n);
  std::vector<double> sent(n, 60e9);  // what arrives in the next n periods (the sources ran at 60 Gb/s)
  double q = 6e6;
  double max_late_dev = 0;
  for (int k = 0; k < 600; ++k) {
    const double r = c.step(Rate::from_bps(br), static_cast<Bytes>(q)).bps;
    q = std::max(0.0, q + (sent[k % n] - br) * t / 8);  // arrivals of R from n periods ago
    sent[k % n] = r;
    if (k > 400) max_late_dev = std::max(max_late_dev, std::abs(q - 2e6));
  }
  EXPECT_NEAR(c.last().gbps(), 40, 0.01);
  EXPECT_LT(max_late_dev, 0.05e6);
}

TEST(LsccRateCalc, CountsTheAdjustmentsInFlightOnce) {
  // Without clamps: a queue 0.5 MB above Q_ref asks for Ra = 0.5 MB / T = 20 Gb/s once; while that Ra is in
  // flight (N periods) the same queue asks for nothing more, so R returns to BR the next period (Alg. 1
  // line 2); N periods later the Ra has left the list and the still-high queue asks again.
  LsccRateCalc c(Time::from_us(200), 2'000'000, Rate::from_gbps(1000), Rate::from_gbps(0.001),
                 Rate::from_gbps(200), 10);
  for (int i = 0; i < 10; ++i) c.step(Rate::from_gbps(40), 2'000'000);
  const double ra = 0.5e6 * 8 / 200e-6;  // 20 Gb/s
  EXPECT_NEAR(c.step(Rate::from_gbps(40), 2'500'000).bps, 40e9 - ra, 1);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(c.step(Rate::from_gbps(40), 2'500'000).gbps(), 40, 1e-6);
  EXPECT_NEAR(c.ra_sent(), ra, 1);
  EXPECT_NEAR(c.step(Rate::from_gbps(40), 2'500'000).gbps(), 40, 1e-6);  // the Ra leaves the list now
  EXPECT_NEAR(c.step(Rate::from_gbps(40), 2'500'000).bps, 40e9 - ra, 1);
}

TEST(CrossDc, ShapeAndLongHaulLink) {
  const TopoSpec t = cross_dc({});
  EXPECT_EQ(t.num_hosts(), 32);  // k = 4: 16 hosts per DC, 2 per ToR [LSCC paper Fig. 1]
  EXPECT_EQ(t.num_nodes, 32 + 2 * 20 + 2);
  int long_links = 0;
  for (const LinkSpec& l : t.links) {
    if (!l.long_haul) continue;
    ++long_links;
    EXPECT_EQ(l.a, lookup_node(t, "egress_a"));
    EXPECT_EQ(l.b, lookup_node(t, "egress_b"));
    EXPECT_DOUBLE_EQ(l.rate.gbps(), 200);
    EXPECT_EQ(l.delay, Time::from_ms(1));
  }
  EXPECT_EQ(long_links, 1);
  EXPECT_GE(lookup_node(t, "a15"), 0);
  EXPECT_GE(lookup_node(t, "b15"), 0);
}

namespace {

struct IncastRun {
  uint64_t drops = 0;
  uint64_t long_pauses = 0;  // PAUSEs egress_b sent across the long-haul link
  Bytes headroom = 0;        // of egress_b's long-haul port
  Bytes max_ingress = 0;
  Bytes long_ingress_at_first_pause = -1;
};

// 4 sources in DC A at line rate to one host in DC B (4:1 over the long-haul link), PFC only or SWING.
IncastRun run_incast(std::unique_ptr<CongestionControl> cc, Bytes long_headroom, Time until) {
  const TopoSpec t = tiny_cross_dc();
  SwitchSettings sw = lscc_switch();
  sw.long_haul_headroom_bytes = long_headroom;
  Network net(t, sw, NicSettings{}, 1, std::move(cc));
  const int b0 = lookup_node(t, "b0"), eb = lookup_node(t, "egress_b");
  InlineFlows src({flow(lookup_node(t, "a0"), b0, kLsccLong), flow(lookup_node(t, "a1"), b0, kLsccLong),
                   flow(lookup_node(t, "a2"), b0, kLsccLong), flow(lookup_node(t, "a3"), b0, kLsccLong)});
  net.set_flow_source(&src);
  const int lp = long_port(net, eb);
  IncastRun r;
  Ticker probe(net, Time::from_us(1), [&](Time) {
    if (r.long_ingress_at_first_pause < 0 && net.sw(eb).port(lp).stats.pause_sent > 0) {
      const IngressCounters& c = net.sw(eb).ingress(lp, net.nic_settings().data_priority);
      r.long_ingress_at_first_pause = c.bytes + c.hdrm_bytes;
    }
  });
  net.run(until, false);
  r.drops = net.stats().data_drops;
  r.long_pauses = net.sw(eb).port(lp).stats.pause_sent;
  r.headroom = net.sw(eb).headroom(lp);
  r.max_ingress = net.stats().max_ingress_bytes;
  return r;
}

}  // namespace

// The lossless invariant across the long-haul link: 4:1 at line rate fills egress_b's long-haul ingress past
// Xoff (5 MB); the 2 ms of data in flight when the PAUSE leaves lands in the BDP headroom (50 MB + 2 MTU):
// nothing is dropped. The same run with 1 MB of headroom drops (so the headroom is what keeps it lossless).
TEST(CrossDc, LongHaulHeadroomKeepsPfcLossless) {
  const Time until = Time::from_ms(6);
  const IncastRun ok = run_incast(std::make_unique<NoCc>(), 0, until);
  std::printf("BDP headroom %ld B: drops %lu, long-haul PAUSEs %lu, max ingress %ld B\n", ok.headroom,
              static_cast<unsigned long>(ok.drops), static_cast<unsigned long>(ok.long_pauses),
              ok.max_ingress);
  EXPECT_GE(ok.headroom, 50'000'000);  // 200 Gb/s x 2 ms
  EXPECT_EQ(ok.drops, 0u);
  EXPECT_GT(ok.long_pauses, 0u);                     // PFC did cross the long-haul link
  EXPECT_GT(ok.max_ingress, 5'000'000 + 5'000'000);  // and the headroom absorbed megabytes
  const IncastRun small = run_incast(std::make_unique<NoCc>(), 1'000'000, until);
  std::printf("1 MB headroom: drops %lu\n", static_cast<unsigned long>(small.drops));
  EXPECT_GT(small.drops, 0u);
}

// SWING's relay: a PAUSE inside DC B reaches the long-haul link at once, long before egress_b's long-haul
// ingress reaches its X_off (1.2 BDP here); still lossless.
TEST(Swing, RelaysInDcPausesAcrossTheLongHaulLink) {
  const IncastRun r = run_incast(std::make_unique<Swing>(SwingSettings{}), 0, Time::from_ms(6));
  std::printf("SWING: drops %lu, long-haul PAUSEs %lu, long ingress at the first one %ld B\n",
              static_cast<unsigned long>(r.drops), static_cast<unsigned long>(r.long_pauses),
              r.long_ingress_at_first_pause);
  EXPECT_EQ(r.drops, 0u);
  EXPECT_GT(r.long_pauses, 0u);
  EXPECT_GE(r.long_ingress_at_first_pause, 0);
  EXPECT_LT(r.long_ingress_at_first_pause, 5'000'000);
}

namespace {

struct StabilityRun {
  std::vector<std::vector<double>> window_gbps;  // per 5 ms window from 0, per flow (goodput)
  double queue_mean = 0;                         // remote ingress queue, mean over 40-60 ms (bytes)
  uint64_t long_pauses = 0;                      // PAUSEs across the long-haul link after 20 ms
  uint64_t direct = 0;                           // direct CNPs / direct INTs
  uint64_t drops = 0;
};

// lscc/stability (scenarios/lscc/stability.toml): 4 sources in DC A, one receiver in DC B, 60 ms.
StabilityRun run_stability(std::unique_ptr<CongestionControl> cc, Time until) {
  const TopoSpec t = tiny_cross_dc();
  Network net(t, lscc_switch(), NicSettings{}, 1, std::move(cc));
  const int b0 = lookup_node(t, "b0"), ea = lookup_node(t, "egress_a"), eb = lookup_node(t, "egress_b");
  InlineFlows src({flow(lookup_node(t, "a0"), b0, kLsccLong), flow(lookup_node(t, "a1"), b0, kLsccLong),
                   flow(lookup_node(t, "a2"), b0, kLsccLong), flow(lookup_node(t, "a3"), b0, kLsccLong)});
  net.set_flow_source(&src);
  const int lp_b = long_port(net, eb);
  StabilityRun r;
  double q_sum = 0;
  int q_n = 0;
  uint64_t pauses_at_20ms = 0;
  Ticker q(net, Time::from_us(100), [&](Time now) {
    if (now == Time::from_ms(20)) pauses_at_20ms = net.sw(eb).port(lp_b).stats.pause_sent;
    if (now < Time::from_ms(40) || now > Time::from_ms(60)) return;
    auto* a = dynamic_cast<LsccSwitchAgent*>(net.sw(eb).agent());
    q_sum += static_cast<double>(a ? a->ingress_queue(lp_b) : 0);
    ++q_n;
  });
  std::vector<Bytes> last(4, 0);
  for (Time w = Time::from_ms(5); w <= until; w += Time::from_ms(5)) {
    net.run(w, false);
    std::vector<double> g;
    for (uint64_t f = 0; f < 4; ++f) {
      const Bytes now = net.find_flow(f)->rcv_nxt;
      g.push_back(static_cast<double>(now - last[f]) * 8 / 5e-3 / 1e9);
      last[f] = now;
    }
    r.window_gbps.push_back(g);
  }
  r.queue_mean = q_n ? q_sum / q_n : 0;
  r.long_pauses = net.sw(eb).port(lp_b).stats.pause_sent - pauses_at_20ms;
  if (auto* a = dynamic_cast<LsccAgent*>(net.sw(ea).agent())) r.direct = a->direct_cnps();
  if (auto* a = dynamic_cast<HpccStarAgent*>(net.sw(ea).agent())) r.direct = a->direct_ints();
  r.drops = net.stats().data_drops;
  return r;
}

void print_windows(const char* what, const StabilityRun& r) {
  std::printf("%s: remote queue mean 40-60 ms %.2f MB, direct %lu, long-haul PAUSEs after 20 ms %lu\n", what,
              r.queue_mean / 1e6, static_cast<unsigned long>(r.direct),
              static_cast<unsigned long>(r.long_pauses));
  for (size_t w = 0; w < r.window_gbps.size(); ++w)
    std::printf("  %2zu-%2zu ms: %5.2f %5.2f %5.2f %5.2f Gb/s\n", 5 * w, 5 * w + 5, r.window_gbps[w][0],
                r.window_gbps[w][1], r.window_gbps[w][2], r.window_gbps[w][3]);
}

}  // namespace

// Seed 004 Fig. 8: N = 4 long flows across the long-haul link reach the fair share within 50 ms (25 long-haul
// RTTs) and stay there; the remote egress switch's long-haul ingress queue settles at Q_ref (2 MB).
TEST(Lscc, StabilityFairShareWithin50msAndQueueAtQref) {
  const StabilityRun r = run_stability(std::make_unique<Lscc>(LsccSettings{}), Time::from_ms(60));
  print_windows("LSCC", r);
  const double fair = 40.0 * 1000 / 1048 / 4;        // goodput share of the 40 Gb/s receiver link
  for (size_t w = 8; w < r.window_gbps.size(); ++w)  // every 5 ms window from 40 ms on
    for (double g : r.window_gbps[w]) EXPECT_NEAR(g, fair, 0.1 * fair) << "window " << w;
  EXPECT_NEAR(r.queue_mean, 2e6, 0.2 * 2e6);
  EXPECT_GT(r.direct, 0u);
  EXPECT_EQ(r.long_pauses, 0u);
  EXPECT_EQ(r.drops, 0u);
}

// Without a scheme the same incast (two sources are enough) fills the long-haul ingress past its Xoff and
// pauses the long-haul link: the stability test's "no long-haul PAUSE" can fail.
TEST(Lscc, PfcOnlyPausesTheLongHaulLinkInTheSameIncast) {
  const TopoSpec t = tiny_cross_dc();
  Network net(t, lscc_switch(), NicSettings{}, 1, std::make_unique<NoCc>());
  const int b0 = lookup_node(t, "b0"), eb = lookup_node(t, "egress_b");
  InlineFlows src({flow(lookup_node(t, "a0"), b0, kLsccLong), flow(lookup_node(t, "a1"), b0, kLsccLong)});
  net.set_flow_source(&src);
  net.run(Time::from_ms(20), false);
  EXPECT_GT(net.sw(eb).port(long_port(net, eb)).stats.pause_sent, 0u);
}

// HPCC* (LSCC paper section V): direct INT from the near egress switch; the sources hold the long-haul
// ingress queue bounded without long-haul PAUSEs and keep the link busy.
TEST(HpccStar, DirectIntKeepsTheLongHaulLinkPauseFree) {
  HpccStarSettings s;
  s.hpcc = HpccSettings::for_nic_rate(Rate::from_gbps(40));
  // The whole 40 ms also under the sanitizers: "after 20 ms" needs the loop settled (a shorter run paused
  // once).
  const StabilityRun r = run_stability(std::make_unique<HpccStar>(s), Time::from_ms(40));
  print_windows("HPCC*", r);
  EXPECT_GT(r.direct, 1000u);
  EXPECT_EQ(r.long_pauses, 0u);
  EXPECT_EQ(r.drops, 0u);
  double total = 0;
  for (double g : r.window_gbps.back()) total += g;
  EXPECT_GT(total, 0.8 * 40 * 1000 / 1048);  // utilisation of the 40 Gb/s bottleneck
}

namespace {

// lscc/load at `load` (scenarios/lscc/load.toml, the LSCC paper's two k = 4 fat-trees, WebSearch) for
// `scheme`: PAUSEs sent across the long-haul link and the peak egress_b buffer.
std::pair<uint64_t, Bytes> run_load(const std::string& scheme, double load, int stop_us) {
  const Scenario s = load_scenario(std::string(ROCESIM_SCENARIO_DIR) + "/lscc/load.toml",
                                   {"cc.scheme=" + scheme, "traffic[0].load=" + std::to_string(load),
                                    "traffic[0].stop_us=" + std::to_string(stop_us)});
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  auto src = s.make_flow_source();
  net.set_flow_source(src.get());
  const int ea = lookup_node(s.topo, "egress_a"), eb = lookup_node(s.topo, "egress_b");
  Bytes peak = 0;
  Ticker t(net, Time::from_us(50), [&](Time) { peak = std::max(peak, net.sw(eb).buffer_used()); });
  net.run(s.duration, true);
  EXPECT_EQ(net.stats().data_drops, 0u);
  return {net.sw(eb).port(long_port(net, eb)).stats.pause_sent +
              net.sw(ea).port(long_port(net, ea)).stats.pause_sent,
          peak};
}

}  // namespace

// Seed 004 Fig. 12: no PFC PAUSE crosses the long-haul link under LSCC (lscc/load, 50 % of the long-haul
// link); PFC-only pauses it (the check can fail).
TEST(Lscc, NoLongHaulPauseInLoadAt50Percent) {
  const int stop_us = 20000;  // also under the sanitizers: 5 ms of arrivals never pause even PFC-only
  const auto [lscc_pauses, lscc_peak] = run_load("lscc", 0.5, stop_us);
  const auto [pfc_pauses, pfc_peak] = run_load("none", 0.5, stop_us);
  std::printf("long-haul PAUSEs: LSCC %lu (egress_b peak %.1f MB), PFC-only %lu (peak %.1f MB)\n",
              static_cast<unsigned long>(lscc_pauses), lscc_peak / 1e6,
              static_cast<unsigned long>(pfc_pauses), pfc_peak / 1e6);
  EXPECT_EQ(lscc_pauses, 0u);
  EXPECT_GT(pfc_pauses, 0u);
}

TEST(LsccConfig, BadKeysAreInputErrors) {
  const std::string base =
      "[topology]\nkind = \"cross_dc\"\nk = 2\nhosts_per_edge = 1\n[[flows]]\nsrc = \"a0\"\ndst = \"b0\"\n";
  // The long-haul port's headroom, one BDP of 200 Gb/s x 2 ms = 50 MB, needs more than the default 32 MB
  // buffer (docs/models.md A4), as in scenarios/lscc.
  EXPECT_NO_THROW(
      load_scenario_text(base + "[cc]\nscheme = \"lscc\"\n", "ok.toml", {"switch.buffer_bytes=80000000"}));
  EXPECT_THROW(load_scenario_text(base + "[cc]\nscheme = \"lscc\"\n", "small.toml"), InputError);
  EXPECT_THROW(load_scenario_text(base, "k.toml", {"topology.k=3"}), InputError);
  EXPECT_THROW(load_scenario_text(base + "[cc]\nscheme = \"lscc\"\n[cc.lscc]\nq_reff_bytes = 1\n", "u.toml"),
               InputError);
  EXPECT_THROW(load_scenario_text(base + "[cc]\nscheme = \"lscc\"\n[cc.lscc]\nperiod_us = 0\n", "p.toml"),
               InputError);
  EXPECT_THROW(load_scenario_text(base + "[cc]\nscheme = \"swing\"\n[cc.swing]\nxon_bdp = 2\n", "s.toml"),
               InputError);
  // A table of a scheme that is not selected is still checked.
  EXPECT_THROW(load_scenario_text(base + "[cc]\nscheme = \"none\"\n[cc.hpcc_star]\neta = 7\n", "h.toml"),
               InputError);
  EXPECT_THROW(load_scenario_text(
                   base + "[switch]\nlong_haul_xoff_bytes = 1000\nlong_haul_xon_bytes = 2000\n", "x.toml"),
               InputError);
}

// Fuzz 51004:1615: LSCC's switch agent raises the long-haul ingress Xoff to 4 x Q_ref = 8 MB when the run
// starts, above this scenario's 4 MB buffer. The scenario's buffer check counted the switch's own Xoff only,
// so the run went ahead and dropped 5,041 data packets with PFC on. The check now counts the Xoff the
// scheme installs (CongestionControl::long_haul_thresholds) and refuses, naming the scheme's key; with a
// long-haul Xoff the buffer holds, the same run drops nothing.
TEST(LsccConfig, ALongHaulXoffTheBufferCannotHoldIsRefusedAndOneItCanIsLossless) {
  const std::string text = R"(name = "fuzz_51004_1615"
seed = 876
duration_ms = 50
[topology]
kind = "cross_dc"
k = 4
hosts_per_edge = 1
host_rate_gbps = 40
fabric_rate_gbps = 100
long_haul_rate_gbps = 100
long_haul_delay_us = 20
[switch]
flow_control = "pfc"
routing = "spray"
buffer_bytes = 4000000
pfc_mode = "static"
[nic]
loss_recovery = "go_back_n"
[cc]
scheme = "lscc"
[[traffic]]
pattern = "burst"
dst = "b0"
count = 1
size_bytes = 20000
start_us = 0
[[traffic]]
pattern = "incast"
class = "incast"
fan_in = 7
size_bytes = 300000
start_us = 50
)";
  try {
    load_scenario_text(text, "lh.toml");
    ADD_FAILURE() << "a long-haul Xoff of 8 MB in a 4 MB buffer was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("switch.buffer_bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("[cc.lscc] long_haul_xoff_bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("8000000 B"), std::string::npos) << what;
  }
  // HPCC* runs the same loop at the same switches, and SWING sets its relay's Xoff from the link's BDP.
  EXPECT_THROW(load_scenario_text(text, "h.toml", {"cc.scheme=hpcc_star"}), InputError);
  EXPECT_THROW(load_scenario_text(text, "s.toml", {"cc.scheme=swing", "topology.long_haul_delay_us=60"}),
               InputError);
  const Scenario s = load_scenario_text(text, "ok.toml", {"cc.lscc.long_haul_xoff_bytes=1000000"});
  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_EQ(r.summary["drops"]["data_buffer"].get<uint64_t>(), 0u);
  EXPECT_EQ(r.summary["flows"]["unfinished"].get<uint64_t>(), 0u);
  EXPECT_EQ(r.summary["flows"]["finished"].get<uint64_t>(), 22u);
}
