// rocesim against the ns-3 HPCC simulator (tests/data/ns3, its README says how each file was made), per
// flow-size bucket: the slowdown p50 and p99 of DCQCN, TIMELY, HPCC and DCTCP under the hpcc-sim profile
// stay within 10 % and 20 % of the simulator's (buckets of at least 30 flows).
//
// hd30 (64 hosts, 25/100 Gb/s, FB Hadoop at 30 %), one input: also p95 within 15 % (the short flows' p95
// was 38-43 % low with ACKs in the control class at switches). Before the fixes of
// docs/coming-from-hpcc-sim.md ("Matching the simulator's tails") DCQCN was 10 % and TIMELY 31 % low at p99
// on short flows here. Flow by flow too: with the simulator's ECMP (switch.ecmp_hash = "hpcc_sim") every
// flow takes the simulator's path, and the mean |log(rocesim / ns-3)| of the flows' slowdowns stays near
// what the simulator itself shows between inputs whose flow starts differ by 0-9 ns (see per_flow_bound).
//
// ws50 (64 hosts, 100/400 Gb/s, WebSearch at 50 %): its short flows' p99 is decided by a few flows in one
// incast, and the simulator itself moves it by up to 93 % when every flow starts 0-9 ns later
// (docs/coming-from-hpcc-sim.md, "One input is one sample"). So the check is on the mean of each bucket's
// quantiles over seven inputs: the case's flow file and six copies with each start moved by 0-9 ns, each
// run by the simulator and by rocesim. Every flow starts at the nanosecond the simulator's fct.txt records
// (flow_file.start_times = "hpcc_sim"). Prints each table (as `rocesim compare-fct` does).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>

#include "app/run.h"
#include "config/hpcc_config.h"
#include "config/scenario.h"
#include "net/ecmp_hash.h"
#include "stats/fct_compare.h"

