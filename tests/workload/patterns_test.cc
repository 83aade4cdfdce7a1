// Tests of the traffic patterns (workload/patterns.h) and of reading them from [[traffic]] tables
// (config/traffic.cc): structure of each pattern, offered load, determinism, class labels, key errors.
#include "workload/patterns.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/traffic.h"
#include "core/error.h"
#include "core/rng.h"
#include "workload/cdf.h"
#include "workload/generators.h"

namespace rocesim {
namespace {

const SizeCdf& websearch() {
  static const SizeCdf cdf = SizeCdf::load(std::string(ROCESIM_DATA_DIR) + "/workloads/websearch.cdf");
  return cdf;
}

std::vector<int> iota_hosts(int n, int first = 0) {
  std::vector<int> h(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) h[i] = first + i;
  return h;
}

PoissonParams poisson(const std::vector<int>& senders, double gbps, uint64_t max_flows, uint64_t seed = 7) {
  PoissonParams p;
  p.senders = senders;
  p.offered.assign(senders.size(), Rate::from_gbps(gbps));
  p.flow.sizes = &websearch();
  p.max_flows = max_flows;
  p.seed = seed;
  p.stream = "test";
  return p;
}

std::vector<FlowSpec> drain(FlowSource& src, size_t limit = SIZE_MAX) {
  std::vector<FlowSpec> out;
  FlowSpec f;
  while (out.size() < limit && src.next(f)) out.push_back(f);
  return out;
}

void expect_sorted(const std::vector<FlowSpec>& flows) {
  for (size_t i = 1; i < flows.size(); ++i) ASSERT_LE(flows[i - 1].start, flows[i].start) << "flow " << i;
}

Scenario scenario(const std::string& text) { return load_scenario_text(text, "patterns_test.toml"); }

std::vector<FlowSpec> scenario_flows(const Scenario& s, size_t limit = SIZE_MAX) {
  auto src = s.make_flow_source();
  return drain(*src, limit);
}

// 32 hosts h0..h31 at 100 Gb/s on a leaf-spine (host_group = leaf index, 8 hosts each).
std::string leaf_spine(double duration_ms = 10) {
  return fmt::format("seed = 3\nduration_ms = {}\n", duration_ms) + R"(
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
)";
}
const std::string kLeafSpine = leaf_spine();

// ---------------------------------------------------------------------------------------------------
// Structure

TEST(Patterns, GroupsNeverCrossAndEveryHostSends) {
  // rcm/fattree: 12 groups of 36 on the k = 12 fat-tree (432 hosts).
  const auto hosts = iota_hosts(432);
  std::vector<int> group_of(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) group_of[i] = static_cast<int>(i / 36);
  GroupsPoisson g(poisson(hosts, 50, 60'000), group_of);
  EXPECT_EQ(g.num_groups(), 12);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size(), 60'000u);
  expect_sorted(flows);
  std::set<int> senders;
  std::vector<int> per_group(12, 0);
  for (const auto& f : flows) {
    ASSERT_NE(f.src, f.dst);
    ASSERT_EQ(f.src / 36, f.dst / 36) << f.src << " -> " << f.dst;
    senders.insert(f.src);
    ++per_group[f.dst / 36];
  }
  EXPECT_EQ(senders.size(), 432u);
  for (int n : per_group) EXPECT_NEAR(n, 5000, 500);
}

TEST(Patterns, GroupsRejectsASingletonGroup) {
  EXPECT_THROW(GroupsPoisson(poisson(iota_hosts(5), 50, 10), {0, 0, 1, 1, 2}), InputError);
}

TEST(Patterns, OneGroupReproducesPoissonAllToAll) {
  const auto hosts = iota_hosts(16, 4);
  PoissonAllToAllParams a;
  a.hosts = hosts;
  a.sizes = &websearch();
  a.host_rate = Rate::from_gbps(100);
  a.load = 0.4;
  a.seed = 11;
  a.stream = "same";
  a.max_flows = 5000;
  PoissonAllToAll ref(a);
  PoissonParams p = poisson(hosts, 40, 5000, 11);
  p.stream = "same";
  GroupsPoisson g(p, std::vector<int>(hosts.size(), 0));
  const auto x = drain(ref), y = drain(g);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].src, y[i].src) << i;
    ASSERT_EQ(x[i].dst, y[i].dst) << i;
    ASSERT_EQ(x[i].size_bytes, y[i].size_bytes) << i;
    ASSERT_EQ(x[i].start, y[i].start) << i;
  }
}

