// Tests of the run's ETA (ProgressMeter, app/progress.h) and of the work estimate `validate` prints and
// the ETA uses (app/estimate.h): the ETA from delivered payload stays put where the one from simulated time
// moves 4x, and the estimate's counts against runs (counts only: no timed test).
#include "app/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/estimate.h"
#include "app/run.h"
#include "config/scenario.h"
#include "net/network.h"

using namespace rocesim;

namespace {

// A run of 10 ms simulated whose flows arrive evenly (bytes_by_start, 100 bins) and whose network fills
// during the first 2 ms: delivered payload per simulated ms ramps from 0 to the arrival rate, while each
// delivered byte costs the same wall time (about how a packet simulator spends it). Simulated time per
// wall second is then high at first and falls 5x, as in the k = 64 run whose ETA grew from 2 h 50 m to
// 11 h 46 m.
struct RampRun {
  static constexpr double kDurationMs = 10, kRampMs = 2;
  static constexpr double kBytesPerMs = 1e9;    // arrivals
  static constexpr double kWallPerByte = 1e-7;  // wall seconds per byte delivered
  static constexpr double kIdleWallPerMs = 1;   // wall seconds per simulated ms, empty network
  // Delivered payload by simulated time t (ms): the integral of the ramped delivery rate.
  static double delivered(double t) {
    const double r = kBytesPerMs;
    return t < kRampMs ? r * t * t / (2 * kRampMs) : r * kRampMs / 2 + r * (t - kRampMs);
  }
  static double wall(double t) { return kIdleWallPerMs * t + kWallPerByte * delivered(t); }
  static ProgressSample at(double t) {
    return {wall(t), Time::from_ps(static_cast<int64_t>(t * 1e9)), static_cast<uint64_t>(delivered(t) / 1000),
            delivered(t)};
  }
  static std::vector<double> arrivals() { return std::vector<double>(100, kBytesPerMs * kDurationMs / 100); }
};

}  // namespace

TEST(ProgressMeter, EtaFromDeliveredPayloadHoldsWhileSimulatedTimeSlowsDown) {
  const Time duration = Time::from_ms(RampRun::kDurationMs);
  ProgressMeter work(duration), time_only(duration);
  work.set_work(RampRun::arrivals(), duration);  // arrivals go on to the end: no drain
  const double end_wall = RampRun::wall(RampRun::kDurationMs);
  std::vector<double> ratio_work, ratio_time;
  // A line every 60 wall seconds, with samples every wall second between, over the whole run.
  double next_line = 60;
  for (double t = 0.001; t < RampRun::kDurationMs; t += 0.001) {
    const ProgressSample s = RampRun::at(t);
    work.add(s);
    time_only.add(s);
    if (s.wall_s < next_line) continue;
    next_line += 60;
    const double left = end_wall - s.wall_s;
    if (left < 120) break;  // the last two minutes: any ETA is close in absolute terms
    const ProgressMeter::Estimate e = work.estimate(s), et = time_only.estimate(s);
    ASSERT_TRUE(e.eta_from_work);
    EXPECT_FALSE(et.eta_from_work);
    ratio_work.push_back(e.eta_s / left);
    ratio_time.push_back(et.eta_s / left);
  }
  ASSERT_GE(ratio_work.size(), 10u);
  // From simulated time alone, the first lines promise a fraction of the time left (the issue's ETA).
  EXPECT_LT(ratio_time.front(), 0.4);
  // From the payload, every line is within 30 % of the time left.
  for (double r : ratio_work) EXPECT_NEAR(r, 1.0, 0.3) << "ETA / time left";
}

TEST(ProgressMeter, DrainingRunCountsTheBacklog) {
  // Every byte arrives in the first tenth of a 10 ms run: once arrivals are over, the ETA is the backlog
  // (started, not delivered) over the delivery rate, whatever simulated time is left.
  const Time duration = Time::from_ms(10);
  ProgressMeter m(duration);
  std::vector<double> bins(100, 0.0);
  for (int i = 0; i < 10; ++i) bins[static_cast<size_t>(i)] = 1e8;  // 1 GB over 0-1 ms
  m.set_work(bins, Time::from_ms(1));
  // 60 s in: 2 ms simulated, 0.4 GB delivered at a steady 1/150 GB per wall second.
  for (int w = 1; w <= 60; ++w)
    m.add({static_cast<double>(w), Time::from_us(w * 2000 / 60), 0, 0.4e9 * w / 60});
  const ProgressSample now{60, Time::from_ms(2), 0, 0.4e9};
  const ProgressMeter::Estimate e = m.estimate(now);
  ASSERT_TRUE(e.eta_from_work);
  EXPECT_NEAR(e.eta_s, 90, 1e-6) << "0.6 GB left at 0.4 GB per minute";
  EXPECT_NEAR(e.work_fraction, 0.4, 1e-9);
  EXPECT_NEAR(e.time_fraction, 0.2, 1e-9);
}

