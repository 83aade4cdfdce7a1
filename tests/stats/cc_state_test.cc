// [monitors] cc_state (cc_state.csv, stats/monitors.h): each scheme's declared state over time. Under an
// incast, DCQCN's alpha rises only after CNPs and its rate falls, HPCC's U passes 1 and then its window
// shrinks, TIMELY's RTT samples rise; every scheme of the registry declares its variables and writes them
// finite; tracing adds no event and changes no result; the file is the same bytes for one thread and two;
// max_rows keeps the first rows and warns; bad keys fail with their line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/run.h"
#include "cc/registry.h"
#include "config/scenario.h"
#include "file_util.h"
#include "mpi_util.h"
#include "net/network.h"
#include "stats/monitors.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

using rocesim::test::read_text_file;

// An n:1 incast on a star: h0..h(n-1) send `size` bytes each to h(n), all at t = 0.
std::string cc_incast(const std::string& scheme, int n, Bytes size) {
  std::string t = fmt::format(
      "name = \"incast\"\nseed = 3\nduration_ms = 5\n[topology]\nkind = \"star\"\nhosts = {}\n"
      "[cc]\nscheme = \"{}\"\n",
      n + 1, scheme);
  for (int i = 0; i < n; ++i)
    t += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h{}\"\nsize_bytes = {}\n", i, n, size);
  return t;
}

struct CcTraced {
  Scenario s;
  std::unique_ptr<Network> net;
  std::unique_ptr<FlowSource> src;
  std::unique_ptr<Monitors> mon;  // last: destroyed before the network
};

// Runs `text` to its end with Monitors attached (none when `s.monitors` is off).
std::unique_ptr<CcTraced> cc_traced_run(const std::string& text, const std::vector<std::string>& overrides) {
  auto r = std::make_unique<CcTraced>();
  r->s = load_scenario_text(text, "test.toml", overrides);
  r->net = std::make_unique<Network>(r->s.topo, r->s.sw, r->s.nic, r->s.seed, r->s.make_scheme());
  if (r->s.monitors.any()) r->mon = std::make_unique<Monitors>(*r->net, r->s.monitors);
  r->src = r->s.make_flow_source();
  r->net->set_class_labels(r->s.class_labels);
  r->net->set_flow_source(r->src.get());
  r->net->run(r->s.duration, r->s.stop_when_done);
  if (r->mon) r->mon->finish();
  return r;
}

// The column of variable `name` (an index into cc_vars), or fails.
size_t cc_var(const Monitors& m, const std::string& name) {
  const auto v = m.cc_variables();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return i;
  ADD_FAILURE() << "no variable " << name;
  return 0;
}

// The rows of one flow, as indices into cc_rows.
std::vector<size_t> cc_rows_of(Monitors& m, uint64_t flow) {
  std::vector<size_t> out;
  const auto& rows = m.cc_rows();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].flow_id == flow) out.push_back(i);
  return out;
}

const std::vector<std::string> kCcEveryReaction = {"monitors.cc_state.flows=\"all\"",
                                                   "monitors.cc_state.period_us=0"};

class CcTempDir {
 public:
  CcTempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / fmt::format("rocesim_cc_state_{}_{}", getpid(), n++);
    fs::remove_all(path_);
  }
  ~CcTempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