namespace rocesim {
namespace {

const std::string kDir = std::string(ROCESIM_TEST_DIR) + "/data/ns3";
constexpr size_t kMinFlows = 30;

bool sanitized() { return std::getenv("ROCESIM_SANITIZED") != nullptr; }

struct CaseResult {
  std::vector<SlowdownRow> rows;
  double mean_abs_log_ratio = 0;  // over the flows, |log(rocesim's slowdown / the simulator's)|
  size_t matched = 0;             // flows found in both (by source and destination address, source port)
  size_t same_start = 0;          // of those, flows starting at the simulator's nanosecond
};

// One input: rocesim on the topology and flow file under the hpcc-sim profile, beside the simulator's
// fct.txt for the same files.
CaseResult run_input(const std::string& topology, const std::string& flows, const std::string& ref_file,
                     const std::string& scheme) {
  const Scenario s = load_files_scenario(topology, flows, {"profile=hpcc-sim", "cc.scheme=" + scheme});
  RunOptions opt;
  opt.keep_flows = true;
  const RunResult r = run_scenario(s, opt);
  FlowSlowdowns res;
  res.source = "rocesim " + scheme;
  for (const FlowRecord& f : r.flows) res.flows.push_back({f.size_bytes, f.slowdown()});
  const FlowSlowdowns ref = read_hpcc_fct(ref_file);
  EXPECT_EQ(res.flows.size(), ref.flows.size()) << scheme << " " << flows << ": every flow finishes";
  CaseResult out;
  out.rows = compare_slowdowns(ref, res, SizeBuckets::from_edges({10'000, 100'000, 1'000'000}));
  // Flow by flow: sip dip sport dport size start_ns fct_ns standalone_ns.
  std::map<std::tuple<uint32_t, uint32_t, unsigned>, std::pair<int64_t, double>> by_flow;
  std::ifstream in(ref_file);
  std::string sip, dip;
  unsigned sport = 0, dport = 0;
  int64_t size = 0, start = 0, fct = 0, standalone = 0;
  while (in >> sip >> dip >> sport >> dport >> size >> start >> fct >> standalone)
    by_flow[{static_cast<uint32_t>(std::stoul(sip, nullptr, 16)),
             static_cast<uint32_t>(std::stoul(dip, nullptr, 16)), sport}] = {
        start, std::max(1.0, static_cast<double>(fct) / static_cast<double>(standalone))};
  double sum = 0;
  for (const FlowRecord& f : r.flows) {
    const auto it = by_flow.find(
        {hpcc_sim_ip(static_cast<uint32_t>(f.src)), hpcc_sim_ip(static_cast<uint32_t>(f.dst)), f.sport});
    if (it == by_flow.end()) continue;
    sum += std::abs(std::log(f.slowdown() / it->second.second));
    ++out.matched;
    out.same_start += f.start.ps == it->second.first * 1000 ? 1 : 0;
  }
  out.mean_abs_log_ratio = out.matched > 0 ? sum / static_cast<double>(out.matched) : 1e9;
  return out;
}

CaseResult run_case(const std::string& scheme) {
  return run_input(kDir + "/hd30_topology.txt", kDir + "/hd30_flows.txt",
                   kDir + "/ns3_fct_hd30_" + scheme + ".txt", scheme);
}

// The bound on the mean |log ratio| per scheme. With the simulator's paths, source ports and start times
// (seed 1): DCQCN 0.086, TIMELY 0.041, HPCC 0.019, DCTCP 0.020; with rocesim's own hash (measured before
// flow_file.start_times) 0.090 / 0.057 / 0.028 / 0.026; with per-host source ports the flows no longer
// pair up (DCQCN 0.22). DCQCN's RED marks make it the noisiest: seeds 1-5 give 0.068-0.086, and the
// simulator itself gives 0.061-0.070 between its runs on inputs whose starts differ by 0-9 ns, so its
// bound catches only gross changes.
double per_flow_bound(const std::string& scheme) {
  if (scheme == "dcqcn") return 0.095;
  if (scheme == "timely") return 0.05;
  if (scheme == "hpcc") return 0.024;
  return 0.023;  // dctcp
}

// Each of the four buckets with at least kMinFlows flows within `limit` (relative error) at p50, p95 and
// p99 (a limit of 0: not checked).
void expect_buckets_within(const std::vector<SlowdownRow>& rows, const std::string& what,
                           const std::array<double, 3>& limit) {
  static constexpr const char* kNames[3] = {"p50", "p95", "p99"};
  int judged = 0;
  for (const SlowdownRow& r : rows) {
    if (r.label == "all" || r.ref_count < kMinFlows) continue;
    ++judged;
    for (int q = 0; q < 3; ++q) {
      if (limit[q] <= 0) continue;
      EXPECT_LE(std::abs(r.err[q]), limit[q])
          << what << " " << r.label << " " << kNames[q] << ": ns-3 " << r.ref[q] << ", rocesim " << r.res[q];
    }
  }
  EXPECT_EQ(judged, 4) << what;
}

class Ns3Match : public ::testing::TestWithParam<const char*> {};

TEST_P(Ns3Match, SlowdownTailsPerBucketMatchTheSimulator) {
  const std::string scheme = GetParam();
  // Under the sanitizers one scheme (DCQCN) keeps the check and the run time short.
  if (sanitized() && scheme != "dcqcn") GTEST_SKIP() << "ROCESIM_SANITIZED: DCQCN only";
  const CaseResult c = run_case(scheme);
  const auto& rows = c.rows;
  std::cout << "hd30 " << scheme << " (ns-3 vs rocesim):\n"
            << format_slowdown_table(rows, kMinFlows) << "flow by flow: mean |log(rocesim / ns-3)| "
            << c.mean_abs_log_ratio << " over " << c.matched << " flows\n";
  // Every flow is found by its addresses and source port (counted per host pair, as the simulator does),
  // and with the simulator's paths the flows' slowdowns agree one by one.
  EXPECT_EQ(c.matched, 5023u) << scheme;
  EXPECT_EQ(c.same_start, 5023u) << scheme << ": flows start at the simulator's nanosecond";
  EXPECT_LE(c.mean_abs_log_ratio, per_flow_bound(scheme)) << scheme;
  expect_buckets_within(rows, scheme, {0.10, 0.15, 0.20});
}

INSTANTIATE_TEST_SUITE_P(Hd30, Ns3Match, ::testing::Values("dcqcn", "timely", "hpcc", "dctcp"));

class Ns3MatchWs50 : public ::testing::TestWithParam<const char*> {};

TEST_P(Ns3MatchWs50, MeanTailsOverSevenInputsMatchTheSimulator) {
  const std::string scheme = GetParam();
  if (sanitized()) GTEST_SKIP() << "ROCESIM_SANITIZED: seven 64-host runs per scheme; hd30 checks DCQCN";
  const std::string dir = kDir + "/ws50";
  std::vector<std::vector<SlowdownRow>> per_input;
  std::string lines;
  for (int k = 0; k <= 6; ++k) {
    const std::string input = k == 0 ? "ws50" : "ws50p" + std::to_string(k);
    const CaseResult c = run_input(dir + "/ws50_topology.txt", dir + "/" + input + "_flows.txt",
                                   dir + "/ns3_fct_" + input + "_" + scheme + ".txt", scheme);
    EXPECT_EQ(c.matched, 1218u) << scheme << " " << input;
    EXPECT_EQ(c.same_start, 1218u) << scheme << " " << input << ": flows start at the simulator's nanosecond";
    const WorstErrors w = worst_errors(c.rows, kMinFlows);
    lines += fmt::format("  {:<6} worst p50 {:+6.1f}% ({}), p99 {:+6.1f}% ({}); short-flow p99 ns-3 {:.2f}\n",
                         input, 100 * w.p50, w.p50_bucket, 100 * w.p99, w.p99_bucket, c.rows[0].ref[2]);
    per_input.push_back(c.rows);
  }
  const auto rows = mean_slowdown_rows(per_input);
  std::cout << "ws50 " << scheme << ", each input alone:\n"
            << lines << "mean over the 7 inputs (ns-3 vs rocesim):\n"
            << format_slowdown_table(rows, kMinFlows);
  expect_buckets_within(rows, scheme + " (means)", {0.10, 0, 0.20});
}

INSTANTIATE_TEST_SUITE_P(Ws50, Ns3MatchWs50, ::testing::Values("dcqcn", "timely", "hpcc", "dctcp"));

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
