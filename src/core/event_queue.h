// The simulator's hot path: a 4-ary min-heap of small POD events.
// Ties on time break by insertion order (a global sequence number), which makes runs deterministic.
#pragma once
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace rocesim {

struct Event {
  // (time, insertion sequence) as one unsigned 128-bit key: comparisons are branch-free.
  // Simulated times are never negative, so the unsigned order is the time order.
  unsigned __int128 key;
  uint32_t target;   // index of the handler in the simulator's table
  uint32_t kind;     // handler-defined event kind
  uint64_t arg;      // handler-defined argument (an index, a generation, ...)

  int64_t t_ps() const { return static_cast<int64_t>(key >> 64); }
};

class EventQueue {
 public:
  explicit EventQueue(size_t reserve = 1 << 16) { heap_.reserve(reserve); }

  void push(Time t, uint32_t target, uint32_t kind, uint64_t arg) {
    const unsigned __int128 key = (static_cast<unsigned __int128>(static_cast<uint64_t>(t.ps)) << 64) | next_seq_++;
    heap_.push_back(Event{key, target, kind, arg});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  Event pop() {
    Event e = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return e;
  }
  uint64_t pushed() const { return next_seq_; }

 private:
  static bool less(const Event& a, const Event& b) { return a.key < b.key; }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t p = (i - 1) >> 2;
      if (!less(e, heap_[p])) break;
      heap_[i] = heap_[p];
      i = p;
    }
    heap_[i] = e;
  }
  // Places `e` (the former last element) starting from the root.
  void sift_down(const Event& e) {
    const size_t n = heap_.size();
    size_t i = 0;
    for (;;) {
      size_t c = (i << 2) + 1;
      if (c >= n) break;
      size_t best = c;
      const size_t end = c + 4 < n ? c + 4 : n;
      unsigned __int128 best_key = heap_[c].key;
      for (size_t j = c + 1; j < end; ++j) {
        const bool lt = heap_[j].key < best_key;
        best = lt ? j : best;
        best_key = lt ? heap_[j].key : best_key;
      }
      if (!less(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace rocesim
