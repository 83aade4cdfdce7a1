// The simulator's hot path: a calendar of time buckets of POD events, the current one's earliest known.
// Events are ordered by a key the caller computes (core/simulator.h: time, origin, origin's sequence), so
// the order does not depend on which queue an event went through or when it was inserted. Keys are unique,
// so any correct priority queue pops the same sequence: the calendar changes the speed, never the order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
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

  // A kind with this bit set carries in `arg` the address of the data its handler touches first
  // (Simulator::kArgIsAddress): the queue and the loop prefetch it.
  static constexpr uint32_t kArgIsAddress = 1u << 31;
  // With kArgIsAddress: the handler reads two cache lines there, both prefetched. Cleared before the handler
  // sees the kind.
  static constexpr uint32_t kArgTwoLines = 1u << 29;
  static void prefetch_arg(uint32_t kind, uint64_t arg) {
    if (!(kind & kArgIsAddress)) return;
    __builtin_prefetch(reinterpret_cast<const void*>(arg));
    if (kind & kArgTwoLines) __builtin_prefetch(reinterpret_cast<const char*>(arg) + 64);
  }

  int64_t t_ps() const { return static_cast<int64_t>(key >> 64); }
};

// A 4-ary min-heap whose four children of a node share one 128-byte block (two cache lines): the root
// sits at index 3 of a 64-byte-aligned array, so the children of i, at 4i - 8 .. 4i - 5, start on a
// multiple of four events (LaMarca and Ladner's aligned d-heap). The slots after the last event up to the end
// of its block hold a key no event has (all ones), so that sifting down compares four children without
// counting how many exist: four keys, two rounds of a branch-free tournament.
class EventHeap {
 public:
  explicit EventHeap(size_t reserve = 1 << 10) { grow(reserve + kRoot); }
  EventHeap(const EventHeap&) = delete;
  EventHeap& operator=(const EventHeap&) = delete;

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

// A calendar queue (Brown 1988) with an unsorted current bucket and a heap for the far future. Time is cut
// into buckets of 2^shift ps; a ring of kSlots buckets covers the next kSlots x 2^shift ps (4 us at the
// initial 256 ps: a packet's serialisation plus a datacenter link's delay; 1 us at the narrowest). The
// width adapts to the run, as Brown's calendar resizes: a bucket should hold a few events (kMinPerBucket to
// kMaxPerBucket pops on average), else the width halves or doubles and the pending events are placed again. A
// bucket is a list of chunks of kChunkEvents events, unsorted, from a pool shared by the ring (the last freed
// chunk is the first reused, so it is likely in the cache). An event goes:
//  - into `front_`, the current bucket, when its bucket is the current one (or earlier: set-up may schedule
//    the past);
//  - into its bucket in the ring when within the ring's span;
//  - into `far_`, a heap, beyond it (timers, links with long delays).
// When `front_` runs dry, the next bucket is the first set bit of the ring's occupancy bitmap or far_'s
// earliest, whichever comes first; its events move into `front_`. A pop then takes the earliest of the few
// events of one bucket, in L1, instead of sifting through every pending event (docs/architecture.md, Speed).
// `front_` is an unsorted array of at most kFrontMax events with the index of its earliest: a push appends
// (and notes the earliest), a pop takes the earliest, moves the last into its place and scans the rest for
// the next earliest, by selections rather than branches. A bucket holds a few events (2 to 16 on average, by
// the width's adaptation), so the scan is short, where sorting them by insertion mispredicted the end of
// almost every insertion (the order in which a bucket's events arrive is unpredictable). A bucket that
// overflows the array (thousands of events at one time) goes to a heap, `crowd_`, until it is drained.
class EventQueue {
 public:
  EventQueue() { chunks_.resize(1); }  // chunk 0 stands for none
  // What a queue allocates as it is made: its heaps' first blocks and chunk 0 (the memory estimate).
  static constexpr size_t kInitialHeapBytes = (3 * 64 + 2 * 4) * sizeof(Event) + 256;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void push(const Event& e) { push(e.key, e.target, e.kind, e.arg); }
  // The same, from the fields (the hot path: no Event in memory to copy, core/simulator.h).
  void push(unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg) {
    const uint64_t b = bucket_of(key);
    if (size_++ == 0) cur_ = b;  // an empty queue starts its calendar at the event
    place(key, target, kind, arg, b);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest event (the queue is not empty): the current bucket holds events whenever the queue does.
  const Event& top() const { return n_ != 0 ? front_[min_] : crowd_.top(); }

  Event pop() {
    Event e;
    if (n_ != 0) {
      e = front_[min_];
      front_[min_] = front_[--n_];
      find_min();
    } else {
      e = crowd_.pop();
    }
    ++pops_;
    if (--size_ != 0 && n_ == 0 && crowd_.empty()) advance();
    return e;
  }
  // The bucket width, log2 of picoseconds, and the events in the current bucket (tests, benchmarks).
  int bucket_shift() const { return shift_; }
  size_t current_bucket_events() const { return n_ + crowd_.size(); }

 private:
  // Adds an event of the current bucket (or an earlier one): to the array, or to the heap once the
  // array is full, and then until the heap is drained.
  void push_front(const Event& e) { push_front(e.key, e.target, e.kind, e.arg); }
  void push_front(unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg) {
    if (!crowd_.empty()) {
      crowd_.push(Event{key, target, kind, arg});
      return;
    }
    if (n_ == kFrontMax) {
      for (uint32_t i = 0; i < n_; ++i) crowd_.push(front_[i]);
      n_ = 0;
      crowd_.push(Event{key, target, kind, arg});
      return;
    }
    // Appended, the earliest noted: no search, no branch on the order (which is unpredictable).
    const bool earliest = n_ == 0 || key < front_[min_].key;
    min_ = earliest ? n_ : min_;
    store(front_[n_++], key, target, kind, arg);
  }
  // The earliest of front_ after a pop: a scan of the few events of a bucket, by selections, not branches.
  void find_min() {
    uint32_t m = 0;
    for (uint32_t i = 1; i < n_; ++i) m = front_[i].key < front_[m].key ? i : m;
    min_ = m;
  }
  static void store(Event& to, unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg) {
    to.key = key;
    to.target = target;
    to.kind = kind;
    to.arg = arg;
  }
  // Puts the event of bucket `b` in the current bucket, the ring or far_.
  void place(unsigned __int128 key, uint32_t target, uint32_t kind, uint64_t arg, uint64_t b) {
    if (b <= cur_) {
      push_front(key, target, kind, arg);
    } else if (b - cur_ < kSlots) {
      const size_t slot = b & kMask;
      // The slot's last chunk and its count: the push only writes to the chunk (a store that misses the
      // cache does not hold up what follows; a load of the count there would).
      uint32_t t = tail_[slot];
      if (t == 0 || (t & kCountMask) == kChunkEvents) {
        const uint32_t fresh = new_chunk();
        if (t == 0) {
          head_[slot] = fresh;
          occupied_[slot >> 6] |= uint64_t{1} << (slot & 63);
        } else {
          chunks_[t >> kCountBits].next = fresh;
        }
        t = fresh << kCountBits;
      }
      store(chunks_[t >> kCountBits].ev[t & kCountMask], key, target, kind, arg);
      tail_[slot] = t + 1;
      ++ring_count_;
    } else {
      far_.push(Event{key, target, kind, arg});
    }
  }
  static constexpr int kMinShift = 6, kMaxShift = 20, kInitialShift = 8;  // 64 ps .. 1 us; 256 ps
  static constexpr uint64_t kMinPerBucket = 2, kMaxPerBucket = 16;
  static constexpr uint64_t kAdaptEvery = 4096;  // buckets between two looks at the width, at most
  static constexpr size_t kSlots = 16384;
  static constexpr size_t kMask = kSlots - 1;
  static constexpr uint32_t kChunkEvents = 7;
  static constexpr uint32_t kCountBits = 3, kCountMask = (1u << kCountBits) - 1;  // holds 0..kChunkEvents
  static constexpr uint32_t kFrontMax = 64;
  static constexpr size_t kNone = ~size_t{0};
  // A bucket's chunks are full but its last, whose count is in tail_.
  struct alignas(64) Chunk {
    Event ev[kChunkEvents];
    uint32_t next = 0;  // the bucket's next chunk (0: none)
  };

  uint64_t bucket(const Event& e) const { return bucket_of(e.key); }
  uint64_t bucket_of(unsigned __int128 key) const { return static_cast<uint64_t>(key >> 64) >> shift_; }

  // The free chunks are a stack of ids beside the chunks, not a list through them: taking one writes to
  // it but reads nothing of it (a list's next link would be a load that misses on a chunk freed long ago,
  // one after another as a window's mail is placed).
  uint32_t new_chunk() {
    uint32_t c;
    if (!free_.empty()) {
      c = free_.back();
      free_.pop_back();
    } else {
      if (chunks_.size() >> (32 - kCountBits)) throw std::length_error("event calendar: too many chunks");
      c = static_cast<uint32_t>(chunks_.size());
      chunks_.emplace_back();             // grows with the most events the ring has held, then no more
      free_.reserve(chunks_.capacity());  // so that freeing never allocates
    }
    chunks_[c].next = 0;
    return c;
  }
  static void prefetch_chunk(const Chunk& k) {
    const char* c = reinterpret_cast<const char*>(&k);
    for (size_t off = 0; off < sizeof(Chunk); off += 64) __builtin_prefetch(c + off);
  }
  // The first occupied ring slot from bucket `b` on (in ring order, wrapping), or kNone.
  size_t next_occupied_slot(uint64_t b) const {
    const size_t from = b & kMask;
    size_t w = from >> 6;
    uint64_t bits = occupied_[w] & (~uint64_t{0} << (from & 63));
    for (size_t n = 0; n <= kSlots / 64; ++n) {
      if (bits) return (w << 6) + static_cast<size_t>(__builtin_ctzll(bits));
      w = (w + 1) & (kSlots / 64 - 1);
      bits = occupied_[w];
    }
    return kNone;
  }
  // Every kAdaptEvery buckets (or as many pops as that many full buckets): halves or doubles the width when
  // the buckets held too many or too few events, and places the pending events again (the current bucket
  // is empty).
  void adapt() {
    const uint64_t per_bucket = pops_ / buckets_;
    pops_ = 0;
    buckets_ = 0;
    int shift = shift_;
    if (per_bucket < kMinPerBucket && shift < kMaxShift) ++shift;
    if (per_bucket > kMaxPerBucket && shift > kMinShift) --shift;
    if (shift == shift_) return;
    scratch_.clear();
    for (size_t w = 0; w < kSlots / 64; ++w) {
      for (uint64_t bits = occupied_[w]; bits; bits &= bits - 1) {
        const size_t slot = (w << 6) + static_cast<size_t>(__builtin_ctzll(bits));
        take_bucket(slot, [this](const Event& e) { scratch_.push_back(e); });
      }
      occupied_[w] = 0;
    }
    while (!far_.empty()) scratch_.push_back(far_.pop());
    // The current bucket held the events before end_ps; those after stay after the new current bucket,
    // whose end may come later (a wider bucket): place() then puts them in it.
    const uint64_t end_ps = (cur_ + 1) << shift_;
    shift_ = shift;
    cur_ = (end_ps - 1) >> shift_;
    for (const Event& e : scratch_) place(e.key, e.target, e.kind, e.arg, bucket(e));
  }
  // Hands the events of the ring's slot to `take` and frees its chunks.
  template <class Take>
  void take_bucket(size_t slot, Take&& take) {
    const uint32_t last = tail_[slot] >> kCountBits;
    for (uint32_t c = head_[slot]; c != 0;) {
      Chunk& k = chunks_[c];
      const uint32_t n = c == last ? tail_[slot] & kCountMask : kChunkEvents;
      for (uint32_t i = 0; i < n; ++i) take(k.ev[i]);
      ring_count_ -= n;
      const uint32_t next_chunk = k.next;
      free_.push_back(c);
      c = next_chunk;
    }
    head_[slot] = tail_[slot] = 0;
  }
  // Moves the next bucket's events into the empty current bucket.
  void advance() {
    if (++buckets_ == kAdaptEvery || pops_ > kAdaptEvery * kMaxPerBucket) {
      adapt();
      if (n_ != 0 || !crowd_.empty()) return;
    }
    uint64_t next = ~uint64_t{0};
    size_t slot = kNone;
    if (ring_count_ != 0) {
      slot = next_occupied_slot(cur_ + 1);
      next = cur_ + 1 + ((slot - ((cur_ + 1) & kMask)) & kMask);
    }
    if (!far_.empty()) next = std::min(next, bucket(far_.top()));
    cur_ = next;
    if (slot != kNone && slot == (cur_ & kMask)) {
      // Each event's data is fetched as its bucket becomes current, a few events before it runs.
      take_bucket(slot, [this](const Event& e) {
        Event::prefetch_arg(e.kind, e.arg);
        push_front(e);
      });
      occupied_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
      // The next buckets' chunks were written a link's delay ago: while this bucket runs, fetch the first
      // chunk of the bucket after next and the rest of the next one (its first chunk, fetched when the
      // previous bucket began, tells where its second is).
      if (const size_t after = ring_count_ != 0 ? next_occupied_slot(cur_ + 1) : kNone; after != kNone) {
        const Chunk& first = chunks_[head_[after]];
        prefetch_chunk(first);
        if (first.next != 0) prefetch_chunk(chunks_[first.next]);
        if (const size_t then = next_occupied_slot(after + 1); then != kNone)
          prefetch_chunk(chunks_[head_[then]]);
      }
    }
    while (!far_.empty() && bucket(far_.top()) <= cur_) push_front(far_.pop());
  }

  // The current bucket: front_[0, n_) unsorted, its earliest at min_, or crowd_ (one of the two is empty).
  Event front_[kFrontMax];
  uint32_t n_ = 0, min_ = 0;
  // Both start small and grow as they need (a run has a queue per partition: 232 at k = 64, most of whose
  // heaps never hold more than a few events).
  EventHeap crowd_{2 * kFrontMax};
  EventHeap far_{kFrontMax};
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> free_;  // free chunks, the last freed on top
  uint32_t head_[kSlots] = {};  // per ring slot: its bucket's first chunk
  uint32_t tail_[kSlots] = {};  // and last << kCountBits | the events in it (0: the slot is empty)
  uint64_t occupied_[kSlots / 64] = {};
  uint64_t cur_ = 0;  // the current bucket: front_ (or crowd_) holds the events of it and before
  int shift_ = kInitialShift;
  size_t size_ = 0;
  size_t ring_count_ = 0;
  uint64_t pops_ = 0;     // since the last look at the width
  uint64_t buckets_ = 0;  // buckets begun since then
  std::vector<Event> scratch_;
};

}  // namespace rocesim
