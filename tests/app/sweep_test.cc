// Tests of `rocesim sweep`, `rocesim report` and the progress line: grid parsing and expansion (unit), a
// real sweep run as a subprocess (run directories, results.csv rows, resume, re-running a deleted run,
// a failing grid value, an interrupt), the HTML report, the progress line on a terminal and the
// batch lines without one.
#include "app/sweep.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/progress.h"
#include "config/scenario.h"
#include "core/error.h"
#include "file_util.h"
#include "mpi_util.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

const std::string kBinary = ROCESIM_BINARY;

// 8 hosts: Hadoop flows at 50 % load for 200 us plus a 4:1 incast into h0, with every monitor on. About 0.1
// s.
const char* kTinyScenario = R"(name = "sweep_tiny"
seed = 1
duration_ms = 5

[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 4

[cc]
scheme = "dcqcn"

[[traffic]]
workload = "hadoop"
load = 0.5
stop_us = 200

[[traffic]]
pattern = "incast"
class = "incast"
senders = "h4..h7"
fan_in = 4
dst = "h0"
size_bytes = 200000
start_us = 50

[monitors]
queue_ports = ["all"]
flow_rates = "all"
port_throughput = ["s0:h0"]
pfc = true
buffer = true
)";

// 64 hosts of WebSearch at 50 % load for 6 ms: a run of a few seconds (progress lines appear after 1 s).
// slow_scenario() below shortens it under the sanitizers, which run it about ten times slower.
const char* kSlowScenario = R"(name = "sweep_slow"
seed = 1
duration_ms = 50

[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 16

[cc]
scheme = "dcqcn"

[[traffic]]
workload = "websearch"
load = 0.5
stop_us = 6000
)";

