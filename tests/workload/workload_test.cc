// Tests of the workload layer: flow-size CDFs, HPCC flow files, generators and merging.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "workload/cdf.h"
#include "workload/flow_file.h"
#include "workload/generators.h"

namespace rocesim {
namespace {

#ifdef ROCESIM_DATA_DIR
const std::string kDataDir = ROCESIM_DATA_DIR;
#else
const std::string kDataDir = "data";
#endif
#ifdef ROCESIM_TEST_DIR
const std::string kTestDir = ROCESIM_TEST_DIR;
#else
const std::string kTestDir = "tests";
#endif

std::string wl(const std::string& file) { return kDataDir + "/workloads/" + file; }
std::string flows_dir(const std::string& file) { return kTestDir + "/data/flows/" + file; }

std::vector<std::string> workload_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kDataDir + "/workloads")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".cdf" || ext == ".txt") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The "# mean flow size: 1,711,250.0 bytes" header of a .cdf file, or -1.
double header_mean(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  const std::string key = "# mean flow size: ";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::string digits;
    for (size_t i = key.size(); i < line.size() && line[i] != ' '; ++i) {
      if (line[i] != ',') digits += line[i];
    }
    return std::stod(digits);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------
// SizeCdf

TEST(SizeCdf, EveryShippedFileLoads) {
  const auto files = workload_files();
  int cdf = 0, txt = 0;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const SizeCdf c = SizeCdf::load(f);
    EXPECT_GE(c.points(), 2u);
    EXPECT_GT(c.mean_bytes(), 0);
    EXPECT_EQ(c.path(), f);
    if (f.ends_with(".cdf")) {
      ++cdf;
      EXPECT_FALSE(c.percent_format());
      const double hm = header_mean(f);
      ASSERT_GT(hm, 0) << "no mean in header";
      EXPECT_NEAR(c.mean_bytes(), hm, 0.1 + 1e-9 * hm);
    } else {
      ++txt;
      EXPECT_TRUE(c.percent_format());
    }
  }
  EXPECT_GE(cdf, 19);
  EXPECT_EQ(txt, 4);
}

TEST(SizeCdf, HpccMeans) {
  EXPECT_NEAR(SizeCdf::load(wl("websearch.cdf")).mean_bytes(), 1711250, 1);
  EXPECT_NEAR(SizeCdf::load(wl("WebSearch_distribution.txt")).mean_bytes(), 1711250, 1);
  EXPECT_NEAR(SizeCdf::load(wl("FbHdp_distribution.txt")).mean_bytes(), 120421, 1);
  EXPECT_NEAR(SizeCdf::load(wl("fb_hadoop.cdf")).mean_bytes(), 120421, 1);
  EXPECT_NEAR(SizeCdf::load(wl("AliStorage2019.txt")).mean_bytes(), 40870, 1);
  EXPECT_NEAR(SizeCdf::load(wl("GoogleRPC2008.txt")).mean_bytes(), 2892, 1);
}

TEST(SizeCdf, NamesAndFormat) {
  const SizeCdf a = SizeCdf::load(wl("websearch.cdf"));
  EXPECT_EQ(a.name(), "websearch");
  EXPECT_FALSE(a.percent_format());
  const SizeCdf b = SizeCdf::load(wl("FbHdp_distribution.txt"), "hadoop_hpcc");
  EXPECT_EQ(b.name(), "hadoop_hpcc");
  EXPECT_TRUE(b.percent_format());
  EXPECT_EQ(b.min_bytes(), 0);
  EXPECT_EQ(b.max_bytes(), 10000000);
}

