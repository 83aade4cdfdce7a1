// What the nodes of one partition write during a window (core/simulator.h; docs/parallel.md): its packet
// pool, its counters, and the observer calls (with the traced flows' state rows), finished flows and (across
// ranks) flow starts and receptions that PartitionedRun takes up between windows. Only the partition's own
// thread writes it while a window runs.
#pragma once
#include <cstdint>
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

}  // namespace rocesim
