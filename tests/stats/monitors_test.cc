// Monitors ([monitors], stats/monitors.h): they never change results (flows.csv and the summary are
// byte-identical with every monitor on), and what they record checks against closed forms and the
// network's own counters: queue growth at the rate difference, line-rate goodput, PFC pause/resume pairs
// summing to the ports' paused time, CNP counts equal to NetStats; bad keys fail with their line.
#include "config/monitors.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "file_util.h"
#include "net/network.h"
#include "net/switch.h"
#include "stats/monitors.h"
#include "stats/writers.h"
#include "topo/builders.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

using rocesim::test::read_text_file;

// Every monitor on, at odd short intervals so that samples interleave densely with network events.
const std::vector<std::string> kAllMonitors = {"monitors.queue_ports=[\"all\"]",
                                               "monitors.queue_interval_us=0.7",
                                               "monitors.flow_rates=\"all\"",
                                               "monitors.port_throughput=[\"all\"]",
                                               "monitors.rate_bin_us=1.3",
                                               "monitors.pfc=true",
                                               "monitors.cnp=true",
                                               "monitors.buffer=true",
                                               "monitors.buffer_interval_us=0.9",
                                               "monitors.cc_state.flows=\"all\"",
                                               "monitors.cc_state.period_us=0"};

// 8:1 incast on a star under DCQCN (ECN marks, CNPs), staggered starts.
std::string incast_dcqcn(bool stop_when_done = true) {
  std::string t = fmt::format(
      "name = \"incast\"\nseed = 7\nduration_ms = 20\nstop_when_done = {}\n"
      "[topology]\nkind = \"star\"\nhosts = 9\n[cc]\nscheme = \"dcqcn\"\n",
      stop_when_done ? "true" : "false");
  for (int i = 0; i < 8; ++i)
    t += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h8\"\nsize_bytes = {}\nstart_us = {}\n", i,
                     1'000'000 + 100'000 * i, 3 * (i / 2));
  return t;
}

// The Mercury victim chain without congestion control: bursts into R2 fill S3, PFC pauses spread back.
std::string mercury_victim_pfc() {
  std::string t =
      "name = \"victim\"\nseed = 1\nduration_ms = 20\n"
      "[topology]\nkind = \"mercury_victim\"\n"
      "[switch]\npfc_mode = \"static\"\nxoff_bytes = 320000\nxon_bytes = 318000\n"
      "[cc]\nscheme = \"none\"\n"
      "[[flows]]\nsrc = \"H1\"\ndst = \"R1\"\nsize_bytes = 2000000\n"
      "[[flows]]\nsrc = \"H2\"\ndst = \"R2\"\nsize_bytes = 2000000\n";
  for (int b = 1; b <= 8; ++b)
    for (int k = 0; k < 12; ++k)
      t += fmt::format("[[flows]]\nsrc = \"B{}\"\ndst = \"R2\"\nsize_bytes = 50000\nstart_us = {}\n", b,
                       100 + 12.5 * k);
  return t;
}

std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

// "12.345678" (us, 6 decimals) -> picoseconds, exactly.
int64_t us_to_ps(const std::string& s) {
  const auto dot = s.find('.');
  EXPECT_NE(dot, std::string::npos) << s;
  EXPECT_EQ(s.size() - dot - 1, 6u) << s;
  return std::stoll(s.substr(0, dot)) * 1'000'000 + std::stoll(s.substr(dot + 1));
}

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / fmt::format("rocesim_monitors_{}_{}", getpid(), n++);
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A network built from a scenario, with Monitors attached before it runs.
struct Run {
  Scenario s;
  std::unique_ptr<Network> net;
  std::unique_ptr<FlowSource> src;
  std::unique_ptr<Monitors> mon;  // declared last: destroyed before the network
};

std::unique_ptr<Run> start(const std::string& text, const std::vector<std::string>& overrides) {
  auto r = std::make_unique<Run>();
  r->s = load_scenario_text(text, "test.toml", overrides);
  r->net = std::make_unique<Network>(r->s.topo, r->s.sw, r->s.nic, r->s.seed, r->s.make_scheme());
  r->mon = std::make_unique<Monitors>(*r->net, r->s.monitors);
  r->src = r->s.make_flow_source();
  r->net->set_class_labels(r->s.class_labels);
  r->net->set_flow_source(r->src.get());
  return r;
}

void run_to_end(Run& r) { r.net->run(r.s.duration, r.s.stop_when_done); }

// summary.json without what legitimately differs (wall clock, events, the monitors' own section).
nlohmann::json comparable(nlohmann::json j) {
  j.erase("performance");
  j.erase("monitors");
  return j;
}

