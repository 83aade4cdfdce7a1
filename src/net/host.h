// A host's RDMA NIC: RC queue pairs paced at the scheme's rate under an optional window, ACK every N
// packets, NACK + go-back-N or selective repeat (and a timeout) for lossy runs, the receiver's
// notification point through the scheme hook, obeys PFC from its ToR and pauses it when its own receive
// buffer passes Xoff.
#pragma once
#include <bit>
#include <vector>

#include "net/node.h"

namespace rocesim {

struct Qp;

class Host : public Node {
 public:
  Host(Network& net, int id);
  bool is_switch() const override { return false; }
  void receive(Packet* p, int in_port) override;

  // The QP has data to send: add it to the send list and wake the port.
  void activate(uint32_t slot);
  void deactivate(uint32_t slot);
  // Queues a control packet (ACK, NACK, CNP) for transmission.
  void send_control(Packet* p);
  // Wakes the ports in `mask` (a bit per port: Qp::tx_ports).
  void kick_ports(unsigned mask) {
    for (; mask; mask &= mask - 1) kick(std::countr_zero(mask));
  }
  void arm_rto(Qp& qp);
  size_t active_qps() const { return active_.size(); }

 protected:
  // kFlowStart: arg the QP slot; kQpTimer + (scheme kind << 8): arg (slot << 32 | tag).
  // kReorder: a QP's reorder window ended (arg as kRto's).
  enum HostEvent : uint32_t { kRxDone = kNodeKinds, kRto, kFlowStart, kQpTimer, kReorder };
  friend class Network;
  friend class CcServices;  // schedule_qp_timer posts kQpTimer
  friend class FlowTable;   // posts kFlowStart
  Packet* dequeue(Port& port) override;
  bool has_backlog(const Port& port) const override;
  void on_node_event(uint32_t kind, uint64_t arg) override;

 private:
  Packet* make_data(Qp& qp, uint32_t slot);
  // Whether the QP has a packet to send: new data, or (selective repeat) a lost packet.
  bool has_data(Qp& qp);
  // Selective repeat: moves qp.rtx_nxt to the next packet deemed lost and not SACKed; false when none.
  bool next_hole(Qp& qp);
  Time rto_of(const Qp& qp) const;
  // The QP a timer (kRto, kReorder; arg = slot << 32 | tag) is for, or nullptr when its flow is done.
  Qp* timer_qp(uint64_t arg);
  // Selective repeat, kReorderWindow: the window a packet gets to arrive after one sent later was SACKed.
  Time reorder_window(const Qp& qp) const;
  void arm_reorder(Qp& qp, Time at);
  void on_reorder_timer(Qp& qp);
  // Selective repeat, kReorderWindow: an ACK or SACK of the packet at `seq`, echoing its send time; when it
  // is an original overtaken by a packet sent later, how late it came is a sample of the host's lateness.
  void note_if_late(Qp& qp, Bytes seq, Time sent_at);
  void note_lateness(Time late);  // into the windowed maximum below
  // The largest lateness this host saw in its current and previous epoch (NicSettings::lateness_epoch).
  Time learned_lateness() const;
  // reorder_window_lateness x learned_lateness, at most reorder_window_max (_lossless on a lossless fabric).
  Time lateness_allowance() const;
  // The QP may have something to send again (a rewind, packets deemed lost): into the send list, or the
  // port woken if it is there already (it may have stopped for the QP's window).
  void wake(Qp& qp);
  void process(Packet* p);
  void on_data(Packet* p);
  void on_data_selective(Qp& qp, const Packet& p);
  // Selective repeat: a data packet accepted (in order, or held out of order when `sack`): the scheme's
  // receiver hook, CNP, and the ACK (now when `ack_now` or `sack`, else every ack_interval packets).
  void accept_selective(Qp& qp, const Packet& p, bool ack_now, bool sack);
  void on_ack_selective(Qp& qp, const Packet& ack);
  void on_ack(Packet* p);
  void on_nack(Packet* p);
  void on_cnp(Packet* p);
  void send_ack(Qp& qp, const Packet& data, PktType type, uint8_t flags);
  void rx_start_next();

  std::vector<uint32_t> active_;  // QP slots with data to send
  size_t rr_ = 0;
  // Receive path when the NIC processes slower than the wire (nic.rx_rate > 0).
  PacketQueue rx_q_;
  bool rx_busy_ = false;
  bool rx_paused_tor_[kNumPriorities] = {};
  // Lateness of overtaken originals (note_if_late): the largest in the epoch ending at late_epoch_end_
  // and in the one before it, a windowed maximum that forgets a path that is no longer late.
  Time late_max_;
  Time late_max_prev_;
  Time late_epoch_end_;
  // The switches pause or grant credits (NicSettings::reorder_window_lossless applies).
  bool lossless_fabric_;
};

}  // namespace rocesim
