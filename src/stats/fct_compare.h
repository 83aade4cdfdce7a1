// Per-flow-size slowdown tails of a reference run (the ns-3 HPCC simulator's fct.txt) beside a rocesim
// result: `rocesim compare-fct` (docs/user-guide.md, docs/coming-from-hpcc-sim.md) and the ns-3 match test.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/time.h"
#include "stats/fct_stats.h"

namespace rocesim {

// One finished flow: its size and its slowdown (fct / standalone fct, clipped at 1).
struct SlowdownSample {
  Bytes size_bytes = 0;
  double slowdown = 1;
};

// One flow of a file as the flow-set check sees it (flows_differ): its size, its start and its line.
struct FlowIdentity {
  Bytes size_bytes = 0;
  Time start;    // fct.txt: its whole nanoseconds; flows.csv: exact to the picosecond
  int line = 0;  // in its file, from 1
};

struct FlowSlowdowns {
  std::string source;                 // the file read
  bool csv = false;                   // a flows.csv (start_us), else an fct.txt (start_ns)
  std::vector<SlowdownSample> flows;  // finished flows with a positive ideal FCT
  size_t unfinished = 0;              // flows.csv rows without an FCT (not in `flows`)
  std::vector<FlowIdentity> all;      // every flow of the file, in its order (`flows` and the unfinished)
};

// The simulator's fct.txt: "sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns" per line
// (blank lines skipped). Throws InputError (file:line, what was expected) on a malformed line, a
// non-positive standalone FCT, or a file without flows.
FlowSlowdowns read_hpcc_fct(const std::string& path);

// rocesim's flows.csv (stats/writers.h); rows without a slowdown count as unfinished. Throws InputError on
// a missing or unexpected header, a malformed row, or a file without finished flows.
FlowSlowdowns read_flows_csv(const std::string& path);

// A rocesim result: a directory holding flows.csv, a flows.csv file, or (any other file) an fct.txt.
FlowSlowdowns read_result_slowdowns(const std::string& path);

// Two flow starts are the same within this: fct.txt floors its starts to the nanosecond, and the ns-3
// simulator's own start is its flow file's time in seconds as a double, floored to the nanosecond (half of
// them 1 ns early; flow_file.start_times = "hpcc_sim" copies that), so the same flow may be written 1 ns
// apart by two runs.
inline constexpr Time kStartTolerance = Time::from_ps(1000);

// Whether ref and res hold the same flows: as many, and, both taken in the order of their starts (then
// sizes), each flow of one with the same size and a start within kStartTolerance of the other's (flows
// whose starts are that close may pair up in either order). "" when they do; otherwise what differs: both
// counts when they differ, and the first flow (its index in start order) without a partner, with its
// size or start in each file and the lines they are on. compare-fct refuses to compare sets that differ:
// the tails of different flows say nothing about the simulators.
std::string flows_differ(const FlowSlowdowns& ref, const FlowSlowdowns& res);

// p50 / p95 / p99 (nearest rank, stats/fct_stats.h summarize) of one size bucket, reference vs result;
// err = result / reference - 1.
struct SlowdownRow {
  std::string label;
  size_t ref_count = 0, res_count = 0;
  double ref[3] = {0, 0, 0};
  double res[3] = {0, 0, 0};
  double err[3] = {0, 0, 0};
};
inline constexpr double kCompareQuantiles[3] = {0.50, 0.95, 0.99};

std::vector<SlowdownRow> compare_slowdowns(const FlowSlowdowns& ref, const FlowSlowdowns& res,
                                           const SizeBuckets& buckets);

// The same experiment on several inputs (or seeds), each compared as above: per bucket, the mean of the
// reference's quantiles beside the mean of the result's, err = mean result / mean reference - 1, and the
// smallest count of any input. All lists must have the same buckets (std::invalid_argument otherwise). A
// tail that a few flows decide moves by tens of percent when flow starts move by nanoseconds, in the ns-3
// simulator as in rocesim (docs/coming-from-hpcc-sim.md, "One input is one sample"): the means over a
// handful of inputs are what two simulators can be expected to share.
std::vector<SlowdownRow> mean_slowdown_rows(const std::vector<std::vector<SlowdownRow>>& per_input);

// The table `rocesim compare-fct` prints: one line per non-empty bucket and one for all flows; buckets
// with fewer than min_flows reference flows are marked "(few flows)" and left out of the worst line. A side
// without flows in a bucket shows "-" for its quantiles and for the errors.
std::string format_slowdown_table(const std::vector<SlowdownRow>& rows, size_t min_flows);

// The table's last line: "worst (buckets with >= N flows): p50 ..% (bucket), p99 ..% (bucket)", or "" when
// no bucket has min_flows flows.
std::string format_worst_errors(const std::vector<SlowdownRow>& rows, size_t min_flows);

// Largest |err| at p50 and at p99 over buckets with at least min_flows flows on both sides.
struct WorstErrors {
  double p50 = 0, p99 = 0;
  std::string p50_bucket, p99_bucket;
};
WorstErrors worst_errors(const std::vector<SlowdownRow>& rows, size_t min_flows);

}  // namespace rocesim
