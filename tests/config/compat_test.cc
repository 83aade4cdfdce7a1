// Running the ns-3 HPCC simulator's experiments unchanged (docs/coming-from-hpcc-sim.md):
//  - the `hpcc-sim` profile sets that simulator's defaults, and they appear in scenario.resolved.toml;
//  - the ideal (standalone) FCT of a table of flows on its 320-host fat-tree equals the formula of
//    shared/docs/hpcc-sim-compat.md to the nanosecond, in FlowRecord and in fct.txt;
//  - its config.txt is translated key by key, and unknown, malformed or unsupported keys give
//    "config.txt:LINE: KEY ..." messages (tests/data/hpcc/bad/, one defect per file);
//  - `rocesim run --hpcc-config` writes fct.txt and pfc.txt where the config says, in its layout, and
//    `rocesim run --topology-file T --flow-file F --scheme S --profile hpcc-sim` runs without a scenario.
//
// Inputs: tests/data/hpcc/mix/ (a config.txt per CC mode as run.py writes them, a 4-host two-tier
// topology with 100 Gb/s hosts and a 400 Gb/s core, six flows at t = 2 s; the DCQCN config has
// BUFFER_SIZE 1 so that its incast causes PFC pauses) and tests/data/hpcc/bad/.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/run.h"
#include "cc/registry.h"
#include "config/hpcc_config.h"
#include "config/profiles.h"
#include "config/scenario.h"
#include "file_util.h"
#include "net/network.h"
#include "net/switch.h"
#include "stats/writers.h"
#include "topo/builders.h"
#include "topo/topology_file.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

const std::string kData = std::string(ROCESIM_TEST_DIR) + "/data/hpcc";

std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    std::string tok;
    while (ls >> tok) f.push_back(tok);
    if (!f.empty()) rows.push_back(f);
  }
  return rows;
}