TEST(SizeCdf, InterpolationLikeCustomRand) {
  const SizeCdf c = SizeCdf::load(wl("WebSearch_distribution.txt"));
  // r = u * 100; first i with r <= cdf[i]; linear interpolation.
  EXPECT_DOUBLE_EQ(c.quantile(0.0), 0);
  EXPECT_DOUBLE_EQ(c.quantile(0.15), 10000);
  EXPECT_DOUBLE_EQ(c.quantile(0.175), 15000);
  EXPECT_DOUBLE_EQ(c.quantile(0.65), 600000);
  EXPECT_DOUBLE_EQ(c.quantile(1.0), 30000000);
  EXPECT_DOUBLE_EQ(c.cdf_at(15000), 0.175);
  EXPECT_DOUBLE_EQ(c.cdf_at(600000), 0.65);
  EXPECT_DOUBLE_EQ(c.cdf_at(-1), 0);
  EXPECT_DOUBLE_EQ(c.cdf_at(3e7), 1);
  EXPECT_NEAR(c.fraction_below(10000), 0.15, 1e-12);
  EXPECT_NEAR(1 - c.fraction_below(1000001), 0.30, 1e-6);
  // Sizes below 1 byte are clamped: a sample is always >= 1.
  Rng rng(5);
  for (int i = 0; i < 10000; ++i) EXPECT_GE(c.sample(rng), 1);
}

TEST(SizeCdf, PercentAndFractionFilesSampleAlike) {
  const SizeCdf pct = SizeCdf::load(wl("WebSearch_distribution.txt"));
  const SizeCdf frac = SizeCdf::load(wl("websearch.cdf"));
  Rng r1(42), r2(42);
  for (int i = 0; i < 10000; ++i) {
    const Bytes a = pct.sample(r1), b = frac.sample(r2);
    ASSERT_LE(std::abs(a - b), 1) << i;  // r x 100 vs r: only float rounding may differ
  }
}

TEST(SizeCdf, PointMasses) {
  const SizeCdf c = SizeCdf::load(flows_dir("cdf_pointmass.cdf"));
  EXPECT_DOUBLE_EQ(c.mean_bytes(), 1750);
  EXPECT_DOUBLE_EQ(c.cdf_at(999), 0);
  EXPECT_DOUBLE_EQ(c.cdf_at(1000), 0.5);  // right-continuous: includes the mass
  EXPECT_DOUBLE_EQ(c.fraction_below(1000), 0);
  EXPECT_DOUBLE_EQ(c.fraction_below(1001), 0.5 + 0.25 / 2000);
  EXPECT_DOUBLE_EQ(c.cdf_at(2000), 0.625);
  EXPECT_DOUBLE_EQ(c.cdf_at(2999.5), 0.75 - 0.25 * 0.5 / 2000);
  EXPECT_DOUBLE_EQ(c.fraction_below(3000), 0.75);
  EXPECT_DOUBLE_EQ(c.cdf_at(3000), 1);
  Rng rng(9);
  int at1000 = 0, at3000 = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const Bytes s = c.sample(rng);
    ASSERT_GE(s, 1000);
    ASSERT_LE(s, 3000);
    at1000 += s == 1000;
    at3000 += s == 3000;
  }
  EXPECT_NEAR(at1000 / double(n), 0.5, 0.01);
  EXPECT_NEAR(at3000 / double(n), 0.25, 0.01);
}

// Kolmogorov-Smirnov distance between n samples and the model CDF. At every distinct sample value v the
// empirical CDF jumps; compare both sides of the jump: Fn(v) with cdf_at(v) (which includes a point mass
// at v) and Fn(v-) with the model's left limit at v (fraction_below(v), which excludes it).
double ks_distance(const SizeCdf& c, uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<Bytes> s(static_cast<size_t>(n));
  for (auto& v : s) v = c.sample(rng);
  std::sort(s.begin(), s.end());
  double d = 0;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j] == s[i]) ++j;
    const double below = static_cast<double>(i) / n, upto = static_cast<double>(j) / n;
    d = std::max(d, std::abs(below - c.fraction_below(s[i])));
    d = std::max(d, std::abs(upto - c.cdf_at(static_cast<double>(s[i]))));
    i = j;
  }
  return d;
}