void expect_same_results(const std::string& text, const char* what) {
  TempDir plain, monitored;
  RunOptions o1, o2;
  o1.out_dir = plain.path().string();
  o2.out_dir = monitored.path().string();
  const Scenario s1 = load_scenario_text(text, "test.toml");
  const Scenario s2 = load_scenario_text(text, "test.toml", kAllMonitors);
  ASSERT_FALSE(s1.monitors.any());
  ASSERT_TRUE(s2.monitors.any());
  const RunResult r1 = run_scenario(s1, o1);
  const RunResult r2 = run_scenario(s2, o2);

  const std::string f1 = read_text_file(plain.path() / "flows.csv");
  EXPECT_GT(std::count(f1.begin(), f1.end(), '\n'), 8) << what;
  EXPECT_EQ(f1, read_text_file(monitored.path() / "flows.csv")) << what;
  const auto j1 = nlohmann::json::parse(read_text_file(plain.path() / "summary.json"));
  const auto j2 = nlohmann::json::parse(read_text_file(monitored.path() / "summary.json"));
  EXPECT_EQ(j1["fct"].dump(), j2["fct"].dump()) << what;
  EXPECT_EQ(comparable(j1).dump(2), comparable(j2).dump(2)) << what;
  EXPECT_TRUE(j1["complete"].get<bool>()) << what;
  // The monitored run did the same events (samples run between windows, core/simulator.h) and wrote
  // every file.
  EXPECT_EQ(j2["performance"]["events"].get<uint64_t>(), j1["performance"]["events"].get<uint64_t>()) << what;
  for (const char* f : {"queues.csv", "rates.csv", "pfc.csv", "cnps.csv", "buffer.csv", "cc_state.csv"}) {
    EXPECT_FALSE(fs::exists(plain.path() / f)) << f;
    EXPECT_TRUE(fs::exists(monitored.path() / f)) << what << " " << f;
  }
  EXPECT_TRUE(j2.contains("monitors")) << what;
  EXPECT_FALSE(j1.contains("monitors")) << what;
}

}  // namespace

TEST(Monitors, DoNotChangeResultsOfIncastUnderDcqcn) {
  // Busy enough: CNPs flow (checked via the summary of the same run).
  const Scenario s = load_scenario_text(incast_dcqcn(), "test.toml");
  const RunResult r = run_scenario(s, RunOptions{});
  ASSERT_GT(r.summary["cnp"]["sent_by_receivers"].get<uint64_t>(), 50u);
  expect_same_results(incast_dcqcn(), "incast/dcqcn");
}

TEST(Monitors, DoNotChangeResultsOfVictimWithPfc) {
  const Scenario s = load_scenario_text(mercury_victim_pfc(), "test.toml");
  const RunResult r = run_scenario(s, RunOptions{});
  ASSERT_GT(r.summary["pfc"]["pauses_sent"].get<uint64_t>(), 5u);
  expect_same_results(mercury_victim_pfc(), "mercury_victim/none");
}

