// The discrete-event loop. Handlers register once and receive (kind, arg) events; there is no
// std::function and no allocation per event.
//
// Order. Every event carries the key (time, origin, sequence): `origin` is the handler whose event was
// running when it was scheduled (0 for the set-up and the coordinator between windows) and `sequence`
// counts the events that origin has scheduled. An event's key therefore depends only on what its origin
// did, never on when or through which queue it was inserted: this is what makes a run split over
// partitions give the same result as one queue, whatever the thread count (docs/parallel.md).
//
// Windows. Handlers are grouped into partitions (logical processes), each with its own queue. The loop
// advances all partitions through windows [T, T + W): W is the lookahead, the smallest link delay between
// partitions, so that nothing one partition does inside a window can reach another before the window ends.
// Events for another partition go to a mailbox read at the next window. Between windows the coordinator
// (one thread) runs what needs the whole network: the Coordinator hooks (flow arrivals, finished flows)
// and the barrier tasks (monitors, checks). A run with one partition takes exactly the same steps.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/event_queue.h"
#include "core/rank_comm.h"
#include "core/time.h"
#include "core/window_barrier.h"

namespace rocesim {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(uint32_t kind, uint64_t arg) = 0;

 private:
  friend class Simulator;
  uint64_t seq_ = 0;  // events this handler has scheduled: the last part of their keys
  uint32_t id_ = 0;
};

// Work between windows that reads the whole network (monitor samples, invariant checks). Runs on the
// coordinator at time next_barrier(), after every event before it and before any event at it.
class BarrierTask {
 public:
  virtual ~BarrierTask() = default;
  virtual Time next_barrier() const = 0;  // Time::max(): nothing due
  virtual void on_barrier(Time now) = 0;
};

// What the owner of the simulator (the network) does between windows.
class Coordinator {
 public:
  virtual ~Coordinator() = default;
  // The earliest time at which the coordinator has something to inject (a flow start), or Time::max().
  virtual Time next_input(Time now) = 0;
  // Whether after_window has work at the next grid boundary (the run goes on until it is done).
  virtual bool pending_work() const = 0;
  // Whether background events must keep running although no foreground event is left: work that only
  // a timer can move on (a flow whose packets were all lost waits for its retransmission timer).
  virtual bool awaits_timers() const { return false; }
  // Before the window [now, end): inject events with times < end (Simulator::post).
  virtual void before_window(Time now, Time end) = 0;
  // After the window ended at `end` (all partitions are at `end`). `grid` when `end` is a multiple of the
  // lookahead: the points at which the network's own bookkeeping (freeing finished QPs, releasing
  // dependent flows, stopping when done) happens, so that it never depends on the barrier tasks.
  virtual void after_window(Time end, bool grid) = 0;
};

class Simulator {
 public:
  // An event kind with this bit set carries in `arg` the address of the data its handler will touch first:
  // the calendar prefetches it when the event's bucket becomes current, and the loop prefetches it again
  // with the handler object while the event before it runs, so that the cache misses overlap that work.
  static constexpr uint32_t kArgIsAddress = Event::kArgIsAddress;
  static constexpr uint32_t kArgTwoLines = Event::kArgTwoLines;  // and its second line too
  // An event kind with this bit set is background (a periodic timer that only observes or adjusts): it
  // never keeps an otherwise idle run going. The bit is cleared before the handler sees the kind.
  static constexpr uint32_t kBackground = 1u << 30;
  // Sequence numbers of the deliveries a node schedules for its ports (one per port and arrival time).
  static constexpr uint64_t kDeliverySeq = uint64_t{1} << 39;

  Simulator() { handlers_.push_back(nullptr); }  // handler 0: the coordinator (origin of set-up events)
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  ~Simulator() { stop_workers(); }

  // `home`: the handler whose partition this one shares (a switch's scheme agent names its switch);
  // 0 = none, only allowed in single-partition runs.
  uint32_t add_handler(EventHandler* h, uint32_t home = 0) {
    if (handlers_.size() >= kMaxHandlers) throw std::length_error("more than 2^24 event handlers");
    h->id_ = static_cast<uint32_t>(handlers_.size());
    handlers_.push_back(h);
    home_.resize(handlers_.size(), 0);
    home_.back() = home;
    if (!part_of_.empty()) part_of_.push_back(home != 0 ? part_of_[home] : 0);
    return h->id_;
  }
  uint32_t num_handlers() const { return static_cast<uint32_t>(handlers_.size()); }
  // The memory one partition holds before its first event in a run of `num_parts` partitions: its calendar
  // (the ring's 128 KiB of bucket heads and tails, its heaps' first blocks) and its mailboxes. The memory
  // estimate counts it per partition (app/run.cc, estimate_peak_memory).
  static int64_t partition_bytes(uint32_t num_parts) {
    return static_cast<int64_t>(sizeof(Partition) + 2 * num_parts * sizeof(std::vector<Event>) +
                                EventQueue::kInitialHeapBytes);
  }
  uint32_t home_of(uint32_t h) const { return home_[h]; }

