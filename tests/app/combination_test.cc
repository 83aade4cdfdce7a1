// No configuration hangs or lies: every congestion-control
// scheme x every routing x both loss recoveries x every flow control x two fabrics x one and two threads, on
// 16-host fabrics with traffic that reorders (a permutation of long flows, sprayed or moved), fills buffers
// (a 15:1 incast) and, without flow control, loses (one lossy fabric link, and the buffer overflows of the
// incast). One test case per scheme and routing (Combination.FinishesWithinInvariants/dcqcn_spray) runs
// its 24 combinations of loss recovery, flow control, fabric and threads, each named in a failure as
// scheme_routing_recovery_flowcontrol_fabric_tN (56 processes under ctest rather than 1344).
//
// Coverage: the full product, 14 schemes x 96 = 1344 runs, about 40 s of one core in Release (most take
// 10-50 ms; go-back-N under spraying, a RoCE NIC without out-of-order placement, takes longest). Under
// ROCESIM_SANITIZED (ASan + UBSan in `make test`) a reduced subset runs: dcqcn's 24 routing x recovery x
// flow-control cases on the leaf-spine at one thread, and one case of every other scheme; under
// ThreadSanitizer (`make test-tsan`, ROCESIM_TSAN) dcqcn's two-thread leaf-spine cases with PFC or no flow
// control (16). The others skip there.
//
// A combination the program refuses must be refused with an InputError whose message names the cause
// (one of the combination's values, or the key it sets); everything it accepts must pass every invariant
// of tests/app/run_invariants.h.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "app/run_invariants.h"
#include "cc/registry.h"
#include "config/scenario.h"

using namespace rocesim;

