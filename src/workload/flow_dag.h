// Flows that wait for other flows: a graph of point-to-point flows (a collective's steps, a dependency
// trace) and the runner that releases them into the network as their dependencies finish
// (DependentFlows, workload/flow.h).
//
// A flow of iteration k (which began at T_k) starts at max(T_k + not_before, F + delay), where F is the
// finish of the last flow it waits for (T_k when it waits for none). An iteration ends when all its flows
// have finished; the next begins `gap` later. The graph is built once and re-run every iteration; running
// it allocates nothing beyond the map of live flows, which stops growing at the peak number in flight.
//
// A graph may also hold timers (add_timer): nodes that carry no data and take no part in the network, the
// compute of a training job (workload/training.h). A timer becomes ready like a flow, at
// max(T_k + not_before, F) where F is the finish of the last node it waits for, and finishes `delay` later;
// the nodes that wait for it then start after that finish. In a graph with timers a node waits for the
// latest finish among the nodes it waits for (which need not be the last to finish in the run's order, as
// timers finish in advance).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/flat_map.h"
#include "core/time.h"
#include "workload/flow.h"

namespace rocesim {

class FlowDag {
 public:
  static constexpr int32_t kTimer = -1;  // Flow::src of a timer
  struct Flow {
    int32_t src = 0, dst = 0;  // src kTimer: a timer (no data; dst its host, or kTimer for none)
    Bytes bytes = 0;
    Time not_before;           // from the iteration's start
    Time delay;                // after the last flow it waits for
    uint32_t step = 0;         // the algorithm's step (or the trace's depth), for the per-step timeline
    uint32_t waits = 0;        // number of flows it waits for
    uint32_t first_child = 0;  // into children() (after seal())
  };

  // Adds a flow and returns its index.
  uint32_t add(int src, int dst, Bytes bytes, uint32_t step, Time delay, Time not_before = Time::zero());
  // Adds a timer of `duration` (compute on `host`, kTimer: on none) and returns its index.
  uint32_t add_timer(Time duration, uint32_t step, Time not_before = Time::zero(), int host = kTimer) {
    const uint32_t i = add(kTimer, host, 0, step, duration, not_before);
    has_timers_ = true;
    return i;
  }
  bool has_timers() const { return has_timers_; }
  bool is_timer(uint32_t i) const { return flows_[i].src == kTimer; }
  // `flow` waits for `on` (both indices returned by add). Duplicate edges are ignored by seal().
  void wait(uint32_t flow, uint32_t on) { edges_.emplace_back(on, flow); }
  // Builds the child lists. Returns the index of a flow on a dependency cycle, or -1 when there is none.
  // With `steps_from_depth`, each flow's step becomes its depth (longest chain of waits before it).
  int64_t seal(bool steps_from_depth = false);

