// A switch: a node that forwards packets between its ports, composed of parts with one job each:
// - SwitchMmu (net/switch_mmu.h): buffer accounting per ingress (port, priority) and PFC thresholds;
// - Crossbar (net/switch_crossbar.h): the input queues of the input-and-output queued model;
// - EgressScheduler (net/switch_egress.h): which packet a port sends next, RED marking, INT stamping.
// The switch itself routes (PathSelector: ECMP, flowlets, spraying or adaptive, then the scheme's
// InputAgent::select_port), hands packets from part to part
// (`forward`, `dequeue`) and carries the scheme's agents and switch-to-switch messages. A data packet is
// accounted to its ingress (port, priority) for PFC and to its egress queue for ECN and INT; see
// docs/algorithms.md section 1.1-1.4.
#pragma once
#include <memory>
#include <vector>

#include "net/cc_api.h"
#include "net/node.h"
#include "net/path_select.h"
#include "net/settings.h"
#include "net/switch_crossbar.h"
#include "net/switch_egress.h"
#include "net/switch_mmu.h"

namespace rocesim {

class Switch : public Node {
 public:
  Switch(Network& net, int id);
  bool is_switch() const override { return true; }
  void receive(Packet* p, int in_port) override;

  // Called by Network after ports are wired.
  void configure(const SwitchSettings& s, Rate host_rate);
  void set_agent(std::unique_ptr<SwitchAgent> a) {
    agent_ = std::move(a);
    input_agent_ = agent_ ? agent_->input_agent() : nullptr;
  }
  SwitchAgent* agent() { return agent_.get(); }
  const SwitchAgent* agent() const { return agent_.get(); }
  const PathSelector& paths() const { return paths_; }
  // Every packet's egress is a function of its flow's hash (ECMP, no scheme choosing ports): what
  // Network::cached_route needs.
  bool routes_by_flow_hash() const { return paths_.by_flow_hash() && !input_agent_; }

  // Enqueues a packet at an egress port, as forwarding would (used for switch-generated packets).
  void forward(Packet* p);

  // Read access for schemes, monitors and tests.
  const IngressCounters& ingress(int port, int prio) const { return mmu_.ingress(port, prio); }
  Bytes egress_bytes(int port, int prio) const { return ports_[port].q[prio].bytes; }
  Bytes egress_data_bytes(int port) const { return ports_[port].data_bytes; }
  Bytes buffer_used() const { return mmu_.buffer_used(); }
  Bytes shared_used() const { return mmu_.shared_used(); }
  Bytes headroom(int port) const { return mmu_.headroom(port); }
  Bytes pfc_threshold(int port) const { return mmu_.pfc_threshold(port); }
  const EgressEcn& ecn(int port) const { return egress_.ecn(port); }
  void set_ecn(int port, const EgressEcn& e) { egress_.set_ecn(port, e); }
  // (Egress port, priority) pairs paused by a neighbour now: a deadlock check skips a switch with none
  // instead of reading its every port.
  int paused_egresses() const { return paused_egresses_; }
  // Per-port static PFC thresholds (long-haul ports get SwitchSettings::long_haul_*; agents may override).
  Bytes xoff(int port) const { return mmu_.xoff(port); }
  Bytes xon(int port) const { return mmu_.xon(port); }
  void set_port_thresholds(int port, Bytes xoff, Bytes xon) { mmu_.set_port_thresholds(port, xoff, xon); }
  // An agent holds (hold = true) ingress `port`'s priority `prio` paused towards the upstream neighbour:
  // a PAUSE goes out now unless one is out already, and the switch's own RESUME waits until the agent
  // releases the hold (hold = false) and the buffer rule allows it (PFC relay of long-haul links).
  void hold_pause(int port, int prio, bool hold) { mmu_.hold_pause(port, prio, hold); }
  // The link of `port` failed: the pauses this switch sent on it are void (net/link_events.h).
  void clear_link_pause(int port) { mmu_.clear_pause(port); }

  // --- input-and-output queued model (SwitchSettings::model; see settings.h) ---
  bool input_output_queued() const { return crossbar_.on(); }
  // Input queues per (port, prio): 1 (FIFO) or one per egress port (virtual output queues, whose k-th
  // queue holds the packets for output k). input_queue(port, prio, k) works under both.
  int input_queues_per_input() const { return crossbar_.queues_per_input(); }
  const PacketQueue& input_queue(int port, int prio, int k) const { return crossbar_.queue(port, prio, k); }
  // Data bytes held for ingress `port` over all priorities: its input queues (IOQ) or its ingress counters.
  Bytes input_bytes(int port) const { return mmu_.input_bytes(port); }
  Bytes ioq_xoff(int port) const { return mmu_.input_xoff(port); }
  // Retries the crossbar of output `out` (an agent released holds).
  void crossbar_kick(int out) {
    if (crossbar_.on()) crossbar_.pull(out);
  }
  // Sends a scheme's control message to the neighbour switch on `port` at control priority; it is handed
  // to that switch's agent (SwitchAgent::on_switch_message) and never forwarded. Returns false (and frees
  // the packet) when the neighbour is a host.
  bool send_to_neighbour(int port, Packet* p);

 protected:
  Packet* dequeue(Port& port) override;
  bool has_backlog(const Port& port) const override { return EgressScheduler::has_backlog(port); }
  void on_pfc_change(int port_index, int prio, bool paused) override;

 private:
  // The parts reach the switch's ports, network and flow-control primitives through it.
  friend class SwitchMmu;
  friend class Crossbar;
  friend class EgressScheduler;

  int route(Packet& p);
  void send_at_once(Packet* p, Port& port);
  // [monitors] packet_trace (net/packet_trace.h): rows of a traced data packet.
  void trace_enqueue(Packet& p, const Port& port);
  void trace_dequeue(Packet& p, const Port& port, uint8_t ecn_before);
  // Puts a data packet in the egress queue of its priority at `out` (after admission or crossing).
  void enqueue_output(Packet* p, int out) {
    Port& port = ports_[out];
    if (p->traced()) [[unlikely]]
      trace_enqueue(*p, port);
    port.push(p->prio, p);
    port.data_bytes += p->size;
    if (port.data_bytes > port.max_queue_bytes) port.max_queue_bytes = port.data_bytes;
  }

  // What every packet reads first, next to the node's own fields; the settings (read a few fields at a time)
  // last. The parts keep a reference to s_, which they read only after construction.
  std::unique_ptr<SwitchAgent> agent_;
  InputAgent* input_agent_ = nullptr;  // agent_->input_agent(), or null
  int paused_egresses_ = 0;            // kept by on_pfc_change()
  std::vector<uint8_t> in_dequeue_;    // per port: dequeue() runs (no nested kick of that port)
  SwitchMmu mmu_{*this, s_};
  EgressScheduler egress_{*this, s_};
  PathSelector paths_;
  Crossbar crossbar_{*this, s_};
  SwitchSettings s_;
};

}  // namespace rocesim
