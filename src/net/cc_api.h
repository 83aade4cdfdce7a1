// The plug-in interface of congestion-control schemes. A scheme is one object per simulation that
// keeps its per-QP state in its own arrays (indexed by QP slot) and may install an agent on every
// switch. net/ calls these hooks and never looks at which scheme is running; the scheme calls the network
// only through CcServices (net/cc_services.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "net/cc_services.h"
#include "net/cc_state.h"
#include "net/packet.h"
#include "net/qp.h"

namespace rocesim {

class Switch;

// What the receiver NIC should do with a data packet it just accepted in order.
struct RxDecision {
  bool send_cnp = false;  // send a CNP to the sender now
  bool ack_now = false;   // acknowledge now even if the ACK interval is not reached
  uint8_t ack_flags = 0;  // flags to put on the ACK (Packet::kFlag*)
};

// Hooks on a switch's input side, between a packet's arrival and its egress queue: the choice among
// equal-cost ports, the input's accounting, and the crossbar of the input-and-output queued model. For a
// scheme that acts inside the switch before the egress (hop-by-hop control that detours or holds flows);
// its SwitchAgent also implements this and returns itself from SwitchAgent::input_agent. Every hook has a
// cheap default.
class InputAgent {
 public:
  virtual ~InputAgent() = default;
  // Picks the egress among `n` > 1 equal-cost `ports` (ECMP's hash chose `hashed_port`); returns a port.
  virtual int select_port(const Packet& /*p*/, const uint16_t* /*ports*/, int /*n*/, int hashed_port) {
    return hashed_port;
  }
  // A data packet was admitted from `in_port` (its input queue under the input-and-output queued model,
  // its ingress counter under the shared buffer); Switch::input_bytes(in_port) includes it.
  virtual void on_input_enqueue(const Packet& /*p*/, int /*in_port*/) {}
  // Input-and-output queued model: true keeps `p` (the head of its input queue) from crossing to its
  // output `out_port` now; the crossbar serves other waiting inputs instead.
  virtual bool hold(const Packet& /*p*/, int /*out_port*/) { return false; }
  // The crossbar of `out_port` has room but every waiting input is held: return true to try once more
  // (after releasing some holds), false to leave them waiting until the next dequeue or crossbar_kick.
  virtual bool on_crossbar_idle(int /*out_port*/) { return false; }
};

// Hooks a scheme can install on each switch. Every hook has a cheap default.
class SwitchAgent {
 public:
  virtual ~SwitchAgent() = default;
  // A data packet was admitted and queued at egress `port`.
  virtual void on_enqueue(Packet& /*p*/, int /*port*/) {}
  // A data packet starts transmission on `port` (after ECN marking and INT stamping).
  virtual void on_dequeue(Packet& /*p*/, int /*port*/) {}
  // A control packet (ACK/NACK/CNP/...) passes through towards `port`.
  virtual void on_control(Packet& /*p*/, int /*port*/) {}
  // Our egress `port` was paused or resumed for `prio` by the downstream neighbour.
  virtual void on_pfc(int /*port*/, int /*prio*/, bool /*paused*/) {}
  // Replaces RED marking when it returns true (the agent marked or decided not to mark).
  virtual bool mark(Packet& /*p*/, int /*port*/) { return false; }
  // Named counters of egress `port` for summary.json "scheme_counters" (e.g. packets marked per detected
  // state); called once at the end of a run. None by default.
  virtual void port_counters(int /*port*/, std::vector<std::pair<const char*, double>>& /*out*/) const {}
  // A switch-to-switch message (PktType::kCtrl at priority 0) arrived on `in_port`: sent to the neighbour
  // with Switch::send_to_neighbour, or addressed to this switch through CcServices::inject. Freed after the
  // call.
  virtual void on_switch_message(const Packet& /*p*/, int /*in_port*/) {}
  // The agent's hooks on the switch's input side, if it has any (the switch asks once, when the agent is
  // installed): an agent that implements InputAgent returns itself.
  virtual InputAgent* input_agent() { return nullptr; }
};

// A switch port's static PFC thresholds (shared buffer, static mode: A4).
struct PfcThresholds {
  Bytes xoff = 0;
  Bytes xon = 0;
};

struct CcNeeds {
  bool int_stamping = false;      // switches append INT hop records to data packets
  bool ack_high_priority = true;  // ACKs in the control class (else in the flow's data class)
  bool ecn_marking = true;        // switches run RED marking
  bool window = false;            // the scheme limits bytes in flight
  bool send_timestamp = false;    // data packets carry their send time (NicSettings::timestamp_bytes)
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  virtual std::string name() const = 0;
  virtual CcNeeds needs() const { return {}; }