TEST(CcState, DcqcnAlphaRisesOnlyAfterCnpsAndTheRateFalls) {
  auto r = cc_traced_run(cc_incast("dcqcn", 8, 1'000'000), kCcEveryReaction);
  Monitors& m = *r->mon;
  const size_t alpha = cc_var(m, "alpha"), stage = cc_var(m, "stage");
  const auto& rows = m.cc_rows();
  ASSERT_GT(rows.size(), 100u);
  int rises = 0;
  for (uint64_t f = 0; f < 8; ++f) {
    const auto idx = cc_rows_of(m, f);
    ASSERT_GT(idx.size(), 10u) << "flow " << f;
    // The first row is the flow's start: line rate, no CNP, stage 0.
    EXPECT_DOUBLE_EQ(rows[idx[0]].rate.gbps(), 100.0);
    EXPECT_EQ(rows[idx[0]].cnps_received, 0u);
    EXPECT_EQ(m.cc_vars(idx[0])[stage], 0);
    double min_gbps = 100;
    for (size_t k = 1; k < idx.size(); ++k) {
      const double a0 = m.cc_vars(idx[k - 1])[alpha], a1 = m.cc_vars(idx[k])[alpha];
      if (a1 > a0 + 1e-12) {
        ++rises;
        // Alpha only rises in a period that saw a CNP.
        EXPECT_GT(rows[idx[k]].cnps_received, 0u) << "flow " << f << " row " << k;
      }
      EXPECT_GE(rows[idx[k]].cnps_received, rows[idx[k - 1]].cnps_received);
      EXPECT_GE(rows[idx[k]].ecn_marks, rows[idx[k - 1]].ecn_marks);
      min_gbps = std::min(min_gbps, rows[idx[k]].rate.gbps());
    }
    // Eight flows share 100 Gb/s: each is cut well below line rate.
    EXPECT_LT(min_gbps, 50.0) << "flow " << f;
  }
  EXPECT_GT(rises, 8);
  // The senders' counts add up to the CNPs the receivers sent, less any that came after their flow ended.
  uint64_t cnps = 0;
  for (uint64_t f = 0; f < 8; ++f) cnps += rows[cc_rows_of(m, f).back()].cnps_received;
  EXPECT_GT(cnps, 8u);
  EXPECT_LE(cnps, r->net->stats().cnps_sent);
}

