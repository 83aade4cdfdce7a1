// Flat memory however many flows a run has: finished flows stream to flows.csv/fct.txt
// (stats/flow_stream.h) and their statistics go to bounded summaries (stats/value_summary.h), exact up to
// kExactSummaryLimit values and within kSketchRelError past it. bench/soak_flows.cc runs the 1 M-flow soak.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "file_util.h"
#include "net/network.h"
#include "stats/fct_stats.h"
#include "stats/flow_stream.h"
#include "stats/value_summary.h"
#include "stats/writers.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

bool sanitized() { return std::getenv("ROCESIM_SANITIZED") != nullptr; }

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / fmt::format("rocesim_soak_{}_{}", getpid(), n++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// v[ceil(q n) - 1] of the sorted values `v`, as stats/fct_stats.h defines percentiles.
double exact_rank(const std::vector<double>& v, size_t num, size_t den) {
  const size_t rank = std::clamp<size_t>((num * v.size() + den - 1) / den, 1, v.size());
  return v[rank - 1];
}

// Lognormal values (FCT-like: median 50, spanning several decades) plus the integers 1..2000, which sit
// on and around bucket edges.
std::vector<double> known_values(size_t n) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(50.0), 1.5);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(d(rng));
  for (int i = 1; i <= 2000; ++i) v.push_back(i);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

FlowRecord record(uint64_t id, int64_t size, int64_t fct_ns, int64_t ideal_ns, uint16_t cls = 0) {
  FlowRecord r;
  r.id = id;
  r.src = static_cast<int>(id % 7);
  r.dst = static_cast<int>(7 + id % 5);
  r.sport = static_cast<uint16_t>(10000 + id % 100);
  r.size_bytes = size;
  r.start = Time::from_ps(static_cast<int64_t>(id) * 1'000'000);
  r.finish = r.start + Time::from_ps(fct_ns * 1000);
  r.ideal_fct = Time::from_ps(ideal_ns * 1000);
  r.class_id = cls;
  return r;
}