  size_t size() const { return flows_.size(); }
  const Flow& flow(uint32_t i) const { return flows_[i]; }
  Flow& flow(uint32_t i) { return flows_[i]; }
  // The flows that wait for flow i.
  std::pair<const uint32_t*, const uint32_t*> children(uint32_t i) const {
    const uint32_t end =
        i + 1 < flows_.size() ? flows_[i + 1].first_child : static_cast<uint32_t>(children_.size());
    return {children_.data() + flows_[i].first_child, children_.data() + end};
  }
  uint32_t steps() const { return steps_; }  // 1 + the largest step
  // The workload's own names of its flows (a trace's ids; flows.csv's name column): none, or one per flow.
  void set_name(uint32_t i, std::string name) {
    if (names_.size() < flows_.size()) names_.resize(flows_.size());
    names_[i] = std::move(name);
  }
  bool named() const { return !names_.empty(); }
  const std::string& name(uint32_t i) const { return names_[i]; }
  // The collectives the workload names (a dependency trace's collective ids, a training job's "id:name" of
  // its collective and send/recv nodes; collectives.csv's trace_id rows): flow i may belong to one of them.
  static constexpr uint32_t kNoCollective = UINT32_MAX;
  uint32_t add_collective(std::string id) {
    collective_ids_.push_back(std::move(id));
    return static_cast<uint32_t>(collective_ids_.size() - 1);
  }
  void set_collective(uint32_t i, uint32_t c) {
    if (collective_of_.size() < flows_.size()) collective_of_.resize(flows_.size(), kNoCollective);
    collective_of_[i] = c;
  }
  size_t collectives() const { return collective_ids_.size(); }
  const std::string& collective_id(uint32_t c) const { return collective_ids_[c]; }
  uint32_t collective_of(uint32_t i) const {
    return i < collective_of_.size() ? collective_of_[i] : kNoCollective;
  }
  // Whether a flow's delay after the flows it waits for is compute on its source (a trace's delay_us,
  // before the data it sends exists) rather than communication (a collective's step latency). The
  // runner then counts it as compute when it splits an iteration into communication and compute.
  void set_delays_compute(bool v) { delays_compute_ = v; }
  bool delays_compute() const { return delays_compute_; }
  // Memory a graph of `flows` flows with about 2 waits each holds while a run uses it (the flows, their
  // child lists and the runner's per-flow counters), for memory estimates.
  static int64_t estimate_bytes(int64_t flows) {
    return flows * static_cast<int64_t>(sizeof(Flow) + 2 * sizeof(uint32_t) + sizeof(uint32_t));
  }
  Bytes total_bytes() const { return total_bytes_; }

 private:
  std::vector<Flow> flows_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (on, flow); cleared by seal()
  std::vector<uint32_t> children_;
  std::vector<std::string> names_;  // empty, or one per flow
  std::vector<std::string> collective_ids_;
  std::vector<uint32_t> collective_of_;  // empty, or one per flow (kNoCollective: none)
  bool delays_compute_ = false;
  uint32_t steps_ = 0;
  Bytes total_bytes_ = 0;
  bool has_timers_ = false;
};

// What a workload knows of one of the collectives its graph names (FlowDag::collective_id): a training job's
// collective or point-to-point transfer (whose flows also carry step = its index). collectives.csv's row of a
// collective without one (a dependency trace's) has the job's kind, the hosts its flows run between and all
// its bytes, and no bus bandwidth or ideal.
struct DagSpan {
  std::string kind;          // the collective ("ring_allreduce", ...), "sendrecv" or "barrier"
  int ranks = 0;             // participating hosts
  Bytes bytes_per_rank = 0;  // the collective's buffer per rank (sendrecv: the message)
  double bus_factor = 0;     // as DagJob's
  Time ideal;                // as DagJob's (0: none)
};

// One job: a graph run `iterations` times.
struct DagJob {
  std::string name;  // label in collectives.csv and summary.json
  std::string kind;  // the collective ("ring_allreduce", ...) or "trace"
  FlowDag dag;       // sealed
  uint32_t iterations = 1;
  Time start;                  // the first iteration's T_0
  Time gap;                    // between an iteration's end and the next one's start (compute)
  int priority = 3;            // FlowSpec::priority of every flow
  uint16_t class_id = 0;       // FlowSpec::class_id of every flow
  int ranks = 0;               // participating hosts
  Bytes bytes_per_rank = 0;    // the collective's buffer per rank (the trace: all its bytes)
  double bus_factor = 0;       // bus bandwidth = algorithm bandwidth x this (0: not a collective)
  Time ideal;                  // the closed-form duration of one iteration at the hosts' link rate (0: none)
  std::vector<DagSpan> spans;  // per collective the graph names, its description (empty: none known)
  uint32_t timeline_iteration = 0;  // the iteration whose flows are kept (DagRunner::timeline_iteration)
};

struct StepTimes {
  Time start = Time::max();  // first flow of the step started
  Time finish;               // last flow of the step finished
  uint64_t flows = 0;
  Bytes bytes = 0;
};

struct IterationTimes {
  Time start;   // T_k
  Time finish;  // the last flow finished (zero while unfinished)
  bool done = false;
  std::vector<StepTimes> steps;        // of flows only (timers are in no step)
  std::vector<StepTimes> collectives;  // per collective the graph names (FlowDag::collective_id)
  // Within [start, finish]: the time during which at least one of its flows was due and not finished (due:
  // what it waits for has finished, from the iteration's start plus its not_before, and its delay has run
  // unless that delay is compute), the time during which at least one of its compute windows ran (the
  // delays of a graph whose delays are compute, FlowDag::delays_compute), and the communication time
  // outside every compute window (exposed = comm minus its overlap with compute). The gap between
  // iterations is not in them. A training job's compute timers (FlowDag::add_timer) are compute windows.
  Time comm, compute, exposed_comm;
};

// One flow of a job's kept iteration (DagJob::timeline_iteration), for its per-rank timeline: the compute
// window before it
// (compute_from == compute_to: none), when it became due (IterationTimes::comm) and its finish (zero while
// unfinished).
struct FlowInterval {
  Time compute_from, compute_to, start, finish;
};
// One iteration's flows are kept (DagRunner::timeline_iteration) for graphs of at most this many flows.
inline constexpr size_t kTimelineMaxFlows = size_t{1} << 18;

// Runs jobs; jobs are independent of each other (their flows share only the fabric).
class DagRunner : public DependentFlows {
 public:
  // Returns the job's index. Call before the run begins.
  size_t add(DagJob job);
  size_t num_jobs() const { return jobs_.size(); }
  const DagJob& job(size_t j) const { return jobs_[j].spec; }
  // Iterations begun so far (finished ones have done = true).
  const std::vector<IterationTimes>& iterations(size_t j) const { return jobs_[j].iters; }
  // Per flow of job j's iteration DagJob::timeline_iteration, when its graph has at most kTimelineMaxFlows
  // flows and that iteration has begun (else empty).
  const std::vector<FlowInterval>& timeline_iteration(size_t j) const { return jobs_[j].first; }

