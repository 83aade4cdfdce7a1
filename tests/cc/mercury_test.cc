// Mercury (Mercury paper; algorithms.md 3.1): port-state detection at switches and window-carrying CNPs.
#include "cc/mercury.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "cc/dcqcn.h"
#include "cc/registry.h"
#include "config/scenario.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

constexpr Bytes kLong = 10'000'000'000LL;

// What CheckedMercury observed; owned by the test so it outlives the network (which owns the scheme).
struct WindowCheck {
  uint64_t window_cnps = 0;  // F2's CNPs carrying a window
  uint64_t checked = 0, violations = 0;
  Bytes smallest_window = 0;
};

// Mercury that checks, for F2 (flow 1), that every data packet leaves with the bytes already in flight
// below the last window a switch CNP carried, as long as no rate increase has reset the window since.
class CheckedMercury : public Mercury {
 public:
  CheckedMercury(const MercurySettings& s, WindowCheck* out) : Mercury(s), out_(out) {}

  void on_cnp(Qp& qp, const Packet& cnp) override {
    Mercury::on_cnp(qp, cnp);
    if (qp.flow_id != 1 || cnp.cc_value <= 0) return;
    ++out_->window_cnps;
    capped_ = true;
    out_->smallest_window =
        out_->smallest_window ? std::min(out_->smallest_window, last_window(qp)) : last_window(qp);
  }
  void on_data_sent(Qp& qp, Packet& p) override {
    Mercury::on_data_sent(qp, p);
    if (qp.flow_id != 1 || !capped_) return;
    ++out_->checked;
    const Bytes before = qp.in_flight() - p.payload;  // what was in flight when the NIC chose to send
    if (before >= last_window(qp)) ++out_->violations;
  }

 protected:
  void on_increase_event(Qp& qp) override {
    if (qp.flow_id == 1) capped_ = false;  // first: the larger window may wake the sender at once
    Mercury::on_increase_event(qp);
  }

 private:
  bool capped_ = false;
  WindowCheck* out_;
};

struct VictimRun {
  double f1_before = 0, f1_during = 0;  // F1 goodput 2.5-3 ms and 3-3.5 ms (the bursts), Gb/s
  double f2_before = 0, f2_during = 0;
  uint32_t f1_cnps = 0, f2_cnps = 0;
  uint64_t pauses_p1 = 0, pauses_p2 = 0;  // PAUSEs received by S1:S2 and S2:S3
  Bytes max_q_p1 = 0, max_q_p3 = 0;
  // Mercury: 1 us samples from 3 ms to 4 ms of the state of P1/P2 while paused or backlogged above Th,
  // and of P3 while above Th.
  uint64_t p12_samples = 0, p12_undetermined = 0;
  uint64_t p3_samples = 0, p3_determined = 0;
  uint64_t resumes_undetermined = 0;
  uint64_t drops = 0;
};

