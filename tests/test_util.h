// Helpers shared by the network-level tests: flows, a periodic sampler, port lookup.
#pragma once
#include <functional>
#include <utility>

#include "core/simulator.h"
#include "net/network.h"
#include "net/switch.h"
#include "workload/flow.h"

namespace rocesim::test {

inline FlowSpec flow(int src, int dst, Bytes size, Time start = Time::zero()) {
  FlowSpec f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size;
  f.start = start;
  return f;
}

// Calls `fn` every `period` of simulated time, from `first` (default: one period in).
class Ticker : public EventHandler {
 public:
  Ticker(Network& net, Time first, Time period, std::function<void(Time)> fn)
      : net_(net), period_(period), fn_(std::move(fn)) {
    id_ = net_.sim().add_handler(this);
    net_.sim().at(first, id_, 0);
  }
  Ticker(Network& net, Time period, std::function<void(Time)> fn) : Ticker(net, period, period, std::move(fn)) {}
  void on_event(uint32_t, uint64_t) override {
    fn_(net_.now());
    net_.sim().after(period_, id_, 0);
  }

 private:
  Network& net_;
  Time period_;
  std::function<void(Time)> fn_;
  uint32_t id_ = 0;
};

// The index of switch `sw`'s port towards node `peer`, or -1.
inline int port_towards(Network& net, int sw, int peer) {
  for (auto& p : net.sw(sw).ports())
    if (p.peer->id() == peer) return p.index;
  return -1;
}

}  // namespace rocesim::test
