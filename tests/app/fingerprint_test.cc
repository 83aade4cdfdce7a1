// Fingerprints: small runs of every scheme and of one scenario per seed paper, each reduced to its event
// count, a hash of flows.csv and a hash of the other outputs (summary.json less its timings, and every
// other CSV: queues, rates, PFC events, ...). The expected values live in
// tests/data/fingerprints.txt. A change that moves them fails here: either it has a bug, or it changes
// results on purpose and updates the file deliberately (the failure message says how), naming in the
// commit which cases moved and why. A change that only moves the event count (a faster engine with
// fewer events per hop) leaves the result hashes as they are.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "file_util.h"
#include "fmt/format.h"
#include "mpi_util.h"

namespace {

using rocesim::test::mpi_missing;
using rocesim::test::mpirun_command;
using rocesim::test::read_text_file;

namespace fs = std::filesystem;

const std::string kBinary = ROCESIM_BINARY;
const fs::path kFile = fs::path(ROCESIM_TEST_DIR) / "data" / "fingerprints.txt";

struct Case {
  const char* name;
  const char* args;  // after `rocesim run`
};

// Every scheme, the demo, the ns-3 simulator's fat-tree, a PFC-heavy incast, one scenario of each seed
// paper and a lossy incast under both loss recoveries, each cut short so that the set runs in seconds in
// Release.
const Case kCases[] = {
    {"demo", "demo --set duration_ms=0.6 --set traffic[0].stop_us=200"},
    // A PFC-heavy incast: 24 senders of 200 KB onto one host every 100 us.
    {"none_incast",
     "examples/incast_burst --set cc.scheme=none --set duration_ms=0.6 --set traffic[1].fan_in=24 "
     "--set traffic[1].size_bytes=200000"},
    {"dcqcn_incast",
     "examples/incast_burst --set duration_ms=0.6 --set traffic[1].fan_in=24 --set "
     "traffic[1].size_bytes=200000"},
    // The same incast with every flow's DCQCN state traced at each reaction ([monitors] cc_state): the
    // results and events of dcqcn_incast (FingerprintFile.TracingChangesNoResult), cc_state.csv the same
    // bytes over threads and ranks.
    {"dcqcn_incast_cc_state",
     "examples/incast_burst --set duration_ms=0.6 --set traffic[1].fan_in=24 --set "
     "traffic[1].size_bytes=200000 --set monitors.cc_state.flows=all --set monitors.cc_state.period_us=0"},
    {"dcqcn_victim_burst", "examples/victim_burst --set duration_ms=0.8"},
    {"dctcp", "baselines/dctcp --set duration_ms=0.5 --set traffic[0].stop_us=150"},
    {"timely", "baselines/timely --set duration_ms=0.5 --set traffic[0].stop_us=150"},
    {"hpcc", "baselines/hpcc --set duration_ms=0.5 --set traffic[0].stop_us=150"},
    {"pcn", "baselines/pcn --set duration_ms=0.5 --set traffic[0].stop_us=150"},
    {"pacc", "baselines/pacc --set duration_ms=0.5 --set traffic[0].stop_us=150"},
    {"hpcc_sim_fat_tree",
     "demo --profile hpcc-sim --set duration_ms=0.5 --set traffic[0].stop_us=150 --set traffic[0].load=0.5"},
    {"mercury_victim",
     "mercury/victim --set duration_ms=0.6 --set traffic[1].start_us=200 --set traffic[1].stop_us=400"},
    {"mercury_incast_burst", "mercury/incast_burst --set duration_ms=0.5 --set traffic[1].start_us=200"},
    {"tcd_victim_40g",
     "tcd/victim_40g --set duration_ms=0.6 --set traffic[1].start_us=200 --set traffic[1].stop_us=400"},
    {"tcd_cbfc", "tcd/cbfc --set duration_ms=0.6 --set traffic[1].start_us=200 --set traffic[1].stop_us=400"},
    {"icc_burst", "icc/burst --set duration_ms=0.6"},
    {"rcm_incast_burst", "rcm/incast_burst --set duration_ms=0.3"},
    {"rcm_victim", "rcm/victim --set duration_ms=0.4"},
    {"lscc_fairness", "lscc/fairness --set duration_ms=2"},
    {"hpcc_star_fairness", "lscc/fairness --set cc.scheme=hpcc_star --set duration_ms=2"},
    {"swing_fairness",
     "lscc/fairness --set cc.scheme=swing --set duration_ms=2 --set switch.buffer_bytes=120000000"},
    // Lossy RoCE (PFC off, a 2 MB buffer): the incast under go-back-N and under selective repeat.
    {"lossy_incast_go_back_n",
     "examples/incast_burst --set duration_ms=0.6 --set traffic[1].fan_in=24 --set "
     "traffic[1].size_bytes=200000 "
     "--set switch.flow_control=none --set switch.buffer_bytes=2000000 --set output.transport_columns=true"},
    {"lossy_incast_selective",
     "examples/incast_burst --set duration_ms=0.6 --set traffic[1].fan_in=24 --set "
     "traffic[1].size_bytes=200000 "
     "--set switch.flow_control=none --set switch.buffer_bytes=2000000 --set nic.loss_recovery=selective"},
    // Routing beside the scheme (net/path_select.h): per-packet spraying with selective repeat on a lossy
    // fabric, and adaptive routing under PFC.
    {"spray_selective",
     "multipath/lossy_websearch --set switch.routing=spray --set nic.loss_recovery=selective --set "
     "duration_ms=1 --set traffic[0].stop_us=200"},
    // A spine link failing and coming back (net/link_events.h) during a permutation.
    {"link_failure", "multipath/link_failure"},
    {"adaptive_pfc",
     "multipath/lossy_websearch --set switch.routing=adaptive --set switch.flow_control=pfc --set "
     "duration_ms=1 --set traffic[0].stop_us=300"},
};

// FNV-1a, 64 bits: a hash whose value is fixed by its definition, so stored values stay valid across
// compilers and standard libraries.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

struct Fingerprint {
  uint64_t events = 0;
  uint64_t flows_hash = 0;
  uint64_t outputs_hash = 0;
  bool operator==(const Fingerprint&) const = default;
};

std::string to_line(const std::string& name, const Fingerprint& f) {
  return fmt::format("{} {} {:016x} {:016x}", name, f.events, f.flows_hash, f.outputs_hash);
}

std::map<std::string, Fingerprint> read_stored() {
  std::map<std::string, Fingerprint> m;
  std::ifstream in(kFile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    std::string name, fh, sh;
    Fingerprint f;
    if (is >> name >> f.events >> fh >> sh) {
      f.flows_hash = std::stoull(fh, nullptr, 16);
      f.outputs_hash = std::stoull(sh, nullptr, 16);
      m[name] = f;
    }
  }
  return m;
}

void write_stored(const std::map<std::string, Fingerprint>& m) {
  std::ofstream out(kFile, std::ios::trunc);
  out << "# Fingerprints of tests/app/fingerprint_test.cc: case, events executed, FNV-1a 64 of flows.csv, "
         "FNV-1a "
         "64\n"
         "# of summary.json less its timings followed by the other CSVs. Update only deliberately (see the\n"
         "# test's failure message).\n";
  for (const auto& [name, f] : m) out << to_line(name, f) << "\n";
}

// Runs a case (with `extra` arguments, under `launcher` such as mpirun) and fingerprints its result
// directory.
Fingerprint run_case(const Case& c, std::string& error, const std::string& extra = "",
                     const std::string& launcher = "") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("rocesim_fp_{}_{}", c.name, ::getpid());
  fs::remove_all(dir);
  const std::string cmd = fmt::format("{} '{}' run {} {} -o '{}' 2>&1 </dev/null", launcher, kBinary, c.args,
                                      extra, dir.string());
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  char buf[4096];
  while (f && fgets(buf, sizeof buf, f)) out += buf;
  const int rc = f ? pclose(f) : -1;
  Fingerprint fp;
  if (rc != 0 || !fs::exists(dir / "summary.json")) {
    error = fmt::format("`rocesim run {}` failed (status {}):\n{}", c.args, rc, out);
    fs::remove_all(dir);
    return fp;
  }
  nlohmann::json j = nlohmann::json::parse(read_text_file(dir / "summary.json"));
  fp.events = j["performance"]["events"].get<uint64_t>();
  // Timings and memory differ from run to run; the event count is kept apart (see the file's comment).
  j.erase("performance");
  fp.flows_hash = fnv1a(read_text_file(dir / "flows.csv"));
  // summary.json less timings, then every other CSV the run wrote (monitors: queues, rates, PFC events, ...)
  // in name order.
  std::string rest = j.dump(1);
  std::vector<fs::path> csvs;
  for (const auto& e : fs::directory_iterator(dir))
    if ((e.path().extension() == ".csv" && e.path().filename() != "flows.csv") ||
        e.path().filename() == "fct.txt")
      csvs.push_back(e.path());
  std::sort(csvs.begin(), csvs.end());
  for (const fs::path& p : csvs) rest += "\n" + p.filename().string() + "\n" + read_text_file(p);
  fp.outputs_hash = fnv1a(rest);
  fs::remove_all(dir);
  return fp;
}

