// One flow (an RDMA message on its own queue pair) as the workload layer describes it.
#pragma once
#include <cstdint>
#include <string>

#include "core/time.h"

namespace rocesim {

struct FlowSpec {
  uint64_t id = 0;        // unique, assigned in start order by whoever merges sources (0-based)
  int src = 0;            // node id of the sending host
  int dst = 0;            // node id of the receiving host
  int priority = 3;       // data priority / PFC class (ns-3 "pg"), 1..7
  uint16_t dport = 100;   // ns-3 flow files carry it (100 normal, 200 incast)
  Bytes size_bytes = 0;   // payload bytes
  Time start;             // absolute simulated start time
  uint16_t class_id = 0;  // index into the run's class-label table (0 = "default")
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

}  // namespace rocesim