TEST(Patterns, RandomDerangementHasNoFixedPoint) {
  for (size_t n : {2u, 3u, 7u, 100u, 432u}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      Rng rng = Rng::stream(seed, "derangement", n);
      const auto p = random_derangement(n, rng);
      ASSERT_EQ(p.size(), n);
      std::vector<int> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(sorted[i], static_cast<int>(i)) << "not a permutation, n=" << n;
        ASSERT_NE(p[i], static_cast<int>(i)) << "fixed point, n=" << n << " seed=" << seed;
      }
    }
  }
}

TEST(Patterns, PermutationPartnersAreAFixedDerangement) {
  const Scenario s = scenario(leaf_spine(1000) + R"(
[[traffic]]
pattern = "permutation"
load = 0.5
max_flows = 20000
)");
  const auto flows = scenario_flows(s);
  ASSERT_EQ(flows.size(), 20000u);
  std::map<int, int> partner;
  for (const auto& f : flows) {
    ASSERT_NE(f.src, f.dst);
    auto [it, fresh] = partner.emplace(f.src, f.dst);
    ASSERT_EQ(it->second, f.dst) << "host " << f.src << " changed partner";
  }
  ASSERT_EQ(partner.size(), 32u);
  std::set<int> receivers;
  for (auto [src, dst] : partner) receivers.insert(dst);
  EXPECT_EQ(receivers.size(), 32u);  // a bijection: every host receives from exactly one

  // Long-lived: one flow per host, all at start, to the same partners (same seed, same table index).
  const Scenario l = scenario(kLeafSpine + R"(
[[traffic]]
pattern = "permutation"
long_lived = true
size_bytes = 100000000
start_us = 5
)");
  const auto ll = scenario_flows(l);
  ASSERT_EQ(ll.size(), 32u);
  for (const auto& f : ll) {
    EXPECT_EQ(f.dst, partner[f.src]);
    EXPECT_EQ(f.size_bytes, 100'000'000);
    EXPECT_EQ(f.start, Time::from_us(5));
  }
}

