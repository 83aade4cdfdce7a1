// core/flat_map.h against std::unordered_map under random inserts and erases (backward-shift deletion keeps
// every key findable), and no growth in a steady state of live keys.
#include "core/flat_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace rocesim {

TEST(FlatMap, MatchesUnorderedMapUnderRandomInsertsAndErases) {
  std::mt19937_64 rng(7);
  FlatMap<int64_t> m(4);
  std::unordered_map<uint64_t, int64_t> ref;
  std::vector<uint64_t> keys;
  for (int i = 0; i < 600; ++i) keys.push_back(rng() % 4 == 0 ? rng() : (rng() % 64) << 32 | (rng() % 64));
  for (int step = 0; step < 200000; ++step) {
    const uint64_t k = keys[rng() % keys.size()];
    if (rng() % 3 == 0) {
      EXPECT_EQ(m.erase(k), ref.erase(k) == 1);
    } else {
      m.get_or_insert(k) += 5;
      ref[k] += 5;
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (const uint64_t k : keys) {
    const int64_t* v = m.find(k);
    const auto it = ref.find(k);
    ASSERT_EQ(v != nullptr, it != ref.end()) << k;
    if (v) {
      EXPECT_EQ(*v, it->second);
    }
  }
}

TEST(FlatMap, SteadyStateDoesNotGrow) {
  FlatMap<int64_t> m;
  for (uint64_t k = 0; k < 100; ++k) m.get_or_insert(k << 32 | k) = 1;
  const size_t cap = m.capacity();
  // 100 live keys, one leaving and a new one arriving per step: a million steps, no new capacity.
  for (uint64_t k = 100; k < 1'000'100; ++k) {
    EXPECT_TRUE(m.erase((k - 100) << 32 | (k - 100)));
    m.get_or_insert(k << 32 | k) = 1;
  }
  EXPECT_EQ(m.size(), 100u);
  EXPECT_EQ(m.capacity(), cap);
  EXPECT_EQ(m.find(uint64_t{5} << 32 | 5), nullptr);
  EXPECT_NE(m.find(uint64_t{1'000'050} << 32 | 1'000'050), nullptr);
}

}  // namespace rocesim
