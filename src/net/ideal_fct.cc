#include "net/ideal_fct.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rocesim {
namespace {

__extension__ typedef unsigned __int128 U128;

void check_path(const PathInfo& path, Bytes mtu_payload_bytes) {
  if (path.hop_rates.empty()) throw std::invalid_argument("ideal FCT: the path has no links");
  if (path.hop_rates.size() != path.hop_delays.size()) {
    throw std::invalid_argument("ideal FCT: " + std::to_string(path.hop_rates.size()) + " link rates but " +
                                std::to_string(path.hop_delays.size()) + " link delays");
  }
  for (const Rate& r : path.hop_rates) {
    if (!(r.bps >= 1.0) || !std::isfinite(r.bps)) {
      throw std::invalid_argument("ideal FCT: link rate must be at least 1 bit/s");
    }
  }
  for (const Time& d : path.hop_delays) {
    if (d.ps < 0) throw std::invalid_argument("ideal FCT: negative link delay");
  }
  if (mtu_payload_bytes <= 0) throw std::invalid_argument("ideal FCT: payload per packet must be positive");
}

void check_flow(Bytes size, Bytes header_bytes) {
  if (size < 0) throw std::invalid_argument("ideal FCT: negative flow size");
  if (header_bytes < 0) throw std::invalid_argument("ideal FCT: negative header size");
}

Rate bottleneck(const PathInfo& path) {
  Rate b = path.hop_rates.front();
  for (const Rate& r : path.hop_rates) b = r < b ? r : b;
  return b;
}

// Bytes on the wire for `size` payload bytes: size + header_bytes per packet, ceil(size / mtu) packets.
Bytes wire_bytes(Bytes size, Bytes mtu_payload_bytes, Bytes header_bytes) {
  const Bytes packets = (size + mtu_payload_bytes - 1) / mtu_payload_bytes;
  return size + header_bytes * packets;
}

// The simulator keeps rates as integral bits/s (ns-3 DataRate).
uint64_t rate_bps_int(Rate r) { return static_cast<uint64_t>(std::llround(r.bps)); }

}  // namespace

Time base_rtt(const PathInfo& path, Bytes mtu_payload_bytes) {
  check_path(path, mtu_payload_bytes);
  Time t = Time::zero();
  for (size_t i = 0; i < path.hop_rates.size(); ++i) {
    t += path.hop_delays[i] * 2 + tx_time(mtu_payload_bytes, path.hop_rates[i]);
  }
  return t;
}

Time ideal_fct(Bytes size, const PathInfo& path, Bytes mtu_payload_bytes, Bytes header_bytes) {
  check_flow(size, header_bytes);
  const Time rtt = base_rtt(path, mtu_payload_bytes);
  return rtt + tx_time(wire_bytes(size, mtu_payload_bytes, header_bytes), bottleneck(path));
}

int64_t base_rtt_ns_hpcc(const PathInfo& path, Bytes mtu_payload_bytes) {
  check_path(path, mtu_payload_bytes);
  uint64_t delay_ns = 0;
  uint64_t tx_ns = 0;
  for (size_t i = 0; i < path.hop_rates.size(); ++i) {
    delay_ns += static_cast<uint64_t>(path.hop_delays[i].ps / 1000);
    // txDelay += packet_payload_size * 1000000000 * 8 / bw   (integer division per hop)
    tx_ns += static_cast<uint64_t>(static_cast<U128>(mtu_payload_bytes) * 8000000000u /
                                   rate_bps_int(path.hop_rates[i]));
  }
  return static_cast<int64_t>(delay_ns * 2 + tx_ns);  // rtt = delay * 2 + txDelay
}

int64_t ideal_fct_ns_hpcc(Bytes size, const PathInfo& path, Bytes mtu_payload_bytes, Bytes header_bytes) {
  check_flow(size, header_bytes);
  const int64_t rtt_ns = base_rtt_ns_hpcc(path, mtu_payload_bytes);
  // standalone_fct = base_rtt + total_bytes * 8000000000 / b   (integer division)
  const U128 bits_x1e9 = static_cast<U128>(wire_bytes(size, mtu_payload_bytes, header_bytes)) * 8000000000u;
  return rtt_ns + static_cast<int64_t>(bits_x1e9 / rate_bps_int(bottleneck(path)));
}

}  // namespace rocesim