// Test names show the case's name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Fingerprints : public ::testing::TestWithParam<Case> {};

TEST_P(Fingerprints, Unchanged) {
  const Case& c = GetParam();
  std::string error;
  const Fingerprint got = run_case(c, error);
  ASSERT_TRUE(error.empty()) << error;
  const bool update = std::getenv("ROCESIM_UPDATE_FINGERPRINTS") != nullptr;
  std::map<std::string, Fingerprint> stored = read_stored();
  const auto it = stored.find(c.name);
  if (update) {
    if (it == stored.end() || !(it->second == got)) {
      stored[c.name] = got;
      write_stored(stored);
      std::printf("updated: %s\n", to_line(c.name, got).c_str());
    }
    return;
  }
  const std::string how =
      "If this change is meant to change results (or only the number of events), update the stored values "
      "deliberately:\n  ROCESIM_UPDATE_FINGERPRINTS=1 build/rocesim_tests --gtest_filter='*Fingerprints*'\n"
      "and commit tests/data/fingerprints.txt, saying in the commit which cases moved and why.";
  ASSERT_NE(it, stored.end()) << "no stored fingerprint for '" << c.name << "' in " << kFile << ".\n" << how;
  const Fingerprint& want = it->second;
  std::printf("%s\n", to_line(c.name, got).c_str());
  EXPECT_EQ(got.flows_hash, want.flows_hash)
      << c.name << ": flows.csv changed (`rocesim run " << c.args << "`).\n"
      << how;
  EXPECT_EQ(got.outputs_hash, want.outputs_hash)
      << c.name << ": summary.json (less timings) or a monitor's CSV changed (`rocesim run " << c.args
      << "`).\n"
      << how;
  EXPECT_EQ(got.events, want.events) << c.name << ": the number of events executed changed"
                                     << (got.flows_hash == want.flows_hash &&
                                                 got.outputs_hash == want.outputs_hash
                                             ? " (results are identical)"
                                             : "")
                                     << ".\n"
                                     << how;
}

