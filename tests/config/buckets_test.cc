// Default size buckets follow the scenario's workload; explicit edges win.
#include <gtest/gtest.h>

#include "config/scenario.h"

using namespace rocesim;

namespace {
std::string scenario(const std::string& workload, const std::string& extra = "") {
  return "[topology]\nkind = \"star\"\n[[traffic]]\nworkload = \"" + workload +
         "\"\nload = 0.3\nstop_us = 100\n" + extra;
}
}  // namespace

TEST(SizeBuckets, DefaultsFollowTheWorkloadPercentiles) {
  const Scenario ws = load_scenario_text(scenario("websearch"), "ws.toml");
  const Scenario hd = load_scenario_text(scenario("hadoop"), "hd.toml");
  // WebSearch's median is 73 KB (rounded to 70 KB); Hadoop's is under 1 KB.
  ASSERT_GE(ws.size_buckets.size(), 2u);
  ASSERT_GE(hd.size_buckets.size(), 2u);
  EXPECT_EQ(ws.size_buckets.front(), 70'000);
  EXPECT_LT(hd.size_buckets.front(), 1'000);
  EXPECT_NE(ws.size_buckets, hd.size_buckets);
  for (const auto* s : {&ws, &hd})
    for (size_t i = 1; i < s->size_buckets.size(); ++i) EXPECT_GT(s->size_buckets[i], s->size_buckets[i - 1]);
}

TEST(SizeBuckets, ExplicitEdgesAndFlowOnlyScenariosUseThem) {
  const Scenario s =
      load_scenario_text(scenario("websearch", "[output]\nsize_buckets_bytes = [1000, 5000]\n"), "x.toml");
  EXPECT_EQ(s.size_buckets, (std::vector<Bytes>{1000, 5000}));
  const Scenario f = load_scenario_text(
      "[topology]\nkind = \"star\"\n[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nsize_bytes = 5000\n", "f.toml");
  EXPECT_EQ(f.size_buckets, (std::vector<Bytes>{10'000, 100'000, 1'000'000, 10'000'000}));
}