TEST(ProgressMeter, RatesOverTheLastWindowOnly) {
  ProgressMeter m(Time::from_ms(100), 60);
  // 1 M events/s for 100 s, then 2 M events/s for 100 s; simulated time 1 ms per 10 s throughout.
  uint64_t events = 0;
  for (int w = 1; w <= 200; ++w) {
    events += w <= 100 ? 1'000'000 : 2'000'000;
    m.add({static_cast<double>(w), Time::from_us(w * 100), events, 0});
  }
  const ProgressSample now{200, Time::from_ms(20), events, 0};
  const ProgressMeter::Estimate e = m.estimate(now);
  EXPECT_NEAR(e.events_per_s, 2e6, 1) << "the first 100 s are out of the window";
  EXPECT_FALSE(e.eta_from_work) << "no work estimate";
  EXPECT_NEAR(e.eta_s, 800, 1e-6) << "80 ms left at 0.1 ms per wall second";
  EXPECT_LT(e.work_fraction, 0);
}

TEST(ProgressMeter, NothingLeftByTheEstimateFallsBackToSimulatedTime) {
  // The payload estimate is all delivered but the run goes on (e.g. a flow that never finishes).
  ProgressMeter m(Time::from_ms(10));
  std::vector<double> bins(10, 0.0);
  bins[0] = 1000;  // every flow starts in the first ms
  m.set_work(bins, Time::from_ms(1));
  const ProgressSample now{10, Time::from_ms(5), 0, 1000};
  const ProgressMeter::Estimate e = m.estimate(now);
  EXPECT_FALSE(e.eta_from_work);
  EXPECT_NEAR(e.eta_s, 10, 1e-9);
  EXPECT_NEAR(e.work_fraction, 1.0, 1e-12);
}

// Two flows on a 2-leaf fabric, one under a leaf (2 links) and one across the spines (4 links), far apart
// in time: nothing queues, so data and ACK packets are all the packet-hops there are, and the estimate is
// exact.
TEST(WorkEstimate, CountsDataAndAckHopsOnShortestPaths) {
  const Scenario s = load_scenario_text(R"(name = "two_flows"
duration_ms = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[[flows]]
src = "h0"
dst = "h1"
size_bytes = 10000
start_us = 0
[[flows]]
src = "h0"
dst = "h5"
size_bytes = 20500
start_us = 200
)",
                                        "two_flows");
  EstimateOptions o;
  o.time_bins = 10;
  const WorkEstimate w = estimate_work(s, o);
  EXPECT_EQ(w.flows, 2u);
  EXPECT_EQ(w.bytes, 30500);
  EXPECT_DOUBLE_EQ(w.data_packets, 10 + 21);  // 1000-byte payloads
  EXPECT_DOUBLE_EQ(w.mean_hops, (10 * 2 + 21 * 4) / 31.0);
  EXPECT_DOUBLE_EQ(w.packet_hops, 2 * (10 * 2 + 21 * 4));  // an ACK per data packet, the same path back
  EXPECT_FALSE(w.extrapolated);
  EXPECT_EQ(w.hop_samples, 2u);
  ASSERT_EQ(w.bytes_by_start.size(), 10u);
  EXPECT_DOUBLE_EQ(w.bytes_by_start[0], 10000);
  EXPECT_DOUBLE_EQ(w.bytes_by_start[2], 20500);  // 200 us of 1 ms in 10 bins

  const RunResult r = run_scenario(s, RunOptions{});
  EXPECT_EQ(r.summary["performance"]["packet_hops"].get<uint64_t>(), static_cast<uint64_t>(w.packet_hops));
}

// A flow budget smaller than the flows: the rest is extrapolated in time, close to the full count.
TEST(WorkEstimate, ExtrapolatesPastTheFlowBudget) {
  const Scenario s = load_scenario_text(R"(name = "many"
duration_ms = 10
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
[[traffic]]
workload = "hadoop"
load = 0.3
)",
                                        "many");
  const WorkEstimate all = estimate_work(s);
  EstimateOptions o;
  o.max_flows = all.flows / 4;
  o.time_bins = 20;
  const WorkEstimate part = estimate_work(s, o);
  ASSERT_FALSE(all.extrapolated);
  ASSERT_TRUE(part.extrapolated);
  EXPECT_LT(part.scanned_until, Time::from_ms(5));
  EXPECT_NEAR(static_cast<double>(part.flows), static_cast<double>(all.flows), 0.1 * all.flows);
  EXPECT_NEAR(static_cast<double>(part.bytes), static_cast<double>(all.bytes), 0.25 * all.bytes);
  double binned = 0;
  for (double b : part.bytes_by_start) binned += b;
  EXPECT_NEAR(binned, static_cast<double>(part.bytes), 1e-6 * part.bytes) << "the bins hold every byte";
}

