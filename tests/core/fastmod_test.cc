// core/fastmod.h gives exactly a % d: every divisor of the shared table and random large ones, against
// edge dividends (0, around multiples of d, around 2^32 and 2^64) and random 64-bit ones.
#include "core/fastmod.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace rocesim {

namespace {

void check(uint64_t d, std::mt19937_64& rng, int randoms) {
  const FastModMagic m = fastmod_magic(d);
  std::vector<uint64_t> as = {0,
                              1,
                              d - 1,
                              d,
                              d + 1,
                              UINT32_MAX,
                              uint64_t{1} << 32,
                              (uint64_t{1} << 32) + 1,
                              UINT64_MAX,
                              UINT64_MAX - 1,
                              UINT64_MAX - d,
                              UINT64_MAX / d * d,
                              UINT64_MAX / d * d - 1};
  for (int i = 0; i < randoms; ++i) {
    const uint64_t a = rng();
    as.push_back(a);
    as.push_back(a >> (i % 64));
    as.push_back(a / d * d);
  }
  for (uint64_t a : as) {
    ASSERT_EQ(fastmod(a, m, d), a % d) << a << " % " << d;
    if (d < kSmallDivisors) {
      ASSERT_EQ(small_mod(a, d), a % d) << a << " % " << d;
    }
  }
}

}  // namespace

TEST(FastMod, EqualsTheRemainderForSmallDivisors) {
  std::mt19937_64 rng(17);
  for (uint64_t d = 1; d < kSmallDivisors + 8; ++d) check(d, rng, 20000);
}

TEST(FastMod, EqualsTheRemainderForLargeDivisors) {
  std::mt19937_64 rng(18);
  for (int i = 0; i < 2000; ++i) check(rng() >> (i % 63) | 1, rng, 200);
  check(UINT64_MAX, rng, 1000);
  check(uint64_t{1} << 63, rng, 1000);
}

static_assert(fastmod(123456789, fastmod_magic(7), 7) == 123456789 % 7);

}  // namespace rocesim
