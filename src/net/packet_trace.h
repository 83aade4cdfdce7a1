// Packet timelines ([monitors] packet_trace; stats/monitors.h writes them as packet_trace.csv): the events
// of every data packet of chosen flows, hop by hop. A traced flow's QP has Qp::traced; the data packets it
// sends carry Packet::kFlagTraced, which each place below tests (one test of a byte of the packet's first
// line, predictable while nothing is traced):
//  - the sending host: send, or retransmit (a byte below the highest sent before);
//  - a switch: enqueue at its egress queue (queue_bytes: the bytes of its priority's queue ahead of it),
//    dequeue (queue_bytes: the bytes left behind it, what RED sees; paused: how long the queue's priority
//    was paused by the peer while the packet waited, from Port::paused_time_of at both ends), mark (it left
//    CE-marked, by RED or the scheme's agent), drop (buffer admission, or no route);
//  - a link: drop (a lossy wire, at the sender; a failed link, at the sender or the receiver);
//  - the receiving host: receive (in order, out of order, a duplicate, or of a finished flow).
// Rows are written by the partition whose event saw them (NetPartition::trace) with that event's key, and
// moved between windows into one list in key order (absorb): the key (time, origin, sequence) is the same
// for any cut into partitions, so the list is too, for any thread count. Across ranks gather_ranks brings
// every rank's rows to rank 0 in the same order. At most max_rows are kept: the first in that order.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/time.h"

namespace rocesim {

class RankComm;
struct NetPartition;

enum class TraceEvent : uint8_t { kSend, kRetransmit, kEnqueue, kDequeue, kMark, kDrop, kReceive };
// What more a row says: why a drop, what the receiver made of it.
enum class TraceDetail : uint8_t {
  kNone,
  kBuffer,      // drop: the switch's buffer admission (or an input queue's) refused it
  kUnroutable,  // drop: no route to its destination
  kWire,        // drop: lost on a lossy wire
  kLinkDown,    // drop: lost on a failed link
  kInOrder,     // receive: the next expected byte
  kOutOfOrder,  // receive: beyond it (a hole before it)
  kDuplicate,   // receive: below it (already received)
  kStale,       // receive: its flow had finished
};
const char* to_string(TraceEvent e);
const char* to_string(TraceDetail d);  // "" for kNone

struct TraceRow {
  unsigned __int128 key = 0;  // the event it happened in: its time (key >> 64, ps), origin and sequence
  uint64_t flow = 0;          // flows.csv's id
  int64_t seq = 0;            // first payload byte
  Bytes queue_bytes = -1;     // enqueue, dequeue; -1 otherwise
  Time paused{-1};            // dequeue; -1 otherwise
  int32_t node = 0;
  int16_t port = -1;  // the node's port (egress; for receive, the ingress); -1: none (unroutable)
  uint8_t prio = 0;
  TraceEvent event = TraceEvent::kSend;
  TraceDetail detail = TraceDetail::kNone;
  Time time() const { return Time{static_cast<int64_t>(static_cast<uint64_t>(key >> 64))}; }
};

struct PacketTraceSettings {
  std::vector<uint64_t> flows;    // flow ids, sorted
  std::vector<uint16_t> classes;  // traffic class ids (FlowSpec::class_id), sorted: every flow of them
  uint64_t max_rows = 1'000'000;  // rows kept at most (the first, in time order)
  bool traces(uint64_t flow_id, uint16_t class_id) const;
};

class PacketTrace {
 public:
  explicit PacketTrace(PacketTraceSettings s) : s_(std::move(s)), room_(s_.max_rows) {}
  const PacketTraceSettings& settings() const { return s_; }
  // A flow allocated between windows: whether it is traced (then noted, see flow_of).
  bool trace_flow(uint64_t flow_id, uint16_t class_id);
  // The id of the traced flow whose packets carry `tag` (Qp::tag), for a packet that outlived its QP slot.
  uint64_t flow_of(uint32_t tag) const {
    const auto it = tags_.find(tag);
    return it != tags_.end() ? it->second : tag;
  }
  uint64_t flows_traced() const { return flows_traced_; }
  // Rows a partition may still add during the current window (read by the partitions, set between windows).
  uint64_t room() const { return room_; }
  // Between windows: moves the partitions' rows here in key order, keeping the first max_rows.
  void absorb(const std::vector<std::unique_ptr<NetPartition>>& parts);
  // Across ranks, after the run: rank 0 gets every rank's rows (the others keep theirs). Collective.
  void gather_ranks(RankComm& comm);
  const std::vector<TraceRow>& rows() const { return rows_; }
  // Some row was left out for max_rows.
  bool truncated() const { return truncated_; }

 private:
  void add(std::vector<TraceRow>& in);  // in: in key order
  PacketTraceSettings s_;
  std::vector<TraceRow> rows_;
  std::vector<TraceRow> merge_;
  std::unordered_map<uint32_t, uint64_t> tags_;  // Qp::tag -> flow id of the traced flows
  uint64_t flows_traced_ = 0;
  uint64_t room_;
  bool truncated_ = false;
};

}  // namespace rocesim
