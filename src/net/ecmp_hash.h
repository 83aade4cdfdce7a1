// The ns-3 HPCC simulator's ECMP choice (SwitchSettings::ecmp_hash = kHpccSim; docs/coming-from-hpcc-sim.md,
// "ECMP as the simulator"): a switch hashes 12 bytes, the source IP, the destination IP and the 32-bit word
// sport | dport << 16, each as a little-endian 32-bit word, with the 32-bit MurmurHash3 (Austin Appleby's
// public-domain x86_32 variant) seeded with the switch's node id, and takes the hash modulo the number of
// equal-cost next hops. Host n has IP 11.(n / 256).(n % 256).1. ACKs and NACKs carry the reversed
// addresses and ports, so they hash as their own flow of the reverse direction.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rocesim {

// 32-bit MurmurHash3 (x86_32) of `len` bytes, blocks read as little-endian words on every platform.
constexpr uint32_t murmur3_32(const uint8_t* data, size_t len, uint32_t seed) {
  constexpr uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  auto rotl = [](uint32_t v, int r) { return (v << r) | (v >> (32 - r)); };
  auto scramble = [&](uint32_t k) { return rotl(k * c1, 15) * c2; };
  uint32_t h = seed;
  const size_t blocks = len / 4;
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* q = data + 4 * b;
    const uint32_t k = static_cast<uint32_t>(q[0]) | static_cast<uint32_t>(q[1]) << 8 |
                       static_cast<uint32_t>(q[2]) << 16 | static_cast<uint32_t>(q[3]) << 24;
    h = rotl(h ^ scramble(k), 13) * 5 + 0xe6546b64u;
  }
  // The 1-3 bytes left over, the first as the lowest.
  uint32_t tail = 0;
  for (size_t i = len & 3; i > 0; --i) tail = tail << 8 | data[blocks * 4 + i - 1];
  if ((len & 3) != 0) h ^= scramble(tail);
  // Finalization: length, then the avalanche mix.
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// The simulator's IPv4 address of node `id` (third.cc numbers them 0x0b000001 + id's two low bytes
// shifted up by one byte, in 32-bit arithmetic).
constexpr uint32_t hpcc_sim_ip(uint32_t id) {
  return 0x0b000001u + (id / 256) * 0x10000u + (id % 256) * 0x100u;
}

// The simulator's ECMP hash at switch `switch_id` of a packet from node `src` to node `dst`.
constexpr uint32_t hpcc_sim_ecmp_hash(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                                      uint32_t switch_id) {
  const uint32_t words[3] = {hpcc_sim_ip(src), hpcc_sim_ip(dst),
                             static_cast<uint32_t>(sport) | static_cast<uint32_t>(dport) << 16};
  uint8_t bytes[12] = {};
  for (int w = 0; w < 3; ++w)
    for (int i = 0; i < 4; ++i) bytes[4 * w + i] = static_cast<uint8_t>(words[w] >> (8 * i));
  return murmur3_32(bytes, sizeof(bytes), switch_id);
}

}  // namespace rocesim
