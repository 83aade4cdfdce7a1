// What the nodes of one partition write during a window (core/simulator.h; docs/parallel.md): its packet
// pool, its counters, and the observer calls (with the traced flows' state rows), finished flows and (across
// ranks) flow starts and receptions that PartitionedRun takes up between windows. Only the partition's own
// thread writes it while a window runs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/time.h"
#include "net/cc_state.h"
#include "net/flow_record.h"
#include "net/packet.h"
#include "net/packet_trace.h"
#include "net/run_results.h"

namespace rocesim {

struct NetPartition {
  // An observer call (NetObservers) or a finished flow, replayed between windows in the order of `key`.
  struct Call {
    enum Type : uint8_t { kPfc, kDelivered, kCnp, kFinished } type = kPfc;
    bool flag = false;  // PFC: pause; CNP: from a switch
    int node = 0, port = 0, prio = 0;
    uint32_t slot = 0;
    Bytes payload = 0;
    Time t;
    unsigned __int128 key = 0;  // the event during which it happened (replay order)
    FlowRecord record;          // kFinished
  };
  // A flow whose sender finished: its slot is freed at the next grid boundary (FlowTable::retire).
  struct Done {
    unsigned __int128 key = 0;
    uint32_t slot = 0;
    uint64_t flow_id = 0;
    Time finish;
  };
  // Across ranks (Network::set_ranks): what the other ranks need of a flow this partition started.
  struct Started {
    uint32_t slot = 0;
    uint16_t sport = 0;
    Time start, base_rtt, ideal_fct;
    Rate line_rate;
  };
  // Across ranks: a receiver has every byte; its per-flow counts go to the sender's rank (FlowRecord).
  struct Received {
    uint32_t slot = 0;
    uint32_t out_of_order = 0;
    uint32_t spurious = 0;
  };
  PacketPool pool;
  NetStats counters;
  std::vector<Call> calls;
  std::vector<Done> done;
  std::vector<Started> started;
  std::vector<Received> received;
  std::vector<CcStateRow> cc_rows;  // [monitors] cc_state at every reaction: replayed to on_cc_state
  // [monitors] packet_trace (net/packet_trace.h): rows of this window, in event order, at most
  // PacketTrace::room(); trace_overflow when one more was left out.
  std::vector<TraceRow> trace;
  bool trace_overflow = false;
};

// Moves every partition's `member` list, then `from_ranks` (the other ranks' since the last window, when
// given), into `out` in the order of their events. Each partition's items are in key order and one event's
// items are all in one partition, so a stable sort by key gives the order of one partition running every
// event: the same for any thread or rank count.
template <typename T>
void gather_in_event_order(const std::vector<std::unique_ptr<NetPartition>>& parts,
                           std::vector<T> NetPartition::*member, std::vector<T>& out,
                           std::vector<T>* from_ranks = nullptr) {
  out.clear();
  for (const auto& p : parts) {
    std::vector<T>& v = (*p).*member;
    out.insert(out.end(), v.begin(), v.end());
    v.clear();
  }
  if (from_ranks) {
    out.insert(out.end(), from_ranks->begin(), from_ranks->end());
    from_ranks->clear();
  }
  const auto by_key = [](const T& a, const T& b) { return a.key < b.key; };
  if (!std::is_sorted(out.begin(), out.end(), by_key)) std::stable_sort(out.begin(), out.end(), by_key);
}

}  // namespace rocesim