TEST(Monitors, QueueGrowsAtTheRateDifference) {
  // One 2 MB flow at 100 Gb/s into a 40 Gb/s bottleneck: switch A's queue towards B grows at
  // 60 Gb/s = 7500 bytes/us. Packet k (1048 bytes on the wire) has fully reached A at
  // a_k = (k+1) x 83.84 ns + 1 us and starts leaving at d_k = a_0 + k x 209.6 ns.
  const std::string text =
      "[topology]\nkind = \"dumbbell\"\nsenders = 1\nreceivers = 1\nbottleneck_rate_gbps = 40\n"
      "[cc]\nscheme = \"none\"\n"
      "[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize_bytes = 2000000\n"
      "[monitors]\nqueue_ports = [\"s0:s1\"]\nqueue_interval_us = 10\n";
  auto r = start(text, {});
  ASSERT_EQ(r->s.monitors.queue_ports.size(), 1u);
  run_to_end(*r);
  ASSERT_EQ(r->net->stats().flows_finished, 1u);
  const auto& times = r->mon->queue_times();
  const auto& q = r->mon->queue_bytes();
  ASSERT_GT(times.size(), 17u);
  const int64_t t100 = 83'840, t40 = 209'600, a0 = t100 + 1'000'000;
  std::map<int64_t, Bytes> at;
  for (size_t i = 0; i < times.size(); ++i) {
    EXPECT_EQ(times[i].ps, static_cast<int64_t>(i) * 10'000'000);
    at[times[i].ps] = q[i][0];
  }
  for (const auto& [t, bytes] : at) {
    const int64_t arrived = std::min<int64_t>(2000, t >= a0 ? (t - 1'000'000) / t100 : 0);
    const int64_t left = std::min<int64_t>(2000, t >= a0 ? (t - a0) / t40 + 1 : 0);
    EXPECT_NEAR(static_cast<double>(bytes), 1048.0 * static_cast<double>(arrived - left), 1048.0)
        << "t = " << t;
  }
  const double slope = static_cast<double>(at[150'000'000] - at[50'000'000]) / 100.0;  // bytes per us
  EXPECT_NEAR(slope, 7500.0, 2 * 1048 / 100.0);
  // The run ends when the last ACK returns: 2 x 1 us + ACK serialization after the last packet reached B.
  EXPECT_GE(times.back().ps, a0 + 1999 * t40 - 10'000'000);
  std::ostringstream csv;
  r->mon->write_queues_csv(csv);
  const auto rows = read_csv(csv.str());
  ASSERT_EQ(rows[0], (std::vector<std::string>{"time_us", "node", "port", "peer", "queue_bytes",
                                               "prio1_bytes", "prio2_bytes", "prio3_bytes", "prio4_bytes",
                                               "prio5_bytes", "prio6_bytes", "prio7_bytes"}));
  // The flow is in the default data class, priority 3: all of the queue.
  const std::string q20 = std::to_string(at[20'000'000]);
  EXPECT_EQ(rows[3],
            (std::vector<std::string>{"20.000000", "s0", "1", "s1", q20, "0", "0", q20, "0", "0", "0", "0"}));
  EXPECT_EQ(rows.size(), times.size() + 1);
  // summary.json's monitors section: the sampled peak, and the true peak (PortStats) above it.
  Bytes peak = 0;
  for (const auto& row : q) peak = std::max(peak, row[0]);
  const auto j = r->mon->summary()["queues"];
  EXPECT_EQ(j["samples"].get<size_t>(), times.size());
  ASSERT_EQ(j["top_ports"].size(), 1u);
  EXPECT_EQ(j["top_ports"][0]["max_sampled_queue_bytes"].get<Bytes>(), peak);
  EXPECT_GE(j["top_ports"][0]["max_queue_bytes"].get<Bytes>(), peak);
  EXPECT_EQ(j["top_ports"][0]["peer"], "s1");
}

TEST(Monitors, LineRateFlowRateAndPortThroughput) {
  const std::string text =
      "[topology]\nkind = \"star\"\nhosts = 2\n[cc]\nscheme = \"none\"\n"
      "[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize_bytes = 10000000\n"
      "[monitors]\nflow_rates = [0]\nport_throughput = [\"s0:h1\", \"h1:s0\"]\nrate_bin_us = 10\n";
  auto r = start(text, {});
  run_to_end(*r);
  ASSERT_EQ(r->net->stats().flows_finished, 1u);
  const double goodput = 100.0 * 1000 / 1048;
  const auto bins = r->mon->flow_bins(0);
  ASSERT_GT(bins.size(), 80u);  // 10 MB at ~95 Gb/s: ~840 us
  Bytes total = 0;
  for (size_t k = 0; k < bins.size(); ++k) {
    total += bins[k].second;
    EXPECT_EQ(bins[k].first.ps, bins[0].first.ps + static_cast<int64_t>(k) * 10'000'000);
    if (k == 0 || k + 1 == bins.size()) continue;  // partial bins
    EXPECT_NEAR(bins[k].second * 8.0 / 10e-6 / 1e9, goodput, 0.02 * goodput) << "bin " << k;
  }
  EXPECT_EQ(total, 10'000'000);
  EXPECT_TRUE(r->mon->flow_bins(1).empty());
  // The switch's port to the receiver carries the data at line rate; the reverse port only ACKs.
  const auto data = r->mon->port_bins(0);
  const auto acks = r->mon->port_bins(1);
  ASSERT_GT(data.size(), 80u);
  for (size_t k = 1; k + 2 < bins.size(); ++k) {  // the port's last bin ends a link delay before the flow's
    EXPECT_NEAR(data[k].second * 8.0 / 10e-6 / 1e9, 100.0, 2.0) << "bin " << k;
    EXPECT_NEAR(acks[k].second * 8.0 / 10e-6 / 1e9, 100.0 * 60 / 1048, 1.0) << "bin " << k;
  }
  std::ostringstream csv;
  r->mon->write_rates_csv(csv);
  const auto rows = read_csv(csv.str());
  ASSERT_EQ(rows[0], (std::vector<std::string>{"time_us", "kind", "id", "gbps"}));
  EXPECT_EQ(rows[2][1], "flow");
  EXPECT_EQ(rows[2][2], "0");
  EXPECT_EQ(rows[2][0], format_time_us(bins[1].first));
  EXPECT_NEAR(std::stod(rows[2][3]), goodput, 0.02 * goodput);
  EXPECT_EQ(rows[bins.size() + 1][1], "port");
  EXPECT_EQ(rows[bins.size() + 1][2], "s0:h1");
  EXPECT_EQ(rows.back()[2], "h1:s0");
}