// On a loaded small fabric (WebSearch at 30 %, queues, PFC, CNPs), the predicted packet-hops and events are
// within 2x of the run's (the target `validate` is held to on the benchmark cases, docs/performance.md).
TEST(WorkEstimate, WithinTwiceTheRunsCountsUnderLoad) {
  const Scenario s = load_scenario_text(R"(name = "loaded"
duration_ms = 100
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
[[traffic]]
workload = "websearch"
load = 0.3
stop_us = 300
)",
                                        "loaded");
  const WorkEstimate w = estimate_work(s);
  const RunResult r = run_scenario(s, RunOptions{});
  ASSERT_TRUE(r.summary["complete"].get<bool>());
  const auto hops = static_cast<double>(r.summary["performance"]["packet_hops"].get<uint64_t>());
  const auto events = static_cast<double>(r.summary["performance"]["events"].get<uint64_t>());
  EXPECT_EQ(w.flows, r.summary["flows"]["started"].get<uint64_t>());
  EXPECT_GT(w.packet_hops / hops, 0.5) << w.packet_hops << " predicted, " << hops << " run";
  EXPECT_LT(w.packet_hops / hops, 2.0) << w.packet_hops << " predicted, " << hops << " run";
  const double predicted_events = w.packet_hops * kTypicalEventsPerHop;
  EXPECT_GT(predicted_events / events, 0.5) << predicted_events << " predicted, " << events << " run";
  EXPECT_LT(predicted_events / events, 2.0) << predicted_events << " predicted, " << events << " run";
}

// summary.json's speedup_the_windows_allow (Simulator::schedule_bound): for each thread count T, a figure
// between 1 and T on a run over several partitions (the windows' makespans lie between the work over T and
// the work), the same figure whatever the threads that ran it measured; null on one partition.
TEST(WindowModel, SpeedupTheWindowsAllowLiesBetweenOneAndTheThreads) {
  const std::string text = R"(name = "model"
duration_ms = 100
threads = 1
[topology]
kind = "fat_tree"
k = 4
[[traffic]]
workload = "websearch"
load = 0.3
stop_us = 200
)";
  const Scenario one = load_scenario_text(text, "model");
  const RunResult single = run_scenario(one, RunOptions{});
  EXPECT_TRUE(single.summary["performance"]["parallel"]["speedup_the_windows_allow"].is_null());
  std::string cut_text = text;
  cut_text.insert(cut_text.find("[topology]"), "partitions = 6\n");  // a top-level key, before the tables
  const Scenario cut = load_scenario_text(cut_text, "model");
  const RunResult r = run_scenario(cut, RunOptions{});
  ASSERT_TRUE(r.summary["complete"].get<bool>());
  const auto& allow = r.summary["performance"]["parallel"]["speedup_the_windows_allow"];
  ASSERT_TRUE(allow.is_object());
  for (const int t : {2, 4, 8, 16, 32}) {
    ASSERT_TRUE(allow.contains(std::to_string(t))) << t;
    const double x = allow[std::to_string(t)].get<double>();
    EXPECT_GE(x, 1.0 - 1e-9) << t << " threads";
    EXPECT_LE(x, t * (1 + 1e-9)) << t << " threads";
  }
  // Six partitions: no more than six threads' worth, whatever the count.
  EXPECT_LE(allow["32"].get<double>(), 6 * (1 + 1e-9));
}

// The memory estimate's partitions follow the run's rule (PartitionedRun::partition_fabric): threads left
// out give one thread below kThreadsAutoWeight ports and nodes (so one partition), and several threads on a
// large fabric get kPartitionsPerThread partitions each. Before, a left-out thread count counted every core.
TEST(MemoryEstimate, PartitionsAsTheRunChoosesThem) {
  unsetenv("ROCESIM_THREADS");  // ctest sets it; the rule for threads left out is what is tested
  const std::string small =
      "name = \"small\"\nduration_ms = 1\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\n"
      "spines = 2\nhosts_per_leaf = 4\n[[traffic]]\nworkload = \"websearch\"\nload = 0.3\n";
  const Scenario s = load_scenario_text(small, "small.toml");
  ASSERT_EQ(s.threads, Scenario::kThreadsAuto);
  EXPECT_EQ(estimate_peak_memory(s, estimate_work(s)).partitions, 1);
  // k = 16: 7,488 ports and nodes, about 4 cache blocks; 2 threads take 4 partitions each.
  const Scenario k16 = load_scenario_text(
      "name = \"k16\"\nduration_ms = 1\nthreads = 2\n[topology]\nkind = \"fat_tree\"\nk = 16\n"
      "[[traffic]]\nworkload = \"websearch\"\nload = 0.3\n",
      "k16.toml");
  EXPECT_EQ(estimate_peak_memory(k16, estimate_work(k16)).partitions, 2 * Network::kPartitionsPerThread);
}
