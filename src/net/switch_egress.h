// The egress scheduler of a switch port: PFC frames first, then the control class (strict priority, never
// paused), then data priorities 1-7 round robin, skipping those paused by the peer's PFC or short of
// credits. A data packet that leaves is marked by RED on its egress queue (docs/algorithms.md section 1.3;
// per-port Kmin/Kmax/Pmax, optionally scaled with the port's rate) unless the scheme's agent marks instead,
// and stamped with an INT hop record (section 1.4). One object per switch, touching only that switch's
// state (its marking draws come from the switch's own random stream).
#pragma once
#include <bit>
#include <vector>

#include "core/rng.h"
#include "net/cc_api.h"
#include "net/node.h"
#include "net/packet.h"
#include "net/settings.h"

namespace rocesim {

class Switch;

struct EgressEcn {
  Bytes kmin = 0, kmax = 0;
  double pmax = 0;
};

class EgressScheduler {
 public:
  EgressScheduler(Switch& sw, const SwitchSettings& s) : sw_(sw), s_(s) {}
  // Sets each wired port's RED thresholds and the switch's marking stream.
  void configure();

  // A PFC frame or a control packet of `port`, if any: they go before data.
  static Packet* next_control(Port& port) {
    if (port.pfc_queued) return port.pop_pfc();
    if (port.queued & 1u) return port.pop(0);
    return nullptr;
  }
  // The next data packet of `port` (round robin over the priorities that may send), taken off its queue
  // and its credits consumed; nullptr when none may go.
  Packet* next_data(Port& port);
  // A data packet leaves on `port`: the agent's mark or RED, then INT. Inline with RED: every data packet
  // of every hop passes here.
  void on_departure(Packet& p, Port& port, SwitchAgent* agent) {
    if (!(agent && agent->mark(p, port.index)) && s_.ecn_enabled) red_mark(p, port);
    if (stamps_int_) stamp_int(p, port);
  }
  // on_departure for a packet that was never queued (Switch::send_at_once, no agent): RED sees an empty
  // queue, which it marks only where a threshold is negative.
  void on_departure_unqueued(Packet& p, Port& port) {
    if (s_.ecn_enabled && marks_empty_) red_mark(p, port);
    if (stamps_int_) stamp_int(p, port);
  }
  // True when the port has something it may send once the wire is free.
  static bool has_backlog(const Port& port) {
    if (port.pfc_queued || (port.queued & 1u)) return true;
    for (unsigned m = port.queued & 0xfeu; m; m &= m - 1)  // the non-empty data queues
      if (!port.paused[std::countr_zero(m)]) return true;
    return false;
  }

  const EgressEcn& ecn(int port) const { return ecn_[port]; }
  // Asks the cache for the port's marking thresholds, which marking at dequeue reads.
  void prefetch_ecn(int port) const { __builtin_prefetch(&ecn_[port]); }
  void set_ecn(int port, const EgressEcn& e) {
    ecn_[port] = e;
    marks_empty_ = marks_empty_ || e.kmin < 0 || e.kmax < 0;
  }

 private:
  // RED marking on the egress queue seen at dequeue (algorithms.md 1.3).
  void red_mark(Packet& p, Port& port) {
    if (p.ecn == kNotEct || p.ecn == kCe) return;
    const EgressEcn& e = ecn_[port.index];
    const Bytes q = port.q[p.prio].bytes;
    bool mark = false;
    if (q > e.kmax) {
      mark = true;
    } else if (q > e.kmin) {
      const double prob =
          e.kmax > e.kmin ? e.pmax * static_cast<double>(q - e.kmin) / static_cast<double>(e.kmax - e.kmin)
                          : 1.0;
      mark = mark_rng_.uniform() < prob;
    }
    if (mark) {
      p.ecn = kCe;
      ++port.stats.ecn_marked;
    }
  }
  void stamp_int(Packet& p, const Port& port);

  Switch& sw_;
  const SwitchSettings& s_;
  std::vector<EgressEcn> ecn_;  // per port
  bool marks_empty_ = false;    // some port's kmin or kmax is negative: RED marks at an empty queue
  bool stamps_int_ = false;     // INT on (SwitchSettings::int_enabled) and this switch is no shared NIC
  Rng mark_rng_;
};

}  // namespace rocesim