TEST(SizeCdf, KolmogorovSmirnov) {
  for (const char* name : {"websearch", "hadoop", "datamining"}) {
    const SizeCdf c = SizeCdf::load(resolve_workload(name, kDataDir));
    const double d = ks_distance(c, 2024, 100000);
    std::printf("[ KS       ] %-10s D = %.5f (n = 100000)\n", name, d);
    EXPECT_LT(d, 0.01) << name;
  }
}

// Table of malformed CDF files: each must throw InputError naming the file, line and problem.
struct BadInput {
  const char* file;
  int line;  // 0 = no line number
  const char* phrase;
};

void expect_input_error(const std::string& path, int line, const std::string& phrase,
                        const std::function<void()>& fn) {
  SCOPED_TRACE(path);
  try {
    fn();
    ADD_FAILURE() << "no InputError for " << path;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::filesystem::path(path).filename().string()), std::string::npos) << what;
    EXPECT_EQ(e.line(), line) << what;
    if (line > 0) {
      EXPECT_NE(what.find(":" + std::to_string(line) + ":"), std::string::npos) << what;
    }
    EXPECT_NE(what.find(phrase), std::string::npos) << what;
  }
}

TEST(SizeCdf, MalformedFiles) {
  const BadInput cases[] = {
      {"cdf_nonnum.cdf", 3, "expected a number for the flow size"},
      {"cdf_decr_size.cdf", 3, "size decreases"},
      {"cdf_decr_cdf.txt", 3, "CDF decreases"},
      {"cdf_start.txt", 1, "first CDF value must be 0"},
      {"cdf_end.cdf", 5, "last CDF value must be 100 (percent format) or 1"},
      {"cdf_one.cdf", 2, "at least 2 points"},
      {"cdf_empty.cdf", 0, "at least 2 points"},
      {"cdf_neg.cdf", 2, "negative size"},
      {"cdf_fields.cdf", 2, "expected 2 fields"},
      {"cdf_nan.cdf", 2, "expected a number for the CDF value"},
      {"no_such_file.cdf", 0, "cannot open"},
  };
  for (const BadInput& b : cases) {
    const std::string p = flows_dir(b.file);
    expect_input_error(p, b.line, b.phrase, [&] { SizeCdf::load(p); });
  }
}

// ---------------------------------------------------------------------------------------------------
// Catalogue

TEST(Catalogue, ResolvesNames) {
  EXPECT_EQ(resolve_workload("websearch", kDataDir), wl("websearch.cdf"));
  EXPECT_EQ(resolve_workload("hadoop", kDataDir), wl("fb_hadoop.cdf"));
  EXPECT_EQ(resolve_workload("fb_hadoop_hpcc", kDataDir), wl("FbHdp_distribution.txt"));
  EXPECT_EQ(resolve_workload("webserver", kDataDir), wl("fb_webserver.cdf"));
  EXPECT_EQ(resolve_workload("cachefollower", kDataDir), wl("fb_cachefollower.cdf"));
  EXPECT_EQ(resolve_workload("enterprise", kDataDir), wl("enterprise.cdf"));
  EXPECT_EQ(resolve_workload("datamining", kDataDir), wl("datamining.cdf"));
  EXPECT_EQ(resolve_workload("alistorage", kDataDir), wl("ali_storage2019.cdf"));
  EXPECT_EQ(resolve_workload("google_rpc", kDataDir), wl("google_rpc.cdf"));
  EXPECT_EQ(resolve_workload("WebSearch", kDataDir), wl("websearch.cdf"));
  EXPECT_EQ(resolve_workload("homa_w5_websearch", kDataDir), wl("homa_w5_websearch.cdf"));
  EXPECT_EQ(resolve_workload("ali_solar2022", kDataDir), wl("ali_solar2022.cdf"));
  // Every .cdf file is reachable by its stem.
  for (const std::string& f : workload_files()) {
    if (!f.ends_with(".cdf")) continue;
    EXPECT_EQ(resolve_workload(std::filesystem::path(f).stem().string(), kDataDir), f);
  }
  // An existing path is used as is.
  const std::string p = flows_dir("cdf_pointmass.cdf");
  EXPECT_EQ(resolve_workload(p, kDataDir), p);
}