namespace {

struct Combo {
  std::string scheme, routing, recovery, flow_control, fabric;
  int threads = 1;
  bool sanitized = false;  // in the subset that runs under ROCESIM_SANITIZED
};

std::string combo_name(const Combo& c) {
  return fmt::format("{}_{}_{}_{}_{}_t{}", c.scheme, c.routing, c.recovery == "go_back_n" ? "gbn" : "sel",
                     c.flow_control, c.fabric, c.threads);
}

const std::vector<std::string> kRoutings = {"ecmp", "flowlet", "spray", "adaptive"};
const std::vector<std::string> kRecoveries = {"go_back_n", "selective"};
const std::vector<std::string> kFlowControls = {"pfc", "credit", "none"};
const std::vector<std::string> kFabrics = {"leafspine", "fattree"};

std::vector<Combo> all_combos() {
  std::vector<Combo> v;
  size_t scheme = 0;
  for (const SchemeEntry& e : scheme_registry()) {
    const size_t first = v.size();
    for (const std::string& routing : kRoutings)
      for (const std::string& recovery : kRecoveries)
        for (const std::string& fc : kFlowControls)
          for (const std::string& fabric : kFabrics)
            for (int threads : {1, 2}) v.push_back({e.name, routing, recovery, fc, fabric, threads});
    // Under the sanitizers: dcqcn's 24 routing x recovery x flow-control cases on the leaf-spine at one
    // thread, and one case of every other scheme (a different one for each).
    const size_t n = v.size() - first;
    for (size_t i = first; i < v.size(); ++i)
      v[i].sanitized = e.name == "dcqcn" ? v[i].fabric == "leafspine" && v[i].threads == 1
                                         : (i - first) == (scheme * 37 + 5) % n;
    ++scheme;
  }
  return v;
}

// 16 hosts either way: a 4 x 4 leaf-spine with 4 spines at host speed (non-blocking), or a k = 4 fat-tree.
// Leaves are s0..s3 and spines s4..s7; the fat-tree's first edge switch s0 links aggregation s8 (checked
// below: the event names a link that exists or the scenario is refused).
std::string scenario_text(const Combo& c) {
  // Runs end when their flows do; the limit only bounds a run that would not (go-back-N under spraying
  // takes up to about 6 ms here).
  std::string t =
      fmt::format("name = \"combination\"\nseed = 7\nduration_ms = 50\nthreads = {}\n\n", c.threads);
  if (c.fabric == "leafspine")
    t += "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 4\nhosts_per_leaf = 4\nhost_rate_gbps = "
         "100\n"
         "fabric_rate_gbps = 100\nlink_delay_us = 1\n\n";
  else
    t += "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = 100\nfabric_rate_gbps = "
         "100\nlink_delay_us = 1\n\n";
  t += fmt::format("[switch]\nbuffer_bytes = 1000000\nrouting = \"{}\"\nflow_control = \"{}\"\n", c.routing,
                   c.flow_control);
  // Credits: what every ingress may be granted fits the 1 MB buffer (8 ports x 100 KB on a leaf), returned
  // every 5 us so that 100 KB of credit carries more than line rate.
  if (c.flow_control == "credit") t += "credit_buffer_bytes = 100000\ncredit_period_us = 5\n";
  t += "\n";
  t += fmt::format("[nic]\nloss_recovery = \"{}\"\n\n[cc]\nscheme = \"{}\"\n\n", c.recovery, c.scheme);
  // Every host sends 300 KB to its partner of a random derangement, and 15 hosts send 100 KB each to h15.
  t += "[[traffic]]\npattern = \"permutation\"\nclass = \"permutation\"\nlong_lived = true\nsize_bytes = "
       "300000\n\n"
       "[[traffic]]\npattern = \"incast\"\nclass = \"incast\"\nsenders = \"h0..h14\"\ndst = \"h15\"\n"
       "size_bytes = 100000\nstart_us = 20\n";
  // Lossy runs: one fabric link drops 1 % of its packets, both ways, from the start.
  if (c.flow_control == "none")
    t += fmt::format("\n[[events]]\nat_us = 0\nlink = [\"s0\", \"{}\"]\naction = \"loss\"\nloss = 0.01\n",
                     c.fabric == "leafspine" ? "s4" : "s8");
  return t;
}

bool names_cause(const std::string& msg, const Combo& c) {
  for (const std::string& w : {c.scheme, c.routing, c.recovery, c.flow_control, std::string("flow_control"),
                               std::string("routing"), std::string("loss_recovery"), std::string("scheme")})
    if (msg.find(w) != std::string::npos) return true;
  return false;
}

// One scheme and routing: its 24 combinations (gtest prints the parameter with PrintTo).
struct SchemeRouting {
  std::string scheme, routing;
};
void PrintTo(const SchemeRouting& p, std::ostream* os) { *os << p.scheme << "_" << p.routing; }

std::vector<SchemeRouting> scheme_routings() {
  std::vector<SchemeRouting> v;
  for (const SchemeEntry& e : scheme_registry())
    for (const std::string& routing : kRoutings) v.push_back({e.name, routing});
  return v;
}

bool runs_here(const Combo& c) {
  if (std::getenv("ROCESIM_TSAN"))
    return c.scheme == "dcqcn" && c.fabric == "leafspine" && c.threads == 2 && c.flow_control != "credit";
  if (std::getenv("ROCESIM_SANITIZED")) return c.sanitized;
  return true;
}

void run_combination(const Combo& c) {
  SCOPED_TRACE(combo_name(c));
  const std::string text = scenario_text(c);
  const test::CheckedRun r = test::run_text_checked(text, "combination");
  if (r.refused) {
    // A refusal is a correct answer only when it says why: the message names the value or key at fault.
    EXPECT_TRUE(names_cause(r.error, c)) << "refused without naming the cause: " << r.error;
    std::printf("%s refused: %s\n", combo_name(c).c_str(), r.error.c_str());
    return;
  }
  const nlohmann::json& j = r.summary;
  std::printf(
      "%s: %llu flows, %llu retransmitted of %llu (%llu spurious), drops %s, p50 slowdown %.2f, %.2f s\n",
      combo_name(c).c_str(), static_cast<unsigned long long>(test::counter(j, "flows", "finished")),
      static_cast<unsigned long long>(test::counter(j, "transport", "retransmitted_packets")),
      static_cast<unsigned long long>(test::counter(j, "transport", "data_packets_sent")),
      static_cast<unsigned long long>(test::counter(j, "transport", "spurious_retransmissions")),
      j.contains("drops") ? j["drops"].dump().c_str() : "{}",
      j.contains("fct") && j["fct"].contains("slowdown") ? j["fct"]["slowdown"].value("p50", 0.0) : 0.0,
      r.wall_seconds);
  EXPECT_TRUE(r.violations.empty()) << r.report() << "\nscenario:\n" << text;
}

class Combination : public testing::TestWithParam<SchemeRouting> {};

TEST_P(Combination, FinishesWithinInvariants) {
  const SchemeRouting& p = GetParam();
  int ran = 0;
  for (const Combo& c : all_combos()) {
    if (c.scheme != p.scheme || c.routing != p.routing || !runs_here(c)) continue;
    run_combination(c);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "a reduced subset runs under the sanitizers; the Release run has the rest";
}

INSTANTIATE_TEST_SUITE_P(All, Combination, testing::ValuesIn(scheme_routings()),
                         [](const testing::TestParamInfo<SchemeRouting>& i) {
                           return i.param.scheme + "_" + i.param.routing;
                         });

// A sprayed permutation of long flows on a non-blocking leaf-spine, with selective repeat under PFC and no
// congestion control: spraying spreads every flow over the four spines, and selective repeat keeps what
// spraying reorders, so the median flow is within 20 % of its ideal.
TEST(CombinationCases, SprayedPermutationNearIdeal) {
  const std::string text =
      "name = \"spray_permutation\"\nseed = 3\nduration_ms = 20\n\n"
      "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 4\nhosts_per_leaf = 4\nhost_rate_gbps = 100\n"
      "fabric_rate_gbps = 100\nlink_delay_us = 1\n\n"
      "[switch]\nrouting = \"spray\"\nflow_control = \"pfc\"\n\n"
      "[nic]\nloss_recovery = \"selective\"\n\n[cc]\nscheme = \"none\"\n\n"
      "[[traffic]]\npattern = \"permutation\"\nlong_lived = true\nsize_bytes = 4000000\n";
  const Scenario s = load_scenario_text(text, "spray_permutation");
  const test::CheckedRun r = test::run_checked(s, test::invariant_options_for(s));
  ASSERT_FALSE(r.refused) << r.error;
  EXPECT_TRUE(r.violations.empty()) << r.report();
  const double p50 = r.summary["fct"]["slowdown"]["p50"].get<double>();
  std::printf("sprayed permutation: p50 slowdown %.3f, %llu of %llu packets retransmitted\n", p50,
              static_cast<unsigned long long>(test::counter(r.summary, "transport", "retransmitted_packets")),
              static_cast<unsigned long long>(test::counter(r.summary, "transport", "data_packets_sent")));
  EXPECT_LE(p50, 1.2);
}

// Credit flow control whose grants exceed the buffer: 8 ingress ports of a leaf x the default 800 KB of
// credit each against a 1 MB shared buffer. Lossless by its name, it must either be refused, naming the
// two settings, or drop nothing.
TEST(CombinationCases, CreditGrantsBeyondTheBufferAreRefusedOrLossless) {
  const std::string text =
      "name = \"credit_overcommit\"\nseed = 7\nduration_ms = 5\n\n"
      "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 4\nhosts_per_leaf = 4\nhost_rate_gbps = 100\n"
      "fabric_rate_gbps = 100\nlink_delay_us = 1\n\n"
      "[switch]\nbuffer_bytes = 1000000\nflow_control = \"credit\"\n\n[cc]\nscheme = \"none\"\n\n"
      "[[traffic]]\npattern = \"incast\"\nsenders = \"h0..h14\"\ndst = \"h15\"\nsize_bytes = 100000\n";
  const test::CheckedRun r = test::run_text_checked(text, "credit_overcommit");
  if (r.refused) {
    EXPECT_NE(r.error.find("credit_buffer_bytes"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("buffer_bytes"), std::string::npos) << r.error;
    return;
  }
  EXPECT_TRUE(r.violations.empty()) << r.report();
}

}  // namespace