  // The name of a flow this runner released with FlowSpec::name_id = id (flows of a named graph only;
  // FlowDag::set_name); empty for 0 and any id it did not give.
  const std::string& flow_name(uint32_t id) const;

  void begin(Releaser& r) override;
  void on_flow_finished(uint64_t id, Time now, Releaser& r) override;
  uint64_t unreleased() const override { return unreleased_; }

 private:
  struct Job {
    DagJob spec;
    std::vector<uint32_t> waits_left;  // per flow, this iteration
    std::vector<Time> ready;           // graphs with timers: per node, the latest finish it waited for
    std::vector<IterationTimes> iters;
    uint32_t iteration = 0;  // the current one
    uint64_t finished = 0;   // flows of the current iteration
    Time last_finish;        // of the current iteration's nodes so far
    uint32_t name_base = 0;  // name_id of flow f = name_base + f + 1 (named graphs)
    // The current iteration's communication and compute (IterationTimes::comm ...): the changes of the
    // number of flows in flight and compute windows running still to come, a min-heap by time; those
    // numbers now, and the time up to which they are accounted.
    struct Edge {
      Time t;
      int32_t comm = 0, compute = 0;
      bool operator>(const Edge& o) const { return t > o.t; }
    };
    std::vector<Edge> edges;
    int64_t comm_active = 0, compute_active = 0;
    Time accounted;
    std::vector<FlowInterval> first;
  };
  void push_edge(Job& job, Time t, int32_t comm, int32_t compute);
  void advance(Job& job, Time t);  // accounts up to t, applying the edges due by then
  void begin_iteration(uint32_t j, Time t, Releaser& r);
  void release(uint32_t j, uint32_t f, Time at, Releaser& r);
  void finished(uint32_t j, uint32_t f, Time now, Releaser& r);
  void run_timers(Releaser& r);

  std::vector<Job> jobs_;
  FlatMap<uint64_t> live_{1024};  // network flow id -> (job << 32 | flow index)
  uint64_t unreleased_ = 0;
  std::vector<std::pair<uint64_t, Time>> timers_;  // (job << 32 | node, finish) of timers to finish
  uint32_t names_ = 0;                             // name ids given so far
};

}  // namespace rocesim