// kSlowScenario, with 2 ms of arrivals instead of 6 under the sanitizers (ROCESIM_SANITIZED): about 5 s
// there (2026-11-28), well past the progress line's 1 s delay. 1 ms took 1.25 s once the simulator had got
// faster, too close to that delay: a terminal saw no progress line.
std::string slow_scenario() {
  std::string s = kSlowScenario;
  if (std::getenv("ROCESIM_SANITIZED")) s.replace(s.find("stop_us = 6000"), 14, "stop_us = 2000");
  return s;
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("rocesim_sweep_test_" + tag + "_" + std::to_string(getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& s) const { return path_ / s; }

 private:
  fs::path path_;
};

struct Proc {
  int status = -1;  // raw wait status
  std::string out, err;
  double seconds = 0;
  bool exited() const { return WIFEXITED(status); }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  std::string describe() const {
    return "exit " + std::to_string(code()) + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
};

// Starts `args` with stdin from /dev/null and stdout / stderr into files under `dir`.
pid_t start(const std::vector<std::string>& args, const fs::path& dir) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, (dir / "stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, a[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

Proc finish(pid_t pid, const fs::path& dir, std::chrono::steady_clock::time_point t0) {
  Proc p;
  while (waitpid(pid, &p.status, 0) < 0 && errno == EINTR) {
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.out = test::read_text_file(dir / "stdout.txt");
  p.err = test::read_text_file(dir / "stderr.txt");
  return p;
}

// Runs `rocesim ARGS...`; output files go to `scratch`.
Proc cli(const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> a{kBinary};
  a.insert(a.end(), args.begin(), args.end());
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = start(a, scratch);
  if (pid < 0) return {};
  return finish(pid, scratch, t0);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : s) {
    if (c == '"')
      quoted = !quoted;
    else if (c == sep && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// results.csv as rows of column -> value.
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::istringstream in(test::read_text_file(p));
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  const auto head = split(line, ',');
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    std::map<std::string, std::string> r;
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) r[head[i]] = f[i];
    rows.push_back(r);
  }
  return rows;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

bool have_matplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib, numpy, pandas' >/dev/null 2>&1") == 0;
}

const std::vector<std::string> kRuns = {"scheme=dcqcn,seed=1", "scheme=dcqcn,seed=2", "scheme=none,seed=1",
                                        "scheme=none,seed=2"};

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Grid parsing and expansion

TEST(SweepGrid, ParsesKeysAndValuesInOrder) {
  const auto g = parse_grid({"scheme=dcqcn,none", "load=0.3, 0.5,0.7", "switch.buffer_bytes=16000000"});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].key, "scheme");
  EXPECT_EQ(g[0].values, (std::vector<std::string>{"dcqcn", "none"}));
  EXPECT_EQ(g[1].values, (std::vector<std::string>{"0.3", "0.5", "0.7"}));
  EXPECT_EQ(g[2].key, "switch.buffer_bytes");
}

TEST(SweepGrid, RejectsMalformedAxes) {
  EXPECT_THROW(parse_grid({"scheme"}), InputError);
  EXPECT_THROW(parse_grid({"=dcqcn"}), InputError);
  EXPECT_THROW(parse_grid({"scheme=dcqcn,,none"}), InputError);              // empty value
  EXPECT_THROW(parse_grid({"scheme=dcqcn,dcqcn"}), InputError);              // repeated value
  EXPECT_THROW(parse_grid({"seed=1", "seed=2"}), InputError);                // repeated key
  EXPECT_THROW(parse_grid({"scheme=none", "cc.scheme=dcqcn"}), InputError);  // the same key twice
  try {
    parse_grid({"load=0.3,"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("empty value"), std::string::npos) << e.what();
  }
}

TEST(SweepGrid, OverridesOfTheSpecialKeys) {
  EXPECT_EQ(grid_overrides("scheme", "hpcc", {}), (std::vector<std::string>{"cc.scheme=hpcc"}));
  EXPECT_EQ(grid_overrides("seed", "7", {}), (std::vector<std::string>{"seed=7"}));
  EXPECT_EQ(grid_overrides("switch.buffer_bytes", "1000", {}),
            (std::vector<std::string>{"switch.buffer_bytes=1000"}));
  EXPECT_EQ(grid_overrides("load", "0.5", {0, 2}),
            (std::vector<std::string>{"traffic[0].load=0.5", "traffic[2].load=0.5"}));
  EXPECT_THROW(grid_overrides("load", "0.5", {}), InputError);
}

TEST(SweepGrid, LoadSetsOnlyTablesThatHaveALoad) {
  const Scenario s = load_scenario_text(kTinyScenario, "tiny.toml");
  EXPECT_EQ(tables_with_load(s.resolved), (std::vector<size_t>{0}));  // the incast has no load
}

TEST(SweepGrid, ExpandsTheCartesianProductFirstAxisSlowest) {
  const auto pts = expand_grid(parse_grid({"scheme=dcqcn,none", "load=0.3,0.5,0.7", "seed=1,2"}), {0});
  ASSERT_EQ(pts.size(), 12u);
  EXPECT_EQ(pts[0].name, "scheme=dcqcn,load=0.3,seed=1");
  EXPECT_EQ(pts[1].name, "scheme=dcqcn,load=0.3,seed=2");
  EXPECT_EQ(pts[11].name, "scheme=none,load=0.7,seed=2");
  EXPECT_EQ(pts[11].sets, (std::vector<std::string>{"cc.scheme=none", "traffic[0].load=0.7", "seed=2"}));
  std::set<std::string> names;
  for (const auto& p : pts) names.insert(safe_dir_name(p.name));
  EXPECT_EQ(names.size(), 12u);
}

TEST(SweepGrid, DirectoryNamesAreFileSystemSafe) {
  EXPECT_EQ(safe_dir_name("scheme=dcqcn,load=0.5"), "scheme=dcqcn,load=0.5");
  EXPECT_EQ(safe_dir_name("traffic.workload=../x/y z"), "traffic.workload=.._x_y_z");
  EXPECT_EQ(safe_dir_name(".."), "_..");
  // Two values that differ only in unsafe characters would share a directory.
  EXPECT_THROW(expand_grid(parse_grid({"traffic[0].workload=a/b,a b"}), {}), InputError);
}

// ---------------------------------------------------------------------------------------------------------
// Progress line

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(format_duration(3.24), "3.2 s");
  EXPECT_EQ(format_duration(42), "42 s");
  EXPECT_EQ(format_duration(185), "3 m 05 s");
  EXPECT_EQ(format_duration(7620), "2 h 07 m");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(Progress, RunLineHasTimePercentWallEtaAndRate) {
  const ProgressSample now{2.0, Time::from_ms(1), 10'000'000, 0};
  const ProgressMeter meter(Time::from_ms(4));  // no work estimate: the ETA from simulated time
  const std::string t = run_progress_text(now, Time::from_ms(4), meter.estimate(now));
  EXPECT_NE(t.find("1.000 / 4.000 ms simulated"), std::string::npos) << t;
  EXPECT_NE(t.find("25.0 %"), std::string::npos) << t;
  EXPECT_NE(t.find("2.0 s wall"), std::string::npos) << t;
  EXPECT_NE(t.find("ETA 6.0 s"), std::string::npos) << t;
  EXPECT_NE(t.find("5.00 M events/s"), std::string::npos) << t;
}

TEST(Progress, StatusLineWaitsThrottlesAndClears) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  using C = StatusLine::Clock;
  {
    StatusLine line(f, true, 0.2, 1.0);
    const auto t0 = C::now();
    line.draw("early", t0 + std::chrono::milliseconds(500));  // before the 1 s delay: nothing
    line.draw("first", t0 + std::chrono::milliseconds(1100));
    line.draw("too soon", t0 + std::chrono::milliseconds(1200));  // within 0.2 s of the last
    line.draw("second", t0 + std::chrono::milliseconds(1400));
    line.clear();
  }
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  std::fclose(f);
  EXPECT_EQ(s.find("early"), std::string::npos);
  EXPECT_EQ(s.find("too soon"), std::string::npos);
  EXPECT_NE(s.find("\rfirst"), std::string::npos);
  EXPECT_NE(s.find("\rsecond"), std::string::npos);
  EXPECT_EQ(s.back(), '\r');  // cleared
}

TEST(Progress, InactiveLinePrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    StatusLine line(f, false, 0, 0);
    line.draw("x", StatusLine::Clock::now() + std::chrono::seconds(5), true);
    line.clear();
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

// Without a terminal, the first line comes after --progress-every (default 60 s): a shorter run prints none.
TEST(Progress, SilentWithoutATerminalBeforeTheFirstPeriod) {
  TempDir tmp("notty");
  write_file(tmp / "slow.toml", slow_scenario());
  const Proc p = cli({"run", (tmp / "slow.toml").string(), "-o", (tmp / "out").string()}, tmp.path());
  ASSERT_EQ(p.code(), 0) << p.describe();
  EXPECT_GT(p.seconds, 1.2)
      << "the run must outlast the terminal line's 1 s delay for this test to mean anything";
  EXPECT_LT(p.seconds, 60) << "the run must end before the first batch line for this test to mean anything";
  EXPECT_EQ(p.err, "") << "stderr is a file: no progress line within the first 60 s";
  EXPECT_NE(p.out.find("slowdown p50"), std::string::npos);  // the table is still printed
}

// Without a terminal (a batch job's log): a plain line every --progress-every seconds, of the form
// docs/user-guide.md gives; none with 0. The lines change nothing in the results, on one thread or two (the
// coordinator reads the counters between windows).
TEST(Progress, BatchLinesEveryPeriodWithoutATerminal) {
  TempDir tmp("batch");
  write_file(tmp / "slow.toml", slow_scenario());
  const std::string scenario = (tmp / "slow.toml").string();
  const std::regex form(
      R"(progress: \d+\.\d{3} / 50\.000 ms simulated \( *\d+\.\d %\), work +\d+\.\d %, [^,]+ wall, )"
      R"(ETA [^,]+, \d+\.\d\d M events/s)");
  auto progress_lines = [&](const Proc& p) {
    int n = 0;
    std::istringstream in(p.err);
    for (std::string line; std::getline(in, line);) {
      EXPECT_TRUE(std::regex_match(line, form)) << "not a progress line of the documented form: " << line;
      ++n;
    }
    return n;
  };
  const Proc none =
      cli({"run", scenario, "-o", (tmp / "none").string(), "--progress-every", "0"}, tmp.path());
  ASSERT_EQ(none.code(), 0) << none.describe();
  EXPECT_EQ(none.err, "") << "--progress-every 0: no line";
  for (const std::string threads : {"1", "2"}) {
    const fs::path out = tmp / ("lines" + threads);
    const Proc p = cli({"run", scenario, "-o", out.string(), "--progress-every", "0.2", "--threads", threads},
                       tmp.path());
    ASSERT_EQ(p.code(), 0) << p.describe();
    ASSERT_GT(p.seconds, 0.6) << "the run must outlast a few periods for this test to mean anything";
    EXPECT_GE(progress_lines(p), 1) << "threads " << threads << ": " << p.err;
    EXPECT_EQ(test::read_text_file(out / "flows.csv"), test::read_text_file(tmp / "none" / "flows.csv"))
        << "threads " << threads << ": the progress lines changed the results";
  }
}

TEST(Progress, DrawnOnATerminalAndNotWithQuiet) {
  TempDir tmp("tty");
  write_file(tmp / "slow.toml", slow_scenario());
  for (const bool quiet : {false, true}) {
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<std::string> a{kBinary, "run", (tmp / "slow.toml").string()};
      if (quiet) a.push_back("-q");
      std::vector<char*> argv;
      for (auto& s : a) argv.push_back(s.data());
      argv.push_back(nullptr);
      execv(kBinary.c_str(), argv.data());
      _exit(127);
    }
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(master);
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    if (quiet) {
      EXPECT_EQ(out.find("ms simulated"), std::string::npos) << out;
    } else {
      EXPECT_NE(out.find("ms simulated ("), std::string::npos) << out;
      EXPECT_NE(out.find("M events/s"), std::string::npos) << out;
      EXPECT_NE(out.find("ETA"), std::string::npos) << out;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Sweeps (subprocesses)

class SweepRun : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name());
    write_file(*tmp_ / "tiny.toml", kTinyScenario);
    out_ = *tmp_ / "sweep";
  }
  Proc sweep(std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"sweep",      (*tmp_ / "tiny.toml").string(),
                               "--grid",     "scheme=dcqcn,none",
                               "seed=1,2",   "-j",
                               "2",          "-o",
                               out_.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return cli(a, tmp_->path());
  }
  std::unique_ptr<TempDir> tmp_;
  fs::path out_;
};

TEST_F(SweepRun, RunsEveryPointAndWritesTidyResults) {
  const Proc p = sweep();
  ASSERT_EQ(p.code(), 0) << p.describe();
  for (const auto& r : kRuns) {
    EXPECT_TRUE(fs::exists(out_ / r / "summary.json")) << r;
    EXPECT_TRUE(fs::exists(out_ / r / "flows.csv")) << r;
    EXPECT_NE(p.out.find(r + " done in"), std::string::npos) << p.out;
  }
  EXPECT_EQ(count(p.out, " done in "), 4u) << p.out;
  EXPECT_FALSE(fs::exists(out_ / "logs")) << "logs of successful runs are removed";
  EXPECT_TRUE(fs::exists(out_ / "sweep.json"));
  EXPECT_EQ(p.err, "") << "stderr is not a terminal: no progress line";

  // Each run's grid values reached it.
  for (const auto& r : kRuns) {
    const auto j = nlohmann::json::parse(test::read_text_file(out_ / r / "summary.json"));
    EXPECT_EQ(j["scheme"].get<std::string>(), r.substr(7, r.find(',') - 7)) << r;
    EXPECT_EQ(j["seed"].get<uint64_t>(), r.back() == '1' ? 1u : 2u) << r;
  }

  // results.csv: one row per run x bucket plus one "all" row per run, grid values as columns, then one
  // row per traffic class with finished flows (class column; bucket "all").
  const auto all_rows_csv = read_csv(out_ / "results.csv");
  std::vector<std::map<std::string, std::string>> rows, class_rows;
  for (const auto& r : all_rows_csv) (r.at("class") == "all" ? rows : class_rows).push_back(r);
  const auto j0 = nlohmann::json::parse(test::read_text_file(out_ / kRuns[0] / "summary.json"));
  const size_t buckets = j0["fct"]["buckets"].size();
  ASSERT_GT(buckets, 0u);
  ASSERT_EQ(rows.size(), 4 * (buckets + 1));
  ASSERT_EQ(class_rows.size(), 4 * 2u) << "default (hadoop) and incast in each run";
  for (const auto& r : class_rows) {
    EXPECT_EQ(r.at("bucket"), "all");
    const auto j = nlohmann::json::parse(test::read_text_file(out_ / r.at("run") / "summary.json"));
    const auto& c = j["fct"]["classes"][r.at("class")];
    EXPECT_EQ(std::stoull(r.at("count")), c["count"].get<uint64_t>()) << r.at("run") << " " << r.at("class");
    EXPECT_DOUBLE_EQ(std::stod(r.at("slowdown_p99")), c["slowdown"]["p99"].get<double>());
  }
  std::map<std::string, int> per_run, all_rows;
  for (const auto& r : rows) {
    for (const char* col :
         {"scheme",         "seed",         "load",         "run",          "bucket",        "class",
          "count",          "fct_avg_us",   "fct_p50_us",   "fct_p95_us",   "fct_p99_us",    "fct_p999_us",
          "slowdown_avg",   "slowdown_p50", "slowdown_p95", "slowdown_p99", "slowdown_p999", "pauses",
          "paused_time_us", "cnps",         "drops",        "wall_seconds"})
      EXPECT_TRUE(r.count(col)) << col;
    EXPECT_EQ(r.at("run"), "scheme=" + r.at("scheme") + ",seed=" + r.at("seed"));
    EXPECT_EQ(r.at("load"), "0.5");  // not a grid key: read from the run's resolved scenario
    ++per_run[r.at("run")];
    if (r.at("bucket") == "all") {
      ++all_rows[r.at("run")];
      const auto j = nlohmann::json::parse(test::read_text_file(out_ / r.at("run") / "summary.json"));
      EXPECT_EQ(std::stoull(r.at("count")), j["fct"]["count"].get<uint64_t>());
      EXPECT_DOUBLE_EQ(std::stod(r.at("fct_p99_us")), j["fct"]["fct_us"]["p99"].get<double>());
      EXPECT_EQ(std::stoull(r.at("pauses")), j["pfc"]["pauses_sent"].get<uint64_t>());
      EXPECT_EQ(std::stoull(r.at("cnps")),
                j["cnp"]["sent_by_receivers"].get<uint64_t>() + j["cnp"]["sent_by_switches"].get<uint64_t>());
    }
  }
  for (const auto& r : kRuns) {
    EXPECT_EQ(per_run[r], static_cast<int>(buckets + 1)) << r;
    EXPECT_EQ(all_rows[r], 1) << r;
  }
  // CNPs only with DCQCN.
  for (const auto& r : rows)
    if (r.at("scheme") == "none") {
      EXPECT_EQ(r.at("cnps"), "0");
    }
}

// results.csv's drops column is every kind of summary.json's drops, losses on failed links included (it once
// summed a fixed list that left link_failure out, so a sweep with link failures showed 0 there).
TEST_F(SweepRun, DropsColumnCountsEveryKindOfDrop) {
  const std::string scenario = std::string(ROCESIM_SCENARIO_DIR) + "/multipath/link_failure.toml";
  const Proc p = cli({"sweep", scenario, "--grid", "seed=1", "-o", out_.string()}, tmp_->path());
  ASSERT_EQ(p.code(), 0) << p.describe();
  const auto j = nlohmann::json::parse(test::read_text_file(out_ / "seed=1" / "summary.json"));
  ASSERT_GT(j["drops"]["link_failure"].get<uint64_t>(), 0u);
  uint64_t all = 0;
  for (const auto& [_, v] : j["drops"].items()) all += v.get<uint64_t>();
  const auto rows = read_csv(out_ / "results.csv");
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_EQ(std::stoull(r.at("drops")), all) << r.at("bucket");
}

// -j x --threads stays within the cores (and says so); the runs' results do not depend on their threads.
TEST_F(SweepRun, ThreadsKeepJobsTimesThreadsWithinTheCoresAndChangeNoResult) {
  const Proc plain = sweep();
  ASSERT_EQ(plain.code(), 0) << plain.describe();
  // results.csv less its wall times
  auto results_of = [](const fs::path& dir) {
    auto rows = read_csv(dir / "results.csv");
    for (auto& r : rows) r.erase("wall_seconds");
    return rows;
  };
  const auto results = results_of(out_);
  ASSERT_FALSE(results.empty());
  const fs::path threaded = *tmp_ / "threaded";
  const Proc p = cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "scheme=dcqcn,none", "seed=1,2",
                      "-j", "1024", "--threads", "2", "-o", threaded.string()},
                     tmp_->path());
  ASSERT_EQ(p.code(), 0) << p.describe();
  EXPECT_NE(p.err.find("note: -j 1024 x --threads 2 is more than this machine's"), std::string::npos)
      << p.err;
  EXPECT_EQ(results_of(threaded), results);
  const auto j = nlohmann::json::parse(test::read_text_file(threaded / kRuns[0] / "summary.json"));
  EXPECT_EQ(j["performance"]["parallel"]["threads"].get<int>(), 2);
}

