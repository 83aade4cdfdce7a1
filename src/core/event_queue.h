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
// multiple of four events (LaMarca and Ladner's aligned d-heap). The slots after the last event up to the end
// of its block hold a key no event has (all ones), so that sifting down compares four children without
// counting how many exist: four keys, two rounds of a branch-free tournament.
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
    Event* h = heap_.get();
    const Event e = h[kRoot];
    --end_;
    const Event last = h[end_];
    h[end_].key = kNoKey;
    if (end_ > kRoot) sift_down(last);
    return e;
  }

 private:
  static constexpr size_t kRoot = 3;
  static constexpr unsigned __int128 kNoKey = ~static_cast<unsigned __int128>(0);  // greater than any event's
  struct Free {
    void operator()(Event* p) const { std::free(p); }
  };

  void grow(size_t capacity) {
    capacity = (capacity + 3) & ~size_t{3};
    Event* fresh = static_cast<Event*>(std::aligned_alloc(64, capacity * sizeof(Event)));
    if (!fresh) throw std::bad_alloc();
    if (heap_) std::memcpy(fresh, heap_.get(), end_ * sizeof(Event));
    for (size_t i = end_; i < capacity; ++i) fresh[i] = Event{kNoKey, 0, 0, 0};
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
  // The value of `x`, which the compiler may not reason about: keeps it from turning the selections below
  // back into branches.
  static size_t opaque(bool x) {
    size_t v = x;
    asm("" : "+r"(v));
    return v;
  }
  // Places `e` (the former last element) starting from the root.
  void sift_down(const Event& e) {
    Event* h = heap_.get();
    const size_t n = end_;
    const unsigned __int128 key = e.key;
    size_t i = kRoot;
    for (;;) {
      const size_t c = (i << 2) - 8;
      if (c >= n) break;
      const Event* g = h + c;  // four children, those past the last event keyed kNoKey
      // Selections by masks, not branches: which child wins is unpredictable.
      const size_t a = opaque(g[1].key < g[0].key);
      const size_t b = 2 + opaque(g[3].key < g[2].key);
      const size_t best = a ^ ((a ^ b) & (0 - opaque(g[b].key < g[a].key)));
      if (!(g[best].key < key)) break;
      h[i] = g[best];
      i = c + best;
    }
    h[i] = e;
  }

  std::unique_ptr<Event, Free> heap_;
  size_t capacity_ = 0;
  size_t end_ = kRoot;  // one past the last event
};

}  // namespace rocesim
