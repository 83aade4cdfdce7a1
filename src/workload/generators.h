// Synthetic flow generators and the merge of several flow sources.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/time.h"
#include "workload/cdf.h"
#include "workload/flow.h"

namespace rocesim {

struct PoissonAllToAllParams {
  std::vector<int> hosts;           // node ids of the participating hosts (>= 2)
  const SizeCdf* sizes = nullptr;   // flow-size distribution (not owned; must outlive the generator)
  Rate host_rate;                   // access-link rate of one host
  double load = 0.3;                // offered load per host as a fraction of host_rate, in (0, 1]
  Time start = Time::zero();        // arrivals begin after this instant (first gap counts from here)
  Time stop = Time::max();          // no arrival at or after this instant
  uint64_t max_flows = 0;           // stop after this many flows in total (0 = no limit)
  int priority = 3;                 // FlowSpec::priority (ns-3 pg)
  uint16_t dport = 100;             // FlowSpec::dport
  uint16_t class_id = 0;            // FlowSpec::class_id
  uint64_t seed = 1;                // master seed
  std::string stream = "workload";  // stream name; host h draws from Rng::stream(seed, stream, node id)
};

// All-to-all Poisson traffic as HPCC traffic_gen/traffic_gen.py makes it: every host is an independent
// Poisson source with mean gap = mean_size / (host_rate x load / 8), each flow to a destination drawn
// uniformly among the other hosts, size drawn from the CDF. The per-host processes are merged in time
// order with a heap (ties by position in `hosts`). Differences from traffic_gen.py: times are kept in
// picoseconds instead of being truncated to ns, and the last arrival before `stop` is kept (traffic_gen
// drops a host's final flow when the following gap would cross the end time).
// Per flow, host h draws dst (below), size (uniform) and its next gap (exponential) from its own stream,
// so one host's sequence does not depend on the others. No allocation after construction.
class PoissonAllToAll : public FlowSource {
 public:
  explicit PoissonAllToAll(PoissonAllToAllParams p);  // throws InputError on invalid parameters
  bool next(FlowSpec& out) override;

  double mean_gap_ps() const { return mean_gap_ps_; }  // per host
  uint64_t generated() const { return generated_; }
  const PoissonAllToAllParams& params() const { return p_; }

 private:
  struct Entry {
    int64_t t;     // next arrival time (ps)
    uint32_t idx;  // position in p_.hosts
  };
  static bool later(const Entry& a, const Entry& b) { return a.t != b.t ? a.t > b.t : a.idx > b.idx; }
  // Schedules host idx's next arrival after `t_ps`, or drops it if that would be at or after stop.
  void schedule(uint32_t idx, int64_t t_ps);

  PoissonAllToAllParams p_;
  double mean_gap_ps_ = 0;
  std::vector<Rng> rng_;     // one stream per host
  std::vector<Entry> heap_;  // min-heap on (t, idx) via later()
  uint64_t generated_ = 0;
};

// Merges several sources by start time; equal starts come out in the order the sources were added, and
// each source's own order is kept. Assigns FlowSpec::id = 0, 1, 2, ... in output order. Throws
// std::logic_error if a source goes back in time.
class MergedSource : public FlowSource {
 public:
  MergedSource() = default;
  void add(FlowSource* source);                  // not owned
  void add(std::unique_ptr<FlowSource> source);  // owned
  bool next(FlowSpec& out) override;
  uint64_t emitted() const { return emitted_; }

 private:
  struct Input {
    FlowSource* src;
    FlowSpec head;
    bool primed = false;
  };
  struct Entry {
    int64_t t;
    uint32_t idx;
  };
  static bool later(const Entry& a, const Entry& b) { return a.t != b.t ? a.t > b.t : a.idx > b.idx; }
  void pull(uint32_t idx);

  std::vector<std::unique_ptr<FlowSource>> owned_;
  std::vector<Input> inputs_;
  std::vector<Entry> heap_;
  bool unprimed_ = false;  // some input has not been pulled yet
  uint64_t emitted_ = 0;
};

}  // namespace rocesim