// DCQCN's hpcc_sim variant notifies on ACKs (cnp_on_ack), not with CNP packets: they count as notifications.
TEST(CcState, NotificationsOnAcksCountAsCnps) {
  auto r = cc_traced_run(
      cc_incast("dcqcn", 4, 300'000),
      {"cc.dcqcn.variant=\"hpcc_sim\"", "monitors.cc_state.flows=[0]", "monitors.cc_state.period_us=0"});
  const auto& rows = r->mon->cc_rows();
  ASSERT_GT(rows.size(), 10u);
  EXPECT_GT(rows.back().cnps_received, 2u);
  EXPECT_EQ(r->net->stats().cnps_sent, 0u);                     // no CNP packet
  EXPECT_GE(rows.back().ecn_marks, rows.back().cnps_received);  // one per ACK of a CE packet, and echoed
}

TEST(CcState, HpccUtilisationPassesOneThenTheWindowShrinks) {
  auto r = cc_traced_run(cc_incast("hpcc", 8, 1'000'000), kCcEveryReaction);
  Monitors& m = *r->mon;
  const size_t u = cc_var(m, "u");
  const auto& rows = m.cc_rows();
  for (uint64_t f = 0; f < 8; ++f) {
    const auto idx = cc_rows_of(m, f);
    ASSERT_GT(idx.size(), 10u);
    const Bytes w0 = rows[idx[0]].window;
    size_t first_over = idx.size();
    for (size_t k = 0; k < idx.size(); ++k)
      if (m.cc_vars(idx[k])[u] > 1.0) {
        first_over = k;
        break;
      }
    ASSERT_LT(first_over, idx.size()) << "flow " << f << ": U never above 1";
    Bytes w_min = w0;
    for (size_t k = first_over; k < idx.size(); ++k) w_min = std::min(w_min, rows[idx[k]].window);
    // After U > 1 the window falls well below its start (a BDP of the NIC): at most the fair share, 1/8.
    EXPECT_LT(w_min, w0 / 4) << "flow " << f;
  }
}

TEST(CcState, TimelyRttSamplesRiseUnderIncast) {
  auto r = cc_traced_run(cc_incast("timely", 8, 1'000'000), kCcEveryReaction);
  Monitors& m = *r->mon;
  const size_t rtt = cc_var(m, "rtt_us");
  const auto idx = cc_rows_of(m, 0);
  double first = 0, peak = 0;
  for (size_t i : idx) {
    const double v = m.cc_vars(i)[rtt];
    if (first == 0 && v > 0) first = v;
    peak = std::max(peak, v);
  }
  ASSERT_GT(first, 0.0);
  // The first ACK returns before the queue builds (~4 us of base RTT); 8 flows at line rate queue tens of us.
  EXPECT_LT(first, 8.0);
  EXPECT_GT(peak, 3 * first);
  EXPECT_LT(m.cc_rows()[idx.back()].rate.gbps(), 100.0);
}

// Every scheme declares at least one variable (at most kMaxCcVariables, names that are columns of their own),
// and a short incast with every flow traced writes exactly those columns, finite, without changing the run.
TEST(CcState, EverySchemeDeclaresItsVariablesAndWritesThemFinite) {
  const std::set<std::string> fixed = {"time_us",      "flow",      "rate_gbps",
                                       "window_bytes", "ecn_marks", "cnps_received"};
  const std::regex column("[a-z][a-z0-9_]*");
  for (const SchemeEntry& e : scheme_registry()) {
    SCOPED_TRACE(e.name);
    const std::string text = cc_incast(e.name, 4, 200'000);
    auto plain = cc_traced_run(text, {});
    auto traced = cc_traced_run(text, kCcEveryReaction);
    const auto vars = traced->net->cc().state_variables();
    ASSERT_GE(vars.size(), 1u);
    ASSERT_LE(vars.size(), kMaxCcVariables);
    std::set<std::string> names;
    for (const CcVariable& v : vars) {
      EXPECT_TRUE(std::regex_match(v.name, column)) << v.name;
      EXPECT_FALSE(fixed.count(v.name)) << v.name << " is a column of every scheme";
      EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
      EXPECT_GT(std::string(v.description).size(), 10u) << v.name;
    }
    // The same run: the same events, the same finish times.
    EXPECT_EQ(traced->net->sim().events_executed(), plain->net->sim().events_executed());
    ASSERT_EQ(traced->net->finished().size(), 4u);
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(traced->net->finished()[i].finish, plain->net->finished()[i].finish);

    std::ostringstream csv;
    traced->mon->write_cc_state_csv(csv);
    std::istringstream in(csv.str());
    std::string header;
    std::getline(in, header);
    std::string want = "time_us,flow,rate_gbps,window_bytes";
    for (const CcVariable& v : vars) want += std::string(",") + v.name;
    EXPECT_EQ(header, want + ",ecn_marks,cnps_received");
    std::set<uint64_t> flows;
    size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) {
      std::vector<std::string> cells;
      std::stringstream ls(line);
      for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
      ASSERT_EQ(cells.size(), vars.size() + 6) << line;
      flows.insert(std::stoull(cells[1]));
      for (const std::string& c : cells) EXPECT_TRUE(std::isfinite(std::stod(c))) << line;
    }
    EXPECT_EQ(n, traced->mon->cc_rows().size());
    EXPECT_EQ(flows, (std::set<uint64_t>{0, 1, 2, 3})) << "a row at least at each flow's start";
  }
}

// period_us > 0: a row per live traced flow at every multiple of the period, between windows; the flows of
// a class only.
TEST(CcState, PeriodicSamplesOfTheFlowsOfAClass) {
  std::string text = cc_incast("dcqcn", 4, 400'000);
  text += "[[flows]]\nsrc = \"h0\"\ndst = \"h3\"\nsize_bytes = 300000\nstart_us = 20\nclass = \"late\"\n";
  auto plain = cc_traced_run(text, {});
  auto r = cc_traced_run(text, {"monitors.cc_state.classes=[\"late\"]", "monitors.cc_state.period_us=5"});
  EXPECT_EQ(r->net->sim().events_executed(), plain->net->sim().events_executed());
  const auto& rows = r->mon->cc_rows();
  ASSERT_GT(rows.size(), 5u);
  const FlowRecord* late = nullptr;
  for (const FlowRecord& f : r->net->finished())
    if (f.id == 4) late = &f;
  ASSERT_NE(late, nullptr);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].flow_id, 4u);  // the class's one flow
    EXPECT_EQ(rows[i].t.ps % Time::from_us(5).ps, 0) << i;
    EXPECT_GE(rows[i].t, late->start);
    EXPECT_LE(rows[i].t, late->finish);
    if (i > 0) {
      EXPECT_EQ(rows[i].t - rows[i - 1].t, Time::from_us(5));
    }
  }
  const nlohmann::json j = r->mon->summary()["cc_state"];
  EXPECT_EQ(j["flows"].get<int>(), 1);
  EXPECT_EQ(j["scheme"], "dcqcn");
  EXPECT_EQ(j["variables"][0]["name"], "alpha");
  EXPECT_FALSE(j["truncated"].get<bool>());
}