// Two parallel links between switches s0 and s1 (nodes 2 and 3 of the file): "s0:s1" monitors both ports,
// and each is a series of its own in rates.csv and in summary.json ("s0:s1:1", "s0:s1:2": the port index
// on s0), not one series of both.
TEST(Monitors, ParallelPortsAreSeparateRateSeries) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path topo = dir.path() / "topo.txt";
  std::ofstream(topo) << "4 2 4\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n"
                         "2 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n";
  std::string text = fmt::format(
      "[topology]\nkind = \"file\"\nfile = \"{}\"\n[cc]\nscheme = \"none\"\n"
      "[monitors]\nport_throughput = [\"s0:s1\", \"s0:h0\"]\nrate_bin_us = 10\n",
      topo.string());
  for (int i = 0; i < 8; ++i)
    text += fmt::format("[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize_bytes = 100000\nstart_us = {}\n", i);
  auto r = start(text, {});
  run_to_end(*r);
  ASSERT_EQ(r->net->stats().flows_finished, 8u);
  std::ostringstream csv;
  r->mon->write_rates_csv(csv);
  std::map<std::string, double> gbps;  // summed over the bins
  for (const auto& row : read_csv(csv.str()))
    if (row[1] == "port") gbps[row[2]] += std::stod(row[3]);
  ASSERT_EQ(gbps.size(), 3u) << csv.str();
  EXPECT_TRUE(gbps.count("s0:s1:1") && gbps.count("s0:s1:2")) << csv.str();
  EXPECT_TRUE(gbps.count("s0:h0")) << "a port alone keeps NODE:PEER: " << csv.str();
  // Eight flows spread over both links (ECMP): each port carried data of its own.
  EXPECT_GT(gbps["s0:s1:1"], 0);
  EXPECT_GT(gbps["s0:s1:2"], 0);
  std::set<std::string> top;
  const nlohmann::json summary = r->mon->summary();
  for (const auto& e : summary["rates"]["top_ports"]) top.insert(e["port"].get<std::string>());
  EXPECT_EQ(top, (std::set<std::string>{"s0:s1:1", "s0:s1:2", "s0:h0"}));
}

TEST(Monitors, PfcEventsPairUpAndSumToPausedTime) {
  auto r = start(mercury_victim_pfc(), {"monitors.pfc=true"});
  // Stop in the middle of the bursts (pauses from ~190 us) so that some are still open ("end" rows).
  r->net->run(Time::from_us(300), true);
  r->mon->finish();
  std::ostringstream csv;
  r->mon->write_pfc_csv(csv);
  Network& net = *r->net;
  const auto rows = read_csv(csv.str());
  ASSERT_EQ(rows[0],
            (std::vector<std::string>{"time_us", "node", "port", "peer", "prio", "event", "duration_us"}));
  ASSERT_GT(rows.size(), 4u);
  const TopoSpec& topo = net.topo();
  std::map<std::tuple<int, int, int>, int64_t> open, paused_ps;
  std::map<std::pair<int, int>, uint64_t> pauses;
  size_t resumes = 0, ends = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& c = rows[i];
    ASSERT_EQ(c.size(), 7u) << i;
    const int node = lookup_node(topo, c[1]);
    const int port = std::stoi(c[2]);
    ASSERT_GE(node, 0) << c[1];
    ASSERT_EQ(net.node(node).port(port).peer->id(), lookup_node(topo, c[3]));
    const auto key = std::make_tuple(node, port, std::stoi(c[4]));
    const int64_t t = us_to_ps(c[0]);
    if (c[5] == "pause") {
      EXPECT_EQ(open.count(key), 0u) << "two pauses without a resume, row " << i;
      EXPECT_EQ(c[6], "");
      open[key] = t;
      ++pauses[{node, port}];
    } else {
      ASSERT_TRUE(c[5] == "resume" || c[5] == "end") << c[5];
      ASSERT_EQ(open.count(key), 1u) << c[5] << " without a pause, row " << i;
      EXPECT_EQ(us_to_ps(c[6]), t - open[key]) << "row " << i;
      if (c[5] == "resume") {
        paused_ps[key] += us_to_ps(c[6]);
        ++resumes;
      } else {
        EXPECT_EQ(t, net.now().ps);
        ++ends;
      }
      open.erase(key);
    }
  }
  EXPECT_TRUE(open.empty());  // every open pause was closed by an "end" row
  EXPECT_GT(resumes, 0u);
  EXPECT_GT(ends, 0u);
  // Resume durations sum to each port's paused time; every paused port is in the log.
  int ports_paused = 0;
  for (int id = 0; id < net.num_nodes(); ++id)
    for (Port& p : net.node(id).ports()) {
      int64_t sum = 0;
      for (int prio = 0; prio < kNumPriorities; ++prio) {
        auto it = paused_ps.find({id, p.index, prio});
        if (it != paused_ps.end()) sum += it->second;
        EXPECT_EQ(open.count({id, p.index, prio}), 0u);
      }
      EXPECT_EQ(sum, p.stats.paused_time.ps) << topo.node_names[id] << " port " << p.index;
      const uint64_t logged = pauses[std::make_pair(id, p.index)];
      EXPECT_LE(logged, p.stats.pause_received);
      if (p.stats.pause_received > 0) {
        ++ports_paused;
        EXPECT_GT(logged, 0u);
      }
    }
  EXPECT_GT(ports_paused, 1);
  const auto j = r->mon->summary();
  EXPECT_EQ(j["pfc"]["paused_at_end"].get<uint64_t>(), ends);
  EXPECT_EQ(j["pfc"]["resume_events"].get<uint64_t>(), resumes);
}

