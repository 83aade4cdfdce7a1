// Seeded random number streams. One master seed per simulation; each consumer asks for a named
// stream ("workload", "ecmp", "ecn", ...), so adding a consumer never shifts another's numbers.
#pragma once
#include <cstdint>
#include <string_view>

namespace rocesim {

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a of a stream name, used to derive stream seeds.
constexpr uint64_t hash_name(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// xoshiro256** generator.
class Rng {
 public:
  Rng() : Rng(1) {}
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }
  // An independent stream for `name` under master `seed` (and an optional index, e.g. a host id).
  static Rng stream(uint64_t seed, std::string_view name, uint64_t index = 0) {
    return Rng(seed * 0x9e3779b97f4a7c15ULL ^ hash_name(name) ^ (index * 0xd1b54a32d192ed03ULL));
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }
  // Exponential with the given mean.
  double exponential(double mean);

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace rocesim
