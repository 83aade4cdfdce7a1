// Robustness: PFC deadlock detection on a ring, the no-progress watchdog, invariant mode (--check) and
// that checking never changes results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "../../fuzz/harness.h"
#include "app/run.h"
#include "cc/none.h"
#include "file_util.h"
#include "net/checks.h"
#include "net/host.h"
#include "net/network.h"
#include "net/switch.h"
#include "test_util.h"
#include "topo/builders.h"
#include "workload/flow_file.h"

using namespace rocesim;
using namespace rocesim::test;

namespace {

struct CheckedRun {
  std::unique_ptr<Network> net;
  std::unique_ptr<InlineFlows> flows;
  std::unique_ptr<NetChecker> checker;
};

CheckedRun run_with_checks(const TopoSpec& t, const SwitchSettings& sw, std::vector<FlowSpec> flows,
                           const CheckOptions& o, Time until) {
  CheckedRun r;
  r.net = std::make_unique<Network>(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
  r.flows = std::make_unique<InlineFlows>(std::move(flows));
  r.net->set_flow_source(r.flows.get());
  r.checker = std::make_unique<NetChecker>(*r.net, o);
  NetChecker* c = r.checker.get();
  r.net->run(until, true, [c](Time t) { c->on_progress(t); });
  c->finish();
  return r;
}

// On a 5-switch ring every flow to the switch two hops clockwise has one shortest path (2 hops vs 3),
// so all traffic turns the same way: with low static Xoff each ring egress waits on the next one.
SwitchSettings small_static_pfc() {
  SwitchSettings sw;
  sw.pfc_mode = PfcThresholdMode::kStatic;
  sw.xoff_bytes = 20'000;
  sw.xon_bytes = 18'000;
  sw.buffer_bytes = 2'000'000;
  sw.ecn_enabled = false;
  return sw;
}

std::vector<FlowSpec> ring_flows(int n, int hosts, Bytes size) {
  std::vector<FlowSpec> f;
  for (int i = 0; i < n; ++i)
    for (int h = 0; h < hosts; ++h) f.push_back(flow(n + i * hosts + h, n + ((i + 2) % n) * hosts + h, size));
  return f;
}

}  // namespace

TEST(Deadlock, RingWithClockwiseFlowsIsReportedWithItsCycle) {
  const int n = 5, hosts = 2;
  CheckOptions o;
  o.deadlock_min_age = Time::from_us(50);
  CheckedRun r = run_with_checks(switch_ring(n, hosts), small_static_pfc(), ring_flows(n, hosts, 10'000'000),
                                 o, Time::from_ms(50));
  ASSERT_TRUE(r.checker->failed()) << "no deadlock formed; " << r.net->stats().flows_finished
                                   << " flows finished";
  const CheckFailure& f = r.checker->failure();
  EXPECT_EQ(f.kind, CheckFailure::Kind::kDeadlock) << f.message;
  ASSERT_GE(f.cycle.size(), 2u);
  std::set<int> nodes;
  Time since;
  for (size_t i = 0; i < f.cycle.size(); ++i) {
    const DeadlockEdge& e = f.cycle[i];
    EXPECT_LT(e.node, n);  // switches only
    EXPECT_EQ(e.prio, NicSettings{}.data_priority);
    EXPECT_EQ(e.peer, f.cycle[(i + 1) % f.cycle.size()].node) << "edges chain around the cycle";
    EXPECT_GT(e.queued, 0);
    EXPECT_TRUE(r.net->node(e.node).port(e.port).paused[e.prio]);
    nodes.insert(e.node);
    since = std::max(since, e.since);
  }
  EXPECT_EQ(nodes.size(), f.cycle.size());
  EXPECT_EQ(f.since, since);
  EXPECT_LE(f.since, f.at);
  EXPECT_NE(f.message.find("PFC deadlock"), std::string::npos);
  EXPECT_NE(f.message.find("s0"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("priority 3"), std::string::npos) << f.message;
  EXPECT_LT(r.net->stats().flows_finished, r.net->stats().flows_started);
  // Each switch's count of paused (egress, priority) pairs, which lets the check skip switches without
  // any, matches its ports.
  for (int id = 0; id < n; ++id) {
    int paused = 0;
    for (const Port& port : r.net->node(id).ports())
      for (int prio = 0; prio < kNumPriorities; ++prio) paused += port.paused[prio] ? 1 : 0;
    EXPECT_EQ(r.net->sw(id).paused_egresses(), paused) << "switch " << id;
    EXPECT_GT(paused, 0) << "switch " << id << " is on the cycle";
  }
  std::printf("%s\n", f.message.c_str());
}

TEST(Deadlock, SameRingWithDynamicThresholdsAndLargeBufferDoesNotFalselyReport) {
  const int n = 5, hosts = 2;
  SwitchSettings sw;  // defaults: 32 MB, dynamic thresholds
  CheckOptions o;
  o.invariants = true;
  o.invariant_interval = Time::from_us(1);
  CheckedRun r =
      run_with_checks(switch_ring(n, hosts), sw, ring_flows(n, hosts, 200'000), o, Time::from_ms(50));
  EXPECT_FALSE(r.checker->failed()) << r.checker->failure().message;
  EXPECT_TRUE(r.net->all_flows_done());
  EXPECT_GT(r.checker->invariant_checks(), 10u);
}

TEST(Watchdog, UnroutableFlowStallsAndIsStopped) {
  // h0 - s0 - h1, and h2 alone behind s1 (no path): h0's packets to h2 are all dropped as unroutable and
  // with PFC on there is no retransmission timeout: 800 ms of sending without a single delivery.
  TopoSpec t;
  t.num_nodes = 5;
  t.is_switch = {false, false, false, true, true};
  const Rate r = Rate::from_gbps(100);
  const Time d = Time::from_us(1);
  t.links = {{0, 3, r, d}, {1, 3, r, d}, {2, 4, r, d}};
  CheckOptions o;
  o.watchdog = Time::from_ms(1);
  CheckedRun run = run_with_checks(t, SwitchSettings{}, {flow(0, 2, 10'000'000'000), flow(1, 0, 10'000)}, o,
                                   Time::from_ms(500));
  ASSERT_TRUE(run.checker->failed());
  EXPECT_EQ(run.checker->failure().kind, CheckFailure::Kind::kStall) << run.checker->failure().message;
  EXPECT_NE(run.checker->failure().message.find("no progress"), std::string::npos);
  EXPECT_LT(run.net->now(), Time::from_ms(200));  // at the first progress check (2^20 events)
}

// A flow to a host it cannot reach (its packets are dropped as unroutable) keeps only its retransmission
// timer running (a background event, PartitionedRun::awaits_timers): the run goes to its end, and the check
// made there finds that nothing was delivered for the watchdog's time.
TEST(Watchdog, UnreachableFlowIsAStallAtTheEnd) {
  TopoSpec t;
  t.num_nodes = 5;
  t.is_switch = {false, false, false, true, true};
  const Rate r = Rate::from_gbps(100);
  const Time d = Time::from_us(1);
  t.links = {{0, 3, r, d}, {1, 3, r, d}, {2, 4, r, d}};
  CheckedRun run =
      run_with_checks(t, SwitchSettings{}, {flow(0, 2, 100'000)}, CheckOptions{}, Time::from_ms(500));
  ASSERT_TRUE(run.checker->failed());
  EXPECT_EQ(run.checker->failure().kind, CheckFailure::Kind::kStall);
  EXPECT_NE(run.checker->failure().message.find("no payload reached any receiver"), std::string::npos)
      << run.checker->failure().message;
  EXPECT_NE(run.checker->failure().message.find("1 flows were active"), std::string::npos)
      << run.checker->failure().message;
  EXPECT_GT(run.net->stats().timeouts, 100u);  // every 1 ms (nic.gbn_rto_us) of the 500 ms
}

TEST(Invariants, IncastHoldsEveryInvariantInBothPfcModes) {
  for (const PfcThresholdMode mode : {PfcThresholdMode::kStatic, PfcThresholdMode::kDynamic}) {
    SwitchSettings sw;
    sw.pfc_mode = mode;
    std::vector<FlowSpec> flows;
    for (int i = 0; i < 8; ++i) flows.push_back(flow(i, 8, 300'000, Time::from_us(i)));
    CheckOptions o;
    o.invariants = true;
    // Every microsecond, however many packets are queued (CheckOptions::invariant_cost_per_packet).
    o.invariant_cost_per_packet = Time::zero();
    CheckedRun r = run_with_checks(star({.hosts = 9}), sw, flows, o, Time::from_ms(50));
    EXPECT_FALSE(r.checker->failed()) << r.checker->failure().message;
    EXPECT_TRUE(r.net->all_flows_done());
    EXPECT_GT(r.net->switch_settings().pfc_enabled ? r.checker->invariant_checks() : 1, 100u);
  }
}

TEST(Invariants, CheckingDoesNotChangeResults) {
  std::vector<FlowSpec> flows;
  for (int i = 0; i < 8; ++i)
    flows.push_back(flow(i, (i + 3) % 9, 50'000 + 10'000 * i, Time::from_us(2 * i)));
  CheckOptions off;
  off.deadlock = false;
  off.watchdog = Time::zero();
  CheckOptions on;
  on.invariants = true;
  on.invariant_interval = Time::from_ns(300);
  on.invariant_cost_per_packet = Time::zero();  // every 300 ns, however many packets are queued
  CheckedRun a = run_with_checks(star({.hosts = 9}), SwitchSettings{}, flows, off, Time::from_ms(50));
  CheckedRun b = run_with_checks(star({.hosts = 9}), SwitchSettings{}, flows, on, Time::from_ms(50));
  ASSERT_EQ(a.net->finished().size(), flows.size());
  ASSERT_EQ(b.net->finished().size(), flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(a.net->finished()[i].id, b.net->finished()[i].id);
    EXPECT_EQ(a.net->finished()[i].finish, b.net->finished()[i].finish);
  }
  EXPECT_GT(b.checker->invariant_checks(), 50u);
}

// A check walks every queued packet: the interval stretches with the packets alive, so that a run with a
// full 32 MB buffer is not slowed hundreds of times (fuzz 51002:1481 ran for over 300 s instead of 1.4 s).
TEST(Invariants, CheckIntervalStretchesWithTheQueuedPackets) {
  std::vector<FlowSpec> flows;
  for (int i = 0; i < 8; ++i) flows.push_back(flow(i, 8, 300'000, Time::from_us(i)));
  CheckOptions dense;
  dense.invariants = true;
  dense.invariant_cost_per_packet = Time::zero();
  CheckOptions stretched = dense;
  stretched.invariant_cost_per_packet = Time::from_ns(10);
  CheckedRun a = run_with_checks(star({.hosts = 9}), SwitchSettings{}, flows, dense, Time::from_ms(50));
  CheckedRun b = run_with_checks(star({.hosts = 9}), SwitchSettings{}, flows, stretched, Time::from_ms(50));
  EXPECT_FALSE(a.checker->failed()) << a.checker->failure().message;
  EXPECT_FALSE(b.checker->failed()) << b.checker->failure().message;
  // The incast keeps hundreds of packets queued at the receiver's port: checks every few microseconds.
  EXPECT_LT(2 * b.checker->invariant_checks(), a.checker->invariant_checks());
  EXPECT_GT(b.checker->invariant_checks(), 10u);
}

TEST(Invariants, ViolationsAreReportedPrecisely) {
  std::vector<FlowSpec> flows;
  for (int i = 0; i < 4; ++i) flows.push_back(flow(i, 4, 2'000'000));
  SwitchSettings sw;
  sw.pfc_mode = PfcThresholdMode::kStatic;
  sw.xoff_bytes = 20'000;
  sw.xon_bytes = 18'000;
  Network net(star({.hosts = 5}), sw, NicSettings{}, 1, std::make_unique<NoCc>());
  InlineFlows src(flows);
  net.set_flow_source(&src);
  CheckOptions o;
  o.invariants = true;
  NetChecker c(net, o);
  net.run(Time::from_us(100));
  ASSERT_EQ(c.check_invariants(), "");
  // The receiver's NIC egress believes it is paused while the switch never sent it a PAUSE.
  Switch& s = net.sw(5);
  int port = -1;
  for (int p = 0; p < 5; ++p)
    if (s.port(p).peer->id() == 4) port = p;
  ASSERT_GE(port, 0);
  ASSERT_FALSE(s.ingress(port, 3).pause_sent);
  Port& hp = net.node(s.port(port).peer->id()).port(0);
  hp.paused[3] = true;
  const std::string v = c.check_invariants();
  EXPECT_NE(v.find("PFC state mismatch"), std::string::npos) << v;
  EXPECT_NE(v.find("priority 3"), std::string::npos) << v;
  hp.paused[3] = false;
  // A flow whose acknowledged bytes run ahead of what it sent.
  Qp* q = nullptr;
  for (uint32_t i = 0; i < net.qp_capacity() && !q; ++i)
    if (net.qp(i).in_use) q = &net.qp(i);
  ASSERT_NE(q, nullptr);
  const Bytes keep = q->snd_una;
  q->snd_una = q->snd_nxt + 1;
  EXPECT_NE(c.check_invariants().find("byte counters out of order"), std::string::npos);
  q->snd_una = keep;
  EXPECT_EQ(c.check_invariants(), "");
}

namespace {

// Replays every file of tests/data/fuzz_regressions/<format>/ and fuzz/corpus/<format>/ through the harness.
size_t replay(const std::string& format, void (*fn)(const uint8_t*, size_t)) {
  namespace fs = std::filesystem;
  size_t n = 0;
  for (const fs::path& dir : {fs::path(ROCESIM_TEST_DIR) / "data/fuzz_regressions" / format,
                              fs::path(ROCESIM_TEST_DIR) / "../fuzz/corpus" / format}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().extension() == ".md") continue;
      const std::string bytes = read_text_file(e.path());
      SCOPED_TRACE(e.path().string());
      fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST(FuzzRegressions, Scenario) { EXPECT_GT(replay("scenario", &fuzz::scenario), 0u); }
TEST(FuzzRegressions, Topology) { EXPECT_GT(replay("topology", &fuzz::topology), 0u); }
TEST(FuzzRegressions, FlowFile) { EXPECT_GT(replay("flow_file", &fuzz::flow_file), 0u); }
TEST(FuzzRegressions, Cdf) { EXPECT_GT(replay("cdf", &fuzz::cdf), 0u); }
TEST(FuzzRegressions, Simai) { EXPECT_GT(replay("simai", &fuzz::simai), 0u); }

TEST(ResourceLimits, RunThatCannotFitIsRefusedBeforeItStarts) {
  Scenario s;
  s.name = "huge";
  s.topo.num_nodes = 600'000;  // 600k switches: a 600k x 600k routing table, 1.4 TB
  s.topo.is_switch.assign(s.topo.num_nodes, true);
  EXPECT_GT(estimate_run_memory_bytes(s), int64_t{1'000'000'000'000});
  ASSERT_GT(available_memory_bytes(), 0);
  try {
    run_scenario(s, RunOptions{});
    FAIL() << "not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs at least"), std::string::npos) << e.what();
  }
}

TEST(Invariants, CliCheckFlagGivesIdenticalFlowsCsv) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("rocesim_check_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string toml = "name = \"check_incast\"\n[topology]\nkind = \"star\"\nhosts = 8\n";
  for (int i = 1; i < 8; ++i)
    toml += "[[flows]]\nsrc = " + std::to_string(i) +
            "\ndst = 0\nsize_bytes = " + std::to_string(100'000 * i) + "\nstart_us = " + std::to_string(i) +
            "\n";
  std::ofstream(dir / "s.toml") << toml;
  const std::string bin = ROCESIM_BINARY;
  const std::string base = bin + " run " + (dir / "s.toml").string() + " -q -o ";
  ASSERT_EQ(std::system((base + (dir / "plain").string() + " > /dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system((base + (dir / "checked").string() + " --check > /dev/null 2>&1").c_str()), 0);
  const std::string a = read_text_file(dir / "plain/flows.csv"),
                    b = read_text_file(dir / "checked/flows.csv");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(read_text_file(dir / "checked/summary.json").find("invariant_samples"), std::string::npos);
  fs::remove_all(dir);
}
