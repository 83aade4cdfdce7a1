// Per-QP state of a scheme, indexed by the QP's slot (Qp::slot). The QP pool reuses slots, so a slot's state
// is reset when a flow starts on it. The network grows the vector with its pool, between simulation windows
// (CcServices::register_qp_state), so that it never moves while partitions run on several threads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

#include "net/cc_services.h"
#include "net/qp.h"

namespace rocesim {

template <typename T>
class PerQp {
 public:
  // The state of the flow that starts on `qp`, reset to `fresh`.
  T& start(const CcServices& net, const Qp& qp, const T& fresh = T{}) {
    std::call_once(registered_, [&] {
      net.register_qp_state([this](size_t n) {
        if (v_.size() < n) v_.resize(n);
      });
    });
    // Only a QP made outside the network (unit tests) can be beyond the network's pool.
    if (qp.slot >= v_.size()) v_.resize(qp.slot + 1);
    v_[qp.slot] = fresh;
    return v_[qp.slot];
  }
  T& operator[](size_t slot) { return v_[slot]; }
  const T& operator[](size_t slot) const { return v_[slot]; }
  // Whether the slot has state (a flow has started on it).
  bool has(size_t slot) const { return slot < v_.size(); }

 private:
  std::vector<T> v_;
  std::once_flag registered_;
};

}  // namespace rocesim