// mercury/victim (scenarios/mercury/victim.toml): DCQCN-paper RED (Kmin 5 KB = Mercury's Th), static PFC.
VictimRun run_victim(std::unique_ptr<CongestionControl> cc, Bytes xoff) {
  const TopoSpec t = mercury_victim({});
  Network net(t, static_pfc_paper_red(xoff, xoff - 2'000), NicSettings{}, 1, std::move(cc));
  const int r2 = lookup_node(t, "R2"), s1 = lookup_node(t, "S1"), s2 = lookup_node(t, "S2"),
            s3 = lookup_node(t, "S3");
  // B1..B8 each send 50 KB flows back to back (10 us at 40 Gb/s) to R2 for 500 us from 3 ms.
  InlineFlows src(victim_flows(t, kLong, 50, 10));
  net.set_flow_source(&src);
  const int p1 = port_towards(net, s1, s2), p2 = port_towards(net, s2, s3), p3 = port_towards(net, s3, r2);
  const int prio = net.nic_settings().data_priority;
  VictimRun r;
  Ticker sampler(net, Time::from_us(3000), Time::from_us(1), [&](Time now) {
    r.max_q_p1 = std::max(r.max_q_p1, net.sw(s1).egress_data_bytes(p1));
    r.max_q_p3 = std::max(r.max_q_p3, net.sw(s3).egress_data_bytes(p3));
    if (now > Time::from_us(4000)) return;
    auto* a1 = dynamic_cast<MercuryAgent*>(net.sw(s1).agent());
    auto* a2 = dynamic_cast<MercuryAgent*>(net.sw(s2).agent());
    auto* a3 = dynamic_cast<MercuryAgent*>(net.sw(s3).agent());
    if (!a1 || !a2 || !a3) return;
    for (auto [node, port, a] : {std::tuple{s1, p1, a1}, std::tuple{s2, p2, a2}}) {
      Switch& x = net.sw(node);
      if (x.port(port).paused[prio] || x.egress_bytes(port, prio) >= a->threshold(port)) {
        ++r.p12_samples;
        if (!a->determined(port, prio)) ++r.p12_undetermined;
      }
    }
    if (net.sw(s3).egress_bytes(p3, prio) > a3->threshold(p3)) {
      ++r.p3_samples;
      if (a3->determined(p3, prio)) ++r.p3_determined;
    }
  });
  auto got = [&](uint64_t id) { return net.find_flow(id)->rcv_nxt; };
  auto gbps = [](Bytes b, double us) { return b * 8.0 / (us * 1e-6) / 1e9; };
  net.run(Time::from_us(2500));
  const Bytes a1 = got(0), a2 = got(1);
  net.run(Time::from_us(3000));
  const Bytes b1 = got(0), b2 = got(1);
  net.run(Time::from_us(3500));
  r.f1_before = gbps(b1 - a1, 500);
  r.f2_before = gbps(b2 - a2, 500);
  r.f1_during = gbps(got(0) - b1, 500);
  r.f2_during = gbps(got(1) - b2, 500);
  net.run(Time::from_us(4500));
  r.f1_cnps = net.find_flow(0)->cnps_received;
  r.f2_cnps = net.find_flow(1)->cnps_received;
  r.pauses_p1 = net.sw(s1).port(p1).stats.pause_received;
  r.pauses_p2 = net.sw(s2).port(p2).stats.pause_received;
  for (int node : {s1, s2})
    if (auto* a = dynamic_cast<MercuryAgent*>(net.sw(node).agent()))
      r.resumes_undetermined += a->resumes_undetermined();
  r.drops = net.stats().data_drops;
  return r;
}

MercurySettings mercury40() {
  MercurySettings s;
  s.rp = DcqcnSettings::for_variant("paper", Rate::from_gbps(40));
  return s;
}

void print(const char* what, const VictimRun& r) {
  std::printf(
      "%-18s F1 %.1f -> %.1f Gb/s, F2 %.1f -> %.1f; CNPs F1 %u F2 %u; PAUSEs P1 %lu P2 %lu; "
      "max queue P1 %ld P3 %ld B; P1/P2 undetermined %lu/%lu, P3 determined %lu/%lu\n",
      what, r.f1_before, r.f1_during, r.f2_before, r.f2_during, r.f1_cnps, r.f2_cnps,
      static_cast<unsigned long>(r.pauses_p1), static_cast<unsigned long>(r.pauses_p2),
      static_cast<long>(r.max_q_p1), static_cast<long>(r.max_q_p3),
      static_cast<unsigned long>(r.p12_undetermined), static_cast<unsigned long>(r.p12_samples),
      static_cast<unsigned long>(r.p3_determined), static_cast<unsigned long>(r.p3_samples));
}

}  // namespace

// The paper's setting (Xoff 320 KB): the congested F2 gets window CNPs from S3, the victim F1 none, and
// F2's in-flight bytes stay under the windows. (Here F2's windows keep its share of S3's queue far below
// Xoff, so S3 never pauses S2: the next test lowers Xoff to make the pauses spread.)
TEST(Mercury, WindowCnpsGoOnlyToTheCongestedFlowAndCapItsInflight) {
  WindowCheck wc;
  const WindowCheck* m = &wc;
  auto cc = std::make_unique<CheckedMercury>(mercury40(), &wc);
  const VictimRun r = run_victim(std::move(cc), 320'000);
  print("Mercury Xoff 320K:", r);
  std::printf("  F2: %lu window CNPs, smallest window %ld B, %lu packets sent under a window, %lu over\n",
              static_cast<unsigned long>(m->window_cnps), static_cast<long>(m->smallest_window),
              static_cast<unsigned long>(m->checked), static_cast<unsigned long>(m->violations));
  EXPECT_GT(r.f1_before, 18.0);
  EXPECT_EQ(r.f1_cnps, 0u);
  EXPECT_GT(r.f2_cnps, 0u);
  EXPECT_EQ(m->window_cnps, r.f2_cnps);   // every CNP carries a window
  EXPECT_LT(m->smallest_window, 10'000);  // F2's share of P3's backlog is small: about one MTU
  EXPECT_GT(m->checked, 0u);  // few: F2's packets wait ~0.5 ms in P3, and each increase resets cwnd
  EXPECT_EQ(m->violations, 0u);
  EXPECT_LT(r.f2_during, 5.0);               // the congested flow is cut ...
  EXPECT_GT(r.f1_during, 18.0);              // ... the victim is not
  EXPECT_GT(r.p3_samples, 100u);             // P3 is the real congestion point ...
  EXPECT_EQ(r.p3_determined, r.p3_samples);  // ... and stays Determined (never paused)
  EXPECT_EQ(r.drops, 0u);
}

// Xoff 30 KB so that S3 pauses S2 and S2 pauses S1 under every scheme: P1/P2 (paused-only ports) are
// Undetermined while paused or holding the backlog of a pause, P3 stays Determined, F1 gets no CNP and
// keeps its rate, while under DCQCN F2 keeps enough rate for the pauses to reach H1 and cut F1.
TEST(Mercury, PausedOnlyPortsAreUndeterminedAndTheVictimKeepsItsRate) {
  WindowCheck cwc;
  const WindowCheck* cm = &cwc;
  auto cc = std::make_unique<CheckedMercury>(mercury40(), &cwc);
  const VictimRun m = run_victim(std::move(cc), 30'000);
  const VictimRun d =
      run_victim(std::make_unique<Dcqcn>(DcqcnSettings::for_variant("paper", Rate::from_gbps(40))), 30'000);
  print("Mercury Xoff 30K:", m);
  print("DCQCN Xoff 30K:", d);
  std::printf(
      "  F2 under Mercury: %lu window CNPs, smallest window %ld B, %lu packets sent under a window, "
      "%lu over\n",
      static_cast<unsigned long>(cm->window_cnps), static_cast<long>(cm->smallest_window),
      static_cast<unsigned long>(cm->checked), static_cast<unsigned long>(cm->violations));
  EXPECT_GT(cm->checked, 10u);
  EXPECT_EQ(cm->violations, 0u);
  EXPECT_GT(m.pauses_p1 + m.pauses_p2, 0u);
  EXPECT_GT(m.resumes_undetermined, 0u);
  EXPECT_GT(m.p12_samples, 10u);
  EXPECT_EQ(m.p12_undetermined, m.p12_samples);
  EXPECT_GT(m.p3_samples, 100u);
  EXPECT_EQ(m.p3_determined, m.p3_samples);
  EXPECT_EQ(m.f1_cnps, 0u);
  EXPECT_GT(m.f2_cnps, 0u);
  // Under DCQCN, F1 loses its rate to the pauses themselves (PFC spreads to H1) and to the CNPs RED's
  // marks of the spread queues bring (few with the paper's Pmax of 1 %).
  EXPECT_GT(d.pauses_p1, 0u);
  EXPECT_GT(m.f1_during, 16.0);
  EXPECT_GT(m.f1_during, d.f1_during + 5.0);
  EXPECT_EQ(m.drops, 0u);
  EXPECT_EQ(d.drops, 0u);
}

// ---------------------------------------------------------------------------------------------------
namespace {

struct IncastRun {
  double min_gbps = 1e9;  // the long flow's lowest 10 us goodput from 600 us to 1 ms
  double avg_gbps = 0;    // its average over 600 us - 1 ms
  Bytes max_queue = 0;    // S1's port to S2
  uint64_t drops = 0;
};

// mercury/incast-burst (scenarios/mercury/incast_burst.toml): 9 senders on S1 at 40 Gb/s, 4 us links.
IncastRun run_incast(std::unique_ptr<CongestionControl> cc) {
  const TopoSpec t = dumbbell({.senders = 9,
                               .receivers = 1,
                               .host_rate = Rate::from_gbps(40),
                               .bottleneck_rate = Rate::from_gbps(40),
                               .host_delay = Time::from_us(4),
                               .bottleneck_delay = Time::from_us(4)});
  Network net(t, static_pfc_paper_red(320'000, 318'000), NicSettings{}, 1, std::move(cc));
  std::vector<FlowSpec> flows{flow(0, 9, kLong)};
  for (int h = 1; h <= 8; ++h) flows.push_back(flow(h, 9, 120'000, Time::from_us(600)));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  const int a = 10, b = 11, port = port_towards(net, a, b);
  IncastRun r;
  Bytes last = 0;
  double sum = 0;
  int bins = 0;
  Ticker sampler(net, Time::from_us(600), Time::from_us(10), [&](Time now) {
    r.max_queue = std::max(r.max_queue, net.sw(a).egress_data_bytes(port));
    const Bytes got = net.find_flow(0)->rcv_nxt;
    if (now > Time::from_us(600) && now <= Time::from_us(1000)) {
      const double g = (got - last) * 8.0 / 10e-6 / 1e9;
      r.min_gbps = std::min(r.min_gbps, g);
      sum += g;
      ++bins;
    }
    last = got;
  });
  net.run(Time::from_us(1500));
  r.avg_gbps = sum / std::max(1, bins);
  r.drops = net.stats().data_drops;
  return r;
}

}  // namespace

// Mercury and DCQCN with the same (default, Mellanox) reaction point: the queue stays far below DCQCN's and
// the long flow keeps its rate up better (the paper: > 6 Gb/s under Mercury).
TEST(Mercury, IncastBurstKeepsTheQueueFarBelowDcqcns) {
  const IncastRun m = run_incast(std::make_unique<Mercury>(MercurySettings{}));
  const IncastRun d = run_incast(std::make_unique<Dcqcn>(DcqcnSettings::mellanox(Rate::from_gbps(40))));
  std::printf("incast-burst Mercury: long flow min %.1f avg %.1f Gb/s (600 us - 1 ms), max queue S1 %ld B\n",
              m.min_gbps, m.avg_gbps, static_cast<long>(m.max_queue));
  std::printf("incast-burst DCQCN:   long flow min %.1f avg %.1f Gb/s (600 us - 1 ms), max queue S1 %ld B\n",
              d.min_gbps, d.avg_gbps, static_cast<long>(d.max_queue));
  EXPECT_GT(d.max_queue, 900'000);
  EXPECT_LT(m.max_queue, d.max_queue / 2);
  EXPECT_EQ(m.drops, 0u);
  EXPECT_EQ(d.drops, 0u);
}

// [cc.mercury] defaults to the reaction point of [cc.dcqcn] (variant mellanox); other variants on request.
TEST(Mercury, ConfigDefaultsToTheDcqcnBaselinesVariant) {
  Config c = Config::parse("[cc]\nscheme = \"mercury\"\n[cc.mercury]\ncheck_period_us = 20\n", "t.toml");
  auto f = find_scheme("mercury")->read(c, SchemeContext{Rate::from_gbps(40), Time::zero()});
  auto cc = f();
  auto* m = dynamic_cast<Mercury*>(cc.get());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->settings().variant, "mellanox");
  EXPECT_EQ(m->settings().fast_recovery_steps,
            DcqcnSettings::mellanox(Rate::from_gbps(40)).fast_recovery_steps);
  EXPECT_EQ(m->mercury_settings().check_period, Time::from_us(20));
  EXPECT_EQ(m->mercury_settings().cnp_interval, Time::from_us(50));
  EXPECT_FALSE(m->needs().ecn_marking);
  Config c2 = Config::parse("[cc.mercury]\nvariant = \"paper\"\n", "t.toml");
  auto cc2 = find_scheme("mercury")->read(c2, SchemeContext{Rate::from_gbps(40), Time::zero()})();
  EXPECT_EQ(dynamic_cast<Mercury*>(cc2.get())->settings().variant, "paper");
  EXPECT_EQ(dynamic_cast<Mercury*>(cc2.get())->settings().fast_recovery_steps, 5);
}

// Every scenario under scenarios/mercury loads, names the Mercury scheme and generates flows.
TEST(Mercury, ScenariosLoad) {
  const std::filesystem::path dir = std::filesystem::path(ROCESIM_SCENARIO_DIR) / "mercury";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    SCOPED_TRACE(e.path().string());
    const Scenario s = load_scenario(e.path().string());
    EXPECT_EQ(s.scheme, "mercury");
    auto src = s.make_flow_source();
    FlowSpec f;
    EXPECT_TRUE(src->next(f));
    ++n;
  }
  EXPECT_GE(n, 5);
}
