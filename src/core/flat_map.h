// An open-addressing hash map from uint64_t keys to small values, for per-packet scheme state (flow tables
// at switch ports): linear probing, backward-shift deletion (no tombstones), capacity a power of two that
// doubles when half full. Once it has grown to the peak number of live keys it never allocates again, so
// inserts and erases on the packet path are allocation-free in steady state (std::unordered_map allocates a
// node per insert).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocesim {

template <typename V>
class FlatMap {
 public:
  explicit FlatMap(size_t initial_capacity = 16) { slots_.resize(round_up(initial_capacity)); }

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  V* find(uint64_t key) {
    for (size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  // The value of `key`, inserted as `init` when absent.
  V& get_or_insert(uint64_t key, const V& init = V{}) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(key);
    for (; slots_[i].used; i = next(i))
      if (slots_[i].key == key) return slots_[i].value;
    slots_[i] = Slot{key, init, true};
    ++size_;
    return slots_[i].value;
  }

  // Removes `key` if present; returns whether it was.
  bool erase(uint64_t key) {
    size_t i = home(key);
    for (; slots_[i].used; i = next(i))
      if (slots_[i].key == key) break;
    if (!slots_[i].used) return false;
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
    for (size_t j = next(i);; j = next(j)) {
      if (!slots_[j].used) break;
      const size_t h = home(slots_[j].key);
      // Entry j may move to i when i lies cyclically in [h, j).
      if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].used = false;
    --size_;
    return true;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    V value{};
    bool used = false;
  };
  static size_t round_up(size_t n) {
    size_t c = 8;
    while (c < n) c *= 2;
    return c;
  }
  size_t home(uint64_t key) const {
    key ^= key >> 33;  // splitmix64's finalizer: spreads (src << 32 | dst) keys over the low bits
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & (slots_.size() - 1);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.size() * 2);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) get_or_insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace rocesim
