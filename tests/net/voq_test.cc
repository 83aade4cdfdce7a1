// Virtual output queues in the input-and-output queued switch model (switch.input_queueing = "voq";
// RCM paper sec. 4.1: "virtual input queues (VOQ) at the input port").
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

SwitchSettings voq_switch(InputQueueing iq) {
  SwitchSettings sw;
  sw.model = SwitchModel::kInputOutputQueued;
  sw.input_queueing = iq;
  sw.ecn_enabled = false;
  return sw;
}

}  // namespace

// 8:1 incast (h0..h7 -> h8) plus h10 -> h8 (local to s1) and h0..h3 -> h9 under VOQ: s1's input from s0
// holds packets for two outputs, and h8's output is shared with another input. Lossless: no drop, every
// flow finishes, the input's bytes over all its VOQs stay within input_queue_bytes (it did fill, PFC
// paused s0), output queues within their limit, --check clean.
TEST(Voq, IncastLosslessWithinLimits) {
  DumbbellParams dp;
  dp.senders = 8;
  dp.receivers = 3;
  const TopoSpec t = dumbbell(dp);
  Network net(t, voq_switch(InputQueueing::kVoq), NicSettings{}, 1, std::make_unique<NoCc>());
  const int s0 = lookup_node(t, "s0"), s1 = lookup_node(t, "s1");
  ASSERT_EQ(net.sw(s1).input_queues_per_input(), static_cast<int>(net.sw(s1).ports().size()));
  std::vector<FlowSpec> flows;
  for (int h = 0; h < 8; ++h) flows.push_back(flow(h, 8, 300'000));
  for (int h = 0; h < 4; ++h) flows.push_back(flow(h, 9, 200'000));
  flows.push_back(flow(10, 8, 1'000'000));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  CheckOptions co;
  co.invariants = true;
  // Every microsecond, however many packets are queued (CheckOptions::invariant_cost_per_packet).
  co.invariant_cost_per_packet = Time::zero();
  NetChecker checker(net, co);
  Bytes max_out = 0, max_in = 0, max_in_s1 = 0;
  const int in = port_towards(net, s1, s0);
  Ticker tick(net, Time::from_us(1), [&](Time) {
    for (int s : {s0, s1})
      for (const Port& p : net.sw(s).ports()) {
        max_out = std::max(max_out, p.data_bytes);
        max_in = std::max(max_in, net.sw(s).input_bytes(p.index));
      }
    max_in_s1 = std::max(max_in_s1, net.sw(s1).input_bytes(in));
  });
  net.run(Time::from_ms(2));
  checker.finish();
  EXPECT_FALSE(checker.failed()) << checker.failure().message;
  EXPECT_EQ(net.stats().data_drops, 0u);
  EXPECT_EQ(net.stats().flows_finished, 13u);
  EXPECT_GT(max_in, 50'000);
  EXPECT_GT(max_in_s1, 50'000);  // s1's input from s0 filled (h8's VOQ)
  EXPECT_LE(max_in, 100'000);
  EXPECT_LE(net.stats().max_ingress_bytes, 100'000);
  EXPECT_GT(max_out, 90'000);
  EXPECT_LE(max_out, 100'000);
  EXPECT_GT(net.node(s0).port(0).stats.pause_sent + net.node(s1).port(0).stats.pause_sent, 0u);
  EXPECT_GT(checker.invariant_checks(), 100u);
}

// The property that tells VOQ from FIFO: s1's output to h2 is paused (a PFC frame from h2, held until
// 150 us); flow A (h0 -> h2, 120 KB) fills that output queue and leaves ~26 KB waiting in s1's input from
// s0 (below Xoff, so the link stays open). Flow B (h1 -> h3, 10 KB) arrives at 20 us through the same
// input, for an idle output. With VOQ it finishes within a few us; with one FIFO per input it waits
// behind A's packets until the pause ends. Both are lossless and finish everything.
namespace {

struct HolRun {
  Time b_finish;  // zero if B did not finish
  uint64_t drops = 0, finished = 0;
  bool checks_ok = false;
  std::string check_msg;
};

HolRun run_hol(InputQueueing iq) {
  DumbbellParams dp;
  dp.senders = 2;
  dp.receivers = 2;
  const TopoSpec t = dumbbell(dp);
  SwitchSettings sw = voq_switch(iq);
  sw.headroom_bytes = 20'000;  // Xoff = 80 KB: A's 26 KB in the input queue never pause s0
  Network net(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
  const int s1 = lookup_node(t, "s1");
  const int out = port_towards(net, s1, 2);
  std::vector<FlowSpec> flows = {flow(0, 2, 120'000), flow(1, 3, 10'000, Time::from_us(20))};
  InlineFlows src(flows);
  net.set_flow_source(&src);
  CheckOptions co;
  co.invariants = true;
  NetChecker checker(net, co);
  HolRun r;
  net.observers().on_flow_finished = [&](const FlowRecord& f) {
    if (f.src == 1) r.b_finish = f.finish;
  };
  auto pfc = [&](bool pause) {
    Packet* f = net.pool().get();
    f->type = PktType::kPfc;
    f->pfc_class = 3;  // FlowSpec::priority
    f->pfc_pause = pause;
    net.sw(s1).receive(f, out);
  };
  pfc(true);
  Ticker resume(net, Time::from_us(150), Time::from_ms(10), [&](Time) { pfc(false); });
  net.run(Time::from_us(400));
  checker.finish();
  r.checks_ok = !checker.failed();
  if (!r.checks_ok) r.check_msg = checker.failure().message;
  r.drops = net.stats().data_drops;
  r.finished = net.stats().flows_finished;
  return r;
}

}  // namespace

TEST(Voq, PacketForIdleOutputNotBlockedBehindPausedOutput) {
  const HolRun voq = run_hol(InputQueueing::kVoq);
  const HolRun fifo = run_hol(InputQueueing::kFifo);
  for (const HolRun* r : {&voq, &fifo}) {
    EXPECT_TRUE(r->checks_ok) << r->check_msg;
    EXPECT_EQ(r->drops, 0u);
    EXPECT_EQ(r->finished, 2u);
  }
  EXPECT_GT(voq.b_finish, Time::from_us(20));
  EXPECT_LT(voq.b_finish, Time::from_us(50)) << "VOQ: B waited behind the paused output";  // measured 27.0
  EXPECT_GT(fifo.b_finish, Time::from_us(150)) << "FIFO: B should wait until the pause ends";  // 156.9
}

// Deadlock detection follows each non-empty VOQ's head to its output: on a 5-switch ring where every flow
// goes two hops clockwise (test_util.h's switch_ring), the VOQs for the ring egress fill every input,
// PFC closes the cycle and --check reports it, naming switches only.
TEST(Voq, RingDeadlockIsReported) {
  const int n = 5, hosts = 2;
  SwitchSettings sw = voq_switch(InputQueueing::kVoq);
  Network net(switch_ring(n, hosts), sw, NicSettings{}, 1, std::make_unique<NoCc>());
  std::vector<FlowSpec> flows;
  for (int i = 0; i < n; ++i)
    for (int h = 0; h < hosts; ++h)
      flows.push_back(flow(n + i * hosts + h, n + ((i + 2) % n) * hosts + h, 10'000'000));
  InlineFlows src(flows);
  net.set_flow_source(&src);
  CheckOptions o;
  o.deadlock_min_age = Time::from_us(50);
  o.invariants = true;
  NetChecker c(net, o);
  net.run(Time::from_ms(20), true, [&c](Time t) { c.on_progress(t); });
  c.finish();
  ASSERT_TRUE(c.failed()) << "no deadlock formed; " << net.stats().flows_finished << " flows finished";
  const CheckFailure& f = c.failure();
  EXPECT_EQ(f.kind, CheckFailure::Kind::kDeadlock) << f.message;
  ASSERT_GE(f.cycle.size(), 2u);
  for (size_t i = 0; i < f.cycle.size(); ++i) {
    EXPECT_LT(f.cycle[i].node, n);
    EXPECT_EQ(f.cycle[i].peer, f.cycle[(i + 1) % f.cycle.size()].node);
  }
  EXPECT_EQ(net.stats().data_drops, 0u);
}
