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
#include "net/cc_api.h"
#include "net/node.h"
#include "net/packet.h"
#include "net/settings.h"
#include "topo/topology.h"

namespace rocesim {

class Switch;

// The PFC headroom of a switch port on a link of `rate` and one-way `delay` (docs/models.md A4):
// switch.headroom_bytes, or headroom_factor x rate x delay + the extra (headroom_extra_bytes; -1 = two
// packets of `packet_bytes`, MTU + headers); a long-haul port: long_haul_headroom_bytes, or one BDP of the
// link (rate x 2 x delay) + the same extra.
Bytes port_headroom_bytes(const SwitchSettings& s, Rate rate, Time delay, bool long_haul, Bytes packet_bytes);

// What a switch's shared buffer sets aside before it holds any packet (A4): every port's PFC headroom, and
// under dynamic thresholds a reserve per port. A buffer that cannot hold this plus one packet drops packets
// with PFC on (a port's headroom does not fit) and, under dynamic thresholds, leaves a PFC threshold of 0.
struct BufferSetAside {
  struct Ports {  // ports of one kind: same rate, delay and long-haul flag, so the same headroom
    Rate rate;
    Time delay;
    bool long_haul = false;
    int count = 0;
    Bytes headroom_bytes = 0;  // per port
  };
  int node = -1;  // the switch
  int ports = 0;
  Bytes headroom_bytes = 0;  // sum over the ports
  Bytes reserve_bytes = 0;   // ports x switch.reserve_bytes (dynamic thresholds), else 0
  Bytes packet_bytes = 0;    // one packet on the wire (MTU + headers)
  std::vector<Ports> kinds;  // how headroom_bytes is made up, in the order of the switch's ports
  // The least buffer that holds the set-aside and one packet of shared buffer.
  Bytes needed_bytes() const { return headroom_bytes + reserve_bytes + packet_bytes; }
};
// The switches of `topo` whose switch.buffer_bytes is below their BufferSetAside::needed_bytes(), largest
// need first. Empty where the buffer does not bound PFC: flow control other than PFC, or the
// input-and-output queued model (its input queues have their own limits).
std::vector<BufferSetAside> switches_short_of_buffer(const TopoSpec& topo, const SwitchSettings& s,
                                                     Bytes packet_bytes);

// What a switch's flow control lets its ingress (port, data priority) pairs hold at once, at worst (A4, A7):
// under credits (switch.flow_control = "credit") each pair grants its upstream credit_buffer_bytes; under
// static PFC thresholds (shared buffer) each is paused at its Xoff and takes up to its port's headroom more.
// Every pair can be full at once (an incast through every port, several congested outputs), so the flow
// control is lossless only if switch.buffer_bytes holds the sum; beyond it SwitchMmu::admit drops.
struct BufferCommitted {
  int node = -1;  // the switch
  int ports = 0;
  int priorities = 0;         // data priorities counted per port
  Bytes per_pair_bytes = 0;   // credit: credit_buffer_bytes; static: xoff_bytes
  int own_xoff_ports = 0;     // static: long-haul ports with their own Xoff (switch.long_haul_xoff_bytes or
                              // the scheme's, CongestionControl::long_haul_thresholds)
  Bytes own_xoff_bytes = 0;   // static: their Xoff, summed over them
  int scheme_xoff_ports = 0;  // static: those of them whose Xoff the scheme's switch agent sets
  Bytes headroom_bytes = 0;   // static: the ports' headroom, summed over the ports
  std::vector<BufferSetAside::Ports> kinds;  // static: how headroom_bytes is made up
  // priorities x (ports x credit_buffer_bytes), or priorities x (sum of the ports' Xoff + headroom)
  Bytes committed_bytes() const {
    return priorities * ((ports - own_xoff_ports) * per_pair_bytes + own_xoff_bytes + headroom_bytes);
  }
  // The largest credit_buffer_bytes (xoff_bytes) with which committed_bytes() fits `buffer_bytes`; <= 0
  // where none does (static: the headroom alone does not fit, or every port has its own Xoff).
  Bytes max_per_pair_bytes(Bytes buffer_bytes) const;
};
// The switches of `topo` whose switch.buffer_bytes is below BufferCommitted::committed_bytes() with
// `priorities` data priorities in use, largest commitment first. Empty where flow control is neither
// credits nor static PFC thresholds on the shared buffer (dynamic thresholds share the free buffer; the
// input-and-output queued model bounds its input queues).
// `cc`, when given, may raise the long-haul ports' Xoff as its switch agent will (long_haul_thresholds).
std::vector<BufferCommitted> switches_over_committed(const TopoSpec& topo, const SwitchSettings& s,
                                                     Bytes packet_bytes, int priorities,
                                                     const CongestionControl* cc = nullptr);

// Input-and-output queued model with PFC (A6): an input queue pauses at input_queue_bytes - its port's
// headroom, at least two packets (SwitchMmu::configure), so one smaller than headroom + two packets cannot
// take what is in flight after its PAUSE and drops. Per switch, its port kind with the largest headroom.
struct InputQueueShort {
  int node = -1;               // the switch
  BufferSetAside::Ports port;  // its ports with the largest headroom (count: how many)
  Bytes packet_bytes = 0;
  Bytes needed_bytes() const { return port.headroom_bytes + 2 * packet_bytes; }
};
// The switches whose input_queue_bytes is below InputQueueShort::needed_bytes(), largest need first; empty
// without PFC or under the shared-buffer model.
std::vector<InputQueueShort> switches_short_of_input_queue(const TopoSpec& topo, const SwitchSettings& s,
                                                           Bytes packet_bytes);

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