// Threads left out (docs/parallel.md, "Threads by default"): a run of a fabric with 1,000 ports and nodes or
// more takes every core, a small one one thread, and a sweep of -j 2 gives each run one thread; a sweep of
// -j 1 leaves the choice to its run.
TEST_F(SweepRun, ThreadsLeftOutFollowTheFabricsSizeAndTheSweepsJobs) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // ctest sets ROCESIM_THREADS=1 (CMakeLists.txt): the choice is tested without it, and with it at the end.
  const char* env = std::getenv("ROCESIM_THREADS");
  const std::string saved = env ? env : "";
  ::unsetenv("ROCESIM_THREADS");
  // 16 leaves x 32 hosts, 4 spines: 532 nodes and 1,152 ports; one small flow.
  write_file(*tmp_ / "wide.toml", R"(name = "wide"
duration_ms = 1

[topology]
kind = "leaf_spine"
leaves = 16
spines = 4
hosts_per_leaf = 32

[[flows]]
src = "h0"
dst = "h511"
size_bytes = 10000
)");
  auto threads_of = [](const fs::path& run) {
    return nlohmann::json::parse(
               test::read_text_file(run / "summary.json"))["performance"]["parallel"]["threads"]
        .get<int>();
  };
  const Proc wide =
      cli({"run", (*tmp_ / "wide.toml").string(), "-q", "-o", (*tmp_ / "w").string()}, tmp_->path());
  ASSERT_EQ(wide.code(), 0) << wide.describe();
  EXPECT_EQ(threads_of(*tmp_ / "w"), cores);
  EXPECT_EQ(test::read_text_file(*tmp_ / "w" / "scenario.resolved.toml").find("\nthreads ="),
            std::string::npos)
      << "a value left out stays out of the resolved file, which then chooses the same way";
  const Proc small =
      cli({"run", (*tmp_ / "tiny.toml").string(), "-q", "-o", (*tmp_ / "s").string()}, tmp_->path());
  ASSERT_EQ(small.code(), 0) << small.describe();
  EXPECT_EQ(threads_of(*tmp_ / "s"), 1);

  const fs::path two = *tmp_ / "two", one = *tmp_ / "one";
  for (const auto& [dir, jobs] : {std::pair{two, "2"}, std::pair{one, "1"}}) {
    const Proc p = cli(
        {"sweep", (*tmp_ / "wide.toml").string(), "--grid", "seed=1,2", "-j", jobs, "-o", dir.string(), "-q"},
        tmp_->path());
    ASSERT_EQ(p.code(), 0) << p.describe();
  }
  EXPECT_EQ(threads_of(two / "seed=1"), 1);
  EXPECT_EQ(threads_of(one / "seed=1"), cores);
  // --threads 1, said, holds with -j 1 too.
  const fs::path said = *tmp_ / "said";
  const Proc p1 = cli({"sweep", (*tmp_ / "wide.toml").string(), "--grid", "seed=1", "-j", "1", "--threads",
                       "1", "-o", said.string(), "-q"},
                      tmp_->path());
  ASSERT_EQ(p1.code(), 0) << p1.describe();
  EXPECT_EQ(threads_of(said / "seed=1"), 1);
  // A grid over threads still names them.
  const fs::path grid = *tmp_ / "grid";
  const Proc g = cli(
      {"sweep", (*tmp_ / "wide.toml").string(), "--grid", "threads=2", "-j", "2", "-o", grid.string(), "-q"},
      tmp_->path());
  ASSERT_EQ(g.code(), 0) << g.describe();
  EXPECT_EQ(threads_of(grid / "threads=2"), 2);

  // $ROCESIM_THREADS names the count for runs that leave it out, and a bad value is refused by name.
  ::setenv("ROCESIM_THREADS", "2", 1);
  const Proc e =
      cli({"run", (*tmp_ / "tiny.toml").string(), "-q", "-o", (*tmp_ / "e").string()}, tmp_->path());
  ASSERT_EQ(e.code(), 0) << e.describe();
  EXPECT_EQ(threads_of(*tmp_ / "e"), 2);
  ::setenv("ROCESIM_THREADS", "two", 1);
  const Proc bad =
      cli({"run", (*tmp_ / "tiny.toml").string(), "-q", "-o", (*tmp_ / "b").string()}, tmp_->path());
  EXPECT_NE(bad.code(), 0);
  EXPECT_NE(bad.err.find("ROCESIM_THREADS: 'two': expected an integer in [0, 1024]"), std::string::npos)
      << bad.err;
  EXPECT_FALSE(fs::exists(*tmp_ / "b"));
  if (env)
    ::setenv("ROCESIM_THREADS", saved.c_str(), 1);
  else
    ::unsetenv("ROCESIM_THREADS");
}

