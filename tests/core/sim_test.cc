// The event loop's order and its partitions (core/simulator.h, docs/parallel.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/simulator.h"

namespace rocesim {
namespace {

// Ties: (time, permuted origin, sequence). One origin's events at one time keep their order; the origins'
// order is a permutation (distinct keys) that changes from one picosecond to the next, so no origin
// precedes another at every tie; the salt (the run's seed) draws other permutations.
TEST(EventOrder, TiesArePermutedPerPicosecondAndKeepEachOriginsOrder) {
  const Time t = Time::from_us(3);
  EXPECT_LT(Simulator::make_key(t, 7, 1), Simulator::make_key(t, 7, 2));
  EXPECT_LT(Simulator::make_key(t, 7, 99), Simulator::make_key(t + Time::from_ps(1), 3, 0));
  std::set<unsigned __int128> keys;
  for (uint32_t o = 0; o < 4096; ++o) keys.insert(Simulator::make_key(t, o, 0));
  EXPECT_EQ(keys.size(), 4096u);
  int first = 0;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    const Time ti = Time::from_ps(1'000'000 + i);
    first += Simulator::make_key(ti, 5, 0) < Simulator::make_key(ti, 6, 0) ? 1 : 0;
  }
  EXPECT_GT(first, n * 45 / 100);
  EXPECT_LT(first, n * 55 / 100);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const Time ti = Time::from_ps(i);
    differ += (Simulator::make_key(ti, 5, 0, 1) < Simulator::make_key(ti, 6, 0, 1)) !=
              (Simulator::make_key(ti, 5, 0, 2) < Simulator::make_key(ti, 6, 0, 2));
  }
  EXPECT_GT(differ, 20);
}

// Nodes on a ring pass tokens to their neighbour with a delay of at least the lookahead and log what they
// see; a node also schedules events for itself at the same picosecond. The logs are the same for one
// queue and for the ring cut into partitions run by several threads.
class RingNode : public EventHandler {
 public:
  Simulator* sim = nullptr;
  uint32_t next = 0;
  std::vector<std::string> log;
  void on_event(uint32_t kind, uint64_t arg) override {
    log.push_back(std::to_string(sim->now().ps) + ":" + std::to_string(kind) + ":" + std::to_string(arg));
    if (kind == 0 && arg < 400) {
      sim->after(Time::from_ns(1000 + static_cast<int64_t>(arg % 7) * 100), next, 0, arg + 1);
      sim->after(Time::zero(), sim->running_handler(), 1, arg);
      if (arg % 97 == 0) sim->after(Time::from_ns(1000), next, 0, arg + 2);
    }
  }
};

// Registers `nodes`, lets `wire` connect them (by handler id) and post the first events, cuts them into
// `parts` runs of consecutive nodes on `threads` threads, runs 1 ms and returns each node's log.
template <class Node, class Wire>
std::vector<std::vector<std::string>> run_cut(Simulator& sim, std::vector<Node>& nodes, int parts,
                                              int threads, Wire&& wire) {
  std::vector<uint32_t> ids;
  for (auto& node : nodes) {
    node.sim = &sim;
    ids.push_back(sim.add_handler(&node));
  }
  wire(ids);
  const int n = static_cast<int>(nodes.size());
  std::vector<uint32_t> part(sim.num_handlers(), 0);
  for (int i = 0; i < n; ++i) part[ids[i]] = static_cast<uint32_t>(i * parts / n);
  sim.partition(part, static_cast<uint32_t>(parts), Time::from_ns(1000), threads);
  sim.run(Time::from_ms(1));
  std::vector<std::vector<std::string>> logs;
  for (auto& node : nodes) logs.push_back(node.log);
  return logs;
}

// Twelve nodes on a ring, four of them starting a token.
std::vector<std::vector<std::string>> run_ring(Simulator& sim, int parts, int threads) {
  std::vector<RingNode> nodes(12);
  return run_cut(sim, nodes, parts, threads, [&](const std::vector<uint32_t>& ids) {
    const size_t n = ids.size();
    for (size_t i = 0; i < n; ++i) nodes[i].next = ids[(i + 1) % n];
    for (size_t i = 0; i < n; i += 3) sim.at(Time::from_ns(5), ids[i], 0, 0);
  });
}

std::vector<std::vector<std::string>> run_ring(int parts, int threads) {
  Simulator sim;
  auto logs = run_ring(sim, parts, threads);
  EXPECT_GT(sim.events_executed(), 1000u);
  return logs;
}

TEST(Partitions, SameEventsInTheSameOrderForAnyPartitionAndThreadCount) {
  const auto one = run_ring(1, 1);
  EXPECT_EQ(run_ring(2, 1), one);
  EXPECT_EQ(run_ring(2, 2), one);
  EXPECT_EQ(run_ring(3, 3), one);
  EXPECT_EQ(run_ring(4, 2), one);
  EXPECT_EQ(run_ring(12, 4), one);
}