// One run over several threads (docs/parallel.md) gives the same bytes as one thread: flows.csv, every
// other CSV, fct.txt (--fct-format hpcc) and summary.json less its timings, and the same events.
TEST_P(Fingerprints, SameForAnyThreadCount) {
  const Case& c = GetParam();
  std::string error;
  // Under ThreadSanitizer the 320-host fat-tree cases, whose arrivals end at 150 us, stop at 250 us instead
  // of 500: the same code runs, in about half the time.
  std::string cut;
  if (std::getenv("ROCESIM_TSAN") && std::string(c.args).find("traffic[0].stop_us=150") != std::string::npos)
    cut = "--set duration_ms=0.25 ";
  const Fingerprint one = run_case(c, error, cut + "--fct-format hpcc --threads 1");
  ASSERT_TRUE(error.empty()) << error;
  // Under AddressSanitizer one count is enough (2); under ThreadSanitizer (make test-tsan) 4, which the
  // ASan run leaves out: a race shows at any count, and the Release run compares 2, 3, 4 and 8. The
  // partitions are as many as the threads on these small fabrics, unless asked for: one thread running 5
  // partitions in turn, and 2 threads sharing 6, give the same bytes too (Network::set_partitions).
  std::vector<std::string> layouts{"--threads 2",
                                   "--threads 3",
                                   "--threads 4",
                                   "--threads 8",
                                   "--threads 1 --partitions 5",
                                   "--threads 2 --partitions 6"};
  if (std::getenv("ROCESIM_SANITIZED")) layouts = {"--threads 2", "--threads 1 --partitions 5"};
  if (std::getenv("ROCESIM_TSAN")) layouts = {"--threads 4"};
  for (const std::string& layout : layouts) {
    const Fingerprint got = run_case(c, error, fmt::format("{}--fct-format hpcc {}", cut, layout));
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got.flows_hash, one.flows_hash) << c.name << ": flows.csv differs with " << layout;
    EXPECT_EQ(got.outputs_hash, one.outputs_hash)
        << c.name << ": summary.json, fct.txt or a CSV differs with " << layout;
    EXPECT_EQ(got.events, one.events) << c.name << ": events differ with " << layout;
  }
}