// `n` records with ids 0..n-1, in a completion order where each finishes a random while after its start
// (the reorder buffer sees up to ~`spread` out-of-order records), and a few that never finish.
std::vector<FlowRecord> shuffled_records(size_t n, size_t spread, std::vector<uint64_t> unfinished = {}) {
  std::mt19937_64 rng(3);
  std::vector<std::pair<uint64_t, FlowRecord>> by_finish;
  for (uint64_t id = 0; id < n; ++id) {
    if (std::find(unfinished.begin(), unfinished.end(), id) != unfinished.end()) continue;
    const uint64_t delay = rng() % spread;
    by_finish.push_back({id + delay, record(id, 500 + static_cast<int64_t>(rng() % 3'000'000),
                                            1000 + static_cast<int64_t>(rng() % 90'000), 900,
                                            static_cast<uint16_t>(id % 3))});
  }
  std::stable_sort(by_finish.begin(), by_finish.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<FlowRecord> out;
  for (auto& [t, r] : by_finish) out.push_back(r);
  return out;
}

std::string flows_csv_of(const std::vector<FlowRecord>& recs, const std::vector<std::string>& labels) {
  std::ostringstream os;
  write_flows_csv(os, recs, labels);
  return os.str();
}

std::string fct_txt_of(const std::vector<FlowRecord>& recs) {
  std::ostringstream os;
  write_hpcc_fct(os, recs);
  return os.str();
}

}  // namespace

TEST(ValueSummary, ExactBelowTheLimitLikeSummarize) {
  const std::vector<double> v = known_values(5000);
  ValueSummary s(v.size());
  for (double x : v) s.add(x);
  ASSERT_TRUE(s.exact());
  const Dist d = summarize(v);
  EXPECT_EQ(s.count(), d.count);
  EXPECT_EQ(s.avg(), d.avg);  // same order of summation: bit-identical
  EXPECT_EQ(s.percentile(50, 100), d.p50);
  EXPECT_EQ(s.percentile(99, 100), d.p99);
  EXPECT_EQ(s.percentile(999, 1000), d.p999);
  EXPECT_EQ(s.max(), d.max);
}

TEST(ValueSummary, SketchPercentilesWithinTheDocumentedRelativeError) {
  const std::vector<double> v = known_values(200'000);
  ValueSummary s(1000);  // switches to the histogram after 1000 values
  for (double x : v) s.add(x);
  ASSERT_FALSE(s.exact());
  EXPECT_EQ(s.count(), v.size());
  const double max = *std::max_element(v.begin(), v.end());
  EXPECT_EQ(s.max(), max);
  const double sum = std::accumulate(v.begin(), v.end(), 0.0L);
  EXPECT_NEAR(s.avg(), sum / v.size(), 1e-9 * sum / v.size());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  double worst = 0;
  for (size_t q = 1; q <= 1000; ++q) {  // every 0.1 % percentile
    const double want = exact_rank(sorted, q, 1000), got = s.percentile(q, 1000);
    const double err = std::abs(got - want) / want;
    worst = std::max(worst, err);
    ASSERT_LE(err, kSketchRelError * (1 + 1e-9)) << "p" << q / 10.0 << ": " << got << " vs " << want;
  }
  EXPECT_GT(worst, kSketchRelError / 10);  // really approximate (the test would catch a wrong bound)
  // Memory: bucket counters only, not the 202,000 values.
  EXPECT_LT(s.memory_bytes(), 64'000u);
  RecordProperty("worst_rel_error", fmt::format("{:.5f}", worst));
}

TEST(ValueSummary, ValuesAtOrBelowZeroAndEmpty) {
  ValueSummary e(4);
  EXPECT_EQ(e.percentile(50, 100), 0.0);
  EXPECT_EQ(e.avg(), 0.0);
  ValueSummary s(2);
  for (double x : {0.0, 0.0, 0.0, 5.0, 7.0, std::nan("")}) s.add(x);
  EXPECT_FALSE(s.exact());
  EXPECT_EQ(s.count(), 5u);
  EXPECT_EQ(s.percentile(50, 100), 0.0);  // 3 of 5 values are 0
  EXPECT_NEAR(s.percentile(100, 100), 7.0, 7.0 * kSketchRelError);
  EXPECT_DOUBLE_EQ(s.avg(), 12.0 / 5);
}

TEST(FctAccumulator, SmallRunsGiveTheSameJsonAsComputeFctStats) {
  const std::vector<FlowRecord> recs = shuffled_records(3000, 50);
  const std::vector<std::string> labels = {"a", "b"};  // class 2 is unlabelled
  const SizeBuckets b = SizeBuckets::defaults();
  FctAccumulator acc(b, labels, 100'000);
  for (const FlowRecord& r : recs) acc.add(r);
  EXPECT_EQ(to_json(acc.finish()).dump(), to_json(compute_fct_stats(recs, b, labels, 100'000)).dump());
}

TEST(FctAccumulator, LargeGroupsAreSketchedAndMarked) {
  const std::vector<FlowRecord> recs = shuffled_records(20'000, 50);
  const SizeBuckets b = SizeBuckets::defaults();
  FctAccumulator acc(b, {"default"}, 100'000, 2000);
  for (const FlowRecord& r : recs) acc.add(r);
  EXPECT_LT(acc.memory_bytes(), 400'000u);  // 20,000 records would take 2 x 8 bytes x 4 groups each
  const nlohmann::json got = to_json(acc.finish());
  const nlohmann::json want = to_json(compute_fct_stats(recs, b, {"default"}, 100'000));
  EXPECT_EQ(got["count"], want["count"]);
  EXPECT_EQ(got["fct_us"]["rel_error"].get<double>(), kSketchRelError);
  EXPECT_FALSE(want["fct_us"].contains("rel_error"));
  EXPECT_EQ(got["fct_us"]["max"], want["fct_us"]["max"]);
  for (const char* k : {"p50", "p95", "p99", "p999"}) {
    const double w = want["fct_us"][k].get<double>(), g = got["fct_us"][k].get<double>();
    EXPECT_LE(std::abs(g - w), kSketchRelError * w * (1 + 1e-9)) << k;
    const double ws = want["slowdown"][k].get<double>(), gs = got["slowdown"][k].get<double>();
    EXPECT_LE(std::abs(gs - ws), kSketchRelError * ws * (1 + 1e-9)) << k;
  }
  // A bucket with fewer flows than the limit stays exact.
  for (size_t i = 0; i < got["buckets"].size(); ++i) {
    if (got["buckets"][i]["count"].get<size_t>() <= 2000) {
      EXPECT_EQ(got["buckets"][i].dump(), want["buckets"][i].dump()) << i;
    }
  }
}

TEST(FlowStreamWriter, FilesEqualTheAllInMemoryWriters) {
  TempDir tmp;
  const std::vector<std::string> labels = {"x", "y,z"};
  for (const size_t max_pending : {size_t{1} << 18, size_t{64}}) {  // without and with spilled runs
    SCOPED_TRACE(max_pending);
    const std::vector<FlowRecord> recs = shuffled_records(5000, 300, {17, 4000});
    FlowStreamWriter::Options o;
    o.flows_csv = (tmp.path() / "flows.csv").string();
    o.fct_txt = {(tmp.path() / "fct.txt").string(), (tmp.path() / "fct2.txt").string()};
    o.max_pending = max_pending;
    FlowStreamWriter w(o, labels);
    for (const FlowRecord& r : recs) w.add(r);
    if (max_pending == 64) {
      EXPECT_GT(w.spilled_runs(), 5u);
    } else {
      EXPECT_EQ(w.spilled_runs(), 0u);
      // Flow 17 never finishes: every later row waits (at most the records after it).
      EXPECT_EQ(w.pending(), recs.size() - 17);
    }
    w.finish();
    EXPECT_EQ(test::read_text_file(o.flows_csv), flows_csv_of(recs, labels));
    EXPECT_EQ(test::read_text_file(o.fct_txt[0]), fct_txt_of(recs));
    EXPECT_EQ(test::read_text_file(o.fct_txt[1]), fct_txt_of(recs));
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++files;
    EXPECT_EQ(files, 3u);  // the spilled runs are gone
  }
}

TEST(FlowStreamWriter, ReorderBufferStaysSmallWhenEveryFlowFinishes) {
  TempDir tmp;
  FlowStreamWriter::Options o;
  o.flows_csv = (tmp.path() / "flows.csv").string();
  FlowStreamWriter w(o, {"default"});
  const std::vector<FlowRecord> recs = shuffled_records(50'000, 100);
  for (const FlowRecord& r : recs) w.add(r);
  EXPECT_EQ(w.pending(), 0u);
  EXPECT_LE(w.max_pending_seen(), 200u);
  w.finish();
  EXPECT_EQ(test::read_text_file(o.flows_csv), flows_csv_of(recs, {"default"}));
}

// A 20,000-flow run (2,000 under the sanitizers): no record is retained, the QP pool stays at the peak
// of concurrent flows, and the streamed files equal what the all-in-memory writers make of the records.
TEST(Soak, RunKeepsNoRecordsAndWritesTheSameFiles) {
  const uint64_t n = sanitized() ? 2000 : 20'000;
  const std::string text = fmt::format(R"(
name = "soak"
seed = 3
duration_ms = 100000
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[cc]
scheme = "dcqcn"
[[traffic]]
workload = "google_rpc"
load = 0.5
max_flows = {}
[output]
fct_hpcc = true
)",
                                       n);
  const Scenario s = load_scenario_text(text, "soak.toml");
  TempDir a, b;
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  size_t live_max = 0, seen = 0;
  net.observers().on_flow_finished = [&](const FlowRecord&) {
    ++seen;
    live_max = std::max(live_max, net.live_qps());
  };
  RunOptions streamed;
  streamed.out_dir = (a.path() / "run").string();
  const RunResult r1 = run_network(s, net, streamed);
  ASSERT_TRUE(r1.summary["complete"].get<bool>());
  EXPECT_EQ(seen, n);
  EXPECT_TRUE(net.finished().empty());  // not retained
  EXPECT_TRUE(r1.flows.empty());
  EXPECT_EQ(net.live_qps(), 0u);
  EXPECT_LT(net.qp_capacity(), n / 10);  // pool slots were recycled
  EXPECT_LE(live_max, net.qp_capacity());

  RunOptions kept = streamed;
  kept.out_dir = (b.path() / "run").string();
  kept.keep_flows = true;
  const RunResult r2 = run_scenario(s, kept);
  ASSERT_EQ(r2.flows.size(), n);
  const std::string csv = test::read_text_file(a.path() / "run" / "flows.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(n + 1));
  EXPECT_EQ(csv, flows_csv_of(r2.flows, s.class_labels));
  EXPECT_EQ(csv, test::read_text_file(b.path() / "run" / "flows.csv"));
  EXPECT_EQ(test::read_text_file(a.path() / "run" / "fct.txt"), fct_txt_of(r2.flows));
  const auto j1 = nlohmann::json::parse(test::read_text_file(a.path() / "run" / "summary.json"));
  const auto j2 = nlohmann::json::parse(test::read_text_file(b.path() / "run" / "summary.json"));
  const nlohmann::json all = to_json(compute_fct_stats(r2.flows, SizeBuckets::from_edges(s.size_buckets),
                                                       s.class_labels, s.short_flow_bytes));
  EXPECT_EQ(j1["fct"].dump(), j2["fct"].dump());
  // Below kExactSummaryLimit flows the statistics are the exact ones of all records.
  ASSERT_LT(n, kExactSummaryLimit);
  EXPECT_EQ(j1["fct"].dump(), all.dump());
  // Nothing but the result files in the output's parent (the temporary directory was renamed).
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(a.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(Soak, FailedRunLeavesNoTemporaryDirectory) {
  TempDir a;
  // An fct.txt path that cannot be created: the run fails before its first event and cleans up.
  const Scenario s = load_scenario_text(
      "[topology]\nkind = \"star\"\n[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize_bytes = 5000\n", "f.toml");
  std::ofstream(a.path() / "file") << "x";
  RunOptions o;
  o.out_dir = (a.path() / "run").string();
  o.fct_txt_path = (a.path() / "file" / "fct.txt").string();
  EXPECT_ANY_THROW(run_scenario(s, o));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(a.path())) ++entries;
  EXPECT_EQ(entries, 1u);  // only "file"
}