// A build carried away from its checkout finds the workloads where $ROCESIM_DATA_DIR says.
TEST(Catalogue, DataDirectoryFromTheEnvironment) {
  EXPECT_EQ(data_dir_or_env("built/in"),
            std::getenv("ROCESIM_DATA_DIR") ? std::getenv("ROCESIM_DATA_DIR") : std::string("built/in"));
  const std::filesystem::path moved =
      std::filesystem::temp_directory_path() / ("rocesim_data_" + std::to_string(::getpid()));
  std::filesystem::create_directories(moved / "workloads");
  std::filesystem::copy_file(wl("websearch.cdf"), moved / "workloads" / "websearch.cdf");
  const char* before = std::getenv("ROCESIM_DATA_DIR");
  const std::string saved = before ? before : "";
  ::setenv("ROCESIM_DATA_DIR", moved.c_str(), 1);
  EXPECT_EQ(resolve_workload("websearch", data_dir_or_env("/nowhere")),
            (moved / "workloads" / "websearch.cdf").string());
  ::setenv("ROCESIM_DATA_DIR", "", 1);  // empty: the built-in one
  EXPECT_EQ(data_dir_or_env(kDataDir), kDataDir);
  if (before)
    ::setenv("ROCESIM_DATA_DIR", saved.c_str(), 1);
  else
    ::unsetenv("ROCESIM_DATA_DIR");
  std::filesystem::remove_all(moved);
}

TEST(Catalogue, UnknownNameListsValidNames) {
  try {
    resolve_workload("websurch", kDataDir);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("websurch"), std::string::npos) << w;
    EXPECT_NE(w.find("valid names: websearch, hadoop,"), std::string::npos) << w;
    EXPECT_NE(w.find("datamining_conga"), std::string::npos) << w;
  }
}

TEST(Catalogue, ListWorkloads) {
  const auto list = list_workloads(kDataDir);
  EXPECT_EQ(list.size(), workload_names(kDataDir).size());
  std::map<std::string, WorkloadInfo> by;
  for (const auto& w : list) by[w.name] = w;
  ASSERT_TRUE(by.count("websearch"));
  EXPECT_NEAR(by["websearch"].mean_bytes, 1711250, 1);
  EXPECT_NEAR(by["websearch"].share_below_10kb, 0.15, 1e-9);
  EXPECT_NEAR(by["websearch"].share_above_1mb, 0.30, 1e-6);
  EXPECT_EQ(by["hadoop"].file, "fb_hadoop.cdf");
  EXPECT_NEAR(by["hadoop"].share_below_10kb, 0.703, 0.001);  // SOURCES.md table
  EXPECT_NEAR(by["datamining"].share_below_10kb, 0.796, 0.001);
  EXPECT_NEAR(by["datamining"].share_above_1mb, 0.089, 0.001);
  EXPECT_NEAR(by["fb_hadoop_hpcc"].mean_bytes, 120421, 1);
}

// ---------------------------------------------------------------------------------------------------
// Exact start times

