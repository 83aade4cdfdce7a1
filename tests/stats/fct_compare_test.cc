// Tests of src/stats/fct_compare: the flow-set check of `rocesim compare-fct` (flows_differ: the same
// count, sizes and starts within 1 ns, or the first flow that differs) and its table's empty sides ("-").
#include "stats/fct_compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "core/error.h"

namespace rocesim {
namespace {

namespace fs = std::filesystem;

class FctCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocesim_fct_compare_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

constexpr const char* kCsvHeader =
    "id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,class\n";

// fct.txt: sip dip sport dport size start_ns fct_ns standalone_ns.
std::string fct_line(int64_t size, int64_t start_ns, int64_t fct_ns = 2000, int64_t ideal_ns = 1000) {
  return "0b000101 0b000201 10000 100 " + std::to_string(size) + " " + std::to_string(start_ns) + " " +
         std::to_string(fct_ns) + " " + std::to_string(ideal_ns) + "\n";
}

TEST_F(FctCompare, TheSameFlowsWithStartsWithinOneNanosecondMatchInEitherOrder) {
  // The simulator floors its starts to the ns, half of them 1 ns early: flows 2 and 3 start at 6 ns and
  // 8 ns in flows.csv, one ns later than fct.txt says; fct.txt lists flows in completion order.
  const auto ref = read_hpcc_fct(write("ref.txt", fct_line(200, 5) + fct_line(300, 7) + fct_line(100, 5)));
  const auto res = read_flows_csv(
      write("flows.csv", std::string(kCsvHeader) + "0,1,2,200,0.005000,0.007,0.002,0.001,2.000000,a\n"
                                                   "1,1,2,100,0.006000,0.008,0.002,0.001,2.000000,a\n"
                                                   "2,1,2,300,0.008000,0.010,0.002,0.001,2.000000,a\n"));
  ASSERT_EQ(res.all.size(), 3u);
  EXPECT_EQ(res.all[1].start.ps, 6000);
  EXPECT_EQ(res.all[1].line, 3);
  EXPECT_EQ(flows_differ(ref, res), "");
  EXPECT_EQ(flows_differ(res, ref), "");
  EXPECT_EQ(flows_differ(ref, ref), "");
}

TEST_F(FctCompare, AStartTwoNanosecondsApartIsTheFirstDifference) {
  const auto ref = read_hpcc_fct(write("ref.txt", fct_line(100, 5) + fct_line(200, 9)));
  const auto res = read_flows_csv(
      write("flows.csv", std::string(kCsvHeader) + "0,1,2,100,0.005000,0.007,0.002,0.001,2.000000,a\n"
                                                   "1,1,2,200,0.011000,0.013,0.002,0.001,2.000000,a\n"));
  const std::string d = flows_differ(ref, res);
  EXPECT_NE(d.find("flow 1 in start order: start_ns 9 (" + ref.source + ":2) vs start_us 0.011000 (" +
                   res.source + ":3)"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find(" flows in "), std::string::npos) << "equal counts are not reported: " << d;
}

TEST_F(FctCompare, ASizeThatDiffersIsNamedWithBothValuesAndLines) {
  const auto ref = read_hpcc_fct(write("ref.txt", fct_line(100, 5) + fct_line(200, 9)));
  const auto res = read_hpcc_fct(write("res.txt", fct_line(100, 5) + fct_line(201, 9)));
  EXPECT_EQ(flows_differ(ref, res), "the first flow that differs, flow 1 in start order: size_bytes 200 (" +
                                        ref.source + ":2) vs 201 (" + res.source + ":2)");
}

TEST_F(FctCompare, DifferentCountsNameBothAndTheFirstFlowOnlyInOne) {
  const auto ref = read_hpcc_fct(write("ref.txt", fct_line(100, 5) + fct_line(200, 9) + fct_line(300, 12)));
  // The result misses its last flow (e.g. a run that ended first); its unfinished row still counts.
  const auto res = read_flows_csv(write("flows.csv", std::string(kCsvHeader) +
                                                         "0,1,2,100,0.005000,0.007,0.002,0.001,2.000000,a\n"
                                                         "1,1,2,200,0.009000,,,,,a\n"));
  EXPECT_EQ(res.flows.size(), 1u);
  EXPECT_EQ(res.unfinished, 1u);
  EXPECT_EQ(flows_differ(ref, res),
            "3 flows in " + ref.source + ", 2 in " + res.source +
                "; the first flow that differs, flow 2 in start order: size_bytes 300, start_ns 12 (" +
                ref.source + ":3), only in the reference");
  EXPECT_NE(flows_differ(res, ref).find("only in the result"), std::string::npos);
  // Different flows altogether: the counts, and the first flow.
  const auto other = read_hpcc_fct(write("other.txt", fct_line(5000, 1) + fct_line(100, 5)));
  const std::string d = flows_differ(ref, other);
  EXPECT_NE(d.find("3 flows in " + ref.source + ", 2 in " + other.source + "; "), std::string::npos) << d;
  EXPECT_NE(d.find("flow 0 in start order: start_ns 5 (" + ref.source + ":1) vs start_ns 1 (" + other.source +
                   ":1)"),
            std::string::npos)
      << d;
}

TEST_F(FctCompare, ABadStartInFlowsCsvIsAnInputError) {
  for (const char* start : {"", "x", "-1.0", "1.", "1.2e3"}) {
    const std::string p = write(
        "flows.csv", std::string(kCsvHeader) + "0,1,2,100," + start + ",0.007,0.002,0.001,2.000000,a\n");
    try {
      read_flows_csv(p);
      ADD_FAILURE() << "accepted start_us '" << start << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(p + ":2: start_us: '" + start + "'"), std::string::npos)
          << e.what();
    }
  }
  // Sub-picosecond decimals are dropped.
  const auto f = read_flows_csv(
      write("ok.csv", std::string(kCsvHeader) + "0,1,2,100,12.0000019,0.007,0.002,0.001,2.000000,a\n"));
  EXPECT_EQ(f.all.at(0).start.ps, 12'000'001);
}

TEST(FctCompareTable, AnEmptySideShowsDashesNotZeroError) {
  SlowdownRow r;
  r.label = "1MB+";
  r.ref_count = 4;
  r.res_count = 0;
  r.ref[0] = 1.5, r.ref[1] = 2.25, r.ref[2] = 3.0;
  SlowdownRow all = r;
  all.label = "all";
  all.res_count = 3;
  all.res[0] = 1.5, all.res[1] = 2.25, all.res[2] = 3.3;
  all.err[0] = 0, all.err[1] = 0, all.err[2] = 0.1;
  const std::string t = format_slowdown_table({r, all}, 1);
  EXPECT_NE(
      t.find("1MB+              4      0    1.50 /      - (      -)    2.25 /      - (      -)    3.00 /"
             "      - (      -)"),
      std::string::npos)
      << t;
  const std::string first = t.substr(0, t.find("\nall"));
  EXPECT_EQ(first.find("0.00"), std::string::npos) << t;
  EXPECT_EQ(first.find('%'), std::string::npos) << t;
  EXPECT_NE(t.find("3.00 /   3.30 ( +10.0%)"), std::string::npos) << t;
  // Empty on the reference's side too.
  std::swap(r.ref_count, r.res_count);
  std::swap(r.ref, r.res);
  EXPECT_NE(format_slowdown_table({r}, 1).find("1MB+              0      4       - /   1.50 (      -)"),
            std::string::npos)
      << format_slowdown_table({r}, 1);
}

}  // namespace
}  // namespace rocesim
