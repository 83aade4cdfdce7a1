#include "core/huge_pages.h"

#include <cstdint>
#include <cstdlib>  // defines __GLIBC__ where it applies

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace rocesim {

void use_huge_pages() {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  // The heap reserves this much beyond what it uses whenever it grows: a large fabric's whole run fits in
  // one reserve, advised once. Address space, not memory.
  constexpr size_t kReserve = size_t{512} << 20;
  // Blocks up to this size come from the (advised) heap rather than a mapping of their own: packet chunks,
  // route tables, the event heap.
  constexpr int kMmapThreshold = 32 << 20;
  const uintptr_t before = reinterpret_cast<uintptr_t>(sbrk(0));
  if (!mallopt(M_TOP_PAD, static_cast<int>(kReserve)) || !mallopt(M_MMAP_THRESHOLD, kMmapThreshold)) return;
  // Larger than what is left at the top of the heap, so that it grows now by the reserve.
  // (volatile: a malloc whose block is unused may be left out by the compiler.)
  void* volatile grow = std::malloc(4 * kHuge);
  std::free(grow);
  const uintptr_t after = reinterpret_cast<uintptr_t>(sbrk(0));
  const uintptr_t lo = (before + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = after & ~(kHuge - 1);
  if (before == static_cast<uintptr_t>(-1) || hi <= lo) return;
  madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // best effort: THP may be off
#endif
}

}  // namespace rocesim