TEST(Monitors, CnpCountsEqualNetStats) {
  // stop_when_done = false: the run goes on until the network is empty, so every CNP sent has arrived.
  auto r = start(incast_dcqcn(false), {"monitors.cnp=true", "monitors.queue_ports=[\"s0:h8\"]"});
  run_to_end(*r);
  const NetStats& st = r->net->stats();
  ASSERT_EQ(st.flows_finished, 8u);
  ASSERT_GT(st.cnps_sent, 50u);
  // Monitor samples are background events: the run ends with the network's last event, and the
  // clock stops there (the pending sample never moves it).
  EXPECT_LT(r->net->now(), Time::from_ms(20));
  EXPECT_EQ(r->net->sim().foreground_pending(), 0u);
  const auto counts = r->mon->cnp_counts();
  ASSERT_EQ(counts.size(), 8u);
  uint64_t received = 0, from_switches = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(counts[i].flow_id, i);
    EXPECT_EQ(counts[i].dst, 8);
    received += counts[i].received;
    from_switches += counts[i].from_switches;
  }
  EXPECT_EQ(received, st.cnps_sent + st.cnps_from_switches);
  EXPECT_EQ(from_switches, st.cnps_from_switches);
  std::ostringstream csv;
  r->mon->write_cnps_csv(csv);
  const auto rows = read_csv(csv.str());
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"flow_id", "src", "dst", "cnps_received", "cnps_from_switches"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"0", std::to_string(counts[0].src), "8",
                                               std::to_string(counts[0].received), "0"}));
  const auto j = r->mon->summary();
  EXPECT_EQ(j["cnp"]["cnps_received"].get<uint64_t>(), received);
}

TEST(Monitors, BufferCdfIsMonotoneAndEndsAtOne) {
  auto r = start(incast_dcqcn(), {"monitors.buffer=true", "monitors.buffer_interval_us=2"});
  run_to_end(*r);
  const int sw = lookup_node(r->net->topo(), "s0");
  const auto& samples = r->mon->buffer_samples(sw);
  ASSERT_GT(samples.size(), 50u);
  EXPECT_GT(*std::max_element(samples.begin(), samples.end()), 100'000);
  EXPECT_LE(*std::max_element(samples.begin(), samples.end()), r->net->stats().max_switch_buffer_bytes);
  std::ostringstream csv;
  r->mon->write_buffer_csv(csv);
  const auto rows = read_csv(csv.str());
  ASSERT_EQ(rows[0], (std::vector<std::string>{"switch", "buffer_bytes", "cdf"}));
  ASSERT_GT(rows.size(), 3u);
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_GT(std::stoll(rows[i][1]), std::stoll(rows[i - 1][1]));
    EXPECT_GT(std::stod(rows[i][2]), std::stod(rows[i - 1][2]));
  }
  EXPECT_EQ(rows.back()[2], "1.000000");
  const size_t zeros = static_cast<size_t>(std::count(samples.begin(), samples.end(), 0));
  if (zeros > 0) {
    EXPECT_EQ(rows[1][1], "0");
    EXPECT_NEAR(std::stod(rows[1][2]), static_cast<double>(zeros) / static_cast<double>(samples.size()),
                1e-6);
  }
}

