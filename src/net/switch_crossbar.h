// The crossbar of the input-and-output queued switch model (SwitchSettings::model, settings.h; RCM paper
// sec. 4.1). A data packet from a host or switch joins the FIFO input queue of its (ingress port,
// priority); PFC pauses the upstream when that queue reaches its Xoff (net/switch_mmu.h). The head of an
// input queue crosses to its output queue (chosen at arrival) as soon as that has room and no other input
// waits on it; otherwise the input joins the output's wait ring, which the output serves round robin
// whenever it dequeues. A head that waits blocks its whole input queue (head-of-line blocking across
// outputs). With virtual output queues (InputQueueing::kVoq) the same code runs on one queue per (input,
// priority, output), q = w * ports + output: the wait ring of an output then holds the input queues that
// have a packet for it, and a waiting head blocks only packets for the same output. Accounting and PFC stay
// per w = in_port * kNumPriorities + prio (acct_of(q)). A scheme's InputAgent (net/cc_api.h) may hold a
// head at the crossbar. One object per switch, touching only that switch's state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/node.h"
#include "net/packet.h"
#include "net/settings.h"

namespace rocesim {

class Switch;

class Crossbar {
 public:
  Crossbar(Switch& sw, const SwitchSettings& s) : sw_(sw), s_(s) {}
  // Sizes the input queues for the switch's wired ports when the model is input-and-output queued.
  void configure();
  bool on() const { return on_; }

  // A data packet from input p->in_port for output `out`: joins its input queue (or is dropped when the
  // queue is full) and crosses when it can.
  void arrive(Packet* p, int out);
  // Output `out` has room again (it dequeued, or an agent released holds): serves its waiting inputs.
  void pull(int out);

  // Input queues per (port, prio): 1 (FIFO) or one per egress port (virtual output queues, whose k-th
  // queue holds the packets for output k).
  int queues_per_input() const { return voq_ ? n_ports_ : 1; }
  const PacketQueue& queue(int port, int prio, int k) const {
    return iq_[static_cast<size_t>(port * kNumPriorities + prio) * static_cast<size_t>(queues_per_input()) +
               static_cast<size_t>(k)];
  }

 private:
  struct WaitRing {  // inputs waiting on one output, served round robin (fixed capacity: ports x priorities)
    std::vector<uint32_t> buf;
    size_t head = 0, n = 0;
    uint32_t front() const { return buf[head]; }
    void push(uint32_t w) { buf[(head + n++) % buf.size()] = w; }
    void pop() {
      head = (head + 1) % buf.size();
      --n;
    }
  };
  void advance(int q);
  void move(int q, int out);
  int acct_of(int q) const { return voq_ ? q / n_ports_ : q; }

  Switch& sw_;
  const SwitchSettings& s_;
  bool on_ = false;
  bool voq_ = false;
  int n_ports_ = 0;
  std::vector<PacketQueue> iq_;      // [q] input queues
  std::vector<int16_t> waiting_on_;  // [q] output its head waits for, or -1
  std::vector<WaitRing> waiters_;    // per output
  std::vector<uint8_t> pulling_;     // per output: its crossbar is being served (no nesting)
};

}  // namespace rocesim