TEST(FlowFile, ParseSecondsExact) {
  auto ps = [](const char* s) {
    Time t{-1};
    EXPECT_TRUE(parse_seconds_exact(s, t)) << s;
    return t.ps;
  };
  EXPECT_EQ(ps("2.000000001"), 2000000001000);
  EXPECT_EQ(ps("2.000001234"), 2000001234000);
  EXPECT_EQ(ps("2"), 2000000000000);
  EXPECT_EQ(ps("2."), 2000000000000);
  EXPECT_EQ(ps(".5"), 500000000000);
  EXPECT_EQ(ps("+0.1"), 100000000000);
  EXPECT_EQ(ps("0"), 0);
  EXPECT_EQ(ps("0.000000000001"), 1);
  EXPECT_EQ(ps("0.0000000000015"), 2);  // half up
  EXPECT_EQ(ps("0.0000000000014999"), 1);
  EXPECT_EQ(ps("1.5e-3"), 1500000000);
  EXPECT_EQ(ps("1E3"), 1000000000000000);
  EXPECT_EQ(ps("25e-13"), 3);
  EXPECT_EQ(ps("9223372.036854775807"), 9223372036854775807);
  Time t;
  for (const char* bad : {"", ".", "e5", "1e", "2.0.1", "abc", "1x", "-1", "9223372.036854775808", "1e100"}) {
    EXPECT_FALSE(parse_seconds_exact(bad, t)) << bad;
  }
  EXPECT_TRUE(parse_seconds_exact("0e100", t));
  EXPECT_EQ(t.ps, 0);
}

// The ns-3 HPCC simulator's reading (flow_file.start_times = "hpcc_sim"): the nearest double, floored to
// the nanosecond. The first four are flows of tests/data/ns3's ws50 case with the start the simulator's
// fct.txt records for them.
TEST(FlowFile, ParseSecondsHpccSim) {
  auto ns = [](const char* s) {
    Time t{-1};
    EXPECT_TRUE(parse_seconds_hpcc_sim(s, t)) << s;
    EXPECT_EQ(t.ps % 1000, 0) << s << ": whole nanoseconds";
    return t.ps / 1000;
  };
  EXPECT_EQ(ns("2.000006703"), 2000006702);  // the double is 2.00000670299999990...
  EXPECT_EQ(ns("2.000034500"), 2000034499);
  EXPECT_EQ(ns("2.002451094"), 2002451093);
  EXPECT_EQ(ns("2.002631768"), 2002631768);  // the double is just above: exact
  EXPECT_EQ(ns("0.3"), 299999999);           // 0.29999999999999998890
  EXPECT_EQ(ns("0.1"), 100000000);           // 0.10000000000000000555
  EXPECT_EQ(ns("2"), 2000000000);
  EXPECT_EQ(ns("+0.5"), 500000000);
  EXPECT_EQ(ns("1.5e-3"), 1500000);
  EXPECT_EQ(ns("0.0000000015"), 1);  // sub-nanosecond digits are dropped, not rounded
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("9000000.5"), 9000000500000000);
  EXPECT_EQ(ns("9223372.036854775807"), 9223372036854775);  // the largest: 9223372.03685477562... as a double
  // Never more than 1 ns from the exact reading, never later.
  for (const char* s : {"2.000000001", "2.123456789", "7.999999999", "10.000000003", "0.000000007"}) {
    Time exact, sim;
    ASSERT_TRUE(parse_seconds_exact(s, exact));
    ASSERT_TRUE(parse_seconds_hpcc_sim(s, sim));
    EXPECT_LE(sim.ps, exact.ps) << s;
    EXPECT_GE(sim.ps, exact.ps - 1000) << s;
  }
  Time t;
  for (const char* bad : {"", ".", "e5", "1e", "2.0.1", "abc", "1x", "-1", "9223372.036854775808", "1e100"}) {
    EXPECT_FALSE(parse_seconds_hpcc_sim(bad, t)) << bad;
  }
}

// ---------------------------------------------------------------------------------------------------
// HpccFlowFile: 8 nodes, 6 and 7 are switches.

const std::vector<bool> kIsHost = {true, true, true, true, true, true, false, false};