namespace {

// Four flows across a leaf-spine (two leaves: two partitions), two of them into one host.
std::string cc_leaf_spine_flows() {
  std::string text =
      "name = \"ls\"\nseed = 5\nduration_ms = 5\n"
      "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n[cc]\nscheme = "
      "\"dcqcn\"\n";
  for (int i = 0; i < 4; ++i)
    text += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h{}\"\nsize_bytes = 300000\nstart_us = {}\n", i,
                        4 + i % 2, i);
  return text;
}

}  // namespace

// A run over two threads writes the bytes of one (rows merged by time, flow and event), at every reaction
// and sampled; and the results are those of a run without the monitor.
TEST(CcState, SameBytesOnOneAndTwoThreads) {
  const std::string text = cc_leaf_spine_flows();
  for (const std::string period : {"0", "3"}) {
    SCOPED_TRACE(period);
    std::vector<std::string> set = {"monitors.cc_state.flows=[0, 1, 3]",
                                    "monitors.cc_state.period_us=" + period};
    std::map<int, std::string> csv, flows;
    for (int threads : {1, 2}) {
      CcTempDir dir;
      RunOptions o;
      o.out_dir = dir.path().string();
      Scenario s = load_scenario_text(text, "test.toml", set);
      s.threads = threads;
      (void)run_scenario(s, o);
      csv[threads] = read_text_file(dir.path() / "cc_state.csv");
      flows[threads] = read_text_file(dir.path() / "flows.csv");
    }
    CcTempDir dir;
    RunOptions o;
    o.out_dir = dir.path().string();
    (void)run_scenario(load_scenario_text(text, "test.toml"), o);
    EXPECT_GT(std::count(csv[1].begin(), csv[1].end(), '\n'), 20);
    EXPECT_EQ(csv[1], csv[2]);
    EXPECT_EQ(flows[1], flows[2]);
    EXPECT_EQ(flows[1], read_text_file(dir.path() / "flows.csv"));
  }
}

TEST(CcState, MaxRowsKeepsTheFirstRowsAndWarns) {
  const std::string text = cc_incast("dcqcn", 4, 200'000);
  auto all = cc_traced_run(text, kCcEveryReaction);
  auto cut = cc_traced_run(text, {"monitors.cc_state.flows=\"all\"", "monitors.cc_state.period_us=0",
                                  "monitors.cc_state.max_rows=10"});
  ASSERT_GT(all->mon->cc_rows().size(), 10u);
  ASSERT_EQ(cut->mon->cc_rows().size(), 10u);
  // The first ten rows in event order, then in the file's order.
  std::vector<std::pair<Time, uint64_t>> want;
  std::vector<Monitors::CcRow> by_event = all->mon->cc_rows();
  std::stable_sort(by_event.begin(), by_event.end(),
                   [](const Monitors::CcRow& a, const Monitors::CcRow& b) { return a.key < b.key; });
  by_event.resize(10);
  std::stable_sort(by_event.begin(), by_event.end(), [](const Monitors::CcRow& a, const Monitors::CcRow& b) {
    return std::tie(a.t, a.flow_id) < std::tie(b.t, b.flow_id);
  });
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(cut->mon->cc_rows()[i].key, by_event[i].key);
    EXPECT_EQ(cut->mon->cc_rows()[i].flow_id, by_event[i].flow_id);
  }
  const auto w = cut->mon->warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("only its first 10 rows"), std::string::npos) << w[0];
  EXPECT_TRUE(cut->mon->summary()["cc_state"]["truncated"].get<bool>());
  EXPECT_TRUE(all->mon->warnings().empty());
}