  // Called once the network is built: `net` is all the scheme may call of it.
  virtual void attach(CcServices& net) { net_ = &net; }

  // Sender (reaction point)
  virtual void on_flow_start(Qp& qp) = 0;  // set qp.rate (and qp.window)
  virtual void on_data_sent(Qp& /*qp*/, Packet& /*p*/) {}
  virtual void on_ack(Qp& /*qp*/, const Packet& /*ack*/) {}
  virtual void on_nack(Qp& /*qp*/, const Packet& /*nack*/) {}
  virtual void on_cnp(Qp& /*qp*/, const Packet& /*cnp*/) {}
  virtual void on_timer(Qp& /*qp*/, uint32_t /*kind*/) {}
  virtual void on_flow_end(Qp& /*qp*/) {}
  // A rate event ([[events]] action = "rate", net/link_events.h) changed the link of the flow's sender from
  // `old_line` to qp.line_rate; the network has moved qp.rate as follow_line_rate does. Called between
  // windows: bring the scheme's own rate state within the new line rate (no calls into the network).
  virtual void on_line_rate_change(Qp& /*qp*/, Rate /*old_line*/) {}
  // A rate after the line rate changed from `old_line` to `new_line`: at (or above) the old line rate, the
  // flow was not held back and goes on at the new one; below it, it keeps its rate, at most the new line
  // rate.
  static Rate follow_line_rate(Rate r, Rate old_line, Rate new_line) {
    return r >= old_line ? new_line : std::min(r, new_line);
  }

  // Receiver (notification point): called for every in-order data packet.
  virtual RxDecision on_data_received(Qp& /*qp*/, const Packet& /*data*/) { return {}; }
  // The flow's QP slot was just given to it, between windows, before its start (in a run over several
  // processes, on every rank, where on_flow_start runs only on its sender's): reset here the per-QP state
  // the receiver side reads.
  virtual void on_flow_allocated(Qp& /*qp*/) {}

  // A run over several processes (Network::set_ranks): a packet that leaves for another rank takes along
  // what the scheme keeps beside it (e.g. in its own tables, named by a packet field). pack_beside
  // appends that to `out` and releases it here; unpack_beside reads it back on the other rank (advancing
  // `in`) and fixes the packet's reference to it. Both do nothing for packets without such data.
  virtual void pack_beside(const Packet& /*p*/, std::vector<char>& /*out*/) {}
  virtual void unpack_beside(Packet& /*p*/, const char*& /*in*/) {}

  // Switch side (congestion point)
  virtual std::unique_ptr<SwitchAgent> make_switch_agent(Switch& /*sw*/) { return nullptr; }
  // The static PFC thresholds the scheme's switch agent gives a long-haul ingress port from another switch
  // (link `rate`, one-way `delay`; `packet_bytes`: one packet on the wire), given the switch's own
  // thresholds `own`; the default keeps them. The agent installs what this returns and the scenario's
  // buffer check (switches_over_committed, net/switch_mmu.h) counts it, so that a buffer which cannot hold
  // the scheme's Xoff plus headroom is refused before the run instead of dropping under PFC.
  virtual PfcThresholds long_haul_thresholds(Rate /*rate*/, Time /*delay*/, Bytes /*packet_bytes*/,
                                             PfcThresholds own) const {
    return own;
  }
  // The scheme's settings that decide long_haul_thresholds, for that check's message ("" when it keeps
  // the switch's).
  virtual std::string long_haul_thresholds_keys() const { return {}; }

  // The state of a flow over time ([monitors] cc_state): the variables that define the scheme's per-flow
  // state, declared once (a static array, at most kMaxCcVariables), and their values for a QP. read_state
  // writes out[i] for state_variables()[i], as of net_->now(), from the sender's state only (it runs at the
  // sender's host during an event, or between windows); it changes nothing. None by default.
  virtual std::span<const CcVariable> state_variables() const { return {}; }
  virtual void read_state(const Qp& /*qp*/, std::span<double> /*out*/) const {}

 protected:
  CcServices* net_ = nullptr;
};

}  // namespace rocesim