TEST(FlowFile, ReadsValidFile) {
  const uint16_t kIncast = 1;
  HpccFlowFile f(flows_dir("valid_flows.txt"), kIsHost,
                 [&](uint16_t dport) -> uint16_t { return dport == 200 ? kIncast : 0; });
  EXPECT_EQ(f.declared_count(), 4u);
  std::vector<FlowSpec> got;
  FlowSpec s;
  while (f.next(s)) got.push_back(s);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(f.flows_read(), 4u);
  EXPECT_EQ(got[0].src, 0);
  EXPECT_EQ(got[0].dst, 1);
  EXPECT_EQ(got[0].priority, 3);
  EXPECT_EQ(got[0].dport, 100);
  EXPECT_EQ(got[0].size_bytes, 52000);
  EXPECT_EQ(got[0].start.ps, 2000000001000);
  EXPECT_EQ(got[0].class_id, 0);
  EXPECT_EQ(got[1].dport, 200);
  EXPECT_EQ(got[1].class_id, kIncast);
  EXPECT_EQ(got[1].start.ps, 2000001000000);
  EXPECT_EQ(got[2].start.ps, 2000001000000);
  EXPECT_EQ(got[2].size_bytes, 7);
  EXPECT_EQ(got[3].priority, 0);
  EXPECT_EQ(got[3].size_bytes, 30000000);
  EXPECT_EQ(got[3].start.ps, 2500000000000);
  EXPECT_FALSE(f.next(s));  // stays exhausted
}

TEST(FlowFile, FromStreamWithIsHostFunction) {
  auto in = std::make_unique<std::istringstream>("2\n\n0 3 3 100 10 0.5\n# comment\n3 0 3 100 20 0.5\n\n");
  HpccFlowFile f(std::move(in), "inline.txt", 4, [](int id) { return id != 1; });
  FlowSpec s;
  ASSERT_TRUE(f.next(s));
  EXPECT_EQ(s.dst, 3);
  ASSERT_TRUE(f.next(s));
  EXPECT_EQ(s.src, 3);
  EXPECT_FALSE(f.next(s));
}

TEST(FlowFile, MalformedFiles) {
  const BadInput cases[] = {
      {"bad_count.txt", 1, "expected the flow count"},
      {"bad_empty.txt", 0, "empty flow file"},
      {"bad_short.txt", 3, "file ends after 2 of 3 flows"},
      {"bad_extra.txt", 3, "extra flow line after the 1 flows"},
      {"bad_switch.txt", 3, "dst node 6 is not a host"},
      {"bad_range.txt", 3, "src node id 9 out of range [0, 8)"},
      {"bad_same.txt", 2, "src equals dst"},
      {"bad_pg.txt", 3, "pg (priority group) 8 not in 0..7"},
      {"bad_dport.txt", 2, "dport 70000 not in 0..65535"},
      {"bad_size.txt", 3, "size_bytes must be > 0"},
      {"bad_size_float.txt", 2, "expected an integer for size_bytes"},
      {"bad_negstart.txt", 2, "start time must be >= 0"},
      {"bad_unsorted.txt", 4, "start times not sorted"},
      {"bad_fields.txt", 3, "expected 6 fields"},
      {"bad_fields_many.txt", 2, "expected 6 fields"},
      {"bad_nonnum.txt", 2, "expected an integer for src"},
      {"bad_time.txt", 2, "expected a start time in seconds"},
      {"no_such_flows.txt", 0, "cannot open flow file"},
  };
  for (const BadInput& b : cases) {
    const std::string p = flows_dir(b.file);
    expect_input_error(p, b.line, b.phrase, [&] {
      HpccFlowFile f(p, kIsHost);
      FlowSpec s;
      while (f.next(s)) {
      }
    });
  }
}

TEST(FlowFile, InlineFlowsSortedStable) {
  std::vector<FlowSpec> v(4);
  const int64_t starts[] = {30, 10, 30, 10};
  for (int i = 0; i < 4; ++i) {
    v[i].start = Time::from_ps(starts[i]);
    v[i].size_bytes = i + 1;  // identifies the original position
  }
  InlineFlows src(v);
  EXPECT_EQ(src.size(), 4u);
  FlowSpec s;
  std::vector<Bytes> order;
  while (src.next(s)) order.push_back(s.size_bytes);
  EXPECT_EQ(order, (std::vector<Bytes>{2, 4, 1, 3}));
}

