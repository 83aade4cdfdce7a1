// Cross-datacenter RDMA (seed 004; algorithms.md 2.10, 3.4, 3.5): the long-haul fabric (BDP headroom,
// per-port PFC thresholds), LSCC's rate calculation (Alg. 1) and loops, HPCC*'s direct INT, SWING's relay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cc/hpcc_star.h"
#include "cc/lscc.h"
#include "cc/none.h"
#include "cc/swing.h"
#include "net/network.h"
#include "net/switch.h"
#include "topo/builders.h"
#include "workload/flow_file.h"
#include "test_util.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kLong = 100'000'000'000LL;

bool sanitized() { return std::getenv("ROCESIM_SANITIZED") != nullptr; }

// The seed's micro-benchmark fabric, shrunk: k = 2 fat-trees with two hosts per ToR (4 hosts per DC).
TopoSpec tiny_cross_dc() { return cross_dc({.k = 2, .hosts_per_edge = 2}); }

// Static PFC 300/100 KB in the DCs, 5 MB / 4.8 MB on long-haul ports [seed 004].
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

TEST(LsccRateCalc, ClampsByDeltaRThenSettlesOnTheBottleneckRate) {
  // R_last starts at R_max; with Q = Q_ref the rate walks down by delta R per period to BR.
  LsccRateCalc c(Time::from_us(200), 2'000'000, Rate::from_gbps(1), Rate::from_gbps(1), Rate::from_gbps(190), 10);
  EXPECT_EQ(c.n(), 10);
  EXPECT_DOUBLE_EQ(c.step(Rate::from_gbps(40), 2'000'000).gbps(), 189);
  for (int i = 0; i < 200; ++i) c.step(Rate::from_gbps(40), 2'000'000);
  EXPECT_NEAR(c.last().gbps(), 40, 1e-6);
}

TEST(LsccRateCalc, CountsTheAdjustmentsInFlightOnce) {
  // Without clamps: a queue 1 MB above Q_ref asks for Ra = 1 MB / T once; while that Ra is in flight
  // (N periods) the same queue asks for nothing more, so R returns to BR the next period (Alg. 1 line 2).
  LsccRateCalc c(Time::from_us(200), 2'000'000, Rate::from_gbps(1000), Rate::from_gbps(0.001), Rate::from_gbps(200), 10);
  for (int i = 0; i < 10; ++i) c.step(Rate::from_gbps(40), 2'000'000);  // reach BR
  const double ra = 1e6 * 8 / 200e-6;                                    // 40 Gb/s
  EXPECT_NEAR(c.step(Rate::from_gbps(40), 3'000'000).bps, 40e9 - ra, 1);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(c.step(Rate::from_gbps(40), 3'000'000).gbps(), 40, 1e-6);
  EXPECT_NEAR(c.ra_sent(), ra, 1);
  // N periods later the first Ra has left the list: the still-high queue asks again.
  EXPECT_NEAR(c.step(Rate::from_gbps(40), 3'000'000).bps, 40e9 - ra, 1);
}

TEST(CrossDc, ShapeAndLongHaulLink) {
  const TopoSpec t = cross_dc({});
  EXPECT_EQ(t.num_hosts(), 32);                      // k = 4: 16 hosts per DC, 2 per ToR [seed 004 Fig. 1]
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
  uint64_t long_pauses = 0;       // PAUSEs egress_b sent across the long-haul link
  Bytes headroom = 0;             // of egress_b's long-haul port
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
  InlineFlows src({flow(lookup_node(t, "a0"), b0, kLong), flow(lookup_node(t, "a1"), b0, kLong),
                   flow(lookup_node(t, "a2"), b0, kLong), flow(lookup_node(t, "a3"), b0, kLong)});
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
              static_cast<unsigned long>(ok.drops), static_cast<unsigned long>(ok.long_pauses), ok.max_ingress);
  EXPECT_GE(ok.headroom, 50'000'000);                 // 200 Gb/s x 2 ms
  EXPECT_EQ(ok.drops, 0u);
  EXPECT_GT(ok.long_pauses, 0u);                      // PFC did cross the long-haul link
  EXPECT_GT(ok.max_ingress, 5'000'000 + 5'000'000);   // and the headroom absorbed megabytes
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