TEST(CcStateConfig, KeysResolvedAndBadOnesFailWithTheirLine) {
  const std::string base = cc_incast("dcqcn", 2, 1000);
  const Scenario off = load_scenario_text(base, "test.toml");
  EXPECT_FALSE(off.monitors.cc_state());
  EXPECT_FALSE(off.monitors.any());
  const Scenario s =
      load_scenario_text(base + "[monitors]\ncc_state = { flows = [3, 1, 3], period_us = 0 }\n", "test.toml");
  EXPECT_EQ(s.monitors.cc_state_flows, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(s.monitors.cc_state_period, Time::zero());
  std::ostringstream os;
  os << s.resolved;
  EXPECT_NE(os.str().find("flows = [ 1, 3 ]"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("max_rows = 1000000"), std::string::npos) << os.str();
  const Scenario c = load_scenario_text(base, "test.toml", {"monitors.cc_state.classes=[\"default\"]"});
  EXPECT_EQ(c.monitors.cc_state_classes, (std::vector<uint16_t>{0}));
  EXPECT_TRUE(c.monitors.any());

  struct Case {
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"cc_state = { classes = [\"bulk\"] }\n",
       "no traffic class 'bulk' in this scenario; its classes: default"},
      {"cc_state = { flows = \"some\" }\n", "expected an array of flow ids"},
      {"cc_state = { flows = [1], period_us = -1 }\n", "out of range"},
      {"cc_state = { flows = [1], period_us = 0.0001 }\n", "expected 0"},
      {"cc_state = { flows = [1], max_rows = 0 }\n", "out of range"},
      {"cc_state = { flow = [1] }\n", "unknown key 'monitors.cc_state.flow'"},
  };
  const int line = static_cast<int>(std::count(base.begin(), base.end(), '\n')) + 2;
  for (const Case& k : cases) {
    try {
      (void)load_scenario_text(base + "[monitors]\n" + k.body, "bad.toml");
      ADD_FAILURE() << "accepted: " << k.body;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), line) << k.body << e.what();
      EXPECT_NE(std::string(e.what()).find(k.message), std::string::npos) << e.what();
    }
  }
}

// Over two ranks (rocesim run --mpi): the rows of reactions travel with the observer calls, the samples are
// gathered at the end; the file is the bytes of one process. Skipped, saying why, without Open MPI.
TEST(CcState, SameBytesOverMpiRanks) {
  if (const std::string why = rocesim::test::mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  CcTempDir dir;
  fs::create_directories(dir.path());
  const fs::path scen = dir.path() / "ls.toml";
  std::ofstream(scen) << cc_leaf_spine_flows();
  for (const std::string period : {"0", "3"}) {
    SCOPED_TRACE(period);
    std::map<int, std::string> csv;
    for (int ranks : {1, 2}) {
      const fs::path out = dir.path() / fmt::format("r{}_{}", ranks, period);
      const std::string cmd = fmt::format(
          "{}{} run {} -q -o {} --set 'monitors.cc_state.flows=[0, 1, 3]' --set "
          "monitors.cc_state.period_us={}"
          "{} > {}/log.txt 2>&1",
          ranks > 1 ? rocesim::test::mpirun_command(ranks) + " " : "", ROCESIM_BINARY, scen.string(),
          out.string(), period, ranks > 1 ? " --mpi" : "", dir.path().string());
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << read_text_file(dir.path() / "log.txt");
      csv[ranks] = read_text_file(out / "cc_state.csv");
    }
    EXPECT_GT(std::count(csv[1].begin(), csv[1].end(), '\n'), 20);
    EXPECT_EQ(csv[1], csv[2]);
  }
}
