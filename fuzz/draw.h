// The random draws of the fuzz drivers (scenario_fuzz.cc, trace_fuzz.cc): one seeded 64-bit Mersenne
// Twister, so that a seed and a case number always draw the same input.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace rocesim::fuzz {

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int in(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return real(0, 1) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(in(0, static_cast<int>(v.size()) - 1))];
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

}  // namespace rocesim::fuzz
