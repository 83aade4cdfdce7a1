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
    for (int prio = 0; prio < kNumPriorities; ++prio)
      ingress_[port * kNumPriorities + prio].pause_sent = false;
  }

  const IngressCounters& ingress(int port, int prio) const { return ingress_[port * kNumPriorities + prio]; }
  // Data bytes held for ingress `port` over all data priorities.
  Bytes input_bytes(int port) const;
  Bytes buffer_used() const { return total_bytes_; }
  Bytes shared_used() const { return shared_used_; }
  Bytes headroom(int port) const { return headroom_[port]; }
  // The PFC threshold of ingress `port` now: static Xoff, or the dynamic threshold.
  Bytes pfc_threshold(int port) const;
  Bytes xoff(int port) const { return xoff_[port]; }
  Bytes xon(int port) const { return xon_[port]; }
  void set_port_thresholds(int port, Bytes xoff, Bytes xon) {
    xoff_[port] = xoff;
    xon_[port] = xon;
  }
  Bytes input_xoff(int port) const { return input_xoff_[port]; }

 private:
  Bytes shared_of(const IngressCounters& c) const { return c.bytes > reserve_ ? c.bytes - reserve_ : 0; }
  void maybe_pause(int in_port, int prio);
  void maybe_resume(int in_port, int prio);
  void count_peaks(const IngressCounters& c);

  Switch& sw_;
  const SwitchSettings& s_;
  Bytes reserve_ = 0;
  std::vector<IngressCounters> ingress_;       // [port * 8 + prio]
  std::vector<Bytes> headroom_;                // per port
  std::vector<int> dt_shift_;                  // per port
  std::vector<Bytes> xoff_, xon_;              // per port (static mode)
  std::vector<Bytes> input_xoff_, input_xon_;  // per ingress port (input-and-output queued model)
  Bytes hdrm_total_ = 0;
  Bytes reserve_total_ = 0;
  Bytes shared_used_ = 0;
  Bytes total_bytes_ = 0;
};

}  // namespace rocesim