  // The time of the running event (its partition's clock), or of the last barrier between windows.
  Time now() const {
    const Exec* x = tl_exec_;
    return x && x->sim == this ? x->part->now : now_;
  }
  void at(Time t, uint32_t target, uint32_t kind, uint64_t arg = 0) {
    const Exec* x = tl_exec_;
    if (x && x->sim == this) {
      EventHandler* o = x->part->ctx;
      route(*x->part, key(t, o->id_, o->seq_++), target, kind, arg);
    } else {
      post(Event{key(t, 0, coord_seq_++), target, kind, arg});
    }
  }
  void after(Time dt, uint32_t target, uint32_t kind, uint64_t arg = 0) { at(now() + dt, target, kind, arg); }
  // An event with an explicit origin and sequence (deliveries: origin the sending node, sequence
  // kDeliverySeq + port; flow starts: origin 0). From a running event or from the coordinator.
  void at_keyed(Time t, uint32_t origin, uint64_t seq, uint32_t target, uint32_t kind, uint64_t arg) {
    const Exec* x = tl_exec_;
    if (x && x->sim == this)
      route(*x->part, key(t, origin, seq), target, kind, arg);
    else
      post(Event{key(t, origin, seq), target, kind, arg});
  }
  EventHandler* handler(uint32_t id) const { return handlers_[id]; }
  // The handler whose code runs now (the origin of what it schedules), or 0 between windows.
  uint32_t running_handler() const {
    const Exec* x = tl_exec_;
    return x && x->sim == this && x->part->ctx ? x->part->ctx->id_ : 0;
  }
  // Between windows only: the clock the coordinator's work reads (observers replayed at their event's time).
  void set_barrier_clock(Time t) { now_ = t; }

  // Asks the loop to stop at the end of the current window.
  void stop() { stop_.store(true, std::memory_order_relaxed); }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

  // --- partitions ---
  // Splits the handlers: part_of_handler[h] for every handler whose home is 0 (others follow their home).
  // `lookahead` must not exceed the delay of any event one partition schedules for another. `threads`
  // workers run the partitions (at most one per partition). Call before run(); may be called once.
  void partition(const std::vector<uint32_t>& part_of_handler, uint32_t num_parts, Time lookahead,
                 int threads);
  Time lookahead() const { return lookahead_; }
  uint32_t num_partitions() const { return static_cast<uint32_t>(parts_.size()); }
  uint32_t partition_of(uint32_t handler) const { return part_of_.empty() ? 0 : part_of_[handler]; }
  // The owner's data for partition `part` (the network's per-partition state), handed back by
  // current_user() while an event of that partition runs: one load on the hot path instead of a look-up.
  void set_partition_user(uint32_t part, void* user) { parts_[part]->user = user; }
  void* current_user() const {
    const Exec* x = tl_exec_;
    return x && x->sim == this ? x->user : nullptr;
  }
  // The key of the running event (between windows: the last one the coordinator handed out).
  unsigned __int128 current_key() const {
    const Exec* x = tl_exec_;
    return x && x->sim == this ? x->part->cur_key : key(now_, 0, coord_seq_);
  }
  struct PartitionStats {
    uint64_t events = 0;
    uint64_t mailbox_events = 0;  // events it sent to other partitions
    double busy_seconds = 0;      // wall time running its events
  };
  // What the windows of this run would have taken on other thread counts, from each partition's wall time
  // in each window: the threads take the partitions in order as each becomes free (as run_window's do), so
  // a window lasts as long as its most loaded thread. Barriers are taken as free and the threads as fast
  // as they were in this run (on one thread: each partition alone on the core). For 2, 4, ..., 32 threads:
  // the windows' summed makespans in seconds (docs/parallel.md, "What the windows allow"). Multi-partition
  // runs only; empty otherwise.
  static constexpr int kScheduleThreads[] = {2, 4, 8, 16, 32};
  static constexpr size_t kScheduleCounts = std::size(kScheduleThreads);
  struct ScheduleBound {
    int threads = 0;
    double window_seconds = 0;  // summed over windows: the longest thread's partitions
  };
  std::vector<ScheduleBound> schedule_bound() const;
  // How long `threads` threads (at most the largest of kScheduleThreads) take over tasks of these durations
  // when each takes the next task in order as soon as it is free: the largest finish time.
  static double list_schedule(const std::vector<double>& seconds, int threads);
  std::vector<PartitionStats> partition_stats() const;
  uint64_t windows() const { return windows_; }
  // Wall time the coordinator spent between windows, and the threads waiting at the barriers.
  double coordinator_seconds() const { return coord_seconds_; }
  // How long a thread spins at a window's barrier before it sleeps (core/window_barrier.h): kBarrierSpin
  // when each of `threads` has a core, 0 with more threads than cores; $ROCESIM_BARRIER_SPIN_US replaces
  // it (a measuring knob; docs/parallel.md). Throws std::invalid_argument on a bad value.
  static constexpr std::chrono::nanoseconds kBarrierSpin = std::chrono::microseconds(50);
  static std::chrono::nanoseconds barrier_spin(int threads);
  double wait_seconds() const { return wait_seconds_; }

