// The one place a switch chooses among the equal-cost egress ports of a packet (SwitchSettings::routing):
// ECMP's 5-tuple hash, flowlets, per-packet spraying, or the least-loaded port (docs/models.md section A3a).
// State is per switch (its flowlet table and random stream), touched only by the switch's own events, so a
// run gives the same choices for any thread count. A scheme's InputAgent::select_port (net/cc_api.h) is
// asked after this choice and may override it.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "core/time.h"
#include "net/node.h"
#include "net/settings.h"

namespace rocesim {

class PathSelector {
 public:
  // `seed`: the run's seed; each switch draws from its own stream.
  void configure(const SwitchSettings& s, uint64_t seed, int switch_id);

  // Picks one of `n` > 1 equal-cost `ports` (indices into `node_ports`) for `p`, whose flow hash is `hash`.
  int choose(const std::vector<Port>& node_ports, const Packet& p, const uint16_t* ports, int n,
             uint64_t hash, Time now) {
    const uint64_t un = static_cast<uint64_t>(n);
    switch (routing_) {
      case Routing::kEcmp:
        return ports[hash % un];
      case Routing::kSpray:
        return ports[spray_ == SprayMode::kRandom ? rng_.below(un) : rr_++ % un];
      case Routing::kFlowlet:
      case Routing::kAdaptive:
        break;
    }
    if (routing_ == Routing::kAdaptive && !per_flowlet_)
      return least_loaded(node_ports, p, ports, n, hash, now);
    Entry& e = entry(hash);
    const bool valid = e.last >= Time::zero() && contains(ports, n, e.port);
    if (!valid || now - e.last > gap_) {
      const int next = routing_ == Routing::kAdaptive ? least_loaded(node_ports, p, ports, n, hash, now)
                                                      : ports[rng_.below(un)];
      if (valid && next != e.port) ++flowlet_switches_;
      e.port = static_cast<uint16_t>(next);
    }
    e.last = now;
    return e.port;
  }

  bool by_flow_hash() const { return routing_ == Routing::kEcmp; }

  // Flowlets that moved to another port than their previous flowlet's (kFlowlet, kAdaptive per flowlet).
  uint64_t flowlet_switches() const { return flowlet_switches_; }

  static bool contains(const uint16_t* ports, int n, int port) {
    for (int i = 0; i < n; ++i)
      if (ports[i] == port) return true;
    return false;
  }

 private:
  struct Entry {
    Time last = Time::from_ps(-1);  // last packet seen (negative: never)
    uint16_t port = 0;              // the flowlet's port
  };
  Entry& entry(uint64_t hash) { return table_[(hash >> 17) & mask_]; }
  // The port with the fewest egress data bytes queued, then an idle wire before a busy one (a packet being
  // sent has left the queue); with avoid_paused, ports whose priority is paused downstream lose to any that
  // is not. Ties go to the first from the hash's index on (deterministic, and flows start at different
  // ports).
  int least_loaded(const std::vector<Port>& node_ports, const Packet& p, const uint16_t* ports, int n,
                   uint64_t hash, Time now) const {
    const int start = static_cast<int>(hash % static_cast<uint64_t>(n));
    int best = -1;
    bool best_paused = true, best_busy = true;
    Bytes best_bytes = 0;
    for (int i = 0; i < n; ++i) {
      const int port = ports[(start + i) % n];
      const Port& pt = node_ports[port];
      const bool paused = avoid_paused_ && pt.paused[p.prio];
      const bool busy = pt.busy_until > now;
      const bool better = best < 0 || (best_paused && !paused) ||
                          (paused == best_paused && (pt.data_bytes < best_bytes ||
                                                     (pt.data_bytes == best_bytes && best_busy && !busy)));
      if (better) {
        best = port;
        best_paused = paused;
        best_busy = busy;
        best_bytes = pt.data_bytes;
      }
    }
    return best;
  }

  Routing routing_ = Routing::kEcmp;
  SprayMode spray_ = SprayMode::kRandom;
  bool per_flowlet_ = false;
  bool avoid_paused_ = true;
  Time gap_;
  uint64_t mask_ = 0;
  std::vector<Entry> table_;
  Rng rng_{0};
  uint64_t rr_ = 0;  // round-robin spraying: packets sprayed by this switch
  uint64_t flowlet_switches_ = 0;
};

}  // namespace rocesim