TEST(MonitorsConfig, OffByDefaultAndResolvedValuesRecorded) {
  const Scenario plain = load_scenario_text(incast_dcqcn(), "test.toml");
  EXPECT_FALSE(plain.monitors.any());
  const Scenario s = load_scenario_text(
      incast_dcqcn(), "test.toml",
      {"monitors.queue_ports=[\"s0:h8\", \"all\"]", "monitors.flow_rates=[3, 1, 3]", "monitors.pfc=true"});
  // "all" adds the star switch's 9 ports; s0:h8 is not repeated.
  EXPECT_EQ(s.monitors.queue_ports.size(), 9u);
  EXPECT_EQ(s.monitors.queue_ports[0].peer, 8);
  EXPECT_EQ(s.monitors.flow_rates, (std::vector<uint64_t>{1, 3}));
  std::ostringstream os;
  os << s.resolved;
  const std::string r = os.str();
  EXPECT_NE(r.find("flow_rates = [ 1, 3 ]"), std::string::npos) << r;
  EXPECT_NE(r.find("queue_interval_us = 10"), std::string::npos) << r;
  EXPECT_NE(r.find("pfc = true"), std::string::npos) << r;
  const Scenario all = load_scenario_text(incast_dcqcn(), "test.toml", {"monitors.flow_rates=all"});
  EXPECT_TRUE(all.monitors.all_flows);
}

TEST(MonitorsConfig, BadKeysFailWithTheirLine) {
  struct Case {
    std::string body;     // the [monitors] table's lines
    int line;             // 1-based line within `body`
    std::string message;  // part of the error message
  };
  const std::vector<Case> cases = {
      {"queue_port = [\"s0:h1\"]\n", 1, "unknown key 'monitors.queue_port'"},
      {"pfc = true\nqueue_ports = [\"s0:h9\"]\n", 2,
       "no port from s0 to h9; ports of s0 lead to: h0, h1, h2"},
      {"queue_ports = [\"h0:h1\"]\n", 1, "no port from h0 to h1; ports of h0 lead to: s0"},
      {"queue_ports = [\"x9:s0\"]\n", 1, "no node named 'x9'"},
      {"port_throughput = [\"s0h1\"]\n", 1, "is not a port"},
      {"queue_ports = 3\n", 1, "expected a string or an array of strings"},
      {"flow_rates = \"some\"\n", 1, "expected an array of flow ids"},
      {"\nflow_rates = [1.5]\n", 2, "flow ids are integers"},
      {"flow_rates = [-1]\n", 1, "expected an array of flow ids"},
      {"queue_interval_us = 0\n", 1, "out of range"},
      {"rate_bin_us = \"10\"\n", 1, "expected a number"},
      {"pfc = \"yes\"\n", 1, "expected true or false"},
  };
  const std::string base = incast_dcqcn();
  const int base_lines = static_cast<int>(std::count(base.begin(), base.end(), '\n'));
  for (const Case& c : cases) {
    const std::string text = base + "[monitors]\n" + c.body;
    try {
      (void)load_scenario_text(text, "bad.toml");
      ADD_FAILURE() << "accepted: " << c.body;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "bad.toml") << c.body;
      EXPECT_EQ(e.line(), base_lines + 1 + c.line) << c.body << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  // Programmatic resolution throws std::invalid_argument with the same words.
  const TopoSpec t = star({.hosts = 3});
  EXPECT_THROW((void)resolve_monitor_ports(t, "s0:s0"), std::invalid_argument);
  EXPECT_EQ(resolve_monitor_ports(t, "all").size(), 3u);
  EXPECT_EQ(resolve_monitor_ports(t, "h2:s0").size(), 1u);
  EXPECT_EQ(resolve_monitor_ports(t, "3:2")[0].port, 2);  // ids work too: s0 is node 3
}

// --- Input queues (monitors.input_queue_ports, input_output_queued switches) ---

namespace {

// 4:1 incast on a dumbbell of input-and-output queued switches with PFC, no congestion control and no ECN:
// h0..h3 (on s0) each send 400 KB to h4 (on s1). s0's output to s1 is the bottleneck, so the inputs of s0
// from h0..h3 fill behind it and pause the hosts.
std::string ioq_incast(const std::string& input_queueing) {
  std::string t = fmt::format(
      "name = \"ioq-incast\"\nseed = 1\nduration_ms = 2\nstop_when_done = false\n"
      "[topology]\nkind = \"dumbbell\"\nsenders = 4\nreceivers = 1\n"
      "[switch]\nmodel = \"input_output_queued\"\ninput_queueing = \"{}\"\necn = false\n"
      "[cc]\nscheme = \"none\"\n",
      input_queueing);
  for (int i = 0; i < 4; ++i)
    t += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h4\"\nsize_bytes = 400000\n", i);
  return t;
}

// The time_us column of a queues.csv-shaped file.
std::vector<std::string> time_column(const std::string& csv) {
  std::vector<std::string> out;
  for (const auto& row : read_csv(csv)) out.push_back(row.at(0));
  return out;
}

}  // namespace