// ---------------------------------------------------------------------------------------------------
// Generators

PoissonAllToAllParams base_params(const SizeCdf* cdf) {
  PoissonAllToAllParams p;
  for (int i = 0; i < 16; ++i) p.hosts.push_back(100 + i);
  p.sizes = cdf;
  p.host_rate = Rate::from_gbps(10);
  p.load = 0.5;
  p.start = Time::from_s(2.0);
  p.seed = 7;
  return p;
}

TEST(Generators, PoissonOfferedLoad) {
  const SizeCdf cdf = SizeCdf::load(resolve_workload("websearch", kDataDir));
  PoissonAllToAllParams p = base_params(&cdf);
  const Time window = Time::from_s(60.0);
  p.stop = p.start + window;
  PoissonAllToAll gen(p);
  EXPECT_NEAR(gen.mean_gap_ps(), 1711250.0 * 8 / 5e9 * 1e12, 1);
  FlowSpec s;
  double bytes = 0;
  uint64_t n = 0;
  Time last = p.start;
  std::vector<double> per_host(16, 0);
  while (gen.next(s)) {
    ASSERT_GE(s.start, last);
    ASSERT_LT(s.start, p.stop);
    ASSERT_GT(s.start, p.start);
    ASSERT_NE(s.src, s.dst);
    ASSERT_GE(s.dst, 100);
    ASSERT_LT(s.dst, 116);
    ASSERT_EQ(s.priority, 3);
    last = s.start;
    bytes += static_cast<double>(s.size_bytes);
    per_host[static_cast<size_t>(s.src - 100)] += 1;
    ++n;
  }
  const double capacity = 16 * 10e9 / 8 * window.sec();
  const double offered = bytes / capacity;
  std::printf("[ LOAD     ] %lu flows, offered load %.4f (target 0.5, error %+.2f%%)\n",
              static_cast<unsigned long>(n), offered, (offered / 0.5 - 1) * 100);
  EXPECT_NEAR(offered / 0.5, 1.0, 0.02);
  const double expect_n = 16 * window.ps / gen.mean_gap_ps();
  EXPECT_NEAR(n / expect_n, 1.0, 0.02);
  for (double c : per_host) EXPECT_NEAR(c / (expect_n / 16), 1.0, 0.1);
}

