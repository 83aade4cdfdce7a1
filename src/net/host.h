// A host's RDMA NIC: RC queue pairs paced at the scheme's rate under an optional window, ACK every N
// packets, NACK + go-back-N (and a timeout) for lossy runs, the receiver's notification point through
// the scheme hook, obeys PFC from its ToR and pauses it when its own receive buffer passes Xoff.
#pragma once
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
  void arm_rto(Qp& qp);
  size_t active_qps() const { return active_.size(); }

 protected:
  // kFlowStart: arg the QP slot; kQpTimer + (scheme kind << 8): arg (slot << 32 | tag).
  enum HostEvent : uint32_t { kRxDone = kNodeKinds, kRto, kFlowStart, kQpTimer };
  friend class Network;
  Packet* dequeue(Port& port) override;
  bool has_backlog(const Port& port) const override;
  void on_node_event(uint32_t kind, uint64_t arg) override;

 private:
  Packet* make_data(Qp& qp, uint32_t slot);
  void process(Packet* p);
  void on_data(Packet* p);
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
};

}  // namespace rocesim
