// PFC only: every QP sends at line rate, no congestion control, no ECN (algorithms.md 2.1).
#pragma once
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
};

struct SchemeEntry;
// none in the scheme registry (cc/registry.h): no keys; no ECN marking (none.cc).
SchemeEntry none_scheme();

}  // namespace rocesim
