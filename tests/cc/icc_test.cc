// ICC (cc/icc.h; algorithms.md 3.3): rate rules, periodic feedback, steady-state queue, icc/burst pauses.
#include "cc/icc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "cc/dcqcn.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kIccLong = 10'000'000'000LL;
const Rate k100G = Rate::from_gbps(100);

}  // namespace

// The sender's three branches (pure rule).
TEST(Icc, RateRules) {
  Icc::Feedback f;
  f.c = k100G;
  f.n_flows = 4;
  f.lu = 1.0;
  const Time t = Time::from_us(10);
  const Bytes qd = 400'000;
  const Rate rmin = Rate::from_mbps(100);
  // Queue growing fast: Vmax = (C lu + (Qd - qlen - r T)/T)/n; r = 300 Gb/s = 37.5 GB/s, qlen 200 KB:
  // room = 400 - 200 - 375 KB < 0 -> Vmax = (100 - 140) / 4 Gb/s < 0 -> Rmin.
  f.qlen = 200'000;
  f.qlen_rate = 37.5e9;
  EXPECT_EQ(Icc::next_rate(k100G, f, k100G, t, qd, rmin), rmin);
  // Growing slowly: Vmax above the current rate leaves it alone (a decrease never raises the rate).
  f.qlen = 10'000;
  f.qlen_rate = 1e8;
  const Rate vmax = Icc::v_max(f, t, qd);
  EXPECT_NEAR(vmax.gbps(), (100 + (400'000 - 10'000 - 1e8 * 1e-5) * 8 / 1e-5 / 1e9) / 4, 1e-6);
  EXPECT_EQ(Icc::next_rate(Rate::from_gbps(25), f, k100G, t, qd, rmin), Rate::from_gbps(25));
  // Draining within one RTT (t1 = 10 KB / 2.5 GB/s = 4 us < 10 us): keep V.
  f.qlen_rate = -2.5e9;
  EXPECT_EQ(Icc::next_rate(Rate::from_gbps(30), f, k100G, t, qd, rmin), Rate::from_gbps(30));
  // Draining slowly (t1 = 40 us): Vmin = (C - qlen/T)/n = (100 - 8)/4 = 23 Gb/s.
  f.qlen_rate = -0.25e9;
  EXPECT_NEAR(Icc::next_rate(Rate::from_gbps(30), f, k100G, t, qd, rmin).gbps(), 23.0, 1e-9);
  // No queue: Eq. 6, V lu + lineRate (1 - lu).
  f.qlen = 0;
  f.lu = 0.6;
  EXPECT_NEAR(Icc::next_rate(Rate::from_gbps(20), f, k100G, t, qd, rmin).gbps(), 20 * 0.6 + 100 * 0.4, 1e-9);
}

// One flow alone at line rate on a star: the port never has a queue ahead of a packet, so the only
// feedback is the 15 us timer; the sender sees one feedback ACK per 15 us.
TEST(Icc, FeedbackPeriodIs15usWhenNothingHappens) {
  const TopoSpec t = star({.hosts = 2});
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Icc>(IccSettings{}));
  InlineFlows src({flow(0, 1, kIccLong)});
  net.set_flow_source(&src);
  net.run(Time::from_ms(2), false);
  auto* agent = dynamic_cast<IccAgent*>(net.sw(2).agent());
  ASSERT_NE(agent, nullptr);
  auto& icc = static_cast<Icc&>(net.cc());
  Qp* qp = net.find_flow(0);
  ASSERT_NE(qp, nullptr);
  const Icc::State& s = icc.state(*qp);
  const double mean_us = (s.last_fb - s.first_fb).us() / static_cast<double>(s.feedbacks - 1);
  std::printf(
      "[icc] alone: immediate %lu periodic %lu, sender got %lu feedbacks, mean interval %.2f us, "
      "rate %.1f Gb/s\n",
      static_cast<unsigned long>(agent->immediate_feedbacks()),
      static_cast<unsigned long>(agent->periodic_feedbacks()), static_cast<unsigned long>(s.feedbacks),
      mean_us, s.rate.gbps());
  EXPECT_EQ(agent->immediate_feedbacks(), 0u);
  EXPECT_NEAR(static_cast<double>(agent->periodic_feedbacks()), 2000.0 / 15, 3);
  EXPECT_GT(mean_us, 14.9);
  EXPECT_LT(mean_us, 15.5);
  EXPECT_GT(s.rate.gbps(), 99);
  EXPECT_EQ(s.decreases, 0u);
}

