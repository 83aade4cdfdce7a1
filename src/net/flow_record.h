// What the simulator records about each finished flow.
#pragma once
#include <cstdint>

#include "core/time.h"

namespace rocesim {

struct FlowRecord {
  uint64_t id = 0;
  int src = 0;         // node id
  int dst = 0;         // node id
  uint16_t sport = 0;  // as the ns-3 simulator assigns: 10000 + k-th flow of that source (for fct.txt)
  uint16_t dport = 100;
  int priority = 3;
  Bytes size_bytes = 0;
  Time start;
  Time finish;            // when the sender got the ACK of the last byte
  Time ideal_fct;         // standalone FCT on an empty network (see net/ideal_fct.h)
  uint16_t class_id = 0;  // index into the run's class labels
  // Transport: data packets and payload bytes the sender sent again, and data packets that reached the
  // receiver ahead of its next expected byte (reordered, or after a loss).
  uint32_t retransmitted_packets = 0;
  uint64_t retransmitted_bytes = 0;
  uint32_t out_of_order_packets = 0;
  // Retransmissions that reached the receiver after their original (or an earlier copy) had: sent for a
  // loss that was not one (reordering, a timeout during a pause, go-back-N's rewind past what arrived),
  // until the receiver had every byte (transport.spurious_retransmissions counts the later ones too).
  uint32_t spurious_retransmissions = 0;
  uint32_t name_id = 0;  // FlowSpec::name_id: the workload's own name of the flow (0: none)
  Time fct() const { return finish - start; }
  // Slowdown = fct / ideal, clipped at 1 (as the ns-3 simulator's analysis scripts do).
  double slowdown() const {
    const double s = static_cast<double>(fct().ps) / static_cast<double>(ideal_fct.ps);
    return s < 1.0 ? 1.0 : s;
  }
};

}  // namespace rocesim
