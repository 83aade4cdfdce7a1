// RCM (seed 001; algorithms.md 3.2) and the input-and-output queued switch model it runs on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cc/dcqcn.h"
#include "cc/none.h"
#include "cc/rcm.h"
#include "net/checks.h"
#include "net/network.h"
#include "net/switch.h"
#include "topo/builders.h"
#include "workload/flow_file.h"
#include "test_util.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kLong = 10'000'000'000LL;

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
  RcmAgent::Counters s1;
  uint64_t drops = 0;
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
  for (int h = 0; h < 4; ++h) flows.push_back(flow(h, 4, kLong));
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
    if (getenv("RCM_DEBUG") && a && now > Time::from_us(148)) {
      auto key = [&](uint64_t id) { Qp* q = net.find_flow(id); return q ? (uint64_t(q->tag) << 32 | q->slot) : 0; };
      static Bytes lb = 0, lh = 0;
      printf("cross %ld harm %ld ", a->counters().rcc_bytes - lb, a->counters().rcc_harmful_bytes - lh);
      lb = a->counters().rcc_bytes; lh = a->counters().rcc_harmful_bytes;
      printf("t=%.0f rcc=%d w=%ld wc=%ld harm0=%d harmB=%d local=%d remote=%d fbout=%.0f q=%ld\n", now.us(), a->in_rcc(out), a->rcc_window(out), a->rcc_window_c(out),
             a->harmful(out, key(0)), a->harmful(out, key(4)), a->local_flag(out), a->remote_flag(out), a->output_fb(out), net.sw(s1).egress_data_bytes(out));
    }
  });
  net.run(Time::from_us(200), false);
  if (auto* a = dynamic_cast<RcmAgent*>(net.sw(s1).agent())) r.s1 = a->counters();
  r.drops = net.stats().data_drops;
  return r;
}

TEST(Rcm, DebugBurst) {
  RcmSettings s;
  BurstRun r = run_burst(std::make_unique<Rcm>(s));
  for (size_t b = 20; b < r.gbps.size(); ++b) {
    printf("%3zu:", 100 + 2 * b);
    for (double g : r.gbps[b]) printf(" %5.1f", g);
    printf("\n");
  }
  printf("rcc bytes %ld harmful %ld idle %lu\n", r.s1.rcc_bytes, r.s1.rcc_harmful_bytes, r.s1.idle_windows);
  printf("cn %lu/%lu trig %lu entries %lu holds %lu rcc_since %.1f\n", r.s1.cn_sent, r.s1.cn_received, r.s1.rcc_triggers,
         r.s1.rcc_entries, r.s1.holds, r.rcc_since.us());
}

}  // namespace
