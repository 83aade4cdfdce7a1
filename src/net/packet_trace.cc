#include "net/packet_trace.h"

#include <algorithm>

#include "core/rank_comm.h"
#include "net/net_partition.h"

namespace rocesim {

const char* to_string(TraceEvent e) {
  switch (e) {
    case TraceEvent::kSend:
      return "send";
    case TraceEvent::kRetransmit:
      return "retransmit";
    case TraceEvent::kEnqueue:
      return "enqueue";
    case TraceEvent::kDequeue:
      return "dequeue";
    case TraceEvent::kMark:
      return "mark";
    case TraceEvent::kDrop:
      return "drop";
    case TraceEvent::kReceive:
      return "receive";
  }
  return "?";
}

const char* to_string(TraceDetail d) {
  switch (d) {
    case TraceDetail::kNone:
      return "";
    case TraceDetail::kBuffer:
      return "buffer";
    case TraceDetail::kUnroutable:
      return "unroutable";
    case TraceDetail::kWire:
      return "wire";
    case TraceDetail::kLinkDown:
      return "link_down";
    case TraceDetail::kInOrder:
      return "in_order";
    case TraceDetail::kOutOfOrder:
      return "out_of_order";
    case TraceDetail::kDuplicate:
      return "duplicate";
    case TraceDetail::kStale:
      return "stale";
  }
  return "?";
}

bool PacketTraceSettings::traces(uint64_t flow_id, uint16_t class_id) const {
  return std::binary_search(flows.begin(), flows.end(), flow_id) ||
         std::binary_search(classes.begin(), classes.end(), class_id);
}

bool PacketTrace::trace_flow(uint64_t flow_id, uint16_t class_id) {
  if (!s_.traces(flow_id, class_id)) return false;
  tags_.emplace(static_cast<uint32_t>(flow_id), flow_id);
  ++flows_traced_;
  return true;
}

void PacketTrace::absorb(const std::vector<std::unique_ptr<NetPartition>>& parts) {
  for (const auto& p : parts) {
    if (p->trace_overflow) truncated_ = true;  // it had rows beyond room(): more than max_rows in all
    p->trace_overflow = false;
  }
  gather_in_event_order(parts, &NetPartition::trace, merge_);
  add(merge_);
}

void PacketTrace::add(std::vector<TraceRow>& in) {
  const size_t keep = std::min<size_t>(in.size(), s_.max_rows - std::min<size_t>(s_.max_rows, rows_.size()));
  if (keep < in.size()) truncated_ = true;
  rows_.insert(rows_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(keep));
  in.clear();
  room_ = s_.max_rows - rows_.size();
}

void PacketTrace::gather_ranks(RankComm& comm) {
  std::vector<char> mine;
  put_raw(mine, static_cast<uint8_t>(truncated_));
  put_raw(mine, static_cast<uint64_t>(rows_.size()));
  for (const TraceRow& r : rows_) put_raw(mine, r);
  std::vector<std::vector<char>> all;
  comm.all_gather(mine, all);
  // Every rank's rows are the first of its own in key order; the first max_rows of their merge are those
  // of one process. (Every rank's coordinator allocates every flow: flows_traced() is the same on all.)
  rows_.clear();
  truncated_ = false;
  merge_.clear();
  for (const std::vector<char>& b : all) {
    const char* in = b.data();
    truncated_ = take_raw<uint8_t>(in) != 0 || truncated_;
    const auto n = take_raw<uint64_t>(in);
    for (uint64_t i = 0; i < n; ++i) merge_.push_back(take_raw<TraceRow>(in));
  }
  std::stable_sort(merge_.begin(), merge_.end(),
                   [](const TraceRow& a, const TraceRow& b) { return a.key < b.key; });
  add(merge_);
}

}  // namespace rocesim
