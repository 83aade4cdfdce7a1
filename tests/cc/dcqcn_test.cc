// DCQCN (cc/dcqcn.h) on a dumbbell: flows converge to their fair share with the queue in the ECN band and
// no PFC pause, in the default (Mellanox) and hpcc_sim variants, and the rate recovers once congestion ends.
#include "cc/dcqcn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

struct Convergence {
  std::vector<std::vector<double>> gbps;  // per 1 ms window, per flow
  std::vector<Bytes> queue_samples;
  uint64_t pauses = 0;
  Bytes kmin = 0, kmax = 0;
};

Convergence run_dcqcn(int n, const DcqcnSettings& d, SwitchSettings sw = {}) {
  const TopoSpec t = dumbbell({.senders = n, .receivers = 1});
  Network net(t, sw, NicSettings{}, 1, std::make_unique<Dcqcn>(d));
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i) flows.push_back(flow(i, n, 10'000'000'000LL));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  const int a = n + 1;  // switch A: senders' side; its port to B is the bottleneck
  int port_ab = -1;
  for (auto& p : net.sw(a).ports())
    if (p.peer->id() == n + 2) port_ab = p.index;
  Convergence r;
  r.kmin = net.sw(a).ecn(port_ab).kmin;
  r.kmax = net.sw(a).ecn(port_ab).kmax;
  Ticker sampler(net, Time::from_us(10), [&](Time now) {
    if (now >= Time::from_ms(10)) r.queue_samples.push_back(net.sw(a).egress_data_bytes(port_ab));
  });
  std::vector<Bytes> last(n, 0);
  auto pauses = [&] {
    uint64_t k = 0;
    for (auto& p : net.sw(a).ports()) k += p.stats.pause_sent;
    return k;
  };
  uint64_t pauses_at_10ms = 0;
  for (int ms = 1; ms <= 20; ++ms) {
    net.run(Time::from_ms(ms));
    if (ms == 10) pauses_at_10ms = pauses();
    std::vector<double> w;
    for (int i = 0; i < n; ++i) {
      const Bytes got = net.find_flow(i)->rcv_nxt;
      w.push_back((got - last[i]) * 8.0 / 1e-3 / 1e9);
      last[i] = got;
    }
    r.gbps.push_back(w);
  }
  r.pauses =
      pauses() - pauses_at_10ms;  // the start (all flows at line rate) may pause; steady state must not
  return r;
}

void expect_fair(const Convergence& r, int n) {
  const double fair = 100.0 * 1000 / 1048 / n;  // goodput share of the 100 Gb/s bottleneck
  for (int ms = 10; ms < 20; ++ms)
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(r.gbps[ms][i], fair, 0.1 * fair) << "flow " << i << " in ms " << ms + 1;
  // The queue sits in the ECN band, far below any PFC threshold.
  double sum = 0;
  Bytes mx = 0;
  for (Bytes q : r.queue_samples) {
    sum += static_cast<double>(q);
    mx = std::max(mx, q);
  }
  const double avg = sum / static_cast<double>(r.queue_samples.size());
  double lo = 1e9, hi = 0;
  for (int ms = 10; ms < 20; ++ms)
    for (double g : r.gbps[ms]) lo = std::min(lo, g), hi = std::max(hi, g);
  std::printf(
      "%d flows: per-flow goodput %.2f..%.2f Gb/s (fair %.2f) in ms 11-20; queue avg %.0f B, max %ld B\n", n,
      lo, hi, fair, avg, static_cast<long>(mx));
  EXPECT_GT(avg, 0.2 * static_cast<double>(r.kmin));
  EXPECT_LT(avg, static_cast<double>(r.kmax));
  EXPECT_EQ(r.pauses, 0u);
}

}  // namespace

// The default (Mellanox timers, one CNP per flow per 50 us) at 100 Gb/s.
TEST(Dcqcn, TwoFlowsConvergeToFairShare) { expect_fair(run_dcqcn(2, DcqcnSettings{}), 2); }
TEST(Dcqcn, FourFlowsConvergeToFairShare) { expect_fair(run_dcqcn(4, DcqcnSettings{}), 4); }
// The ns-3 HPCC simulator's notification point (congestion flag on every marked packet's ACK).
TEST(Dcqcn, HpccSimVariantTwoFlowsConverge) {
  expect_fair(run_dcqcn(2, DcqcnSettings::for_variant("hpcc_sim", Rate::from_gbps(100))), 2);
}
// Alpha tracks congestion: it decays towards 0 without CNPs and the rate climbs back after a cut.
TEST(Dcqcn, RateRecoversAfterCongestionEnds) {
  const TopoSpec t = dumbbell({.senders = 2, .receivers = 1});
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Dcqcn>(DcqcnSettings{}));
  // Two flows compete for 3 ms, then flow 1 ends: flow 0 must return close to line rate.
  InlineFlows src({flow(0, 2, 10'000'000'000LL), flow(1, 2, 35'000'000)});
  net.set_flow_source(&src);
  net.run(Time::from_ms(2));
  Qp* q0 = net.find_flow(0);
  ASSERT_NE(q0, nullptr);
  EXPECT_LT(q0->rate.gbps(), 80.0);  // cut while sharing
  auto gbps_in_ms = [&](int ms) {
    net.run(Time::from_ms(ms - 1));
    const Bytes a = net.find_flow(0)->rcv_nxt;
    net.run(Time::from_ms(ms));
    return (net.find_flow(0)->rcv_nxt - a) * 8.0 / 1e-3 / 1e9;
  };
  const double at10 = gbps_in_ms(10);
  const double at40 = gbps_in_ms(40);
  // Fast recovery, then additive and hyper increase (R_HAI 200 Mb/s per 300 us) raise the rate.
  EXPECT_GT(at40, at10 + 10.0);
  EXPECT_GT(at40, 70.0);
  const auto& dc = static_cast<Dcqcn&>(net.cc());
  EXPECT_LT(dc.state(*net.find_flow(0)).alpha, 0.05);
}