// A value of a resolved table by dotted key.
toml::node_view<const toml::node> at(const toml::table& t, const std::string& key) {
  toml::node_view<const toml::node> v{t};
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    v = v[key.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

// A fresh temporary directory per test.
class Tmp {
 public:
  Tmp() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    dir_ = fs::temp_directory_path() / ("rocesim_compat_" + std::to_string(getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

struct Cli {
  int code = -1;
  std::string out;
};

// Runs `cd DIR && rocesim ARGS` (args shell-quoted by the caller), stdout and stderr together.
Cli run_cli(const fs::path& dir, const std::string& args) {
  const std::string cmd =
      "cd '" + dir.string() + "' && exec '" + std::string(ROCESIM_BINARY) + "' " + args + " 2>&1 </dev/null";
  Cli r;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int st = pclose(f);
  if (st != -1 && WIFEXITED(st)) r.code = WEXITSTATUS(st);
  return r;
}

const char* kStarScenario = R"(
name = "profile_star"
[topology]
kind = "star"
hosts = 4
[[flows]]
src = 0
dst = 1
size_bytes = 10000
)";

// ---------------------------------------------------------------------------------------------------
// The profile

TEST(HpccSimProfile, SetsEveryDefaultOfTheSimulatorAndRecordsIt) {
  const Scenario s = load_scenario_text(std::string("profile = \"hpcc-sim\"\n") + kStarScenario, "p.toml");
  const toml::table& r = s.resolved;
  EXPECT_EQ(at(r, "profile").value_or(std::string()), "hpcc-sim");
  // Switch buffer, reserve, resume offset, headroom 3 x rate x delay without extra packets, alpha 1/8.
  EXPECT_EQ(at(r, "switch.buffer_bytes").value_or(int64_t{0}), 32 * 1024 * 1024);
  EXPECT_EQ(at(r, "switch.reserve_bytes").value_or(int64_t{0}), 4096);
  EXPECT_EQ(at(r, "switch.resume_offset_bytes").value_or(int64_t{0}), 3072);
  EXPECT_EQ(at(r, "switch.headroom_extra_bytes").value_or(int64_t{-5}), 0);
  EXPECT_EQ(at(r, "switch.headroom_factor").value_or(0.0), 3.0);
  EXPECT_EQ(at(r, "switch.dt_shift").value_or(int64_t{0}), 3);
  EXPECT_EQ(at(r, "switch.pfc_mode").value_or(std::string()), "dynamic");
  // ECN: 400/1600 KB at 100 Gb/s scaled with port speed, Pmax 0.2.
  EXPECT_EQ(at(r, "switch.kmin_bytes").value_or(int64_t{0}), 400'000);
  EXPECT_EQ(at(r, "switch.kmax_bytes").value_or(int64_t{0}), 1'600'000);
  EXPECT_EQ(at(r, "switch.pmax").value_or(0.0), 0.2);
  EXPECT_EQ(at(r, "switch.ecn_scale_with_rate").value_or(false), true);
  EXPECT_EQ(at(r, "switch.ecn_ref_rate_gbps").value_or(0.0), 100.0);
  // Its switches queue ACKs in the data class whatever ACK_HIGH_PRIO says (the quirk key).
  EXPECT_EQ(at(r, "switch.acks_in_data_class").value_or(false), true);
  EXPECT_TRUE(s.sw.acks_in_data_class);
  // Its ECMP (hash, per-switch seeds, next-hop order) and its source ports, counted per host pair.
  EXPECT_EQ(at(r, "switch.ecmp_hash").value_or(std::string()), "hpcc_sim");
  EXPECT_EQ(s.sw.ecmp_hash, EcmpHash::kHpccSim);
  EXPECT_EQ(at(r, "nic.source_ports").value_or(std::string()), "per_pair");
  EXPECT_EQ(s.nic.source_ports, NicSettings::SourcePorts::kPerPair);
  // Flow-file start times read as its third.cc reads them (a double floored to 1 ns); the key alone does
  // not declare a flow file (this scenario has inline flows only).
  EXPECT_EQ(at(r, "flow_file.start_times").value_or(std::string()), "hpcc_sim");
  EXPECT_EQ(s.flow_start_times, FlowStartTimes::kHpccSim);
  EXPECT_TRUE(s.flow_file.empty());
  // Packets as on its wire: 1000 B payload + 36 B headers (+ 8 B timestamp for TIMELY), 2 + 5 x 8 B of INT,
  // 48 B ACKs, an ACK per packet, the ns ideal FCT (which counts 48 B of headers per packet).
  EXPECT_EQ(at(r, "nic.mtu_bytes").value_or(int64_t{0}), 1000);
  EXPECT_EQ(at(r, "nic.header_bytes").value_or(int64_t{0}), 36);
  EXPECT_EQ(at(r, "nic.timestamp_bytes").value_or(int64_t{0}), 8);
  EXPECT_EQ(at(r, "nic.ack_bytes").value_or(int64_t{0}), 48);
  EXPECT_EQ(at(r, "nic.int_hop_bytes").value_or(int64_t{0}), 8);
  EXPECT_EQ(at(r, "nic.int_base_bytes").value_or(int64_t{0}), 2);
  EXPECT_EQ(at(r, "nic.ack_interval").value_or(int64_t{0}), 1);
  EXPECT_EQ(at(r, "nic.ideal_fct").value_or(std::string()), "hpcc_ns");
  EXPECT_EQ(at(r, "output.fct_hpcc").value_or(false), true);
  // DCQCN "Mellanox" timers with the per-ACK congestion flag; R_AI/R_HAI 5/50 Mb/s x C/25G.
  EXPECT_EQ(at(r, "cc.dcqcn.variant").value_or(std::string()), "hpcc_sim");
  EXPECT_EQ(at(r, "cc.dcqcn.cnp_on_ack").value_or(false), true);
  EXPECT_EQ(at(r, "cc.dcqcn.alpha_period_us").value_or(0.0), 1.0);
  EXPECT_EQ(at(r, "cc.dcqcn.dec_period_us").value_or(0.0), 4.0);
  EXPECT_EQ(at(r, "cc.dcqcn.inc_period_us").value_or(0.0), 300.0);
  EXPECT_EQ(at(r, "cc.dcqcn.g").value_or(0.0), 1.0 / 256);
  EXPECT_EQ(at(r, "cc.dcqcn.fast_recovery_steps").value_or(int64_t{0}), 1);
  EXPECT_EQ(at(r, "cc.dcqcn.byte_counter_bytes").value_or(int64_t{-1}), 0);
  EXPECT_EQ(at(r, "cc.dcqcn.min_rate_mbps").value_or(0.0), 1000.0);
  EXPECT_DOUBLE_EQ(at(r, "cc.dcqcn.rate_ai_mbps").value_or(0.0), 20.0);
  EXPECT_DOUBLE_EQ(at(r, "cc.dcqcn.rate_hai_mbps").value_or(0.0), 200.0);
  // The structs the network is built from.
  EXPECT_EQ(s.sw.buffer_bytes, 33'554'432);
  EXPECT_EQ(s.sw.headroom_extra_bytes, 0);
  EXPECT_TRUE(s.nic.ideal_fct_hpcc_ns);
  EXPECT_TRUE(s.write_hpcc_fct);

  // Without the profile, rocesim's own defaults (the test can fail).
  const Scenario plain = load_scenario_text(kStarScenario, "plain.toml");
  EXPECT_EQ(plain.sw.headroom_extra_bytes, -1);
  EXPECT_FALSE(plain.nic.ideal_fct_hpcc_ns);
  EXPECT_FALSE(plain.sw.acks_in_data_class);
  EXPECT_EQ(plain.sw.ecmp_hash, EcmpHash::kRocesim);
  EXPECT_EQ(plain.nic.source_ports, NicSettings::SourcePorts::kPerHost);
  EXPECT_EQ(plain.nic.header_bytes, 48);
  EXPECT_EQ(plain.nic.ack_bytes, 60);
  EXPECT_EQ(plain.nic.timestamp_bytes, 0);
  EXPECT_EQ(at(plain.resolved, "cc.dcqcn.variant").value_or(std::string()), "mellanox");
  EXPECT_FALSE(at(plain.resolved, "profile"));  // recorded only when there is one
}

TEST(HpccSimProfile, ScenarioAndSetValuesWinOverTheProfile) {
  const std::string text =
      std::string("profile = \"hpcc-sim\"\n") + kStarScenario + "[switch]\nbuffer_bytes = 1000000\n";
  const Scenario s = load_scenario_text(text, "p.toml", {"nic.mtu_bytes=4000", "cc.dcqcn.g=0.5"});
  EXPECT_EQ(s.sw.buffer_bytes, 1'000'000);
  EXPECT_EQ(s.nic.mtu_bytes, 4000);
  EXPECT_EQ(at(s.resolved, "cc.dcqcn.g").value_or(0.0), 0.5);
  EXPECT_EQ(at(s.resolved, "switch.reserve_bytes").value_or(int64_t{0}), 4096);  // still the profile's
  // --profile is --set profile=...
  const Scenario t = load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim"});
  EXPECT_EQ(t.sw.buffer_bytes, 33'554'432);
}

TEST(HpccSimProfile, AppliesPerSchemeDefaultsForEveryScheme) {
  for (const auto& e : scheme_registry()) {
    SCOPED_TRACE(e.name);
    const Scenario s =
        load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim", "cc.scheme=" + e.name});
    EXPECT_EQ(s.scheme, e.name);
    EXPECT_EQ(s.sw.buffer_bytes, 33'554'432);
  }
  if (find_scheme("dctcp")) {  // step marking at K = 300 KB (100 Gb/s), g 1/16, AI 615 Mb/s
    const Scenario s = load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim", "cc.scheme=dctcp"});
    EXPECT_EQ(s.sw.kmin_bytes, 300'000);
    EXPECT_EQ(s.sw.kmax_bytes, 300'000);
    EXPECT_EQ(s.sw.pmax, 1.0);
    EXPECT_EQ(at(s.resolved, "cc.dctcp.g").value_or(0.0), 0.0625);
    EXPECT_EQ(at(s.resolved, "cc.dctcp.rate_ai_mbps").value_or(0.0), 615.0);
  }
  if (find_scheme("hpcc")) {
    const Scenario s = load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim", "cc.scheme=hpcc"});
    EXPECT_EQ(at(s.resolved, "cc.hpcc.eta").value_or(0.0), 0.95);
    EXPECT_EQ(at(s.resolved, "cc.hpcc.max_stage").value_or(int64_t{-1}), 0);
    EXPECT_EQ(s.sw.kmin_bytes, 400'000);  // DCTCP's K only with DCTCP
  }
  if (find_scheme("timely")) {
    const Scenario s = load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim", "cc.scheme=timely"});
    EXPECT_EQ(at(s.resolved, "cc.timely.t_low_us").value_or(0.0), 50.0);
    EXPECT_EQ(at(s.resolved, "cc.timely.t_high_us").value_or(0.0), 500.0);
  }
}

TEST(HpccSimProfile, UnknownProfileNamesItsLine) {
  try {
    load_scenario_text(std::string("\nprofile = \"ns3\"\n") + kStarScenario, "p.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "p.toml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("unknown profile 'ns3' (profiles: hpcc-sim)"), std::string::npos)
        << e.what();
  }
}

TEST(HpccSimProfile, ResolvedScenarioRerunsToTheSameValues) {
  const Scenario s = load_scenario_text(kStarScenario, "p.toml", {"profile=hpcc-sim"});
  std::ostringstream os;
  os << s.resolved;
  const Scenario again = load_scenario_text(os.str(), "resolved.toml");
  std::ostringstream os2;
  os2 << again.resolved;
  EXPECT_EQ(os.str(), os2.str());
}

TEST(HpccSimProfile, SwitchHeadroomIsThreeTimesRateTimesDelay) {
  Scenario s = load_scenario_text(std::string("profile = \"hpcc-sim\"\n") + R"(
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 2
host_rate_gbps = 100
fabric_rate_gbps = 400
link_delay_us = 1
[[flows]]
src = 0
dst = 1
)",
                                  "ls.toml");
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  bool seen100 = false, seen400 = false;
  for (int id = 0; id < net.num_nodes(); ++id) {
    if (net.is_host(id)) continue;
    for (const Port& p : net.node(id).ports()) {
      const Bytes want = p.rate.gbps() > 200 ? 150'000 : 37'500;  // 3 x 400G x 1 us, 3 x 100G x 1 us
      EXPECT_EQ(net.sw(id).headroom(p.index), want);
      (p.rate.gbps() > 200 ? seen400 : seen100) = true;
    }
  }
  EXPECT_TRUE(seen100 && seen400);
}

// ---------------------------------------------------------------------------------------------------
// Ideal FCT on the simulator's 320-host fat-tree

// shared/docs/hpcc-sim-compat.md: standalone = 2 x sum(link delays) + sum over hops of one packet's
// serialization (its 1000 B payload) + (size + 48 B x packets) x 8 / bottleneck rate, in integer ns.
// Hosts at 100 Gb/s, fabric at 400 Gb/s, 1 us links: 1000 B take 80 ns on a host link and 20 ns on the
// fabric.
int64_t doc_ideal_ns(int64_t size, int links) {
  const int64_t fabric_links = links - 2;
  const int64_t base = 2 * 1000 * links + 2 * 80 + 20 * fabric_links;
  const int64_t packets = (size + 999) / 1000;
  return base + (size + 48 * packets) * 8 / 100;  // bits / (100 bits per ns)
}

TEST(HpccSimIdealFct, FatTreeFlowsMatchTheDocumentToTheNanosecond) {
  Tmp tmp;
  {
    std::ofstream f(tmp.path() / "fat.txt");
    write_hpcc_topology(fat_tree_3tier(), f);
  }
  // Hosts 16 per ToR, 4 ToRs per pod: 0-1 share a ToR (2 links), 0-16 a pod (4 links), 0-64 and 319-5
  // cross the core (6 links). Flows 200 us apart so that they never meet.
  struct Pair {
    int src, dst, links;
  };
  const Pair pairs[] = {{0, 1, 2}, {0, 16, 4}, {0, 64, 6}, {319, 5, 6}};
  const int64_t sizes[] = {1, 999, 1000, 1001, 4321, 52'000, 1'234'567};
  std::string text = "profile = \"hpcc-sim\"\nduration_ms = 100\n[topology]\nkind = \"file\"\nfile = \"" +
                     (tmp.path() / "fat.txt").string() + "\"\n";
  std::map<uint64_t, std::pair<int64_t, int>> expect;  // flow id -> (size, links)
  uint64_t id = 0;
  for (const auto& p : pairs)
    for (int64_t size : sizes) {
      text += fmt::format("[[flows]]\nsrc = {}\ndst = {}\nsize_bytes = {}\nstart_us = {}\n", p.src, p.dst,
                          size, 200 * id);
      expect[id++] = {size, p.links};
    }
  const Scenario s = load_scenario_text(text, "fat.toml");
  ASSERT_EQ(s.topo.num_hosts(), 320);
  RunOptions opt;
  opt.keep_flows = true;
  const RunResult r = run_scenario(s, opt);
  ASSERT_EQ(r.flows.size(), expect.size());
  // A few by hand, independent of doc_ideal_ns: 12.24 us base RTT across the core.
  EXPECT_EQ(doc_ideal_ns(1000, 6), 12'240 + 83);           // 1048 B x 8 / 100 = 83.84
  EXPECT_EQ(doc_ideal_ns(1001, 2), 4'160 + 87);            // (1001 + 96) x 8 / 100 = 87.76
  EXPECT_EQ(doc_ideal_ns(1'234'567, 4), 8'200 + 103'507);  // (1234567 + 1235 x 48) x 8 / 100 = 103507.76
  for (const FlowRecord& f : r.flows) {
    const auto [size, links] = expect.at(f.id);
    SCOPED_TRACE(fmt::format("flow {} -> {}, {} B", f.src, f.dst, size));
    const int64_t want = doc_ideal_ns(size, links);
    EXPECT_EQ(f.ideal_fct.ps, want * 1000);
    // fct.txt's last column. (The formula counts one packet's serialization twice, so a lone flow may
    // finish a little sooner: slowdowns are clipped at 1, as the simulator's analysis does.)
    const auto cols = rows_of(hpcc_fct_line(f)).at(0);
    ASSERT_EQ(cols.size(), 8u);
    EXPECT_EQ(cols[7], std::to_string(want));
    EXPECT_GE(f.slowdown(), 1.0);
  }
}

// ---------------------------------------------------------------------------------------------------
// config.txt

TEST(HpccConfigFile, TranslatesEveryKeyOfTheDcqcnConfig) {
  const HpccConfig c = read_hpcc_config(kData + "/mix/config.txt", kData);
  EXPECT_EQ(c.cc_mode, 1);
  EXPECT_EQ(c.scheme, "dcqcn");
  EXPECT_EQ(fs::path(c.base_dir), fs::path(kData).lexically_normal());
  EXPECT_EQ(c.topology_file, kData + "/mix/topology.txt");
  EXPECT_EQ(c.fct_output, kData + "/mix/fct_topology_flow_dcqcn.txt");
  EXPECT_EQ(c.pfc_output, kData + "/mix/pfc_topology_flow_dcqcn.txt");
  // One warning per unsupported key without effect, with its line.
  const std::vector<std::string> ignored = {"TRACE_FILE",    "TRACE_OUTPUT_FILE", "ENABLE_TRACE",
                                            "QLEN_MON_FILE", "QLEN_MON_START",    "QLEN_MON_END"};
  ASSERT_EQ(c.warnings.size(), ignored.size()) << fmt::format("{}", fmt::join(c.warnings, "\n"));
  for (size_t i = 0; i < ignored.size(); ++i)
    EXPECT_NE(c.warnings[i].find(ignored[i] + " is not supported"), std::string::npos);
  EXPECT_NE(c.warnings[0].find("config.txt:8: TRACE_FILE"), std::string::npos) << c.warnings[0];

  const Scenario s = load_hpcc_config_scenario(c);
  EXPECT_EQ(s.scheme, "dcqcn");
  EXPECT_EQ(s.duration, Time::from_s(4));
  EXPECT_EQ(s.sw.buffer_bytes, 1 << 20);  // BUFFER_SIZE 1
  EXPECT_EQ(s.sw.kmin_bytes, 400'000);
  EXPECT_EQ(s.sw.kmax_bytes, 1'600'000);
  EXPECT_EQ(s.sw.pmax, 0.2);
  EXPECT_EQ(s.nic.mtu_bytes, 1000);
  EXPECT_EQ(s.nic.ack_priority, NicSettings::AckPriority::kHigh);  // ACK_HIGH_PRIO 1
  const toml::table& r = s.resolved;
  EXPECT_EQ(at(r, "profile").value_or(std::string()), "hpcc-sim");
  EXPECT_EQ(at(r, "cc.dcqcn.variant").value_or(std::string()), "hpcc_sim");
  EXPECT_EQ(at(r, "cc.dcqcn.inc_period_us").value_or(0.0), 300.0);   // RP_TIMER
  EXPECT_EQ(at(r, "cc.dcqcn.rate_ai_mbps").value_or(0.0), 20.0);     // RATE_AI 20Mb/s
  EXPECT_EQ(at(r, "cc.dcqcn.min_rate_mbps").value_or(0.0), 1000.0);  // MIN_RATE
  EXPECT_EQ(at(r, "flow_file.path").value_or(std::string()), kData + "/mix/flow.txt");
}

TEST(HpccConfigFile, MapsTheOtherModesAndTheirKeys) {
  struct Case {
    std::string file, scheme;
  };
  for (const Case& k : {Case{"config_hp95.txt", "hpcc"}, Case{"config_timely.txt", "timely"},
                        Case{"config_dctcp.txt", "dctcp"}}) {
    SCOPED_TRACE(k.file);
    if (!find_scheme(k.scheme)) {
      try {
        read_hpcc_config(kData + "/mix/" + k.file, kData);
        FAIL() << "no error without the " << k.scheme << " scheme";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("not available in this build"), std::string::npos);
      }
      continue;
    }
    const HpccConfig c = read_hpcc_config(kData + "/mix/" + k.file, kData);
    const Scenario s = load_hpcc_config_scenario(c);
    EXPECT_EQ(s.scheme, k.scheme);
    const toml::table& r = s.resolved;
    if (k.scheme == "hpcc") {
      EXPECT_EQ(at(r, "cc.hpcc.eta").value_or(0.0), 0.95);           // U_TARGET
      EXPECT_EQ(at(r, "cc.hpcc.rate_ai_mbps").value_or(0.0), 50.0);  // RATE_AI 50Mb/s
      EXPECT_EQ(at(r, "cc.hpcc.fast_react").value_or(false), true);
      EXPECT_EQ(s.nic.ack_priority, NicSettings::AckPriority::kData);  // ACK_HIGH_PRIO 0
      EXPECT_EQ(s.sw.buffer_bytes, 32 << 20);
      ASSERT_EQ(c.warnings.size(), 7u);  // the 6 trace/queue keys and INT_MULTI 4
      EXPECT_NE(c.warnings.back().find("INT_MULTI 4"), std::string::npos);
    } else if (k.scheme == "timely") {
      EXPECT_EQ(at(r, "cc.timely.delta_mbps").value_or(0.0), 100.0);  // RATE_AI
      EXPECT_EQ(at(r, "cc.timely.hai_mbps").value_or(0.0), 500.0);    // RATE_HAI
    } else {
      EXPECT_EQ(at(r, "cc.dctcp.g").value_or(0.0), 0.0625);            // EWMA_GAIN
      EXPECT_EQ(at(r, "cc.dctcp.rate_ai_mbps").value_or(0.0), 615.0);  // DCTCP_RATE_AI
      EXPECT_EQ(at(r, "cc.dctcp.rate_window").value_or(false), true);  // HAS_WIN 1
      EXPECT_EQ(s.sw.kmin_bytes, 300'000);                             // KMIN_MAP 300 KB at 100G
      EXPECT_EQ(s.sw.kmax_bytes, 300'000);
      EXPECT_EQ(s.sw.pmax, 1.0);
    }
  }
}

TEST(HpccConfigFile, EveryDefectGivesItsLineAndKey) {
  struct Bad {
    std::string file;
    int line;
    std::string what;
  };
  const std::vector<Bad> bad = {
      {"unknown_key", 5, "unknown key 'FOO_BAR': not a key of the simulator's config"},
      {"missing_value", 4, "EWMA_GAIN: missing value; expected a number"},
      {"extra_token", 4, "ENABLE_QCN: unexpected '{0:' after the value"},
      {"not_a_number", 4, "EWMA_GAIN: '1/256' is not a number"},
      {"bad_rate", 4, "RATE_AI: '20Mbit/s' is not a positive ns-3 data rate"},
      {"negative_integer", 4, "BUFFER_SIZE: '-1' is not a non-negative integer"},
      {"map_too_short", 4, "KMAX_MAP: 3 values after the key, expected 5"},
      {"map_missing_speed", 4, "KMIN_MAP has no entry for 400000000000 (400 Gb/s)"},
      {"map_not_proportional", 4, "KMIN_MAP: 400 at 100 Gb/s and 1000 at 400 Gb/s are not proportional"},
      {"dcqcn_window", 5, "HAS_WIN 1: DCQCN with a window"},
      {"cc_mode_pint", 3, "CC_MODE 10 (HPCC-PINT) is not supported by rocesim"},
      {"cc_mode_unknown", 3, "CC_MODE 5 is not a mode of the simulator"},
      {"ack_interval_zero", 4, "L2_ACK_INTERVAL 0 turns ACKs off"},
      {"link_down", 4, "LINK_DOWN: 2 values after the key, expected 3"},
      {"link_down_unlinked", 4, "LINK_DOWN: events[0].link: '0' and '1' are not linked in this topology"},
      {"error_rate", 4, "ERROR_RATE_PER_LINK 0.001: not supported"},
      {"back_to_zero", 4, "L2_BACK_TO_ZERO 1: go-back-0 is not supported"},
      {"topology_missing", 2, "TOPOLOGY_FILE: cannot find 'mix/no_such_topology.txt'"},
      {"no_flow_file", 0, "FLOW_FILE is not set"},
      {"gain_out_of_range", 5, "EWMA_GAIN: cc.dcqcn.g: 2 is out of range; expected a number in [0, 1]"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.file);
    const std::string path = kData + "/bad/" + b.file + ".txt";
    try {
      const HpccConfig c = read_hpcc_config(path, kData);
      load_hpcc_config_scenario(c);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), b.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.what), std::string::npos) << e.what();
    }
  }
  if (find_scheme("hpcc")) {
    try {
      read_hpcc_config(kData + "/bad/hpcc_multi_rate.txt", kData);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 4);
      EXPECT_NE(std::string(e.what()).find("MULTI_RATE 1: one rate per hop is not supported"),
                std::string::npos);
    }
  }
}

// LINK_DOWN t a b (t > 0): the simulator takes the link a-b down at 2 s + t us and recomputes the routes at
// once (scratch/third.cc TakeDownLink): a link event without detection delay.
TEST(HpccConfigFile, LinkDownIsALinkEvent) {
  const HpccConfig c = read_hpcc_config(kData + "/events/link_down.txt", kData);
  const Scenario s = load_hpcc_config_scenario(c);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].at, Time::from_s(2) + Time::from_us(100));
  EXPECT_EQ(s.events[0].a, 4);
  EXPECT_EQ(s.events[0].b, 6);
  EXPECT_EQ(s.events[0].action, LinkEvent::Action::kDown);
  EXPECT_EQ(s.sw.failure_detection, Time::zero());
  // Automatic: go-back-N's timer (nic.gbn_rto_us) runs in lossless fabrics too, so a failure needs no
  // timeout turned on.
  EXPECT_EQ(s.nic.rto, Time::zero());
}

TEST(HpccConfigFile, RepeatedKeysWarnAndTypoKeysGetASuggestion) {
  const std::string head = "TOPOLOGY_FILE mix/topology.txt\nFLOW_FILE mix/flow.txt\n";
  const HpccConfig c = parse_hpcc_config(head + "BUFFER_SIZE 4\nBUFFER_SIZE 8.0\n", "c.txt", kData);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "c.txt:4: BUFFER_SIZE is set again (first on line 3); the later value wins, as in the "
            "simulator");
  EXPECT_EQ(load_hpcc_config_scenario(c).sw.buffer_bytes, 8 << 20);
  try {
    parse_hpcc_config(head + "EWMA_GAINN 0.1\n", "c.txt", kData);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.txt:3: unknown key 'EWMA_GAINN'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean EWMA_GAIN?"), std::string::npos) << e.what();
  }
}

TEST(HpccConfigFile, PathsResolveFromTheWorkingDirectoryFirst) {
  Tmp tmp;
  fs::create_directories(tmp.path() / "run" / "mix");
  for (const char* f : {"topology.txt", "flow.txt", "config.txt"})
    fs::copy_file(kData + "/mix/" + f, tmp.path() / "run" / "mix" / f);
  // From the directory that holds mix/, as run.py runs: no note about the base directory.
  const HpccConfig a =
      read_hpcc_config((tmp.path() / "run" / "mix" / "config.txt").string(), (tmp.path() / "run").string());
  EXPECT_EQ(fs::path(a.base_dir), (tmp.path() / "run").lexically_normal());
  for (const auto& n : a.notes) EXPECT_EQ(n.find("relative paths resolved against"), std::string::npos) << n;
  // From elsewhere: found above the config's directory, and said so.
  const HpccConfig b =
      read_hpcc_config((tmp.path() / "run" / "mix" / "config.txt").string(), tmp.path().string());
  EXPECT_EQ(fs::path(b.base_dir), (tmp.path() / "run").lexically_normal());
  bool said = false;
  for (const auto& n : b.notes) said = said || n.find("relative paths resolved against") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(fs::path(b.fct_output),
            (tmp.path() / "run" / "mix" / "fct_topology_flow_dcqcn.txt").lexically_normal());
}

// ---------------------------------------------------------------------------------------------------
// The command line

TEST(HpccCli, RunsAConfigAndWritesFctAndPfcWhereItSays) {
  Tmp tmp;
  fs::create_directories(tmp.path() / "mix");
  for (const char* f : {"topology.txt", "flow.txt", "config.txt"})
    fs::copy_file(kData + "/mix/" + f, tmp.path() / "mix" / f);
  const Cli r = run_cli(tmp.path(), "run --hpcc-config mix/config.txt -o out -q");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: mix/config.txt:8: TRACE_FILE is not supported"), std::string::npos) << r.out;

  // fct.txt: sip dip sport dport size start_ns fct_ns standalone_ns, in completion order.
  const auto fct = rows_of(test::read_text_file(tmp.path() / "mix" / "fct_topology_flow_dcqcn.txt"));
  ASSERT_EQ(fct.size(), 6u);
  const std::map<std::string, std::string> standalone = {
      // by "sip dip size" (ideal FCTs by hand)
      {"0b000001 0b000201 300000", "33352"}, {"0b000101 0b000201 300000", "33352"},
      {"0b000301 0b000201 300000", "29312"}, {"0b000001 0b000101 1000", "4243"},
      {"0b000201 0b000301 2500", "4371"},    {"0b000101 0b000301 50000", "12392"}};
  int64_t last_finish = 0;
  for (const auto& row : fct) {
    ASSERT_EQ(row.size(), 8u);
    const std::string k = row[0] + " " + row[1] + " " + row[4];
    ASSERT_TRUE(standalone.count(k)) << k;
    EXPECT_EQ(row[7], standalone.at(k)) << k;
    EXPECT_EQ(row[3], row[4] == "50000" ? "200" : "100");  // dport as in the flow file
    const int64_t finish = std::stoll(row[5]) + std::stoll(row[6]);
    EXPECT_GE(finish, last_finish);
    last_finish = finish;
  }
  EXPECT_EQ(test::read_text_file(tmp.path() / "mix" / "fct_topology_flow_dcqcn.txt"),
            test::read_text_file(tmp.path() / "out" / "fct.txt"));

  // pfc.txt: time_ns node node_type ifindex 1/0, one line per frame received: as many as were sent.
  const auto pfc = rows_of(test::read_text_file(tmp.path() / "mix" / "pfc_topology_flow_dcqcn.txt"));
  const auto summary = nlohmann::json::parse(test::read_text_file(tmp.path() / "out" / "summary.json"));
  const uint64_t frames =
      summary["pfc"]["pauses_sent"].get<uint64_t>() + summary["pfc"]["resumes_sent"].get<uint64_t>();
  ASSERT_GT(frames, 0u) << "the incast should pause";
  EXPECT_EQ(pfc.size(), frames);
  int64_t last = 0;
  for (const auto& row : pfc) {
    ASSERT_EQ(row.size(), 5u);
    const int node = std::stoi(row[1]);
    EXPECT_EQ(row[2], node >= 4 ? "1" : "0");  // nodes 4, 5, 6 are the switches
    const int ifindex = std::stoi(row[3]);
    EXPECT_GE(ifindex, 1);
    EXPECT_LE(ifindex, node >= 4 ? 3 : 1);
    EXPECT_TRUE(row[4] == "1" || row[4] == "0");
    EXPECT_GE(std::stoll(row[0]), std::max<int64_t>(last, 2'000'000'000));
    last = std::stoll(row[0]);
  }
  // The resolved scenario reruns as a plain scenario.
  const Cli again = run_cli(tmp.path(), "run out/scenario.resolved.toml -o out2 -q");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(test::read_text_file(tmp.path() / "out" / "flows.csv"),
            test::read_text_file(tmp.path() / "out2" / "flows.csv"));
}

TEST(HpccCli, RunsATopologyAndFlowFileWithoutAScenario) {
  Tmp tmp;
  const Cli r = run_cli(tmp.path(), "run --topology-file '" + kData + "/mix/topology.txt' --flow-file '" +
                                        kData + "/mix/flow.txt' --scheme dcqcn --profile hpcc-sim -o out -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const toml::table resolved =
      toml::parse(test::read_text_file(tmp.path() / "out" / "scenario.resolved.toml"));
  EXPECT_EQ(at(resolved, "profile").value_or(std::string()), "hpcc-sim");
  EXPECT_EQ(at(resolved, "cc.scheme").value_or(std::string()), "dcqcn");
  EXPECT_EQ(at(resolved, "switch.buffer_bytes").value_or(int64_t{0}), 32 << 20);
  EXPECT_EQ(at(resolved, "duration_ms").value_or(0.0), 4000.0);
  EXPECT_EQ(rows_of(test::read_text_file(tmp.path() / "out" / "fct.txt")).size(), 6u);

  const Cli help = run_cli(tmp.path(), "run --help");
  for (const char* opt :
       {"--topology-file", "--flow-file", "--scheme", "--profile", "--hpcc-config", "--duration-ms"})
    EXPECT_NE(help.out.find(opt), std::string::npos) << opt;
  const Cli half = run_cli(tmp.path(), "run --topology-file x.txt");
  EXPECT_EQ(half.code, 2);
  EXPECT_NE(half.out.find("--topology-file and --flow-file go together"), std::string::npos) << half.out;
}

TEST(HpccCli, AMalformedConfigIsRejectedWithItsLine) {
  Tmp tmp;
  const Cli r = run_cli(tmp.path(), "run --hpcc-config '" + kData + "/bad/unknown_key.txt' -o out");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("bad/unknown_key.txt:5: unknown key 'FOO_BAR'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

// --hpcc-config writes fct.txt where the config says: an existing file there that rocesim did not write
// (the ns-3 simulator's own output) is refused unless --force; rocesim's own is replaced.
TEST(HpccCli, RefusesToOverwriteAnFctTxtItDidNotWrite) {
  Tmp tmp;
  fs::create_directories(tmp.path() / "mix");
  for (const char* f : {"topology.txt", "flow.txt", "config.txt"})
    fs::copy_file(kData + "/mix/" + f, tmp.path() / "mix" / f);
  const fs::path fct = tmp.path() / "mix" / "fct_topology_flow_dcqcn.txt";
  std::ofstream(fct) << "ns-3 output\n";
  const Cli refused = run_cli(tmp.path(), "run --hpcc-config mix/config.txt -q");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("mix/config.txt: " + fct.lexically_normal().string() +
                             " exists and was not written by rocesim"),
            std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("--force"), std::string::npos) << refused.out;
  EXPECT_EQ(test::read_text_file(fct), "ns-3 output\n");
  const Cli forced = run_cli(tmp.path(), "run --hpcc-config mix/config.txt -q --force");
  ASSERT_EQ(forced.code, 0) << forced.out;
  EXPECT_EQ(rows_of(test::read_text_file(fct)).size(), 6u);
  EXPECT_TRUE(fs::exists(fct.string() + ".rocesim"));
  // rocesim's own output is replaced without --force.
  const Cli again = run_cli(tmp.path(), "run --hpcc-config mix/config.txt -q");
  EXPECT_EQ(again.code, 0) << again.out;
}

}  // namespace