// One run over the ranks of mpirun (docs/cluster.md) gives the bytes of one process: 2 ranks, and 3 ranks of
// 2 threads, oversubscribed on this machine. Skipped, saying why, without Open MPI.
TEST_P(Fingerprints, SameOverMpiRanks) {
  if (const std::string why = mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  // Ranks are processes: ThreadSanitizer (make test-tsan) has nothing to add to SameForAnyThreadCount.
  if (std::getenv("ROCESIM_TSAN")) GTEST_SKIP() << "ranks are processes; the threads are checked above";
  const Case& c = GetParam();
  std::string error;
  std::vector<std::pair<int, int>> layouts{{2, 1}, {3, 2}};  // (ranks, threads per rank)
  if (std::getenv("ROCESIM_SANITIZED")) {
    // Under the sanitizers, 2 ranks on the cases that cross ranks in each way: INT records (hpcc), a
    // receiver's per-QP state (pcn), RCM's CN flow IDs, monitors' sampled series (tcd_victim_40g).
    const std::string n = c.name;
    if (n != "hpcc" && n != "pcn" && n != "rcm_victim" && n != "tcd_victim_40g")
      GTEST_SKIP() << "one case of each kind under the sanitizers";
    layouts = {{2, 1}};
  }
  const Fingerprint one = run_case(c, error, "--fct-format hpcc");
  ASSERT_TRUE(error.empty()) << error;
  for (const auto& [ranks, threads] : layouts) {
    const Fingerprint got = run_case(c, error, fmt::format("--fct-format hpcc --mpi --threads {}", threads),
                                     mpirun_command(ranks));
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(got.flows_hash, one.flows_hash) << c.name << ": flows.csv differs over " << ranks << " ranks";
    EXPECT_EQ(got.outputs_hash, one.outputs_hash)
        << c.name << ": summary.json, fct.txt or a CSV differs over " << ranks << " ranks";
    EXPECT_EQ(got.events, one.events) << c.name << ": events differ over " << ranks << " ranks";
  }
}

// The whole-network checks (--check invariants, deadlock detection, watchdog) run between windows: with
// them on, a run over threads still gives the bytes of one thread, and no check fails.
TEST(FingerprintsChecked, SameForAnyThreadCountUnderCheck) {
  for (const Case& c : kCases) {
    const std::string name = c.name;
    if (name != "dcqcn_incast" && name != "rcm_victim" && name != "lscc_fairness" && name != "demo" &&
        name != "lossy_incast_selective")
      continue;
    std::string error;
    const Fingerprint two = run_case(c, error, "--check --threads 2");
    ASSERT_TRUE(error.empty()) << error;
    // Under ThreadSanitizer the run over threads is what matters (a race fails it); the other builds compare.
    if (std::getenv("ROCESIM_TSAN")) continue;
    const Fingerprint one = run_case(c, error, "--check --threads 1");
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(two, one) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Fingerprints, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Tracing a scheme's state (cc_state) only observes: the traced case has the events and flows.csv of the
// untraced one.
TEST(FingerprintFile, TracingChangesNoResult) {
  const auto stored = read_stored();
  ASSERT_TRUE(stored.count("dcqcn_incast") && stored.count("dcqcn_incast_cc_state"));
  EXPECT_EQ(stored.at("dcqcn_incast_cc_state").events, stored.at("dcqcn_incast").events);
  EXPECT_EQ(stored.at("dcqcn_incast_cc_state").flows_hash, stored.at("dcqcn_incast").flows_hash);
  EXPECT_NE(stored.at("dcqcn_incast_cc_state").outputs_hash, stored.at("dcqcn_incast").outputs_hash);
}

// The stored file names only cases that exist, so that a renamed case cannot leave a stale line behind.
TEST(FingerprintFile, NamesOnlyKnownCases) {
  for (const auto& [name, f] : read_stored()) {
    bool known = false;
    for (const Case& c : kCases) known = known || name == c.name;
    EXPECT_TRUE(known) << "tests/data/fingerprints.txt names an unknown case '" << name
                       << "': remove the line";
  }
}

}  // namespace