TEST(Monitors, IoqIncastInputQueuesFillWithinTheirLimit) {
  for (const std::string q : {"fifo", "voq"}) {
    SCOPED_TRACE(q);
    auto r = start(ioq_incast(q), {"monitors.input_queue_ports=[\"all\"]", "monitors.queue_ports=[\"s0:s1\"]",
                                   "monitors.queue_interval_us=0.5"});
    run_to_end(*r);
    Network& net = *r->net;
    EXPECT_EQ(net.stats().data_drops, 0u);
    EXPECT_EQ(net.stats().flows_finished, 4u);
    const auto& ports = r->mon->spec().input_queue_ports;
    ASSERT_EQ(ports.size(), 7u);  // s0: h0..h3, s1; s1: s0, h4
    const auto& samples = r->mon->input_bytes();
    ASSERT_EQ(samples.size(), r->mon->queue_times().size());
    ASSERT_EQ(samples.size(), r->mon->queue_bytes().size());
    ASSERT_GT(samples.size(), 100u);
    const Bytes limit = r->s.sw.input_queue_bytes;
    const int s0 = lookup_node(net.topo(), "s0");
    Bytes peak_all = 0;
    uint64_t pauses_to_hosts = 0;
    for (size_t i = 0; i < ports.size(); ++i) {
      Bytes mx = 0;
      for (const auto& row : samples) mx = std::max(mx, row[i]);
      peak_all = std::max(peak_all, mx);
      EXPECT_LE(mx, limit) << "port " << i;
      if (ports[i].node == s0 && net.is_host(ports[i].peer)) {
        EXPECT_GT(mx, 20'000) << "s0's input from host " << ports[i].peer << " never filled";
        pauses_to_hosts += net.node(s0).port(ports[i].port).stats.pause_sent;
      }
    }
    // One data priority: a sample never exceeds the network's true ingress peak.
    EXPECT_LE(peak_all, net.stats().max_ingress_bytes);
    EXPECT_GT(pauses_to_hosts, 0u);  // PFC from the inputs
    // stop_when_done = false: sampling (background events) ends with the network's last event, long
    // before duration_ms, as for queues.csv; the last samples see every input queue drained.
    EXPECT_LT(net.now(), Time::from_us(500));
    EXPECT_EQ(net.sim().foreground_pending(), 0u);
    EXPECT_LE(r->mon->queue_times().back(), net.now());
    EXPECT_GT(r->mon->queue_times().back() + Time::from_us(0.5), net.now());
    for (Bytes b : samples.back()) EXPECT_EQ(b, 0);

    std::ostringstream in_csv, eg_csv;
    r->mon->write_input_queues_csv(in_csv);
    r->mon->write_queues_csv(eg_csv);
    const auto rows = read_csv(in_csv.str());
    ASSERT_EQ(rows[0], (std::vector<std::string>{"time_us", "node", "port", "peer", "queue_bytes"}));
    ASSERT_EQ(rows.size(), 1 + samples.size() * ports.size());
    for (size_t s = 0; s < samples.size(); ++s)
      for (size_t i = 0; i < ports.size(); ++i) {
        const auto& row = rows[1 + s * ports.size() + i];
        ASSERT_EQ(us_to_ps(row[0]), r->mon->queue_times()[s].ps);
        ASSERT_EQ(row[1], monitor_node_name(net.topo(), ports[i].node));
        ASSERT_EQ(row[2], std::to_string(ports[i].port));
        ASSERT_EQ(row[3], monitor_node_name(net.topo(), ports[i].peer));
        ASSERT_EQ(std::stoll(row[4]), samples[s][i]);
      }
    // The same time base as queues.csv.
    auto t_in = time_column(in_csv.str());
    t_in.erase(std::unique(t_in.begin(), t_in.end()), t_in.end());
    EXPECT_EQ(t_in, time_column(eg_csv.str()));
  }
}

TEST(MonitorsConfig, InputQueuesNeedTheInputOutputQueuedModel) {
  // Shared buffer (the default model): an input error at the key's line, and under --set.
  const std::string base = incast_dcqcn();
  const int base_lines = static_cast<int>(std::count(base.begin(), base.end(), '\n'));
  try {
    (void)load_scenario_text(base + "[monitors]\npfc = true\ninput_queue_ports = [\"s0:h1\"]\n", "bad.toml");
    ADD_FAILURE() << "accepted input_queue_ports under the shared buffer";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.toml");
    EXPECT_EQ(e.line(), base_lines + 3);
    EXPECT_NE(std::string(e.what()).find(
                  "monitors.input_queue_ports: needs switch.model = \"input_output_queued\""),
              std::string::npos)
        << e.what();
  }
  try {
    (void)load_scenario_text(base, "bad.toml", {"monitors.input_queue_ports=[\"all\"]"});
    ADD_FAILURE() << "accepted input_queue_ports under the shared buffer (--set)";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "--set monitors.input_queue_ports");
    EXPECT_NE(std::string(e.what()).find("input_output_queued"), std::string::npos) << e.what();
  }
  // Under the IOQ model: hosts have no input queues; names are checked as for queue_ports.
  const std::string ioq = ioq_incast("fifo");
  EXPECT_THROW((void)load_scenario_text(ioq, "t.toml", {"monitors.input_queue_ports=[\"h0:s0\"]"}),
               InputError);
  try {
    (void)load_scenario_text(ioq, "t.toml", {"monitors.input_queue_ports=[\"s0:h4\"]"});
    ADD_FAILURE() << "accepted s0:h4";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no port from s0 to h4"), std::string::npos) << e.what();
  }
  const Scenario ok = load_scenario_text(ioq, "t.toml", {"monitors.input_queue_ports=[\"s1:s0\", \"all\"]"});
  ASSERT_EQ(ok.monitors.input_queue_ports.size(), 7u);
  EXPECT_EQ(ok.monitors.input_queue_ports[0].peer, lookup_node(ok.topo, "s0"));
  EXPECT_TRUE(ok.monitors.any());
  // Programmatic use on a shared-buffer network throws std::invalid_argument.
  const Scenario sb = load_scenario_text(base, "t.toml");
  Network net(sb.topo, sb.sw, sb.nic, sb.seed, sb.make_scheme());
  MonitorSpec spec;
  spec.input_queue_ports = resolve_monitor_ports(sb.topo, "s0:h1");
  EXPECT_THROW(Monitors(net, spec), std::invalid_argument);
}

