// PFC only: every QP sends at line rate, no congestion control, no ECN (algorithms.md 2.1).
#pragma once
#include <array>
#include <span>

#include "net/cc_api.h"

namespace rocesim {

class NoCc : public CongestionControl {
 public:
  std::string name() const override { return "none"; }
  CcNeeds needs() const override {
    CcNeeds n;
    n.ecn_marking = false;
    return n;
  }
  void on_flow_start(Qp& qp) override { qp.rate = qp.line_rate; }

  // cc_state.csv: no state but the line rate it sends at.
  static constexpr std::array<CcVariable, 1> kVariables = {{
      {"line_rate_gbps", "Gb/s",
       "the sender's NIC line rate, at which the flow always sends (no congestion "
       "control)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override { out[0] = qp.line_rate.gbps(); }
};

struct SchemeEntry;
// none in the scheme registry (cc/registry.h): no keys; no ECN marking (none.cc).
SchemeEntry none_scheme();

}  // namespace rocesim
