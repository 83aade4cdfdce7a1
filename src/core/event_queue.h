// The simulator's hot path: a 4-ary min-heap of small POD events, aligned for the cache.
// Events are ordered by a key the caller computes (core/simulator.h: time, origin, origin's sequence), so
// the order does not depend on which queue an event went through or when it was inserted.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/time.h"

namespace rocesim {

struct Event {
  // (time, origin, sequence) as one unsigned 128-bit key: comparisons are branch-free.
  // Simulated times are never negative, so the unsigned order is the time order.
  unsigned __int128 key;
  uint32_t target;  // index of the handler in the simulator's table
  uint32_t kind;    // handler-defined event kind
  uint64_t arg;     // handler-defined argument (an index, a generation, ...)

  int64_t t_ps() const { return static_cast<int64_t>(key >> 64); }
};

// A 4-ary min-heap whose four children of a node share one 128-byte block (two cache lines): the root
// sits at index 3 of a 64-byte-aligned array, so the children of i, at 4i - 8 .. 4i - 5, start on a
// multiple of four events (LaMarca and Ladner's aligned d-heap).
class EventQueue {
 public:
  explicit EventQueue(size_t reserve = 1 << 16) { grow(reserve + kRoot); }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void push(const Event& e) {
    if (end_ == capacity_) grow(2 * capacity_);
    sift_up(end_++, e);
  }
  bool empty() const { return end_ == kRoot; }
  size_t size() const { return end_ - kRoot; }
  const Event& top() const { return heap_.get()[kRoot]; }

  Event pop() {
    const Event e = heap_.get()[kRoot];
    --end_;
    if (end_ > kRoot) sift_down(Event(heap_.get()[end_]));
    return e;
  }

 private:
  static constexpr size_t kRoot = 3;
  struct Free {
    void operator()(Event* p) const { std::free(p); }
  };

  void grow(size_t capacity) {
    capacity = (capacity + 3) & ~size_t{3};
    Event* fresh = static_cast<Event*>(std::aligned_alloc(64, capacity * sizeof(Event)));
    if (!fresh) throw std::bad_alloc();
    if (heap_) std::memcpy(fresh, heap_.get(), end_ * sizeof(Event));
    heap_.reset(fresh);
    capacity_ = capacity;
  }
  void sift_up(size_t i, const Event& e) {
    Event* h = heap_.get();
    while (i > kRoot) {
      const size_t p = (i >> 2) + 2;
      if (!(e.key < h[p].key)) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }
  // Places `e` (the former last element) starting from the root.
  void sift_down(const Event& e) {
    Event* h = heap_.get();
    const size_t n = end_;
    size_t i = kRoot;
    for (;;) {
      const size_t c = (i << 2) - 8;
      if (c >= n) break;
      size_t best = c;
      const size_t end = c + 4 < n ? c + 4 : n;
      unsigned __int128 best_key = h[c].key;
      for (size_t j = c + 1; j < end; ++j) {
        const bool lt = h[j].key < best_key;
        best = lt ? j : best;
        best_key = lt ? h[j].key : best_key;
      }
      if (!(best_key < e.key)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = e;
  }

  std::unique_ptr<Event, Free> heap_;
  size_t capacity_ = 0;
  size_t end_ = kRoot;  // one past the last event
};

}  // namespace rocesim