TEST(MonitorsConfig, InputQueuesCsvAndSummaryFromARun) {
  TempDir dir;
  RunOptions o;
  o.out_dir = dir.path().string();
  const Scenario s = load_scenario_text(
      ioq_incast("fifo"), "test.toml",
      {"monitors.input_queue_ports=[\"s0:h0\", \"s0:h2\", \"s1:s0\"]", "monitors.queue_interval_us=2"});
  const RunResult res = run_scenario(s, o);
  (void)res;
  EXPECT_FALSE(fs::exists(dir.path() / "queues.csv"));  // only the input queues were asked for
  const auto rows = read_csv(read_text_file(dir.path() / "input_queues.csv"));
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"time_us", "node", "port", "peer", "queue_bytes"}));
  const auto j = nlohmann::json::parse(read_text_file(dir.path() / "summary.json"));
  ASSERT_TRUE(j.contains("monitors")) << j.dump(2);
  const auto& iq = j["monitors"]["input_queues"];
  EXPECT_EQ(iq["ports_monitored"].get<size_t>(), 3u);
  EXPECT_EQ(iq["interval_us"].get<double>(), 2.0);
  const size_t samples = iq["samples"].get<size_t>();
  EXPECT_GT(samples, 20u);
  EXPECT_EQ(rows.size(), 1 + 3 * samples);
  // s0's inputs from h0 and h2 fill; s1's input from s0 drains at line rate into h4's port.
  Bytes csv_peak = 0;
  for (size_t k = 1; k < rows.size(); ++k)
    if (rows[k][1] == "s0") csv_peak = std::max<Bytes>(csv_peak, std::stoll(rows[k][4]));
  ASSERT_GE(iq["top_ports"].size(), 2u);
  const auto& top = iq["top_ports"][0];
  EXPECT_EQ(top["node"], "s0");
  EXPECT_EQ(top["max_sampled_queue_bytes"].get<Bytes>(), csv_peak);
  EXPECT_GT(csv_peak, 20'000);
  EXPECT_LE(csv_peak, s.sw.input_queue_bytes);
  EXPECT_FALSE(top.contains("max_queue_bytes"));  // no per-port true peak of input queues
  // The resolved config records the key.
  EXPECT_NE(read_text_file(dir.path() / "scenario.resolved.toml").find("input_queue_ports"),
            std::string::npos);
}
