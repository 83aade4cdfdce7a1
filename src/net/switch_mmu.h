// A switch's buffer accounting, its MMU (Broadcom-style, as the ns-3 HPCC simulator models it): every data
// packet the switch holds counts towards the total buffer and towards its ingress (port, priority), whose
// counter drives PFC. Under the shared buffer the PFC thresholds are static (Xoff/Xon per port) or dynamic
// (alpha x free shared buffer, alpha = 2^-shift per port) with a reserve and a headroom per port; see
// docs/algorithms.md section 1.1-1.2. Under the input-and-output queued model (net/switch_crossbar.h) the
// counter of (port, priority) is the bytes of its input queue(s), with an Xoff/Xon of its own.
// One object per switch, touching only that switch's state.
#pragma once
#include <vector>

#include "core/time.h"
#include "net/node.h"
#include "net/packet.h"
#include "net/settings.h"

namespace rocesim {

class Switch;

struct IngressCounters {
  Bytes bytes = 0;       // reserve + shared bytes held by this (port, priority)
  Bytes hdrm_bytes = 0;  // bytes that landed in headroom
  bool pause_sent = false;
  bool agent_hold = false;  // a switch agent holds this (port, priority) paused (Switch::hold_pause)
};

// What admitting or releasing a packet of an ingress port reads, together: its counters per priority
// (three cache lines, one of them per packet) and its thresholds (the fourth line), instead of one array
// per field.
struct alignas(64) IngressPort {
  IngressCounters c[kNumPriorities];
  Bytes headroom = 0;
  Bytes xoff = 0, xon = 0;              // static mode
  Bytes input_xoff = 0, input_xon = 0;  // input-and-output queued model
  int dt_shift = 0;
};

class SwitchMmu {
 public:
  SwitchMmu(Switch& sw, const SwitchSettings& s) : sw_(sw), s_(s) {}
  // Sizes the counters and thresholds for the switch's wired ports (SwitchSettings are the switch's).
  void configure(Rate host_rate, bool input_queues);

  // --- shared buffer ---
  // Accounts a data packet from `in_port` to its ingress (port, priority) and sends PAUSE when the
  // threshold is crossed; false: no room (drop). Switch-generated data (in_port < 0) is only bounded by the
  // total buffer.
  bool admit(Packet* p, int in_port);
  // Undoes admit when the packet leaves (headroom first, then shared, then reserve); may send RESUME.
  void release(const Packet& p);

  // --- input-and-output queued model: the counters are the input queues ---
  bool input_has_room(int in_port, int prio, Bytes size) const {
    return ingress(in_port, prio).bytes + size <= s_.input_queue_bytes;
  }
  // A packet joined (input_enqueued) or left (input_dequeued: it crossed to its output) an input queue of
  // (in_port, prio); PAUSE at the input's Xoff, RESUME at its Xon.
  void input_enqueued(int in_port, int prio, Bytes size);
  void input_dequeued(int in_port, int prio, Bytes size);
  // A packet that crossed leaves the switch (its input queue was released when it crossed).
  void output_dequeued(Bytes size) { total_bytes_ -= size; }

  // An agent holds ingress (port, prio) paused (Switch::hold_pause).
  void hold_pause(int port, int prio, bool hold);
  // The link of ingress `port` failed: no pause of it is in force any more (net/link_events.h).
  void clear_pause(int port) {
    for (IngressCounters& c : in_[port].c) c.pause_sent = false;
  }

  const IngressCounters& ingress(int port, int prio) const { return in_[port].c[prio]; }
  // Asks the cache for what admit() will read of (port, prio): its counters' line and the thresholds'.
  void prefetch(int port, int prio) const {
    __builtin_prefetch(&in_[port].c[prio]);
    __builtin_prefetch(&in_[port].headroom);
  }
  // Data bytes held for ingress `port` over all data priorities.
  Bytes input_bytes(int port) const;
  Bytes buffer_used() const { return total_bytes_; }
  Bytes shared_used() const { return shared_used_; }
  Bytes headroom(int port) const { return in_[port].headroom; }
  // The PFC threshold of ingress `port` now: static Xoff, or the dynamic threshold.
  Bytes pfc_threshold(int port) const;
  Bytes xoff(int port) const { return in_[port].xoff; }
  Bytes xon(int port) const { return in_[port].xon; }
  void set_port_thresholds(int port, Bytes xoff, Bytes xon) {
    in_[port].xoff = xoff;
    in_[port].xon = xon;
  }
  Bytes input_xoff(int port) const { return in_[port].input_xoff; }

 private:
  Bytes shared_of(const IngressCounters& c) const { return c.bytes > reserve_ ? c.bytes - reserve_ : 0; }
  void maybe_pause(int in_port, int prio);
  void maybe_resume(int in_port, int prio);
  void count_peaks(const IngressCounters& c);

  Switch& sw_;
  const SwitchSettings& s_;
  Bytes reserve_ = 0;
  std::vector<IngressPort> in_;  // per ingress port
  Bytes hdrm_total_ = 0;
  Bytes reserve_total_ = 0;
  Bytes shared_used_ = 0;
  Bytes total_bytes_ = 0;
};

}  // namespace rocesim