TEST(Patterns, IncastRoundsHaveFanInDistinctSendersAndThePeriod) {
  IncastParams p;
  p.senders = iota_hosts(32);
  p.receivers = iota_hosts(32);
  p.fan_in = 8;
  p.period = Time::from_us(100);
  p.rounds = 50;
  p.start = Time::from_us(10);
  p.flow.fixed_size = 64'000;
  p.seed = 5;
  IncastRounds inc(p);
  const auto flows = drain(inc);
  ASSERT_EQ(flows.size(), 50u * 8u);
  expect_sorted(flows);
  std::set<int> receivers;
  for (int r = 0; r < 50; ++r) {
    std::set<int> senders;
    for (int i = 0; i < 8; ++i) {
      const FlowSpec& f = flows[static_cast<size_t>(r * 8 + i)];
      EXPECT_EQ(f.start, Time::from_us(10 + 100.0 * r));
      EXPECT_EQ(f.dst, flows[static_cast<size_t>(r * 8)].dst);
      EXPECT_NE(f.src, f.dst);
      EXPECT_EQ(f.size_bytes, 64'000);
      EXPECT_EQ(f.dport, 100);  // the config reader sets 200; the generator keeps the shape's
      senders.insert(f.src);
    }
    EXPECT_EQ(senders.size(), 8u) << "round " << r;
    receivers.insert(flows[static_cast<size_t>(r * 8)].dst);
  }
  EXPECT_GT(receivers.size(), 10u);  // a random receiver per round
  EXPECT_EQ(inc.rounds_started(), 50u);
}

TEST(Patterns, IncastJitterStaysInsideItsRound) {
  IncastParams p;
  p.senders = iota_hosts(16);
  p.dst = 3;
  p.fan_in = 15;
  p.period = Time::from_us(50);
  p.jitter = Time::from_us(20);
  p.stop = Time::from_us(1000);  // rounds 0..19
  p.flow.fixed_size = 1000;
  IncastRounds inc(p);
  const auto flows = drain(inc);
  ASSERT_EQ(flows.size(), 20u * 15u);
  expect_sorted(flows);
  for (size_t i = 0; i < flows.size(); ++i) {
    const int64_t round = static_cast<int64_t>(i / 15);
    EXPECT_GE(flows[i].start, Time::from_us(50.0 * round));
    EXPECT_LT(flows[i].start, Time::from_us(50.0 * round + 20));
    EXPECT_EQ(flows[i].dst, 3);
    EXPECT_NE(flows[i].src, 3);
  }
  p.fan_in = 16;  // only 15 senders other than the receiver
  EXPECT_THROW(IncastRounds{p}, InputError);
}

TEST(Patterns, HotspotShareAndHotSetSize) {
  const Scenario s = scenario(R"(
seed = 9
duration_ms = 1000
[topology]
kind = "leaf_spine"
leaves = 8
spines = 2
hosts_per_leaf = 16
[[traffic]]
pattern = "hotspot"
load = 0.5
hot_fraction = 0.15
hot_share = 0.125
class = "bg"
max_flows = 100000
)");
  const TrafficSpec& t = s.traffic.at(0);
  ASSERT_EQ(t.hot.size(), 16u);  // 12.5 % of 128
  const std::set<int> hot(t.hot.begin(), t.hot.end());
  const auto flows = scenario_flows(s);
  ASSERT_EQ(flows.size(), 100'000u);
  const uint16_t hot_class = t.hot_class_id, bg_class = t.class_id;
  EXPECT_EQ(s.class_labels.at(hot_class), "hot");
  EXPECT_EQ(s.class_labels.at(bg_class), "bg");
  size_t n_hot = 0;
  std::set<int> senders;
  for (const auto& f : flows) {
    ASSERT_NE(f.src, f.dst);
    const bool to_hot = hot.count(f.dst) > 0;
    ASSERT_EQ(f.class_id, to_hot ? hot_class : bg_class);
    n_hot += to_hot;
    senders.insert(f.src);
  }
  const double share = static_cast<double>(n_hot) / static_cast<double>(flows.size());
  RecordProperty("hot_share", std::to_string(share));
  std::printf("  hotspot: %zu of %zu flows hot (%.4f)\n", n_hot, flows.size(), share);
  EXPECT_NEAR(share, 0.15, 0.01);
  EXPECT_EQ(senders.size(), 128u);
}

// background_to_all (the RCM paper's hot-spot pattern): the background flows reach the hot hosts too;
// without it they never do. Same seed, so the hot set and the senders' draws are the same in both runs.
TEST(Patterns, HotspotBackgroundToAllIncludesTheHotHosts) {
  const std::string base = R"(
seed = 9
duration_ms = 1000
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
[[traffic]]
pattern = "hotspot"
load = 0.5
hot_fraction = 0.15
hot_share = 0.125
class = "bg"
max_flows = 40000
)";
  for (const bool to_all : {false, true}) {
    const Scenario s = scenario(base + (to_all ? "background_to_all = true\n" : ""));
    const TrafficSpec& t = s.traffic.at(0);
    ASSERT_EQ(t.bg_to_all, to_all);
    ASSERT_EQ(t.hot.size(), 4u);  // 12.5 % of 32
    const std::set<int> hot(t.hot.begin(), t.hot.end());
    const auto flows = scenario_flows(s);
    ASSERT_EQ(flows.size(), 40'000u);
    size_t bg = 0, bg_to_hot = 0, hot_flows = 0;
    std::set<int> bg_dsts;
    for (const auto& f : flows) {
      ASSERT_NE(f.src, f.dst);
      if (f.class_id == t.hot_class_id) {
        ASSERT_EQ(hot.count(f.dst), 1u);
        ++hot_flows;
        continue;
      }
      ASSERT_EQ(f.class_id, t.class_id);
      ++bg;
      bg_to_hot += hot.count(f.dst);
      bg_dsts.insert(f.dst);
    }
    EXPECT_NEAR(static_cast<double>(hot_flows) / static_cast<double>(flows.size()), 0.15, 0.01);
    if (to_all) {
      // Every host is a background destination; the hot ones get their share of 4 of the other 31 hosts
      // (a hot sender sees 3 of 31, a non-hot one 4 of 31): about 12.5 %.
      EXPECT_EQ(bg_dsts.size(), 32u);
      for (int h : t.hot) EXPECT_EQ(bg_dsts.count(h), 1u) << "hot host " << h << " got no background flow";
      EXPECT_NEAR(static_cast<double>(bg_to_hot) / static_cast<double>(bg), 0.125, 0.01);
    } else {
      EXPECT_EQ(bg_to_hot, 0u);
      EXPECT_EQ(bg_dsts.size(), 28u);
    }
  }
}

TEST(Patterns, SetToSetUsesOnlyTheGivenSets) {
  const Scenario s = scenario(leaf_spine(2000) + R"(
[[traffic]]
pattern = "set_to_set"
src_group = [0, 1]
dst = ["h24", "h25", 26, "h27"]
load = 0.3
max_flows = 20000
)");
  const auto flows = scenario_flows(s);
  ASSERT_EQ(flows.size(), 20'000u);
  std::set<int> senders, receivers;
  for (const auto& f : flows) {
    ASSERT_LT(f.src, 16);  // leaves 0 and 1: hosts 0..15
    ASSERT_TRUE(f.dst >= 24 && f.dst <= 27);
    senders.insert(f.src);
    receivers.insert(f.dst);
  }
  EXPECT_EQ(senders.size(), 16u);
  EXPECT_EQ(receivers.size(), 4u);
}

TEST(Patterns, BurstSpacingAndCount) {
  BurstParams p;
  p.senders = {4, 5, 6, 7};
  p.gap.assign(4, Time::from_us(10));
  p.gap[3] = Time::from_us(25);
  p.dst = 2;
  p.count = 5;
  p.start = Time::from_us(100);
  p.flow.fixed_size = 50'000;
  BurstTrains b(p);
  const auto flows = drain(b);
  ASSERT_EQ(flows.size(), 20u);
  expect_sorted(flows);
  std::map<int, std::vector<Time>> starts;
  for (const auto& f : flows) {
    EXPECT_EQ(f.dst, 2);
    starts[f.src].push_back(f.start);
  }
  for (auto& [src, st] : starts) {
    ASSERT_EQ(st.size(), 5u);
    for (size_t k = 0; k < st.size(); ++k)
      EXPECT_EQ(st[k], Time::from_us(100) +
                           (src == 7 ? Time::from_us(25) : Time::from_us(10)) * static_cast<int64_t>(k));
  }
}

TEST(Patterns, BurstFromConfigIsBackToBackUntilStop) {
  // mercury/victim: 8 burst senders B1..B8 (40 Gb/s links), 50 KB flows to R1 for 500 us.
  const Scenario s = scenario(R"(
[topology]
kind = "mercury_victim"
[[traffic]]
pattern = "burst"
class = "burst"
senders = "B1..B8"
dst = "R1"
size_bytes = 50000
count = 0
start_us = 100
stop_us = 600
)");
  const auto flows = scenario_flows(s);
  const Time gap = tx_time(50'000, Rate::from_gbps(40));  // 10 us
  EXPECT_EQ(gap, Time::from_us(10));
  ASSERT_EQ(flows.size(), 8u * 50u);
  std::map<int, int> per_sender;
  for (const auto& f : flows) {
    EXPECT_EQ(s.class_labels.at(f.class_id), "burst");
    EXPECT_EQ(s.topo.node_names.at(f.dst), "R1");
    EXPECT_EQ(s.topo.node_names.at(f.src)[0], 'B');
    EXPECT_EQ(f.start, Time::from_us(100) + gap * per_sender[f.src]++);
  }
  EXPECT_EQ(per_sender.size(), 8u);
}

TEST(Patterns, LongLivedFlowsFromStopTimes) {
  const Scenario s = scenario(kLeafSpine + R"(
[[traffic]]
pattern = "long_lived"
class = "victim"
stop_us = 1000
[[traffic.flows]]
src = "h0"
dst = "h9"
size_bytes = 12345
start_us = 50
[[traffic.flows]]
src = 1
dst = "h10"
[[traffic.flows]]
src = "h2"
dst = "h11"
start_us = 200
stop_us = 400
rate_gbps = 10
)");
  const auto flows = scenario_flows(s);
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0].src, 1);                  // start 0: the table's start_us
  EXPECT_EQ(flows[0].size_bytes, 12'500'000);  // 100 Gb/s x 1000 us
  EXPECT_EQ(flows[1].src, 0);
  EXPECT_EQ(flows[1].size_bytes, 12345);
  EXPECT_EQ(flows[1].start, Time::from_us(50));
  EXPECT_EQ(flows[2].size_bytes, 250'000);  // 10 Gb/s x 200 us
  for (const auto& f : flows) EXPECT_EQ(s.class_labels.at(f.class_id), "victim");
}

// ---------------------------------------------------------------------------------------------------
// Offered load: bytes offered / (senders x rate x window) within 2 % of the target over a long window.

double offered_load(const Scenario& s, double rate_gbps_times_senders) {
  const auto flows = scenario_flows(s);
  double bytes = 0;
  for (const auto& f : flows) bytes += static_cast<double>(f.size_bytes);
  const TrafficSpec& t = s.traffic.at(0);
  const double window_s = (std::min(t.stop, s.duration) - t.start).sec();
  EXPECT_GT(flows.size(), 150'000u) << "too few flows for a 2 % check";
  return bytes * 8 / (rate_gbps_times_senders * 1e9 * window_s);
}

TEST(PatternsLoad, AllToAllGroupsHotspotSetToSetWithin2Percent) {
  const std::string base = leaf_spine(4000);
  struct Case {
    std::string name, table;
    double capacity_gbps;  // senders x rate, or load_of
    double target;
  } cases[] = {
      {"all_to_all", "pattern = \"all_to_all\"\nload = 0.5\n", 32 * 100.0, 0.5},
      {"groups", "pattern = \"groups\"\ngroup_size = 8\nload = 0.6\n", 32 * 100.0, 0.6},
      {"hotspot", "pattern = \"hotspot\"\nload = 0.5\nhot_hosts = \"h0..h3\"\n", 32 * 100.0, 0.5},
      {"set_to_set", "pattern = \"set_to_set\"\nsrc_group = [0, 1]\ndst = \"h24..h27\"\nload = 0.7\n",
       16 * 100.0, 0.7},
  };
  for (const Case& c : cases) {
    const Scenario s = scenario(base + "[[traffic]]\nstart_us = 100\n" + c.table);
    const double measured = offered_load(s, c.capacity_gbps);
    const double err = measured / c.target - 1;
    RecordProperty(c.name + "_load_error", fmt::format("{:+.4f}", err));
    std::printf("  %-10s target %.2f measured %.4f (%+.2f %%)\n", c.name.c_str(), c.target, measured,
                err * 100);
    EXPECT_NEAR(err, 0, 0.02) << c.name;
  }
}

TEST(PatternsLoad, SetToSetAgainstALongHaulLink) {
  // LSCC: 16 hosts of DC A to 4 hosts of DC B at 70 % of a 200 Gb/s long-haul link.
  const Scenario s = scenario(leaf_spine(40000) + R"(
[[traffic]]
pattern = "set_to_set"
src = "h0..h15"
dst = "h24..h27"
load = 0.7
load_of = 200
)");
  const double measured = offered_load(s, 200);
  std::printf("  set_to_set load_of=200: target 0.70 measured %.4f (%+.2f %%)\n", measured,
              (measured / 0.7 - 1) * 100);
  EXPECT_NEAR(measured / 0.7 - 1, 0, 0.02);
}

// ---------------------------------------------------------------------------------------------------
// Determinism and scenarios

const std::string kThree = R"(
[[traffic]]
pattern = "hotspot"
class = "background"
hot_class = "hot"
load = 0.3
hot_share = 0.125
stop_us = 2000
[[traffic]]
pattern = "incast"
class = "burst"
fan_in = 8
size_bytes = 64000
period_us = 100
jitter_us = 5
start_us = 50
stop_us = 2000
[[traffic]]
pattern = "long_lived"
class = "victim"
size_bytes = 50000000
[[traffic.flows]]
src = "h0"
dst = "h31"
[[traffic.flows]]
src = "h1"
dst = "h30"
start_us = 10
)";

TEST(PatternsScenario, EveryPatternIsDeterministicPerSeed) {
  const std::vector<std::string> tables = {
      "pattern = \"all_to_all\"\nload = 0.4\n",
      "pattern = \"groups\"\ngroups = 4\nload = 0.4\n",
      "pattern = \"permutation\"\nload = 0.4\n",
      "pattern = \"incast\"\nfan_in = 5\nsize_bytes = 1000\nperiod_us = 10\njitter_us = 3\n",
      "pattern = \"hotspot\"\nload = 0.4\n",
      "pattern = \"set_to_set\"\nsrc_group = 0\ndst_group = [2, 3]\nload = 0.4\n",
      "pattern = \"burst\"\ndst = \"h3\"\ncount = 3\nworkload = \"hadoop\"\ngap_us = 2\n",
  };
  auto key = [](const std::vector<FlowSpec>& v) {
    std::vector<std::tuple<int, int, int64_t, int64_t>> k;
    for (const auto& f : v) k.emplace_back(f.src, f.dst, f.size_bytes, f.start.ps);
    return k;
  };
  for (const auto& t : tables) {
    SCOPED_TRACE(t);
    const std::string text = leaf_spine(2) + "[[traffic]]\n" + t;
    const auto a = scenario_flows(scenario(text), 3000);
    const auto b = scenario_flows(scenario(text), 3000);
    ASSERT_GT(a.size(), 20u);
    EXPECT_EQ(key(a), key(b));
    std::string other = text;
    other.replace(other.find("seed = 3"), 8, "seed = 4");
    EXPECT_NE(key(a), key(scenario_flows(scenario(other), 3000)));
  }
}

TEST(PatternsScenario, ThreePatternsCarryTheirClassLabels) {
  const Scenario s = scenario(leaf_spine(5) + kThree);
  ASSERT_EQ(s.traffic.size(), 3u);
  const auto flows = scenario_flows(s);
  expect_sorted(flows);
  std::map<std::string, int> count;
  for (size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& f = flows[i];
    EXPECT_EQ(f.id, i);
    const std::string& label = s.class_labels.at(f.class_id);
    ++count[label];
    if (label == "burst") {
      EXPECT_EQ(f.dport, 200);
      EXPECT_EQ(f.size_bytes, 64000);
    } else if (label == "victim") {
      EXPECT_EQ(f.size_bytes, 50'000'000);
      EXPECT_TRUE((f.src == 0 && f.dst == 31) || (f.src == 1 && f.dst == 30));
    } else {
      EXPECT_TRUE(label == "background" || label == "hot") << label;
      EXPECT_LT(f.start, Time::from_us(2000));
    }
  }
  EXPECT_EQ(count["victim"], 2);
  EXPECT_EQ(count["burst"], 20 * 8);  // rounds at 50, 150, ..., 1950 us
  EXPECT_GT(count["background"], 100);
  EXPECT_GT(count["hot"], 10);
  // The resolved scenario lists the defaults that were used.
  const auto* t1 = s.resolved["traffic"].as_array()->get(1)->as_table();
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ((*t1)["rounds"].value<int64_t>(), 0);
  EXPECT_FALSE((*t1)["dst"]);  // decided by rule: a comment of the resolved file, not a key
  EXPECT_NE(s.resolved_notes.find("# traffic[1].dst: random host per round\n"), std::string::npos)
      << s.resolved_notes;
  EXPECT_EQ((*t1)["priority"].value<int64_t>(), 3);
}

TEST(PatternsScenario, NodeListsTakeNamesIdsAndRanges) {
  const Scenario s = scenario(kLeafSpine + R"(
[[traffic]]
pattern = "incast"
senders = ["h1", 2, "h3..h5", "20..21"]
dst = "h0"
size_bytes = 1000
)");
  EXPECT_EQ(s.traffic.at(0).src, (std::vector<int>{1, 2, 3, 4, 5, 20, 21}));
  EXPECT_EQ(s.traffic.at(0).fan_in, 7);  // default: every listed sender
  const auto flows = scenario_flows(s);
  ASSERT_EQ(flows.size(), 7u);
}

struct BadCase {
  const char* name;
  const char* table;
  const char* message;
};

TEST(PatternsScenario, BadKeysNameTheKeyAndWhatIsExpected) {
  const BadCase cases[] = {
      {"unknown key", "pattern = \"hotspot\"\nfan_in = 3\n", "unknown key 'traffic[0].fan_in'"},
      {"bad pattern", "pattern = \"torus\"\n", "'torus' is not one of"},
      {"group size", "pattern = \"groups\"\ngroup_size = 5\n", "32 hosts do not split into groups of 5"},
      {"no groups", "pattern = \"groups\"\n", "exactly one of groups"},
      {"hot both", "pattern = \"hotspot\"\nhot_hosts = [\"h1\"]\nhot_share = 0.1\n", "either hot_hosts"},
      {"hot too many", "pattern = \"hotspot\"\nhot_share = 0.99\n", "at least 2 must stay non-hot"},
      {"unknown node", "pattern = \"incast\"\nsenders = [\"h1\", \"h99\"]\n",
       "traffic[0].senders[1]: no node named 'h99'"},
      {"switch", "pattern = \"burst\"\ndst = \"s0\"\nsize_bytes = 10\n", "is a switch"},
      {"twice", "pattern = \"incast\"\nsenders = [\"h1\", 1]\n", "listed twice"},
      {"bad range", "pattern = \"incast\"\nsenders = \"h5..s2\"\n", "bad range 'h5..s2'"},
      {"fan_in", "pattern = \"incast\"\nsenders = \"h1..h4\"\nfan_in = 5\n", "fan_in: 5 is out of range"},
      {"incast needs fan_in", "pattern = \"incast\"\nsize_bytes = 10\n", "needs fan_in"},
      {"rounds", "pattern = \"incast\"\nfan_in = 2\nrounds = 3\n", "more than one round needs period_us"},
      {"jitter", "pattern = \"incast\"\nfan_in = 2\nperiod_us = 10\njitter_us = 11\n",
       "jitter_us: 11 is out of range"},
      {"sizes twice", "pattern = \"all_to_all\"\nsize_bytes = 10\nworkload = \"hadoop\"\n",
       "either size_bytes"},
      {"set both", "pattern = \"set_to_set\"\nsrc = \"h1\"\nsrc_group = 1\ndst = \"h2\"\n",
       "either src or src_group"},
      {"set none", "pattern = \"set_to_set\"\ndst = \"h2\"\n", "needs src"},
      {"load_of", "pattern = \"set_to_set\"\nsrc = \"h1\"\ndst = \"h2\"\nload = 1\nload_of = 400\n",
       "more than host"},
      {"long no flows", "pattern = \"long_lived\"\n", "needs [[traffic.flows]]"},
      {"burst gap", "pattern = \"burst\"\ndst = \"h0\"\ncount = 4\n", "needs gap_us"},
      {"perm long", "pattern = \"permutation\"\nlong_lived = true\n", "needs size_bytes"},
      {"stop", "pattern = \"all_to_all\"\nstart_us = 10\nstop_us = 5\n", "stop_us: must be after start_us"},
  };
  for (const BadCase& b : cases) {
    SCOPED_TRACE(b.name);
    try {
      (void)scenario(kLeafSpine + "[[traffic]]\n" + b.table);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << e.what();
      EXPECT_GT(e.line(), 0) << e.what();
    }
  }
}

TEST(PatternsScenario, ExamplesValidate) {
  const std::filesystem::path dir = std::filesystem::path(ROCESIM_SCENARIO_DIR) / "examples";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    SCOPED_TRACE(e.path().string());
    const Scenario s = load_scenario(e.path().string());
    EXPECT_FALSE(scenario_flows(s, 10).empty());
    ++n;
  }
  EXPECT_GE(n, 2);
}

// scenario.resolved.toml is itself a scenario: loading it gives the same values and the same flows, for every
// scenario in scenarios/ (values decided by rule, such as "all hosts", are comments there, not keys).
TEST(PatternsScenario, ResolvedTableOfEveryScenarioReloadsToTheSameFlows) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ROCESIM_SCENARIO_DIR)) {
    if (e.path().extension() != ".toml") continue;
    SCOPED_TRACE(e.path().string());
    const Scenario s = load_scenario(e.path().string());
    std::ostringstream os;
    os << s.resolved;
    Scenario again;
    try {
      again = load_scenario_text(os.str(), e.path().string());
    } catch (const InputError& err) {
      FAIL() << err.what() << "\n" << os.str();
    }
    std::ostringstream os2;
    os2 << again.resolved;
    EXPECT_EQ(os.str(), os2.str());
    const auto a = scenario_flows(s, 300), b = scenario_flows(again, 300);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].src, b[i].src);
      EXPECT_EQ(a[i].dst, b[i].dst);
      EXPECT_EQ(a[i].size_bytes, b[i].size_bytes);
      EXPECT_EQ(a[i].start, b[i].start);
      EXPECT_EQ(a[i].class_id, b[i].class_id);
    }
    ++n;
  }
  EXPECT_GE(n, 20);
}

}  // namespace
}  // namespace rocesim
