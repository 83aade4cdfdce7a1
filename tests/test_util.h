// Helpers shared by the network-level tests: flows, a periodic sampler, port lookup.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/simulator.h"
#include "net/network.h"
#include "net/switch.h"
#include "topo/builders.h"
#include "topo/topology.h"
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
  Ticker(Network& net, Time period, std::function<void(Time)> fn)
      : Ticker(net, period, period, std::move(fn)) {}
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

// A ring of `n` switches s0..s{n-1}, each with `hosts` hosts h0.. (host n + i * hosts + h on switch i);
// 100 Gb/s, 1 us links. With a flow two hops clockwise from every host, PFC can close a cyclic wait.
inline TopoSpec switch_ring(int n, int hosts) {
  TopoSpec t;
  t.name = "ring";
  t.num_nodes = n + n * hosts;
  t.is_switch.assign(t.num_nodes, false);
  for (int i = 0; i < n; ++i) {
    t.is_switch[i] = true;
    t.node_names.push_back("s" + std::to_string(i));
  }
  for (int i = 0; i < n * hosts; ++i) t.node_names.push_back("h" + std::to_string(i));
  const Rate r = Rate::from_gbps(100);
  const Time d = Time::from_us(1);
  for (int i = 0; i < n; ++i) t.links.push_back({i, (i + 1) % n, r, d});
  for (int i = 0; i < n; ++i)
    for (int h = 0; h < hosts; ++h) t.links.push_back({n + i * hosts + h, i, r, d});
  return t;
}

// Static PFC at Xoff/Xon with the DCQCN paper's RED (Kmin 5 KB, Kmax 200 KB, Pmax 1 %, not scaled with the
// port rate), as the seeds' victim experiments use.
inline SwitchSettings static_pfc_paper_red(Bytes xoff, Bytes xon) {
  SwitchSettings sw;
  sw.pfc_mode = PfcThresholdMode::kStatic;
  sw.xoff_bytes = xoff;
  sw.xon_bytes = xon;
  sw.ecn_scale_with_rate = false;
  sw.kmin_bytes = 5'000;
  sw.kmax_bytes = 200'000;
  sw.pmax = 0.01;
  return sw;
}

// The mercury_victim traffic: F1 = H1 -> R1 and F2 = H2 -> R2 (flows 0 and 1) of `long_bytes` from t = 0,
// then B1..B8 each send `per_sender` 50 KB flows to R2, one every `gap` from 3 ms.
inline std::vector<FlowSpec> victim_flows(const TopoSpec& t, Bytes long_bytes, int per_sender,
                                          double gap_us) {
  const int r2 = lookup_node(t, "R2");
  std::vector<FlowSpec> flows{flow(lookup_node(t, "H1"), lookup_node(t, "R1"), long_bytes),
                              flow(lookup_node(t, "H2"), r2, long_bytes)};
  for (int b = 1; b <= 8; ++b)
    for (int k = 0; k < per_sender; ++k)
      flows.push_back(
          flow(lookup_node(t, "B" + std::to_string(b)), r2, 50'000, Time::from_us(3000 + gap_us * k)));
  return flows;
}

}  // namespace rocesim::test
