// One flow (an RDMA message on its own queue pair) as the workload layer describes it.
#pragma once
#include <cstdint>
#include <string>

#include "core/time.h"

namespace rocesim {

struct FlowSpec {
  uint64_t id = 0;   // unique, 0-based: pulled flows get theirs in start order, released ones when released
  int src = 0;       // node id of the sending host
  int dst = 0;       // node id of the receiving host
  int priority = 3;  // data priority / PFC class (ns-3 "pg"), 1..7
  uint16_t dport = 100;   // ns-3 flow files carry it (100 normal, 200 incast)
  Bytes size_bytes = 0;   // payload bytes
  Time start;             // absolute simulated start time
  uint16_t class_id = 0;  // index into the run's class-label table (0 = "default")
  uint32_t name_id = 0;   // the flow's own name in its workload (a trace's id), from DagRunner::flow_name;
                          // 0: none (flows.csv's name column empty)
};

// A stream of flows in non-decreasing start order. Sources are pulled lazily so that a run
// with millions of flows never holds them all in memory.
class FlowSource {
 public:
  virtual ~FlowSource() = default;
  // Writes the next flow into `out` and returns true, or returns false when exhausted.
  // `out.id` is left for the caller to assign.
  virtual bool next(FlowSpec& out) = 0;
};

// Flows that wait for other flows to finish (collectives, dependency traces): the network tells the
// source about every finished flow, and the source releases the flows that become ready, each starting at
// or after the moment it is released. The network knows nothing of why a flow waits.
class DependentFlows {
 public:
  // What the network offers: a released flow starts at max(f.start, now) and gets the returned id.
  class Releaser {
   public:
    virtual uint64_t release(const FlowSpec& f) = 0;

   protected:
    ~Releaser() = default;
  };
  virtual ~DependentFlows() = default;
  // At the start of the run: release the flows that wait for no other flow.
  virtual void begin(Releaser& r) = 0;
  // Flow `id` (any flow, also one this source did not release) finished at `now`.
  virtual void on_flow_finished(uint64_t id, Time now, Releaser& r) = 0;
  // Flows not released yet (0: this source is done).
  virtual uint64_t unreleased() const = 0;
};

}  // namespace rocesim
