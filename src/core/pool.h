// A pool of objects with stable addresses: memory is taken in chunks and reused through a free
// list, so steady-state allocation and release never touch the heap.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rocesim {

template <typename T, size_t kChunk = 4096>
class StablePool {
 public:
  // Returns a slot index; the object at it is reset to T{}.
  uint32_t acquire() {
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<uint32_t>(size_);
      if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
      ++size_;
    }
    (*this)[id] = T{};
    ++live_;
    return id;
  }
  void release(uint32_t id) {
    free_.push_back(id);
    --live_;
  }
  T& operator[](uint32_t id) { return chunks_[id / kChunk][id % kChunk]; }
  const T& operator[](uint32_t id) const { return chunks_[id / kChunk][id % kChunk]; }
  size_t capacity() const { return size_; }  // slots ever created (all indices are < this)
  size_t live() const { return live_; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<uint32_t> free_;
  size_t size_ = 0;
  size_t live_ = 0;
};

}  // namespace rocesim
