// Tests for net/ecmp_hash.h and switch.ecmp_hash = "hpcc_sim": the hash is the 32-bit MurmurHash3 (its
// published test vectors), and on the layout of the ns-3 reference cases (tests/data/ns3: 64 hosts, 8 ToRs,
// 4 aggregation switches, 4 cores) each switch picks the port that the ns-3 HPCC simulator's algorithm
// gives, worked out independently of rocesim (hash of the 12 bytes, seed = the switch's node id, modulo the
// next hops listed in the order of that simulator's breadth-first search).
#include "net/ecmp_hash.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cc/none.h"
#include "net/network.h"
#include "topo/topology_file.h"

namespace rocesim {
namespace {

uint32_t murmur(const char* s, uint32_t seed) {
  return murmur3_32(reinterpret_cast<const uint8_t*>(s), std::strlen(s), seed);
}

TEST(EcmpHash, Murmur3MatchesItsPublishedVectors) {
  EXPECT_EQ(murmur("", 0), 0u);
  EXPECT_EQ(murmur("", 1), 0x514e28b7u);
  EXPECT_EQ(murmur("", 0xffffffffu), 0x81f16f39u);
  const uint8_t zeros[4] = {0, 0, 0, 0};
  EXPECT_EQ(murmur3_32(zeros, 4, 0), 0x2362f9deu);
  EXPECT_EQ(murmur("aaaa", 0x9747b28cu), 0x5a97808au);
  EXPECT_EQ(murmur("abc", 0), 0xb3dd93fau);  // a 3-byte tail
  EXPECT_EQ(murmur("Hello, world!", 1234), 0xfaf6cdb3u);
  EXPECT_EQ(murmur("The quick brown fox jumps over the lazy dog", 0x9747b28cu), 0x2fa826cdu);
}

TEST(EcmpHash, SimulatorAddressesAndKey) {
  EXPECT_EQ(hpcc_sim_ip(0), 0x0b000001u);
  EXPECT_EQ(hpcc_sim_ip(22), 0x0b001601u);
  EXPECT_EQ(hpcc_sim_ip(300), 0x0b012c01u);  // 11.1.44.1
  // The key: sip, dip, sport | dport << 16, each little-endian.
  const uint8_t key[12] = {0x01, 0x26, 0x00, 0x0b, 0x01, 0x16, 0x00, 0x0b, 0x10, 0x27, 0x64, 0x00};
  EXPECT_EQ(hpcc_sim_ecmp_hash(38, 22, 10000, 100, 64), murmur3_32(key, 12, 64));
}

// (switch, egress port) of each hop of the flow as the simulator routes it: every switch's choice among
// its equal-cost ports, worked out by hand with the simulator's algorithm (see the file comment).
struct Expected {
  int src, dst;
  uint16_t sport, dport;
  std::vector<std::pair<int, int>> hops;  // switches only: (node, port index in topology-file link order)
};

TEST(EcmpHash, HpccSimProfilePicksTheSimulatorsPorts) {
  const TopoSpec t = read_hpcc_topology(std::string(ROCESIM_TEST_DIR) + "/data/ns3/hd30_topology.txt");
  SwitchSettings sw;
  sw.ecmp_hash = EcmpHash::kHpccSim;
  Network net(t, sw, NicSettings{}, 1, std::make_unique<NoCc>());
  // Topology-file link order gives the ports: a ToR's hosts first, then its two aggregation switches
  // (e.g. ToR 64: port 8 to 72, 9 to 73). At ToR 64 towards host 9 the simulator's list is [73, 72], and the
  // hash of (0 -> 9, 10000, 100) with seed 64 is 0x5a946686, even: index 0, switch 73, port 9.
  const std::vector<Expected> cases = {
      {0, 9, 10000, 100, {{64, 9}, {73, 1}, {65, 1}}},                      // within a pod
      {16, 6, 10000, 100, {{66, 8}, {72, 0}, {64, 6}}},                     // within a pod
      {38, 22, 10000, 100, {{68, 8}, {74, 5}, {77, 0}, {72, 2}, {66, 6}}},  // across the cores
      {0, 63, 10000, 100, {{64, 9}, {73, 5}, {79, 1}, {75, 3}, {71, 7}}},   // across the cores
      {63, 0, 100, 10000, {{71, 8}, {74, 5}, {77, 0}, {72, 0}, {64, 0}}},   // its ACKs: another path
      {60, 31, 10000, 100, {{71, 8}, {74, 4}, {76, 0}, {72, 3}, {67, 7}}},  //
      {31, 60, 100, 10000, {{67, 9}, {73, 4}, {78, 1}, {75, 3}, {71, 4}}},  // its ACKs
      {5, 50, 10002, 200, {{64, 9}, {73, 5}, {79, 1}, {75, 2}, {70, 2}}},   //
      {45, 40, 10003, 100, {{69, 0}}},                                      // under one ToR
  };
  for (const Expected& e : cases) {
    const auto path = net.path_of(e.src, e.dst, e.sport, e.dport);
    std::vector<std::pair<int, int>> hops;
    for (auto [node, port] : path)
      if (!net.is_host(node)) hops.emplace_back(node, port);
    EXPECT_EQ(hops, e.hops) << e.src << " -> " << e.dst << " sport " << e.sport;
  }
  // The run's seed does not enter the simulator's hash.
  Network other(t, sw, NicSettings{}, 7, std::make_unique<NoCc>());
  for (const Expected& e : cases)
    EXPECT_EQ(other.path_of(e.src, e.dst, e.sport, e.dport), net.path_of(e.src, e.dst, e.sport, e.dport));
}

}  // namespace
}  // namespace rocesim