TEST(Generators, PoissonDeterministic) {
  const SizeCdf cdf = SizeCdf::load(resolve_workload("hadoop", kDataDir));
  auto run = [&](uint64_t seed) {
    PoissonAllToAllParams p = base_params(&cdf);
    p.seed = seed;
    p.max_flows = 2000;
    PoissonAllToAll g(p);
    std::vector<std::tuple<int, int, Bytes, int64_t>> v;
    FlowSpec s;
    while (g.next(s)) v.emplace_back(s.src, s.dst, s.size_bytes, s.start.ps);
    return v;
  };
  const auto a = run(7), b = run(7), c = run(8);
  EXPECT_EQ(a.size(), 2000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Generators, PoissonLimitsAndParams) {
  const SizeCdf cdf = SizeCdf::load(resolve_workload("hadoop", kDataDir));
  PoissonAllToAllParams p = base_params(&cdf);
  p.hosts = {3, 9};
  p.priority = 5;
  p.dport = 200;
  p.class_id = 2;
  p.max_flows = 10;
  PoissonAllToAll g(p);
  FlowSpec s;
  int n = 0;
  while (g.next(s)) {
    ++n;
    EXPECT_EQ(s.src + s.dst, 12);
    EXPECT_EQ(s.priority, 5);
    EXPECT_EQ(s.dport, 200);
    EXPECT_EQ(s.class_id, 2);
  }
  EXPECT_EQ(n, 10);
  EXPECT_EQ(g.generated(), 10u);

  // A stop time right after start: few or no flows, all before stop.
  p.max_flows = 0;
  p.stop = p.start + Time::from_us(1);
  PoissonAllToAll g2(p);
  while (g2.next(s)) EXPECT_LT(s.start, p.stop);

  PoissonAllToAllParams bad = base_params(&cdf);
  bad.hosts = {1};
  EXPECT_THROW(PoissonAllToAll{bad}, InputError);
  bad = base_params(&cdf);
  bad.load = 1.5;
  EXPECT_THROW(PoissonAllToAll{bad}, InputError);
  bad = base_params(nullptr);
  EXPECT_THROW(PoissonAllToAll{bad}, InputError);
  bad = base_params(&cdf);
  bad.hosts = {1, 2, 1};
  EXPECT_THROW(PoissonAllToAll{bad}, InputError);
}

TEST(Generators, MergedSourceOrdering) {
  auto make = [](std::vector<std::pair<int64_t, int>> v) {
    std::vector<FlowSpec> f;
    for (auto [t, tag] : v) {
      FlowSpec s;
      s.start = Time::from_ps(t);
      s.size_bytes = tag;
      f.push_back(s);
    }
    return std::make_unique<InlineFlows>(f);
  };
  MergedSource m;
  m.add(make({{1, 11}, {3, 12}, {5, 13}}));
  InlineFlows b(std::vector<FlowSpec>{});
  m.add(&b);  // empty, not owned
  m.add(make({{1, 31}, {2, 32}, {5, 33}, {5, 34}}));
  FlowSpec s;
  std::vector<Bytes> tags;
  std::vector<uint64_t> ids;
  while (m.next(s)) {
    tags.push_back(s.size_bytes);
    ids.push_back(s.id);
  }
  EXPECT_EQ(tags, (std::vector<Bytes>{11, 31, 32, 12, 13, 33, 34}));
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(m.emitted(), 7u);
}

TEST(Generators, MergedFileInlineAndGenerator) {
  const SizeCdf cdf = SizeCdf::load(resolve_workload("websearch", kDataDir));
  PoissonAllToAllParams p;
  p.hosts = {0, 1, 2, 3, 4, 5};
  p.sizes = &cdf;
  p.host_rate = Rate::from_gbps(100);
  p.load = 0.3;
  p.start = Time::from_s(2.0);
  p.stop = Time::from_s(2.01);
  MergedSource m;
  m.add(std::make_unique<HpccFlowFile>(flows_dir("valid_flows.txt"), kIsHost));
  FlowSpec inl;
  inl.src = 4;
  inl.dst = 5;
  inl.start = Time::from_s(2.000001);
  inl.size_bytes = 999;
  m.add(std::make_unique<InlineFlows>(std::vector<FlowSpec>{inl}));
  m.add(std::make_unique<PoissonAllToAll>(p));
  FlowSpec s;
  Time last;
  uint64_t n = 0;
  int file_flows = 0;
  std::vector<Bytes> at_2_000001;
  while (m.next(s)) {
    EXPECT_GE(s.start, last);
    EXPECT_EQ(s.id, n);
    last = s.start;
    ++n;
    if (s.start.ps == 2000001000000) at_2_000001.push_back(s.size_bytes);
    if (s.size_bytes == 52000 || s.size_bytes == 30000000) ++file_flows;
  }
  EXPECT_GE(file_flows, 2);
  EXPECT_GT(n, 50u);
  // Equal starts: the file's two flows (source 0) before the inline flow (source 1).
  ASSERT_GE(at_2_000001.size(), 3u);
  EXPECT_EQ(at_2_000001[0], 1000);
  EXPECT_EQ(at_2_000001[1], 7);
  EXPECT_EQ(at_2_000001[2], 999);
}

}  // namespace
}  // namespace rocesim
