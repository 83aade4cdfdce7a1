// Baseline schemes: DCTCP (alpha, fairness, queue at K), TIMELY (reacts to delay, shares a link),
// HPCC (near-zero queue at eta utilisation, fairness, INT bytes on the wire), and each on an incast.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>

#include "cc/dctcp.h"
#include "cc/hpcc.h"
#include "cc/timely.h"
#include "core/rng.h"
#include "net/host.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;

namespace {

FlowSpec long_flow(int src, int dst, Bytes size = 10'000'000'000LL, Time start = Time::zero()) {
  return test::flow(src, dst, size, start);
}

// Runs `fn` every `period` of simulated time while the network runs.
struct Sampler : test::Ticker {
  Sampler(Network& net, Time period, std::function<void()> fn)
      : test::Ticker(net, net.now() + period, period, [fn = std::move(fn)](Time) { fn(); }) {}
};

// n long flows from senders 0..n-1 to receiver n over a 100 Gb/s dumbbell (switch A = n + 1 holds the
// bottleneck port towards B = n + 2). Records per-flow goodput per 1 ms and the bottleneck queue.
struct Bottleneck {
  std::vector<std::vector<double>> gbps;  // [ms][flow]
  std::vector<Bytes> queue;               // every 5 us from `settle`
  uint64_t marked = 0, sent = 0;          // at the bottleneck port from `settle`
  uint64_t drops = 0, pauses = 0;

  double mean_queue() const {
    return std::accumulate(queue.begin(), queue.end(), 0.0) / static_cast<double>(queue.size());
  }
  double sum_gbps(int ms) const { return std::accumulate(gbps[ms].begin(), gbps[ms].end(), 0.0); }
  // Mean goodput of `flow` over the ms from `from_ms` to the end.
  double mean_gbps(int flow, int from_ms) const {
    double sum = 0;
    for (size_t ms = static_cast<size_t>(from_ms); ms < gbps.size(); ++ms) sum += gbps[ms][flow];
    return sum / static_cast<double>(gbps.size() - static_cast<size_t>(from_ms));
  }
};

using Observe = std::function<void(Network&)>;

// Flow i starts at i x stagger.
Bottleneck run_bottleneck(int n, std::unique_ptr<CongestionControl> cc, const SwitchSettings& sw,
                          int ms_total, int settle_ms, const Observe& every_10us = nullptr,
                          Time stagger = Time::zero()) {
  const TopoSpec t = dumbbell({.senders = n, .receivers = 1});
  Network net(t, sw, NicSettings{}, 1, std::move(cc));
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i) flows.push_back(long_flow(i, n, 10'000'000'000LL, stagger * i));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  const int a = n + 1;
  int port = -1;
  for (auto& p : net.sw(a).ports())
    if (p.peer->id() == n + 2) port = p.index;
  Bottleneck r;
  const Time settle = Time::from_ms(settle_ms);
  Sampler q(net, Time::from_us(5), [&] {
    if (net.now() >= settle) r.queue.push_back(net.sw(a).egress_data_bytes(port));
  });
  std::unique_ptr<Sampler> obs;
  if (every_10us) obs = std::make_unique<Sampler>(net, Time::from_us(10), [&] { every_10us(net); });
  std::vector<Bytes> last(n, 0);
  uint64_t marked0 = 0, sent0 = 0;
  for (int ms = 1; ms <= ms_total; ++ms) {
    net.run(Time::from_ms(ms));
    if (ms == settle_ms) {
      marked0 = net.sw(a).ports()[port].stats.ecn_marked;
      sent0 = net.sw(a).ports()[port].tx_packets;
    }
    std::vector<double> w;
    for (int i = 0; i < n; ++i) {
      const Bytes got = net.find_flow(i)->rcv_nxt;
      w.push_back(static_cast<double>(got - last[i]) * 8 / 1e-3 / 1e9);
      last[i] = got;
    }
    r.gbps.push_back(w);
  }
  r.marked = net.sw(a).ports()[port].stats.ecn_marked - marked0;
  r.sent = net.sw(a).ports()[port].tx_packets - sent0;
  r.drops = net.stats().data_drops;
  for (auto& p : net.sw(a).ports()) r.pauses += p.stats.pause_sent;
  return r;
}

// Every flow within `tol` of the fair share of `goodput` in every ms from `from_ms`.
void expect_fair(const Bottleneck& r, int n, double goodput, int from_ms, double tol) {
  for (size_t ms = static_cast<size_t>(from_ms); ms < r.gbps.size(); ++ms)
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(r.gbps[ms][i], goodput / n, tol * goodput / n) << "flow " << i << " in ms " << ms + 1;
}

// DCTCP's step marking at K: kmin = kmax = K, pmax = 1 (scheme header; scenarios/baselines/dctcp.toml).
SwitchSettings step_marking(Bytes k) {
  SwitchSettings sw;
  sw.kmin_bytes = sw.kmax_bytes = k;
  sw.pmax = 1.0;
  return sw;
}

constexpr double kGoodput = 100.0 * 1000 / 1048;      // Gb/s of payload on a 100 Gb/s link
constexpr double kHpccGoodput = 100.0 * 1000 / 1090;  // with 42 B of INT per data packet

// N senders to one receiver on a star; every flow must complete without a drop.
void expect_clean_incast(std::unique_ptr<CongestionControl> cc, const SwitchSettings& sw = {}) {
  const int n = 8;
  const Bytes size = 2'000'000;
  const TopoSpec t = star({.hosts = n + 1});
  Network net(t, sw, NicSettings{}, 1, std::move(cc));
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i) flows.push_back(long_flow(i, n, size, Time::from_us(i)));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  net.run(Time::from_ms(50));
  const NetStats& st = net.stats();
  EXPECT_EQ(st.data_drops, 0u);
  EXPECT_EQ(st.ctrl_drops, 0u);
  EXPECT_EQ(st.flows_finished, static_cast<uint64_t>(n));
  EXPECT_EQ(st.bytes_delivered, n * size);
  EXPECT_EQ(st.retransmitted_packets, 0u);
  // n x 2 MB through one 100 Gb/s port: the last flow ends near n x size / goodput.
  Time last;
  for (const auto& f : net.finished()) last = std::max(last, f.finish);
  std::printf("[ incast  ] %s: last flow done at %.0f us (line-rate bound %.0f us)\n",
              net.cc().name().c_str(), last.us(), n * size * 8 / (kGoodput * 1e3));
}

}  // namespace