  // --- ranks: one run over several processes (docs/cluster.md) ---
  // Call before partition(). The partitions are then spread over the ranks of `comm` in runs of
  // consecutive ids, and this process runs only its own (`threads` of partition() share them). Events for a
  // partition of another rank are turned into bytes by `codec` and exchanged after every window; what
  // decides the loop (events pending, the next event, a stop, an error) is agreed by all ranks before each
  // window, so that every rank runs the same windows. Barrier tasks run on every rank (they must read
  // only what every rank knows, or what their own rank owns).
  void set_ranks(RankComm* comm, EventCodec* codec) {
    comm_ = comm;
    codec_ = codec;
  }
  RankComm* ranks() const { return comm_; }
  // Per rank (after run(), on every rank): bytes it sent to the others, and the wall time it spent in the
  // exchanges and agreements between windows (waiting for the slowest rank included).
  struct RankStats {
    uint64_t bytes_sent = 0;
    double exchange_seconds = 0;
  };
  const std::vector<RankStats>& rank_stats() const { return rank_stats_; }
  // Whether `partition` runs in this process.
  bool is_local(uint32_t partition) const {
    return comm_ == nullptr || rank_of_part_.empty() || rank_of_part_[partition] == comm_->rank();
  }
  int rank_of_partition(uint32_t partition) const {
    return rank_of_part_.empty() ? 0 : rank_of_part_[partition];
  }

  void add_task(BarrierTask* t) { tasks_.push_back(t); }
  void remove_task(BarrierTask* t) {
    tasks_.erase(std::remove(tasks_.begin(), tasks_.end(), t), tasks_.end());
  }

  // Runs until `until` (events at exactly `until` are not executed), stop(), or until no events are left
  // and the coordinator has nothing to inject. Calls `progress(now)` between windows, at least every
  // `progress_every` events (for progress lines and watchdogs).
  void run(Time until, Coordinator* coord, const std::function<void(Time)>& progress = nullptr,
           uint64_t progress_every = 1u << 20);
  void run(Time until) { run(until, nullptr); }

  // Events that keep the run going (not background) in the queues and mailboxes. Across ranks: the
  // largest count of any rank, as agreed before the current window (zero exactly when all are idle).
  size_t foreground_pending() const;
  // Over every partition; across ranks, those of other ranks as of the end of the last run().
  uint64_t events_executed() const;
  size_t events_pending() const;

