// The discrete-event loop. Handlers register once and receive (kind, arg) events; there is no
// std::function and no allocation per event.
#pragma once
#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "core/time.h"

namespace rocesim {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(uint32_t kind, uint64_t arg) = 0;
};

class Simulator {
 public:
  // An event kind with this bit set carries in `arg` the address of the data its handler will touch first:
  // the loop prefetches it while the event before it runs, so that the cache miss overlaps that work.
  static constexpr uint32_t kArgIsAddress = 1u << 31;

  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  uint32_t add_handler(EventHandler* h) {
    handlers_.push_back(h);
    return static_cast<uint32_t>(handlers_.size() - 1);
  }
  // Handler `h`'s records (e.g. a node's ports): for its kArgIsAddress events, the record numbered by bits
  // 8..30 of the kind is prefetched too. `base` must stay valid for the simulator's life.
  void set_record_table(uint32_t h, const void* base, size_t stride) {
    if (tables_.size() <= h) tables_.resize(h + 1);
    tables_[h] = {static_cast<const char*>(base), stride};
  }
  Time now() const { return now_; }
  void at(Time t, uint32_t target, uint32_t kind, uint64_t arg = 0) { queue_.push(t, target, kind, arg); }
  void after(Time dt, uint32_t target, uint32_t kind, uint64_t arg = 0) {
    queue_.push(now_ + dt, target, kind, arg);
  }

  // Asks the loop to stop after the current event.
  void stop() { stop_ = true; }
  bool stopped() const { return stop_; }

  // Runs until `until` (events at exactly `until` are not executed), stop(), or no events are left.
  // Calls `progress(now)` every `progress_every` events when given (for progress lines and watchdogs).
  template <typename Progress>
  void run(Time until, Progress&& progress, uint64_t progress_every = 1u << 20) {
    uint64_t countdown = progress_every;
    while (!stop_ && queue_.size() > background_) {
      const Event& top = queue_.top();
      if (top.t_ps() >= until.ps) break;
      const Event e = queue_.pop();
      if (!queue_.empty() && (queue_.top().kind & kArgIsAddress)) {
        const Event& next = queue_.top();
        __builtin_prefetch(reinterpret_cast<const void*>(next.arg));
        if (next.target < tables_.size() && tables_[next.target].base)
          __builtin_prefetch(tables_[next.target].base +
                             static_cast<size_t>((next.kind & ~kArgIsAddress) >> 8) * tables_[next.target].stride);
      }
      now_ = Time{e.t_ps()};
      ++executed_;
      handlers_[e.target]->on_event(e.kind, e.arg);
      if (--countdown == 0) {
        countdown = progress_every;
        progress(now_);
      }
    }
  }
  void run(Time until) {
    run(until, [](Time) {});
  }

  // Background events (monitor samples) only observe: they never keep an otherwise idle run going.
  // Whoever schedules one calls background(+1), and background(-1) when it fires.
  void background(int delta) { background_ = static_cast<size_t>(static_cast<int64_t>(background_) + delta); }
  size_t foreground_pending() const { return queue_.size() - background_; }

  uint64_t events_executed() const { return executed_; }
  size_t events_pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  std::vector<EventHandler*> handlers_;
  struct RecordTable {
    const char* base = nullptr;
    size_t stride = 0;
  };
  std::vector<RecordTable> tables_;
  Time now_;
  uint64_t executed_ = 0;
  bool stop_ = false;
  size_t background_ = 0;
};

}  // namespace rocesim
