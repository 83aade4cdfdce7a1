// Per-QP state of a scheme, indexed by the QP's slot (Qp::slot). The QP pool reuses slots, so a slot's state
// is reset when a flow starts on it; the vector grows with the pool, 1,024 slots ahead, so it stops
// allocating once the pool has reached its peak.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "net/network.h"
#include "net/qp.h"

namespace rocesim {

template <typename T>
class PerQp {
 public:
  // The state of the flow that starts on `qp`, reset to `fresh`.
  T& start(const Network& net, const Qp& qp, const T& fresh = T{}) {
    if (qp.slot >= v_.size()) v_.resize(std::max<size_t>(net.qp_capacity(), qp.slot + 1) + 1024);
    v_[qp.slot] = fresh;
    return v_[qp.slot];
  }
  T& operator[](size_t slot) { return v_[slot]; }
  const T& operator[](size_t slot) const { return v_[slot]; }
  // Whether the slot has state (a flow has started on it).
  bool has(size_t slot) const { return slot < v_.size(); }

 private:
  std::vector<T> v_;
};

}  // namespace rocesim