// `sweep --mpi` under mpirun (app/mpi_sweep.h), 3 ranks oversubscribed on this machine. Open MPI is
// optional: without it in this build or on this machine the tests say so and skip.
using rocesim::test::mpi_missing;

// mpirun's words (tests/mpi_util.h), then this rocesim.
std::vector<std::string> mpirun(int ranks) {
  std::istringstream words(rocesim::test::mpirun_command(ranks));
  std::vector<std::string> a;
  for (std::string w; words >> w;) a.push_back(w);
  a.push_back(kBinary);
  return a;
}

TEST_F(SweepRun, MpiSweepEqualsTheLocalSweepAndResumes) {
  if (const std::string why = mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  const Proc local = sweep();
  ASSERT_EQ(local.code(), 0) << local.describe();
  const fs::path dir = *tmp_ / "mpi";
  std::vector<std::string> a = mpirun(3);
  for (const std::string x : {"sweep", "", "--grid", "scheme=dcqcn,none", "seed=1,2", "--mpi", "-o", ""})
    a.push_back(x);
  a[a.size() - 7] = (*tmp_ / "tiny.toml").string();
  a.back() = dir.string();
  const auto t0 = std::chrono::steady_clock::now();
  const Proc p = finish(start(a, tmp_->path()), tmp_->path(), t0);
  ASSERT_EQ(p.code(), 0) << p.describe();
  EXPECT_EQ(count(p.out, " done in "), 4u) << p.out;
  EXPECT_NE(p.out.find("4 runs to do (0 skipped), 2 at once"), std::string::npos) << p.out;  // ranks 1 and 2
  auto results_of = [](const fs::path& d) {
    auto rows = read_csv(d / "results.csv");
    for (auto& r : rows) r.erase("wall_seconds");
    return rows;
  };
  EXPECT_EQ(results_of(dir), results_of(out_));
  for (const auto& r : kRuns) EXPECT_TRUE(fs::exists(dir / r / "summary.json")) << r;
  // Again: every run is complete, none runs.
  const Proc again = finish(start(a, tmp_->path()), tmp_->path(), t0);
  ASSERT_EQ(again.code(), 0) << again.describe();
  EXPECT_EQ(count(again.out, "skipped (already complete)"), 4u) << again.out;
  EXPECT_EQ(results_of(dir), results_of(out_));
}

TEST_F(SweepRun, MpiFailingRunIsNamedAndTheOthersFinish) {
  if (const std::string why = mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  std::vector<std::string> a = mpirun(2);
  for (const std::string& x :
       {std::string("sweep"), (*tmp_ / "tiny.toml").string(), std::string("--grid"),
        std::string("scheme=dcqcn,nonexistent"), std::string("--mpi"), std::string("-o"), out_.string()})
    a.push_back(x);
  const Proc p = finish(start(a, tmp_->path()), tmp_->path(), std::chrono::steady_clock::now());
  EXPECT_NE(p.code(), 0) << p.describe();
  EXPECT_NE(p.err.find("scheme=nonexistent FAILED (exit status 2)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("1 of 2 runs failed"), std::string::npos) << p.err;
  EXPECT_TRUE(fs::exists(out_ / "scheme=dcqcn" / "summary.json"));
}

// The pid of a process whose command line holds every one of `parts`, or -1.
pid_t find_process(const std::vector<std::string>& parts) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmd = test::read_text_file(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    bool all = true;
    for (const auto& p : parts) all = all && cmd.find(p) != std::string::npos;
    if (all) return static_cast<pid_t>(std::stoi(name));
  }
  return -1;
}

pid_t parent_of(pid_t pid) {
  std::istringstream in(test::read_text_file(fs::path("/proc") / std::to_string(pid) / "stat"));
  std::string field;
  for (int i = 0; i < 4 && in >> field; ++i) {
  }
  return static_cast<pid_t>(std::stoi(field));
}

// A rank that dies (here: killed with its run, as when its machine fails) fails only its run, which the
// summary names; the sweep finishes the others. Open MPI keeps the job only with orte_enable_recovery.
TEST_F(SweepRun, MpiLostRankFailsOnlyItsRun) {
  if (const std::string why = mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  write_file(*tmp_ / "slow.toml", slow_scenario());
  std::vector<std::string> a = mpirun(3);
  a.insert(a.begin() + 1, {"--mca", "orte_enable_recovery", "1"});
  for (const std::string& x :
       {std::string("sweep"), (*tmp_ / "slow.toml").string(), std::string("--grid"),
        std::string("traffic[0].stop_us=100,40000"), std::string("--set"), std::string("duration_ms=200"),
        std::string("--mpi"), std::string("--rank-timeout"), std::string("3"), std::string("-o"),
        out_.string()})
    a.push_back(x);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t job = start(a, tmp_->path());
  ASSERT_GT(job, 0);
  pid_t run = -1;
  for (int i = 0; i < 600 && run < 0; ++i) {
    run = find_process({" run ", (*tmp_ / "slow.toml").string(), "stop_us=40000"});
    if (run < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(run, 0) << "the long run never started";
  const pid_t rank = parent_of(run);
  ::kill(rank, SIGKILL);
  ::kill(run, SIGKILL);
  const Proc p = finish(job, tmp_->path(), t0);
  // (mpirun's own exit status under orte_enable_recovery is 0 whatever rank 0 returns: not checked.)
  EXPECT_NE(p.err.find("traffic[0].stop_us=40000 FAILED (its rank was lost: not heard from for 3 s"),
            std::string::npos)
      << p.describe();
  EXPECT_NE(p.err.find("1 of 2 runs failed"), std::string::npos) << p.describe();
  EXPECT_TRUE(fs::exists(out_ / "traffic_0_.stop_us=100" / "summary.json")) << p.describe();
  for (const auto& row : read_csv(out_ / "results.csv")) EXPECT_EQ(row.at("traffic[0].stop_us"), "100");
}

TEST_F(SweepRun, ResumesSkippingCompleteRunsAndRedoesADeletedOne) {
  ASSERT_EQ(sweep().code(), 0);
  const std::string results = test::read_text_file(out_ / "results.csv");
  std::map<std::string, fs::file_time_type> mtime;
  for (const auto& r : kRuns) mtime[r] = fs::last_write_time(out_ / r / "summary.json");

  const Proc again = sweep();
  ASSERT_EQ(again.code(), 0) << again.describe();
  EXPECT_EQ(count(again.out, "skipped"), 5u) << again.out;  // four runs, plus the summary line
  EXPECT_EQ(count(again.out, " done in "), 0u) << again.out;
  EXPECT_LT(again.seconds, 2.0);
  EXPECT_EQ(test::read_text_file(out_ / "results.csv"), results);
  for (const auto& r : kRuns) EXPECT_EQ(fs::last_write_time(out_ / r / "summary.json"), mtime[r]) << r;

  // Deleting one summary.json makes that run (only) incomplete: it is run again, in place.
  fs::remove(out_ / kRuns[2] / "summary.json");
  const Proc redo = sweep();
  ASSERT_EQ(redo.code(), 0) << redo.describe();
  EXPECT_EQ(count(redo.out, " done in "), 1u) << redo.out;
  EXPECT_NE(redo.out.find(kRuns[2] + " done in"), std::string::npos) << redo.out;
  EXPECT_EQ(count(redo.out, "skipped (already complete)"), 3u) << redo.out;
  EXPECT_TRUE(fs::exists(out_ / kRuns[2] / "summary.json"));
  for (const auto& r : kRuns)
    if (r != kRuns[2]) {
      EXPECT_EQ(fs::last_write_time(out_ / r / "summary.json"), mtime[r]) << r;
    }
  // Deterministic: the same results as before but for the re-run's wall time.
  const auto strip = [](const std::string& csv) {  // less the wall_seconds column
    std::string out;
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    const auto head = split(line, ',');
    const auto wall = std::find(head.begin(), head.end(), "wall_seconds") - head.begin();
    for (in.seekg(0); std::getline(in, line);) {
      auto f = split(line, ',');
      f.erase(f.begin() + wall);
      for (const auto& x : f) out += x + ",";
      out += "\n";
    }
    return out;
  };
  EXPECT_EQ(strip(test::read_text_file(out_ / "results.csv")), strip(results));

  // --force re-runs everything.
  const Proc forced = sweep({"--force"});
  ASSERT_EQ(forced.code(), 0) << forced.describe();
  EXPECT_EQ(count(forced.out, " done in "), 4u) << forced.out;
}

// A run a check stopped (exit 3, "stopped" in summary.json) is not complete: a resumed sweep runs it again
// (it was skipped as complete), and results.csv leaves it out.
TEST_F(SweepRun, ResumeRedoesARunStoppedByACheck) {
  ASSERT_EQ(sweep().code(), 0);
  const fs::path summary = out_ / kRuns[1] / "summary.json";
  auto j = nlohmann::json::parse(test::read_text_file(summary));
  j["stopped"] = {{"reason", "deadlock"}, {"time_us", 1.0}, {"message", "a PFC cycle"}};
  write_file(summary, j.dump(2));
  const Proc again = sweep();
  ASSERT_EQ(again.code(), 0) << again.describe();
  EXPECT_EQ(count(again.out, "skipped (already complete)"), 3u) << again.out;
  EXPECT_NE(again.out.find(kRuns[1] + " done in"), std::string::npos) << again.out;
  EXPECT_FALSE(nlohmann::json::parse(test::read_text_file(summary)).contains("stopped"));
}

TEST_F(SweepRun, AFailingGridValueIsReportedAndTheOthersFinish) {
  const Proc p = cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "scheme=dcqcn,nonexistent", "-j",
                      "2", "-o", out_.string()},
                     tmp_->path());
  EXPECT_EQ(p.code(), 1) << p.describe();
  EXPECT_NE(p.err.find("scheme=nonexistent FAILED (exit status 2)"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("'nonexistent' is not one of"), std::string::npos) << p.err;  // the run's stderr tail
  EXPECT_NE(p.err.find("1 of 2 runs failed"), std::string::npos) << p.err;
  EXPECT_TRUE(fs::exists(out_ / "scheme=dcqcn" / "summary.json"));
  EXPECT_FALSE(fs::exists(out_ / "scheme=nonexistent"));
  EXPECT_TRUE(fs::exists(out_ / "logs" / "scheme=nonexistent.log"));
  const auto rows = read_csv(out_ / "results.csv");
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_EQ(r.at("scheme"), "dcqcn");
}

TEST_F(SweepRun, BadInputIsRejectedBeforeAnyRun) {
  // A malformed grid.
  Proc p =
      cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "scheme", "-o", out_.string()}, tmp_->path());
  EXPECT_EQ(p.code(), 2) << p.describe();
  EXPECT_NE(p.err.find("expected KEY=V1,V2"), std::string::npos) << p.err;
  // A scenario error.
  p = cli({"sweep", (*tmp_ / "nope.toml").string(), "--grid", "seed=1", "-o", out_.string()}, tmp_->path());
  EXPECT_EQ(p.code(), 2) << p.describe();
  EXPECT_NE(p.err.find("cannot open"), std::string::npos) << p.err;
  // A directory that is not a sweep directory.
  fs::create_directories(*tmp_ / "precious");
  write_file(*tmp_ / "precious" / "notes.txt", "keep me");
  p = cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "seed=1", "-o", (*tmp_ / "precious").string()},
          tmp_->path());
  EXPECT_EQ(p.code(), 2) << p.describe();
  EXPECT_NE(p.err.find("holds no rocesim sweep"), std::string::npos) << p.err;
  EXPECT_EQ(test::read_text_file(*tmp_ / "precious" / "notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(SweepRun, RefusesToMixRunsOfDifferentSettings) {
  ASSERT_EQ(
      cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "seed=1", "-o", out_.string()}, tmp_->path())
          .code(),
      0);
  const Proc p = cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "seed=1", "--set",
                      "switch.buffer_bytes=4000000", "-o", out_.string()},
                     tmp_->path());
  EXPECT_EQ(p.code(), 2) << p.describe();
  EXPECT_NE(p.err.find("other --set values"), std::string::npos) << p.err;
  // Extending the grid is fine: the new point runs, the old one is skipped.
  const Proc more =
      cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "seed=1,2", "-o", out_.string()}, tmp_->path());
  ASSERT_EQ(more.code(), 0) << more.describe();
  EXPECT_NE(more.out.find("seed=1 skipped"), std::string::npos) << more.out;
  EXPECT_NE(more.out.find("seed=2 done in"), std::string::npos) << more.out;
}