  // Ties at one picosecond are broken by origin, then sequence. The origins are permuted afresh at every
  // picosecond (a bijection of the 24-bit origin space: xor, then multiply by an odd number, both drawn from
  // the time and the salt), so that no node wins every tie against another (a fixed order by node id would,
  // e.g., always queue one of two synchronised senders' packets first), while one origin's events at one
  // time keep their order. The network salts it with the run's seed: another seed, other tie orders.
  static constexpr uint32_t kMaxHandlers = 1u << 24;
  static unsigned __int128 make_key(Time t, uint32_t origin, uint64_t seq, uint64_t salt = 0) {
    uint64_t h = static_cast<uint64_t>(t.ps) + 0x9e3779b97f4a7c15ULL + salt * 0x632be59bd9b4e019ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    const uint64_t mask = kMaxHandlers - 1;
    const uint64_t order = ((origin ^ (h & mask)) * ((h >> 32) | 1)) & mask;
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(t.ps)) << 64) |
           (static_cast<unsigned __int128>(order) << 40) | (seq & ((uint64_t{1} << 40) - 1));
  }
  unsigned __int128 key(Time t, uint32_t origin, uint64_t seq) const {
    return make_key(t, origin, seq, salt_);
  }
  void set_tie_salt(uint64_t salt) { salt_ = salt; }

 private:
  struct alignas(64) Partition {
    uint32_t id = 0;
    void* user = nullptr;  // set_partition_user
    EventQueue q;
    Time now;
    EventHandler* ctx = nullptr;  // the handler whose event runs: origin of what it schedules
    unsigned __int128 cur_key = 0;
    uint64_t executed = 0;
    size_t background = 0;
    // Events for other partitions, per destination: window w writes outbox[w & 1], read by their
    // partitions during window w + 1 (so writing and reading never share a box).
    std::vector<std::vector<Event>> outbox[2];
    // mail_from[w & 1][s]: partition s's box for this one in window w holds events (set by s as it writes
    // the first, cleared by this partition as it reads them), so that a window reads only the boxes that
    // hold mail instead of testing one box of every partition: at 256 partitions that test, a miss each,
    // took 7 % of a k = 24 run on one thread.
    std::vector<uint8_t> mail_from[2];
    Time out_min[2] = {Time::max(), Time::max()};  // earliest time in the boxes of that parity
    size_t out_foreground[2] = {0, 0};
    int window = 0;             // parity of the window being run
    double window_seconds = 0;  // wall time of its events in the last window (schedule_bound)
    PartitionStats stats;
  };
  struct Exec {
    const Simulator* sim;
    Partition* part;
    void* user;  // part->user
  };
  static inline thread_local Exec* tl_exec_ = nullptr;

  // The event's fields travel in registers down to the queue's store (EventQueue::push): an Event built in
  // memory by the caller and copied by the callee in wider loads than its stores would wait for those stores
  // to reach the cache (no store forwarding), behind every store before them.
  void route(Partition& p, unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg) {
    const uint32_t dp = part_of_.empty() ? 0 : part_of_[target];
    if (dp == p.id) {
      push_local(p, key, target, kind, arg);
    } else {
      std::vector<Event>& box = p.outbox[p.window][dp];
      if (box.empty()) parts_[dp]->mail_from[p.window][p.id] = 1;
      box.push_back(Event{key, target, kind, arg});
      p.out_min[p.window] = std::min(p.out_min[p.window], Time{static_cast<int64_t>(key >> 64)});
      if (!(kind & kBackground)) ++p.out_foreground[p.window];
      ++p.stats.mailbox_events;
    }
  }
  void push_local(Partition& p, unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg) {
    if (kind & kBackground) ++p.background;
    p.q.push(key, target, kind, arg);
  }
  void push_local(Partition& p, const Event& e) { push_local(p, e.key, e.target, e.kind, e.arg); }
  // From the coordinator (between windows or before the run): straight into the target's queue. Every
  // rank's coordinator posts the same events; each keeps those of its own partitions.
  void post(const Event& e) {
    if (parts_.empty()) add_single_partition();
    const uint32_t dp = part_of_.empty() ? 0 : part_of_[e.target];
    if (is_local(dp)) push_local(*parts_[dp], e);
  }
  void add_single_partition();
  void run_partition(Partition& p, Time end);
  Time next_event_time() const;
  size_t local_foreground() const;
  Time local_next_event_time() const;
  void run_window(Time end);
  void order_partitions();
  void account_schedule();
  void exchange_ranks();
  void sync_ranks();
  void finish_ranks();
  void start_workers();
  void stop_workers();
  void worker_loop();

  std::vector<EventHandler*> handlers_;
  std::vector<uint32_t> home_;
  std::vector<std::unique_ptr<Partition>> parts_;
  std::vector<uint32_t> part_of_;  // per handler; empty: one partition
  std::vector<BarrierTask*> tasks_;
  Time now_;
  Time lookahead_ = Time::from_us(1);
  uint64_t salt_ = 0;
  uint64_t coord_seq_ = 0;
  std::atomic<bool> stop_{false};
  uint64_t windows_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;  // thrown by an event on a worker: rethrown by run()
  double coord_seconds_ = 0, wait_seconds_ = 0;
  double schedule_seconds_[kScheduleCounts] = {};  // schedule_bound
  std::vector<double> window_times_;               // account_schedule's, kept to spare allocations

  // Worker threads (partition() with threads > 1): each window the coordinator publishes its end, every
  // thread (the caller included) takes partitions from a shared counter, and all meet at the barrier.
  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::unique_ptr<WindowBarrier> start_barrier_, end_barrier_;
  std::atomic<uint32_t> next_part_{0};
  Time window_end_;
  bool quit_ = false;

  // Ranks (set_ranks): the partitions this process runs, and what all ranks agreed before this window.
  RankComm* comm_ = nullptr;
  EventCodec* codec_ = nullptr;
  std::vector<int> rank_of_part_;
  std::vector<uint32_t> local_parts_;
  std::vector<uint32_t> order_;  // local_parts_ in the order the threads take them (order_partitions)
  size_t agreed_foreground_ = 0;
  Time agreed_next_ = Time::max();
  std::vector<std::vector<char>> rank_out_, rank_in_;
  double exchange_seconds_ = 0;
  std::vector<RankStats> rank_stats_;
};

}  // namespace rocesim