// The feedback is bytes on the wire: the switch makes each ACK it writes feedback into
// IccSettings::feedback_bytes larger (once: a second switch's record replaces the first). On a star the
// switch's port to the sender carries only ACKs, each nic.ack_bytes, plus the feedback of those it wrote.
TEST(Icc, FeedbackMakesTheAckLarger) {
  for (const Bytes fb : {Bytes{14}, Bytes{0}, Bytes{40}}) {
    const TopoSpec t = star({.hosts = 2});
    IccSettings s;
    s.feedback_bytes = fb;
    Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Icc>(s));
    InlineFlows src({flow(0, 1, 2'000'000)});
    net.set_flow_source(&src);
    net.run(Time::from_ms(2));
    ASSERT_TRUE(net.all_flows_done());
    auto* agent = dynamic_cast<IccAgent*>(net.sw(2).agent());
    ASSERT_NE(agent, nullptr);
    const Port& to_sender = net.sw(2).port(port_towards(net, 2, 0));
    const Bytes ack = net.nic_settings().ack_bytes;
    std::printf("[icc] feedback %ld B: %lu ACKs, %lu with feedback, %ld B on the wire\n",
                static_cast<long>(fb), static_cast<unsigned long>(to_sender.tx_packets),
                static_cast<unsigned long>(agent->acks_written()), static_cast<long>(to_sender.tx_bytes));
    EXPECT_GT(agent->acks_written(), 0u);
    EXPECT_EQ(to_sender.tx_packets, net.stats().acks_sent);
    EXPECT_EQ(to_sender.tx_bytes, static_cast<Bytes>(to_sender.tx_packets) * ack +
                                      static_cast<Bytes>(agent->acks_written()) * fb);
  }
  EXPECT_EQ(IccSettings{}.feedback_bytes, 14);
}

// Four long flows share a 100 Gb/s bottleneck without bursts: after 1 ms the queue stays near zero,
// the link stays busy and PFC stays silent.
TEST(Icc, SteadyStateQueueNearZero) {
  const int n = 4;
  const TopoSpec t = dumbbell({.senders = n, .receivers = 1});
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Icc>(IccSettings{}));
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i) flows.push_back(flow(i, n, kIccLong));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  const int a = n + 1, b = n + 2;
  const int port_ab = port_towards(net, a, b);
  const Time settle = Time::from_ms(1);
  double sum = 0;
  int samples = 0;
  Bytes max_q = 0;
  Bytes tx0 = 0;
  Ticker sampler(net, Time::from_us(5), [&](Time now) {
    if (now < settle) return;
    if (samples == 0) tx0 = net.sw(a).port(port_ab).tx_bytes;
    const Bytes q = net.sw(a).egress_data_bytes(port_ab);
    sum += static_cast<double>(q);
    ++samples;
    max_q = std::max(max_q, q);
  });
  net.run(settle, false);
  uint64_t pauses0 = 0;
  for (auto& p : net.sw(a).ports()) pauses0 += p.stats.pause_sent;
  const Time end = Time::from_ms(4);
  net.run(end, false);
  uint64_t pauses = 0;
  for (auto& p : net.sw(a).ports()) pauses += p.stats.pause_sent;
  const double util =
      static_cast<double>(net.sw(a).port(port_ab).tx_bytes - tx0) * 8 / (k100G.bps * (end - settle).sec());
  const double avg = sum / samples;
  std::printf("[icc] 4 flows: avg queue %.0f B, max %ld B, utilisation %.3f, pauses after 1 ms %lu\n", avg,
              static_cast<long>(max_q), util, static_cast<unsigned long>(pauses - pauses0));
  EXPECT_LT(avg, 5'000);
  EXPECT_LT(max_q, 50'000);
  EXPECT_GT(util, 0.9);
  EXPECT_EQ(pauses - pauses0, 0u);
}

// icc/burst (scenarios/icc/burst.toml): F0, F1 to R0; 60 x 64 KB bursts and Hb's 60 flows to R1 at
// 500 us. ICC sends fewer PFC pauses than DCQCN.
namespace {
uint64_t burst_pauses(std::unique_ptr<CongestionControl> cc) {
  const TopoSpec t = dumbbell(
      {.senders = 63, .receivers = 3, .host_delay = Time::from_us(5), .bottleneck_delay = Time::from_us(5)});
  SwitchSettings sw;
  sw.buffer_bytes = 17'400'000;  // 5 MB shared + headroom and reserve (burst.toml)
  Network net(t, sw, NicSettings{}, 1, std::move(cc));
  const int r0 = 63, r1 = 64;
  std::vector<FlowSpec> flows{flow(0, r0, 100'000'000), flow(1, r0, 100'000'000)};
  const Time burst = Time::from_us(500);
  for (int h = 2; h <= 61; ++h) flows.push_back(flow(h, r1, 65'536, burst));
  for (int k = 0; k < 60; ++k) flows.push_back(flow(62, r1, 65'536, burst + tx_time(65'536, k100G) * k));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  net.run(Time::from_ms(4), false);
  uint64_t pauses = 0;
  for (int s : {66, 67})
    for (auto& p : net.sw(s).ports()) pauses += p.stats.pause_sent;
  return pauses;
}
}  // namespace

TEST(Icc, BurstFewerPausesThanDcqcn) {
  const uint64_t icc = burst_pauses(std::make_unique<Icc>(IccSettings{}));
  const uint64_t dcqcn = burst_pauses(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(k100G)));
  std::printf("[icc] icc/burst pauses: ICC %lu, DCQCN %lu\n", static_cast<unsigned long>(icc),
              static_cast<unsigned long>(dcqcn));
  EXPECT_GT(dcqcn, 0u);
  EXPECT_LT(static_cast<double>(icc), 0.5 * static_cast<double>(dcqcn));
}