TEST_F(SweepRun, InterruptStopsTheRunsAndLeavesNoPartialDirectories) {
  write_file(*tmp_ / "slow.toml", slow_scenario());
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = start({kBinary, "sweep", (*tmp_ / "slow.toml").string(), "--grid", "seed=1,2", "-j", "2",
                           "-o", out_.string()},
                          tmp_->path());
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, SIGINT);
  const Proc p = finish(pid, tmp_->path(), t0);
  EXPECT_EQ(p.code(), 130) << p.describe();
  EXPECT_NE(p.err.find("interrupted"), std::string::npos) << p.err;
  for (const auto& e : fs::directory_iterator(out_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  EXPECT_FALSE(fs::exists(out_ / "logs" / "seed=1.log"));
  // Resuming finishes the sweep.
  const Proc resumed =
      cli({"sweep", (*tmp_ / "slow.toml").string(), "--grid", "seed=1,2", "-j", "2", "-o", out_.string()},
          tmp_->path());
  ASSERT_EQ(resumed.code(), 0) << resumed.describe();
  for (const char* r : {"seed=1", "seed=2"}) EXPECT_TRUE(fs::exists(out_ / r / "summary.json")) << r;
}

// ---------------------------------------------------------------------------------------------------------
// Report

TEST_F(SweepRun, ReportOnASweepEmbedsEveryFigure) {
  if (!have_matplotlib())
    GTEST_SKIP() << "/usr/bin/python3 with matplotlib, numpy and pandas is not installed";
  ASSERT_EQ(cli({"sweep", (*tmp_ / "tiny.toml").string(), "--grid", "scheme=dcqcn,none", "load=0.3,0.6", "-j",
                 "2", "-o", out_.string()},
                tmp_->path())
                .code(),
            0);
  const Proc p = cli({"report", out_.string()}, tmp_->path());
  ASSERT_EQ(p.code(), 0) << p.describe();
  const fs::path html = out_ / "report.html";
  EXPECT_NE(p.out.find(fs::absolute(html).string()), std::string::npos) << p.out;
  const std::string page = test::read_text_file(html);
  EXPECT_GE(count(page, "<img src=\"data:image/png;base64,"), 6u);
  for (const char* caption : {"FCT slowdown vs flow size, load 0.3", "FCT slowdown vs flow size, load 0.6",
                              "FCT vs load", "Rates and queue over time", "PFC pauses per scheme",
                              "Switch buffer occupancy CDF", "Summary by scheme and load"})
    EXPECT_NE(page.find(caption), std::string::npos) << caption;
  EXPECT_EQ(page.find("src=\"figures/"), std::string::npos) << "self-contained: no links to files";
  for (const char* png :
       {"slowdown_vs_size_0.png", "fct_vs_load.png", "timeseries.png", "pfc.png", "buffer_cdf.png"})
    EXPECT_TRUE(fs::exists(out_ / "figures" / png)) << png;
}

TEST_F(SweepRun, ReportOnARunAndOnNothing) {
  if (!have_matplotlib())
    GTEST_SKIP() << "/usr/bin/python3 with matplotlib, numpy and pandas is not installed";
  const fs::path run = *tmp_ / "run";
  ASSERT_EQ(cli({"run", (*tmp_ / "tiny.toml").string(), "-q", "-o", run.string(), "--set", "cc.scheme=none"},
                tmp_->path())
                .code(),
            0);
  const Proc p = cli({"report", run.string(), "-q"}, tmp_->path());
  ASSERT_EQ(p.code(), 0) << p.describe();
  EXPECT_EQ(p.out, fs::absolute(run / "report.html").string() + "\n");
  const std::string page = test::read_text_file(run / "report.html");
  EXPECT_GE(count(page, "<img src=\"data:image/png;base64,"), 2u);
  for (const char* caption : {"FCT slowdown vs flow size", "Flow completion times by flow size", "Counters"})
    EXPECT_NE(page.find(caption), std::string::npos) << caption;

  fs::create_directories(*tmp_ / "empty");
  const Proc bad = cli({"report", (*tmp_ / "empty").string()}, tmp_->path());
  EXPECT_EQ(bad.code(), 2) << bad.describe();
  EXPECT_NE(bad.err.find("holds neither a run"), std::string::npos) << bad.err;
}

TEST(Tools, PythonUnitTests) {
  if (!have_matplotlib())
    GTEST_SKIP() << "/usr/bin/python3 with matplotlib, numpy and pandas is not installed";
  // The Python package and tools (python/, tools/) run this build's program; what they test is Python, so
  // the Release pass runs them and the sanitizer builds skip them.
  if (std::getenv("ROCESIM_SANITIZED")) GTEST_SKIP() << "Python tests; the Release run has them";
  const std::string cmd = "ROCESIM_BIN=" + std::string(ROCESIM_BINARY) + " /usr/bin/python3 " +
                          std::string(ROCESIM_TEST_DIR) + "/tools/tools_test.py 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  const int st = pclose(f);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
}
