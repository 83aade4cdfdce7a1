// Exact remainders by small divisors without a division instruction (a 64-bit `div` costs 35-88 cycles on
// the Xeons we measure on; this is four multiplications). Lemire, Kaser and Kurz, "Faster remainder by
// direct computation" (2019): with the 128-bit magic M = floor((2^128 - 1) / d) + 1, a % d is the high
// 64 bits of d x (M x a mod 2^128), for every 64-bit a and d (the paper's F = 128 >= N + log2 d).
// The result is the same number as `a % d`, so choices made with it are unchanged.
#pragma once
#include <array>
#include <cstdint>

namespace rocesim {

using FastModMagic = unsigned __int128;

constexpr FastModMagic fastmod_magic(uint64_t d) {
  return ~FastModMagic{0} / d + 1;  // d = 1: wraps to 0, and a % 1 = 0 follows
}

constexpr uint64_t fastmod(uint64_t a, FastModMagic m, uint64_t d) {
  const FastModMagic low = m * a;  // the fractional part of a / d, in 128 bits
  const FastModMagic bottom = (static_cast<FastModMagic>(static_cast<uint64_t>(low)) * d) >> 64;
  const FastModMagic top = static_cast<FastModMagic>(static_cast<uint64_t>(low >> 64)) * d;
  return static_cast<uint64_t>((bottom + top) >> 64);
}

inline constexpr uint64_t kSmallDivisors = 128;

// The magics of the divisors below kSmallDivisors (2 KiB, shared by every caller).
alignas(64) inline constexpr std::array<FastModMagic, kSmallDivisors> kSmallModMagic = [] {
  std::array<FastModMagic, kSmallDivisors> m{};
  for (uint64_t d = 1; d < kSmallDivisors; ++d) m[d] = fastmod_magic(d);
  return m;
}();

// a % d (d > 0) by the table for a divisor below kSmallDivisors, else by the division.
inline uint64_t small_mod(uint64_t a, uint64_t d) {
  return d < kSmallDivisors ? fastmod(a, kSmallModMagic[d], d) : a % d;
}

}  // namespace rocesim
