// An output-queued switch with a shared buffer (Broadcom-style MMU, as the ns-3 HPCC simulator models it):
// every data packet is accounted to its ingress (port, priority) for PFC and to its egress queue for
// ECN and INT. PFC thresholds are static (Xoff/Xon) or dynamic (alpha x free shared buffer) with
// per-port headroom; see docs/algorithms.md section 1.1-1.4.
#pragma once
#include <memory>
#include <vector>

#include "core/rng.h"
#include "net/cc_api.h"
#include "net/node.h"
#include "net/settings.h"

namespace rocesim {

struct IngressCounters {
  Bytes bytes = 0;        // reserve + shared bytes held by this (port, priority)
  Bytes hdrm_bytes = 0;   // bytes that landed in headroom
  bool pause_sent = false;
  bool agent_hold = false; // a switch agent holds this (port, priority) paused (Switch::hold_pause)
};

struct EgressEcn {
  Bytes kmin = 0, kmax = 0;
  double pmax = 0;
};

class Switch : public Node {
 public:
  Switch(Network& net, int id);
  bool is_switch() const override { return true; }
  void receive(Packet* p, int in_port) override;

  // Called by Network after ports are wired.
  void configure(const SwitchSettings& s, Rate host_rate);
  void set_agent(std::unique_ptr<SwitchAgent> a) { agent_ = std::move(a); }
  SwitchAgent* agent() { return agent_.get(); }

  // Enqueues a packet at an egress port, as forwarding would (used for switch-generated packets).
  void forward(Packet* p);

  // Read access for schemes, monitors and tests.
  const IngressCounters& ingress(int port, int prio) const { return ingress_[port * kNumPriorities + prio]; }
  Bytes egress_bytes(int port, int prio) const { return ports_[port].q[prio].bytes; }
  Bytes egress_data_bytes(int port) const { return ports_[port].data_bytes; }
  Bytes buffer_used() const { return total_bytes_; }
  Bytes shared_used() const { return shared_used_; }
  Bytes headroom(int port) const { return headroom_[port]; }
  Bytes pfc_threshold(int port) const;
  const EgressEcn& ecn(int port) const { return ecn_[port]; }
  void set_ecn(int port, const EgressEcn& e) { ecn_[port] = e; }
  // Per-port static PFC thresholds (long-haul ports get SwitchSettings::long_haul_*; agents may override).
  Bytes xoff(int port) const { return xoff_[port]; }
  Bytes xon(int port) const { return xon_[port]; }
  void set_port_thresholds(int port, Bytes xoff, Bytes xon) { xoff_[port] = xoff; xon_[port] = xon; }
  // An agent holds (hold = true) ingress `port`'s priority `prio` paused towards the upstream neighbour:
  // a PAUSE goes out now unless one is out already, and the switch's own RESUME waits until the agent
  // releases the hold (hold = false) and the buffer rule allows it (PFC relay of long-haul links).
  void hold_pause(int port, int prio, bool hold);

  // --- input-and-output queued model (SwitchSettings::model; see settings.h) ---
  bool input_output_queued() const { return ioq_; }
  // The input queue of (port, prio) (empty under the shared buffer; FIFO input queueing only).
  const PacketQueue& input_queue(int port, int prio) const { return iq_[port * kNumPriorities + prio]; }
  // Input queues per (port, prio): 1 (FIFO) or one per egress port (virtual output queues, whose k-th
  // queue holds the packets for output k). input_queue(port, prio, k) works under both.
  int input_queues_per_input() const { return voq_ ? static_cast<int>(ports_.size()) : 1; }
  const PacketQueue& input_queue(int port, int prio, int k) const {
    return iq_[static_cast<size_t>(port * kNumPriorities + prio) * static_cast<size_t>(input_queues_per_input()) +
               static_cast<size_t>(k)];
  }
  // Data bytes held for ingress `port` over all priorities: its input queues (IOQ) or its ingress counters.
  Bytes input_bytes(int port) const;
  Bytes ioq_xoff(int port) const { return ioq_xoff_[port]; }
  // Retries the crossbar of output `out` (an agent released holds).
  void crossbar_kick(int out);
  // Sends a scheme's control message to the neighbour switch on `port` at control priority; it is handed
  // to that switch's agent (SwitchAgent::on_switch_message) and never forwarded. Returns false (and frees
  // the packet) when the neighbour is a host.
  bool send_to_neighbour(int port, Packet* p);

 protected:
  Packet* dequeue(Port& port) override;
  bool has_backlog(const Port& port) const override;
  void on_pfc_change(int port_index, int prio, bool paused) override;

 private:
  int route(const Packet& p) const;
  bool admit(Packet* p, int in_port);
  void release(const Packet& p);
  void maybe_pause(int in_port, int prio);
  void maybe_resume(int in_port, int prio);
  void red_mark(Packet& p, const Port& port);
  void stamp_int(Packet& p, const Port& port);
  Bytes shared_of(const IngressCounters& c) const { return c.bytes > reserve_ ? c.bytes - reserve_ : 0; }
  void ioq_arrive(Packet* p, int out);
  void ioq_advance(int w);
  void ioq_pull(int out);
  void ioq_move(int w, int out);

  SwitchSettings s_;
  Bytes reserve_ = 0;
  std::vector<IngressCounters> ingress_;   // [port * 8 + prio]
  std::vector<Bytes> headroom_;            // per port
  std::vector<int> dt_shift_;              // per port
  std::vector<EgressEcn> ecn_;             // per port
  std::vector<Bytes> xoff_, xon_;          // per port (static mode)
  Bytes hdrm_total_ = 0;
  Bytes reserve_total_ = 0;
  Bytes shared_used_ = 0;
  Bytes total_bytes_ = 0;
  Rng mark_rng_;
  std::unique_ptr<SwitchAgent> agent_;
  // Input-and-output queued model. w = in_port * kNumPriorities + prio names an input queue.
  struct WaitRing {  // inputs waiting on one output, served round robin (fixed capacity: ports x priorities)
    std::vector<uint32_t> buf;
    size_t head = 0, n = 0;
    uint32_t front() const { return buf[head]; }
    void push(uint32_t w) { buf[(head + n++) % buf.size()] = w; }
    void pop() { head = (head + 1) % buf.size(); --n; }
  };
  bool ioq_ = false;
  std::vector<PacketQueue> iq_;          // [w] input queues
  std::vector<int16_t> waiting_on_;      // [w] output its head waits for, or -1
  std::vector<WaitRing> waiters_;        // per output
  std::vector<uint8_t> pulling_;         // per output: its crossbar is being served (no nesting)
  std::vector<uint8_t> in_dequeue_;      // per port: dequeue() runs (no nested kick of that port)
  std::vector<Bytes> ioq_xoff_, ioq_xon_;  // per ingress port
  // Virtual output queues (InputQueueing::kVoq): iq_, waiting_on_ and the wait rings are indexed by
  // q = w * ports + output; the byte accounting and PFC stay per w (ingress_[w]).
  bool voq_ = false;
  int acct_of(int q) const { return voq_ ? q / static_cast<int>(ports_.size()) : q; }
};

}  // namespace rocesim
