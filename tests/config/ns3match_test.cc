// rocesim against the ns-3 HPCC simulator on one case (tests/data/ns3: 64 hosts, 25/100 Gb/s, FB Hadoop
// at 30 %): per flow-size bucket, the slowdown p50 and p99 of DCQCN, TIMELY, HPCC and DCTCP under the
// hpcc-sim profile stay within 10 % and 20 % of the simulator's (buckets of at least 30 flows), and p95
// within 15 % (the short flows' p95 was 38-43 % low with ACKs in the control class at switches). Before the
// fixes of docs/coming-from-hpcc-sim.md ("Matching the simulator's tails") DCQCN was 10 % and TIMELY 31 %
// low at p99 on short flows here. Prints each scheme's table (as `rocesim compare-fct` does).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "app/run.h"
#include "config/hpcc_config.h"
#include "config/scenario.h"
#include "stats/fct_compare.h"

namespace rocesim {
namespace {

const std::string kDir = std::string(ROCESIM_TEST_DIR) + "/data/ns3";
constexpr size_t kMinFlows = 30;

bool sanitized() { return std::getenv("ROCESIM_SANITIZED") != nullptr; }

std::vector<SlowdownRow> run_case(const std::string& scheme) {
  const Scenario s = load_files_scenario(kDir + "/hd30_topology.txt", kDir + "/hd30_flows.txt",
                                         {"profile=hpcc-sim", "cc.scheme=" + scheme});
  RunOptions opt;
  opt.keep_flows = true;
  const RunResult r = run_scenario(s, opt);
  FlowSlowdowns res;
  res.source = "rocesim " + scheme;
  for (const FlowRecord& f : r.flows) res.flows.push_back({f.size_bytes, f.slowdown()});
  const FlowSlowdowns ref = read_hpcc_fct(kDir + "/ns3_fct_hd30_" + scheme + ".txt");
  EXPECT_EQ(res.flows.size(), ref.flows.size()) << scheme << ": every flow finishes";
  return compare_slowdowns(ref, res, SizeBuckets::from_edges({10'000, 100'000, 1'000'000}));
}

class Ns3Match : public ::testing::TestWithParam<const char*> {};

TEST_P(Ns3Match, SlowdownTailsPerBucketMatchTheSimulator) {
  const std::string scheme = GetParam();
  // Under the sanitizers one scheme (DCQCN) keeps the check and the run time short.
  if (sanitized() && scheme != "dcqcn") GTEST_SKIP() << "ROCESIM_SANITIZED: DCQCN only";
  const auto rows = run_case(scheme);
  std::cout << "hd30 " << scheme << " (ns-3 vs rocesim):\n" << format_slowdown_table(rows, kMinFlows);
  int judged = 0;
  for (const SlowdownRow& r : rows) {
    if (r.label == "all" || r.ref_count < kMinFlows) continue;
    ++judged;
    EXPECT_LE(std::abs(r.err[0]), 0.10)
        << scheme << " " << r.label << " p50: ns-3 " << r.ref[0] << ", rocesim " << r.res[0];
    EXPECT_LE(std::abs(r.err[1]), 0.15)
        << scheme << " " << r.label << " p95: ns-3 " << r.ref[1] << ", rocesim " << r.res[1];
    EXPECT_LE(std::abs(r.err[2]), 0.20)
        << scheme << " " << r.label << " p99: ns-3 " << r.ref[2] << ", rocesim " << r.res[2];
  }
  EXPECT_EQ(judged, 4);
}

INSTANTIATE_TEST_SUITE_P(Hd30, Ns3Match, ::testing::Values("dcqcn", "timely", "hpcc", "dctcp"));

// The mechanism on a small case: two 2 MB flows into h0 build a queue at the switch's port to h0; a 200 KB
// TIMELY flow from h0 to h3 gets its ACKs back through that port. With the simulator's switches
// (switch.acks_in_data_class) they wait behind the incast's data, its RTT samples grow and TIMELY cuts
// it; with ACKs in the control class on every hop its RTT is its own path's.
TEST(Ns3Quirks, AcksInTheDataClassAtSwitchesSlowTheReverseFlow) {
  const std::string text = R"(
profile = "hpcc-sim"
name = "ack_class"
[topology]
kind = "star"
hosts = 4
[cc]
scheme = "timely"
[[flows]]
src = 1
dst = 0
size_bytes = 2000000
[[flows]]
src = 2
dst = 0
size_bytes = 2000000
[[flows]]
src = 0
dst = 3
size_bytes = 200000
start_us = 20
)";
  auto reverse_fct_us = [&](bool quirk) {
    const Scenario s = load_scenario_text(
        text, "ack_class.toml", {std::string("switch.acks_in_data_class=") + (quirk ? "true" : "false")});
    RunOptions opt;
    opt.keep_flows = true;
    const RunResult r = run_scenario(s, opt);
    for (const FlowRecord& f : r.flows)
      if (f.src != 1 && f.src != 2) return f.fct().us();
    ADD_FAILURE() << "the reverse flow did not finish";
    return 0.0;
  };
  const double with_quirk = reverse_fct_us(true), without = reverse_fct_us(false);
  std::cout << "h0 -> h3 200 KB under a 2-to-1 incast into h0: FCT " << with_quirk
            << " us with ACKs in the data class at the switch, " << without << " us in the control class\n";
  EXPECT_LT(without, 30.0);  // about its line-rate time (16 us) plus the base RTT
  EXPECT_GT(with_quirk, 2 * without);
}

}  // namespace
}  // namespace rocesim

namespace rocesim {
namespace {

// A scheme whose switch agent reads ACKs (ICC writes its feedback into them, SwitchAgent::on_control) still
// sees them when the quirk queues them in the data class: icc/burst runs the same with and without it
// (before the agent saw none and ICC's burst paused its senders 146 times instead of 3).
TEST(Ns3Quirks, AgentsStillSeeAcksQueuedInTheDataClass) {
  auto pauses = [](bool quirk) {
    const Scenario s = load_scenario(
        std::string(ROCESIM_SCENARIO_DIR) + "/icc/burst.toml",
        {"duration_ms=2", std::string("switch.acks_in_data_class=") + (quirk ? "true" : "false")});
    const RunResult r = run_scenario(s, RunOptions{});
    return r.summary["pfc"]["pauses_sent"].get<uint64_t>();
  };
  const uint64_t with_quirk = pauses(true), without = pauses(false);
  EXPECT_EQ(with_quirk, without);
  EXPECT_LT(with_quirk, 20u);
}

}  // namespace
}  // namespace rocesim
