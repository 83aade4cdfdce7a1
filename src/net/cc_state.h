// The state of a flow over time, as its scheme declares it ([monitors] cc_state; stats/monitors.h writes
// cc_state.csv): the declaration of one variable (CongestionControl::state_variables, net/cc_api.h) and a
// sample of a traced flow's sender (Network::set_cc_trace).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/time.h"

namespace rocesim {

// One variable of a scheme's per-flow state, a column of cc_state.csv ([monitors] cc_state,
// stats/monitors.h). `name` is the column: lower case, with its unit as the suffix where it has one
// ("rtt_us", "target_rate_gbps", "alpha"); `unit` labels axes ("" for a pure number or a count);
// `description` is one line for the documentation and the report.
struct CcVariable {
  const char* name;
  const char* unit;
  const char* description;
};
// The most variables a scheme declares (a fixed-size row per sample, no allocation per row).
inline constexpr size_t kMaxCcVariables = 12;
// A scheme built on another declares the other's variables and then its own.
template <size_t N, size_t M>
constexpr std::array<CcVariable, N + M> join_variables(const std::array<CcVariable, N>& a,
                                                       const std::array<CcVariable, M>& b) {
  std::array<CcVariable, N + M> out{};
  for (size_t i = 0; i < N; ++i) out[i] = a[i];
  for (size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

// A sample of a traced flow's sender: taken at the sender as its scheme reacted (NetPartition::cc_rows,
// replayed to NetObservers::on_cc_state), or between windows by a periodic monitor.
struct CcStateRow {
  Time t;
  unsigned __int128 key = 0;  // the event it was taken in (its order among rows of the same time and flow)
  uint64_t flow_id = 0;
  Rate rate;                                   // Qp::rate
  Bytes window = 0;                            // Qp::window (0: none)
  uint32_t ecn_marks = 0;                      // Qp::ecn_echoes so far
  uint32_t cnps_received = 0;                  // Qp::cnps_received + Qp::cnp_acks so far
  std::array<double, kMaxCcVariables> vars{};  // CongestionControl::read_state, the first n used
};

}  // namespace rocesim