// A hub and its spokes, each in its own partition: every spoke writes to the hub's partition in the same
// windows and the hub to all of theirs, so each window reads mail from many partitions at once (a partition
// reads only the boxes flagged as holding mail: Partition::mail_from). The logs do not depend on the cut.
class HubNode : public EventHandler {
 public:
  Simulator* sim = nullptr;
  std::vector<uint32_t> spokes;  // the hub's; empty for a spoke
  uint32_t hub = 0;
  std::vector<std::string> log;
  void on_event(uint32_t kind, uint64_t arg) override {
    log.push_back(std::to_string(sim->now().ps) + ":" + std::to_string(kind) + ":" + std::to_string(arg));
    if (arg >= 60) return;
    if (!spokes.empty()) {
      sim->after(Time::from_ns(1000 + 10 * (arg % 3)), spokes[arg % spokes.size()], 0, arg + 1);
      if (arg % 20 == 0)  // 9, 81, then 729 tokens go round
        for (uint32_t s : spokes) sim->after(Time::from_ns(1000 + 10 * (arg % 3)), s, 0, arg + 1);
    } else {
      sim->after(Time::from_ns(1000 + 100 * (arg % 4)), hub, 1, arg + 1);
    }
  }
};

std::vector<std::vector<std::string>> run_hub(int parts, int threads) {
  Simulator sim;
  std::vector<HubNode> nodes(9);
  auto logs = run_cut(sim, nodes, parts, threads, [&](const std::vector<uint32_t>& ids) {
    for (size_t i = 1; i < ids.size(); ++i) {
      nodes[0].spokes.push_back(ids[i]);
      nodes[i].hub = ids[0];
    }
    sim.at(Time::from_ns(3), ids[0], 0, 0);
  });
  EXPECT_GT(sim.events_executed(), 300u);
  return logs;
}

TEST(Partitions, MailFromManyPartitionsAtOnceArrivesWhateverTheCut) {
  const auto one = run_hub(1, 1);
  EXPECT_EQ(run_hub(9, 1), one);
  EXPECT_EQ(run_hub(9, 3), one);
  EXPECT_EQ(run_hub(3, 2), one);
}

// The schedule model (Simulator::list_schedule, schedule_bound): each task goes to the thread free first, in
// the order given; a run's windows on T threads take between 1/T of its partitions' time and all of it.
TEST(Partitions, ListScheduleGivesEachTaskToTheThreadFreeFirst) {
  const std::vector<double> longest_first = {4, 3, 3, 2, 2, 2};
  EXPECT_DOUBLE_EQ(Simulator::list_schedule(longest_first, 1), 16);
  EXPECT_DOUBLE_EQ(Simulator::list_schedule(longest_first, 2), 8);       // 4+2+2 and 3+3+2
  EXPECT_DOUBLE_EQ(Simulator::list_schedule({2, 2, 2, 3, 3, 4}, 2), 9);  // the 4 comes last, onto 5
  EXPECT_DOUBLE_EQ(Simulator::list_schedule(longest_first, 8), 4);
  EXPECT_DOUBLE_EQ(Simulator::list_schedule({}, 4), 0);

  Simulator sim;
  run_ring(sim, 6, 1);
  double busy = 0;
  for (const auto& p : sim.partition_stats()) busy += p.busy_seconds;
  const auto bound = sim.schedule_bound();
  ASSERT_EQ(bound.size(), std::size(Simulator::kScheduleThreads));
  for (const auto& b : bound) {
    EXPECT_LE(b.window_seconds, busy * (1 + 1e-9)) << b.threads << " threads";
    EXPECT_GE(b.window_seconds * b.threads, busy * (1 - 1e-9)) << b.threads << " threads";
  }
}

// The window barrier (core/window_barrier.h): no thread leaves a phase before every thread has arrived, and
// what each wrote before it arrived is seen by all after it, whether the waiters spin through the phase,
// sleep at once or spin and then sleep (the last thread to arrive sleeps 0.2 ms in some phases). Under
// ThreadSanitizer (make test-tsan) a missing ordering is also a reported race.
TEST(Partitions, WindowBarrierLetsNoThreadAheadAndPublishesWrites) {
  using namespace std::chrono_literals;
  for (const std::chrono::nanoseconds spin :
       {std::chrono::nanoseconds(0ns), std::chrono::nanoseconds(20us), std::chrono::nanoseconds(1ms)}) {
    constexpr int kThreads = 3, kPhases = 200;
    WindowBarrier barrier(kThreads, spin);
    std::vector<int> slot(kThreads, -1);  // plain ints: the barrier must order them
    std::atomic<int> bad{0};
    auto work = [&](int me) {
      for (int phase = 0; phase < kPhases; ++phase) {
        slot[me] = phase;
        if (me == phase % kThreads && phase % 50 == 0) std::this_thread::sleep_for(200us);
        barrier.arrive_and_wait();
        for (int other = 0; other < kThreads; ++other)
          if (slot[other] != phase) ++bad;
        barrier.arrive_and_wait();  // nobody writes the next phase's slot before all have read this one
      }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < kThreads; ++i) pool.emplace_back(work, i);
    work(0);
    for (auto& t : pool) t.join();
    EXPECT_EQ(bad.load(), 0) << "spin " << spin.count() << " ns";
  }
}

TEST(Partitions, BarrierSpinFollowsTheCoresAndTheEnvironment) {
  unsetenv("ROCESIM_BARRIER_SPIN_US");
  EXPECT_EQ(Simulator::barrier_spin(1), Simulator::kBarrierSpin);
  EXPECT_EQ(Simulator::barrier_spin(100000), std::chrono::nanoseconds(0)) << "more threads than cores";
  setenv("ROCESIM_BARRIER_SPIN_US", "7", 1);
  EXPECT_EQ(Simulator::barrier_spin(1), std::chrono::microseconds(7));
  setenv("ROCESIM_BARRIER_SPIN_US", "7us", 1);
  EXPECT_THROW(Simulator::barrier_spin(1), std::invalid_argument);
  unsetenv("ROCESIM_BARRIER_SPIN_US");
}

}  // namespace
}  // namespace rocesim
