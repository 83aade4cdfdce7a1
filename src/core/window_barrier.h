// The barrier the threads of a partitioned run meet at, twice per window (core/simulator.cc): a waiter
// spins for up to `spin` before it sleeps on the atomic (std::atomic::wait, a futex on Linux).
//
// Why not std::barrier: a window on many threads holds tens of microseconds of work (k = 24 on 16 threads:
// about 0.1 ms), and the coordinator's work between two windows about 17 us; libstdc++'s std::barrier
// sleeps almost at once, and waking a sleeping thread takes a futex call and a scheduler wake-up of the
// same order as the window itself. Spinning keeps the waiters awake through such gaps. It is only right
// when each thread has a core: with more threads than cores the spinners would take the time of the
// thread they wait for, so the caller gives spin = 0 then.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>

namespace rocesim {

class WindowBarrier {
 public:
  WindowBarrier(int parties, std::chrono::nanoseconds spin) : parties_(parties), spin_(spin) {}
  WindowBarrier(const WindowBarrier&) = delete;
  WindowBarrier& operator=(const WindowBarrier&) = delete;

  // Returns once all `parties` threads have called it for this phase. What a thread wrote before it
  // arrived is visible to every thread after it returns.
  void arrive_and_wait() {
    const uint32_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);
      // seq_cst with the sleepers' count below: a waiter that counted itself before this store is seen by
      // the load of sleepers_; one that counts itself after it sees the new phase and does not sleep.
      phase_.store(phase + 1, std::memory_order_seq_cst);
      if (sleepers_.load(std::memory_order_seq_cst) > 0) phase_.notify_all();
      return;
    }
    if (spin_.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + spin_;
      for (uint32_t i = 1;; ++i) {
        if (phase_.load(std::memory_order_acquire) != phase) return;
        pause();
        // The clock every 64 turns: a turn is a few nanoseconds, a clock read about 20.
        if ((i & 63) == 0 && std::chrono::steady_clock::now() >= until) break;
      }
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (phase_.load(std::memory_order_seq_cst) == phase) phase_.wait(phase, std::memory_order_acquire);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  const uint32_t parties_;
  const std::chrono::nanoseconds spin_;
  alignas(64) std::atomic<uint32_t> arrived_{0};
  alignas(64) std::atomic<uint32_t> phase_{0};
  alignas(64) std::atomic<uint32_t> sleepers_{0};
};

}  // namespace rocesim
