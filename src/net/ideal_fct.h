// Ideal ("standalone") flow completion time: what a flow would take alone on an empty network.
//
// Formula (the one the ns-3 HPCC simulator writes as the last column of fct.txt; its slowdown is
// fct / standalone, clipped at 1). For a path of links l = 1..H from the source host to the destination
// host, with rate R_l (bits/s) and propagation delay d_l, a flow of S payload bytes, payload per packet
// P (mtu_payload_bytes, 1000 B in that simulator) and per-packet header bytes h (header_bytes, 48 B:
// the headers of a data packet without INT):
//
//   packets       N = ceil(S / P)
//   bottleneck    B = min_l R_l
//   base RTT      T = 2 * sum_l d_l + sum_l (P * 8 / R_l)
//   standalone    ideal = T + (S + h * N) * 8 / B
//
// Note that the per-hop serialization term in T uses the payload size P, not the wire size P + h:
// that simulator computes its per-hop tx delay from the payload size, and we reproduce it so that
// slowdowns are comparable. The base RTT T is also the simulator's "pairRtt" (HPCC's T is the largest
// one over all host pairs).
//
// Two implementations:
//  - ideal_fct():         exact in picoseconds; every serialization (each P * 8 / R_l term and the
//                         (S + h * N) * 8 / B term) is rounded UP to a whole picosecond.
//  - ideal_fct_ns_hpcc(): the simulator's own integer-nanosecond arithmetic, for fct.txt values that
//                         match it to the nanosecond: delays are whole ns (d_l in ps, floored to ns),
//                         rates are integral bits/s, each per-hop term is floor(P * 8e9 / R_l) ns and
//                         the last term is floor((S + h * N) * 8e9 / B) ns.
// Both agree to within (H + 1) ns (each floor loses less than 1 ns, each ceil adds less than 1 ps); on
// rates that divide the numerators exactly (e.g. 1000 B at 100 or 400 Gb/s) the ns version is the floor
// of the ps version.
//
// Size 0 counts as 0 packets (the simulator never has empty flows).
#pragma once
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace rocesim {

// The links a flow crosses, from the source host to the destination host, in order.
struct PathInfo {
  std::vector<Rate> hop_rates;   // one per link
  std::vector<Time> hop_delays;  // propagation delay of each link, same length as hop_rates
};

inline constexpr Bytes kHpccPayloadBytes = 1000;  // the simulator's packet_payload_size
inline constexpr Bytes kHpccHeaderBytes = 48;     // its data-packet header size without INT

// Base RTT T = 2 * sum(delays) + sum(per-hop serialization of one payload), exact in ps (each hop
// rounded up). Throws std::invalid_argument on an empty or inconsistent path, or a non-positive
// rate or payload size.
Time base_rtt(const PathInfo& path, Bytes mtu_payload_bytes = kHpccPayloadBytes);

// The standalone FCT in picoseconds (see the formula above).
Time ideal_fct(Bytes size, const PathInfo& path, Bytes mtu_payload_bytes = kHpccPayloadBytes,
               Bytes header_bytes = kHpccHeaderBytes);

// The simulator's base RTT ("pairRtt") in integer ns.
int64_t base_rtt_ns_hpcc(const PathInfo& path, Bytes mtu_payload_bytes = kHpccPayloadBytes);

// The standalone FCT exactly as the simulator computes it, in integer ns.
int64_t ideal_fct_ns_hpcc(Bytes size, const PathInfo& path, Bytes mtu_payload_bytes = kHpccPayloadBytes,
                          Bytes header_bytes = kHpccHeaderBytes);

}  // namespace rocesim
