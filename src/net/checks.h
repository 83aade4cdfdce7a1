// Run-time safety checks attached to a Network, read-only (no RNG, no packets, no state changes):
//  - PFC deadlock detection: a cycle of paused egress queues, each waiting on a downstream ingress whose
//    packets all sit in paused egress queues (a cyclic buffer dependency), reported with its switches,
//    ports, priorities and the time the cycle closed;
//  - a no-progress watchdog: no payload reached any receiver for `watchdog` of simulated time while flows
//    were active;
//  - invariant mode (`rocesim run --check`): counters of every switch, QP and link are verified at sampled
//    times and at every flow completion; the first violation stops the run with a precise message.
// Deadlock and watchdog checks run from the run loop's progress callback (every 2^20 events) and once at
// the end, so they add no events; invariant checks use background events (Simulator::background).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/simulator.h"
#include "net/network.h"

namespace rocesim {

struct CheckOptions {
  bool invariants = false;  // --check
  // Invariant mode: the sampling period of simulated time, and at least invariant_cost_per_packet x the
  // packets alive at the last check, since a check walks every queued packet (a cache miss each)
  // [rocesim choice: 10 ns. With 30,000 packets queued in a 32 MB buffer behind long pauses, a check every
  // microsecond made a run hundreds of times slower (fuzz 51002:1481: over 300 s instead of 0.5 s); at
  // 10 ns per packet a check costs about a tenth of the wall time of the simulated time it covers.]
  Time invariant_interval = Time::from_us(1);
  Time invariant_cost_per_packet = Time::from_ns(10);
  bool deadlock = true;                        // detect cyclic PFC pause dependencies
  Time deadlock_min_age = Time::from_us(500);  // a cycle must have held this long (during the run)
  Time watchdog = Time::from_ms(50);           // no delivery while flows are active; zero = off
};

// One edge of a deadlock cycle: `node`'s egress `port` is paused at priority `prio` by `peer` since `since`.
struct DeadlockEdge {
  int node = 0, port = 0, prio = 0, peer = 0, peer_port = 0;
  Time since;
  Bytes queued = 0;
};

struct CheckFailure {
  enum class Kind { kNone, kDeadlock, kStall, kInvariant };
  Kind kind = Kind::kNone;
  Time at;
  std::string message;              // one paragraph, names and numbers included
  std::vector<DeadlockEdge> cycle;  // kDeadlock
  Time since;                       // kDeadlock: when the last edge of the cycle appeared
};

const char* to_string(CheckFailure::Kind k);

class NetChecker : public BarrierTask {
 public:
  NetChecker(Network& net, const CheckOptions& opt);
  ~NetChecker() override;
  NetChecker(const NetChecker&) = delete;
  NetChecker& operator=(const NetChecker&) = delete;

  // Call from the run's progress callback; stops the simulator on a deadlock or a stall.
  void on_progress(Time now);
  // Call once the run loop has returned: a final deadlock/invariant check (a drained event queue with
  // unfinished flows is how a deadlock without timers ends).
  void finish();

  bool failed() const { return failure_.kind != CheckFailure::Kind::kNone; }
  const CheckFailure& failure() const { return failure_; }
  uint64_t invariant_checks() const { return invariant_checks_; }

  // The current deadlock cycle, if any, with edges older than `min_age` (empty: none).
  std::vector<DeadlockEdge> find_deadlock(Time min_age) const;
  // Checks every invariant now; returns the first violation ("" when all hold).
  std::string check_invariants() const;

  Time next_barrier() const override { return next_check_; }
  void on_barrier(Time now) override;

 private:
  void fail(CheckFailure::Kind k, std::string msg);
  std::string name(int node) const;
  std::string check_switch(int id) const;
  std::string check_ioq_switch(int id) const;
  std::string check_shared_buffer_switch(int id) const;
  std::string check_links(int id) const;
  std::string check_qps() const;
  Network& net_;
  CheckOptions opt_;
  Time next_check_ = Time::max();  // the next invariant check (every opt_.invariant_interval)
  CheckFailure failure_;
  uint64_t invariant_checks_ = 0;
  Bytes last_delivered_ = 0;
  Time last_delivery_;
  std::unordered_map<uint64_t, Bytes> delivered_;  // per flow id (invariant mode)
  NetObservers saved_;
};

}  // namespace rocesim