// ---------------------------------------------------------------- DCTCP

namespace {

// A QP outside any flow, driven by hand-made ACKs (the scheme only needs the network's services).
struct DctcpBench {
  TopoSpec topo = dumbbell({.senders = 1, .receivers = 1});
  Network net{topo, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Dctcp>(DctcpSettings{})};
  Dctcp& cc = static_cast<Dctcp&>(net.cc());
  Qp qp;
  DctcpBench() {
    qp.slot = 0;
    qp.line_rate = Rate::from_gbps(100);
    cc.on_flow_start(qp);
  }
  // One window of `acks` ACKs, the first `marked` of them echoing CE, the last one crossing the window
  // boundary (the sender has moved 100 KB further by then).
  void window(int acks, int marked) {
    const Bytes boundary = cc.state(qp).last_update_seq;
    for (int i = 0; i < acks; ++i) {
      Packet ack;
      ack.type = PktType::kAck;
      const bool last = i == acks - 1;
      ack.seq = last ? boundary + 1 : boundary;
      if (i < marked) ack.flags |= Packet::kFlagEcnEcho;
      if (last) qp.snd_nxt = boundary + 100'000;
      cc.on_ack(qp, ack);
    }
  }
};

}  // namespace

// alpha <- (1 - g) alpha + g F once per window, F = echoed / total ACKs of the window.
TEST(Dctcp, AlphaIsTheEwmaOfTheEchoFractionPerWindow) {
  DctcpBench b;
  b.window(1, 0);  // opens the first window
  double alpha = 1.0;
  const double g = 1.0 / 16;
  const int marks[] = {3, 3, 3, 0, 10, 5, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  for (int m : marks) {
    b.window(10, m);
    alpha = (1 - g) * alpha + g * (m / 10.0);
    EXPECT_NEAR(b.cc.state(b.qp).last_fraction, m / 10.0, 1e-12);
    EXPECT_NEAR(b.cc.state(b.qp).alpha, alpha, 1e-12);
  }
  // A steady fraction: alpha converges to it.
  for (int k = 0; k < 200; ++k) b.window(20, 5);
  EXPECT_NEAR(b.cc.state(b.qp).alpha, 0.25, 1e-3);
}

// At most one cut per window however many echoes it holds (CWR until the data sent before the cut is
// acknowledged); one additive step per window outside CWR.
TEST(Dctcp, CutsOncePerWindowAndIncreasesOncePerWindow) {
  DctcpBench b;
  b.window(1, 0);   // opens the first window; alpha stays at its initial 1
  b.window(10, 9);  // first echo cuts by 1 - 1/2; the boundary ACK leaves CWR and adds 615 Mb/s
  EXPECT_NEAR(b.qp.rate.mbps(), 50'000 + 615, 1e-6);
  b.window(10, 0);
  EXPECT_NEAR(b.qp.rate.mbps(), 50'000 + 2 * 615, 1e-6);
  const double alpha = b.cc.state(b.qp).alpha;
  EXPECT_NEAR(alpha, (1 - 1.0 / 16) * ((1 - 1.0 / 16) + 0.9 / 16), 1e-12);
  const Rate before = b.qp.rate;
  b.window(10, 3);
  EXPECT_NEAR(b.qp.rate.mbps(), before.mbps() * (1 - alpha / 2) + 615, 1e-6);
  // The window follows the rate: rate x T (the simulator's VAR_WIN).
  EXPECT_EQ(b.qp.window, bytes_in(b.qp.rate, b.net.max_base_rtt()));
}

namespace {

// DCTCP whose switch `at` marks every data packet with a fixed probability, whatever the queue
// (the other switches never mark).
class BernoulliMarkedDctcp : public Dctcp {
 public:
  BernoulliMarkedDctcp(const DctcpSettings& s, double p, int at) : Dctcp(s), p_(p), at_(at) {}
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override {
    struct Agent : SwitchAgent {
      BernoulliMarkedDctcp* cc;
      double p;
      Rng rng;
      Agent(BernoulliMarkedDctcp* c, double prob, uint64_t id)
          : cc(c), p(prob), rng(Rng::stream(7, "mark", id)) {}
      bool mark(Packet& pkt, int) override {
        if (p == 0 || pkt.ecn != kEct0) return true;
        ++cc->seen;
        if (rng.uniform() < p) {
          pkt.ecn = kCe;
          ++cc->marked;
        }
        return true;
      }
    };
    return std::make_unique<Agent>(this, sw.id() == at_ ? p_ : 0.0, static_cast<uint64_t>(sw.id()));
  }
  uint64_t seen = 0, marked = 0;

 private:
  double p_;
  int at_;
};

}  // namespace

// With a steady marking probability p (independent of the queue) the expected echo fraction of every
// window is p, so alpha settles around p whatever the rate does.
TEST(Dctcp, AlphaTracksASteadyMarkingFraction) {
  for (double p : {0.05, 0.3}) {
    double alpha_sum = 0, frac = 0;
    int alpha_n = 0;
    run_bottleneck(2, std::make_unique<BernoulliMarkedDctcp>(DctcpSettings{}, p, 3), SwitchSettings{}, 8, 3,
                   [&](Network& net) {
                     const auto& cc = static_cast<const BernoulliMarkedDctcp&>(net.cc());
                     frac = static_cast<double>(cc.marked) / static_cast<double>(cc.seen);
                     if (net.now() < Time::from_ms(3)) return;
                     for (uint64_t i = 0; i < 2; ++i) alpha_sum += cc.state(*net.find_flow(i)).alpha;
                     alpha_n += 2;
                   });
    const double alpha = alpha_sum / alpha_n;
    std::printf("[ dctcp   ] marking p = %.2f (switch A): marked %.3f, mean alpha %.3f\n", p, frac, alpha);
    EXPECT_NEAR(frac, p, 0.15 * p);
    EXPECT_NEAR(alpha, p, 0.15 * p);
  }
}

// Pure rate DCTCP (no window) with step marking at K = 100 KB: two flows share the link fairly and
// the queue oscillates around K.
TEST(Dctcp, TwoFlowsShareFairlyWithQueueAtK) {
  const Bytes k = 100'000;
  DctcpSettings d;
  d.rate_window = false;
  const Bottleneck r = run_bottleneck(2, std::make_unique<Dctcp>(d), step_marking(k), 20, 10);
  const double frac = static_cast<double>(r.marked) / static_cast<double>(r.sent);
  std::printf("[ dctcp   ] 2 flows: queue %.1f KB (K %.0f KB), sum %.1f Gb/s, marked %.3f\n",
              r.mean_queue() / 1e3, k / 1e3, r.sum_gbps(19), frac);
  expect_fair(r, 2, kGoodput, 10, 0.1);
  EXPECT_GT(r.mean_queue(), 0.3 * k);
  EXPECT_LT(r.mean_queue(), 1.5 * k);
  EXPECT_GT(frac, 0.0);
  EXPECT_EQ(r.pauses, 0u);
}

// The simulator's configuration (rate mode, window = rate x T, K = 300 KB at 100 Gb/s): 8 flows need
// more than K + BDP in flight, so marking engages; they share the link and the queue stays near K.
// (With 4 flows or fewer the windows alone hold the queue under K and nothing is ever marked.)
TEST(Dctcp, SimDefaultsEightFlowsShareWithQueueNearK) {
  const Bytes k = 300'000;
  const Bottleneck r = run_bottleneck(8, std::make_unique<Dctcp>(DctcpSettings{}), step_marking(k), 40, 10);
  double lo = 1e9, hi = 0, sum = 0;
  for (int i = 0; i < 8; ++i) {
    lo = std::min(lo, r.mean_gbps(i, 10));
    hi = std::max(hi, r.mean_gbps(i, 10));
    sum += r.mean_gbps(i, 10);
  }
  std::printf("[ dctcp   ] 8 flows (sim): queue %.1f KB, sum %.1f Gb/s, flows %.1f..%.1f Gb/s, marked %.4f\n",
              r.mean_queue() / 1e3, sum, lo, hi, static_cast<double>(r.marked) / static_cast<double>(r.sent));
  // Over 30 ms every flow is within 15 % of the fair share (single ms swing by +-40 % with 8 flows).
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(r.mean_gbps(i, 10), kGoodput / 8, 0.15 * kGoodput / 8) << "flow " << i;
  EXPECT_GT(sum, 0.9 * kGoodput);
  EXPECT_GT(r.mean_queue(), 0.5 * k);
  EXPECT_GT(r.marked, 0u);
  EXPECT_LT(r.mean_queue(), 1.5 * k);
  EXPECT_EQ(r.pauses, 0u);
}

TEST(Dctcp, WindowModeTwoFlowsShare) {
  DctcpSettings d;
  d.mode = "window";
  const Bytes k = 100'000;
  const Bottleneck r = run_bottleneck(2, std::make_unique<Dctcp>(d), step_marking(k), 20, 10);
  std::printf("[ dctcp   ] window mode: queue %.1f KB, sum %.1f Gb/s\n", r.mean_queue() / 1e3,
              r.sum_gbps(19));
  expect_fair(r, 2, kGoodput, 10, 0.1);
  EXPECT_LT(r.mean_queue(), 1.5 * k);
}

TEST(Dctcp, IncastCompletesWithoutLoss) {
  expect_clean_incast(std::make_unique<Dctcp>(DctcpSettings{}), step_marking(300'000));
}

// ---------------------------------------------------------------- TIMELY

// One flow runs alone at line rate; a second joins at 2 ms. The queue it builds raises the RTT and the
// first flow's rate drops, with no ECN anywhere (TIMELY turns marking off).
TEST(Timely, CutsRateWhenQueueingDelayRises) {
  const TopoSpec t = dumbbell({.senders = 2, .receivers = 1});
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<Timely>(TimelySettings{}));
  EXPECT_FALSE(net.switch_settings().ecn_enabled);
  InlineFlows src({long_flow(0, 2), long_flow(1, 2, 10'000'000'000LL, Time::from_ms(2))});
  net.set_flow_source(&src);
  const auto& cc = static_cast<const Timely&>(net.cc());
  net.run(Time::from_ms(2));
  const Qp* q0 = net.find_flow(0);
  EXPECT_EQ(cc.state(*q0).decreases, 0u);  // alone: base RTT far below T_low, stays at line rate
  EXPECT_NEAR(q0->rate.gbps(), 100.0, 1e-9);
  const Time base = cc.state(*q0).last_rtt;
  // Step through the join until the first cut.
  Time cut_at;
  Time rtt_at_cut;
  for (Time now = Time::from_ms(2); now < Time::from_ms(3); now += Time::from_us(1)) {
    net.run(now);
    if (cc.state(*q0).decreases > 0) {
      cut_at = now;
      rtt_at_cut = cc.state(*q0).last_rtt;
      break;
    }
  }
  std::printf(
      "[ timely  ] base RTT %.2f us; first cut %.1f us after the join at RTT %.2f us, "
      "rate %.1f Gb/s\n",
      base.us(), (cut_at - Time::from_ms(2)).us(), rtt_at_cut.us(), q0->rate.gbps());
  ASSERT_GT(cut_at, Time::zero()) << "no rate cut within 1 ms";
  EXPECT_GT(rtt_at_cut, base + Time::from_us(5));  // the cut follows queueing delay
  EXPECT_LT(q0->rate.gbps(), 100.0);
  uint64_t marked = 0;
  for (int s : {3, 4})
    for (auto& p : net.sw(s).ports()) marked += p.stats.ecn_marked;
  EXPECT_EQ(marked, 0u);
}

// TIMELY has no unique fair point; two flows must still fill the link and neither may starve.
TEST(Timely, TwoFlowsShareTheBottleneck) {
  const Bottleneck r = run_bottleneck(2, std::make_unique<Timely>(TimelySettings{}), SwitchSettings{}, 20, 5);
  double sum = 0, lo = 1e9;
  for (int ms = 5; ms < 20; ++ms) {
    sum += r.sum_gbps(ms);
    for (double g : r.gbps[ms]) lo = std::min(lo, g);
  }
  sum /= 15;
  std::printf("[ timely  ] 2 flows: mean sum %.1f Gb/s, min flow-ms %.1f Gb/s, queue %.1f KB\n", sum, lo,
              r.mean_queue() / 1e3);
  EXPECT_GT(sum, 0.75 * kGoodput);  // it drains the queue and idles the link after each cut
  EXPECT_GT(lo, 0.2 * kGoodput / 2);
  EXPECT_EQ(r.drops, 0u);
}

TEST(Timely, IncastCompletesWithoutLoss) { expect_clean_incast(std::make_unique<Timely>(TimelySettings{})); }

// ---------------------------------------------------------------- HPCC

namespace {

// HPCC that records what leaves the sender NIC and what the ACKs carry.
class ProbedHpcc : public Hpcc {
 public:
  using Hpcc::Hpcc;
  void on_data_sent(Qp& qp, Packet& p) override {
    Hpcc::on_data_sent(qp, p);
    if (p.payload == 1000) full_sizes.push_back(p.size);
    has_int = has_int && p.hops != nullptr;
  }
  void on_ack(Qp& qp, const Packet& ack) override {
    max_hops = std::max<int>(max_hops, ack.n_hops);
    ack_size = ack.size;
    Hpcc::on_ack(qp, ack);
  }
  std::vector<uint32_t> full_sizes;
  bool has_int = true;
  int max_hops = 0;
  uint32_t ack_size = 0;
};

// Flows start 1.7 us apart (no artificial symmetry). The queue stays within a few packets, the sum
// within [0.9, 1] of the goodput capacity (U counts wire bytes: eta of 91.7 Gb/s is 87.2 Gb/s).
Bottleneck expect_hpcc_bottleneck(int n, const HpccSettings& h) {
  const Bottleneck r =
      run_bottleneck(n, std::make_unique<Hpcc>(h), SwitchSettings{}, 10, 3, nullptr, Time::from_ns(1700));
  std::printf("[ hpcc    ] %d flows, R_AI %.0f Mb/s: queue %.2f KB, sum %.1f Gb/s (cap %.1f), last ms:", n,
              h.rate_ai.mbps(), r.mean_queue() / 1e3, r.sum_gbps(9), kHpccGoodput);
  for (double g : r.gbps[9]) std::printf(" %.1f", g);
  std::printf("\n");
  EXPECT_LT(r.mean_queue(), 5'000.0);
  for (int ms = 3; ms < 10; ++ms) {
    EXPECT_GT(r.sum_gbps(ms), 0.9 * kHpccGoodput) << "ms " << ms + 1;
    EXPECT_LE(r.sum_gbps(ms), 1.0 * kHpccGoodput + 0.1) << "ms " << ms + 1;
  }
  EXPECT_EQ(r.pauses, 0u);
  return r;
}

}  // namespace

// The simulator's defaults (eta 0.95, maxStage 0, R_AI 40 Mb/s): two flows within 10 % of fair share.
TEST(Hpcc, TwoFlowsNearZeroQueueAtEtaAndFair) {
  const Bottleneck r = expect_hpcc_bottleneck(2, HpccSettings{});
  expect_fair(r, 2, r.sum_gbps(9), 3, 0.1);
}

// Four flows with the paper's W_AI for N = 4 (and maxStage 5) converge to within 10 % in a few ms.
TEST(Hpcc, FourFlowsWithPaperAdditiveStepConvergeToFairShare) {
  const Bottleneck r = expect_hpcc_bottleneck(4, HpccSettings::paper(Rate::from_gbps(100), 4));
  expect_fair(r, 4, r.sum_gbps(9), 3, 0.1);
}

// Four flows with the simulator's R_AI keep the queue near zero at eta utilisation (their split is
// only weakly pulled to fairness: see cc/hpcc.h).
TEST(Hpcc, FourFlowsSimDefaultsNearZeroQueueAtEta) {
  const Bottleneck r = expect_hpcc_bottleneck(4, HpccSettings{});
  for (int i = 0; i < 4; ++i) EXPECT_GT(r.mean_gbps(i, 3), 0.25 * r.sum_gbps(9) / 4) << "flow " << i;
}

// Data packets carry 2 + 5 x 8 B of INT on the wire (1048 + 42 = 1090 B), ACKs echo the switches'
// records (two switches on a dumbbell path) and grow by the same 42 B; T is the longest base RTT.
TEST(Hpcc, IntBytesAreOnTheWire) {
  const TopoSpec t = dumbbell({.senders = 1, .receivers = 1});
  Network net(t, SwitchSettings{}, NicSettings{}, 1, std::make_unique<ProbedHpcc>(HpccSettings{}));
  EXPECT_TRUE(net.switch_settings().int_enabled);
  InlineFlows src({long_flow(0, 1, 1'000'000)});
  net.set_flow_source(&src);
  net.run(Time::from_ms(5));
  const auto& cc = static_cast<const ProbedHpcc&>(net.cc());
  ASSERT_EQ(cc.full_sizes.size(), 1000u);
  for (uint32_t s : cc.full_sizes) ASSERT_EQ(s, 1090u);
  EXPECT_TRUE(cc.has_int);
  EXPECT_EQ(cc.max_hops, 2);
  EXPECT_EQ(cc.ack_size, 60u + 42u);
  EXPECT_EQ(cc.t(), net.max_base_rtt());
  // Alone on the path HPCC settles at eta of the wire: the FCT lies between the wire time of 1090 B
  // packets at line rate and at eta (plus one RTT).
  ASSERT_EQ(net.finished().size(), 1u);
  const double wire_us = 1000 * 1090 * 8 / 100e3, fct_us = net.finished()[0].fct().us();
  std::printf("[ hpcc    ] alone: FCT %.1f us, wire time %.1f us, at eta %.1f us\n", fct_us, wire_us,
              wire_us / 0.95);
  EXPECT_GT(fct_us, 1.02 * wire_us + net.max_base_rtt().us());
  EXPECT_LT(fct_us, wire_us / 0.95 + 2 * net.max_base_rtt().us());
}

TEST(Hpcc, IncastCompletesWithoutLoss) { expect_clean_incast(std::make_unique<Hpcc>(HpccSettings{})); }
