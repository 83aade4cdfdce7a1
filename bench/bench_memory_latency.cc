// The machine's memory, as a large fabric sees it: the time of one dependent load at a random line of a
// working set of 1 MiB up to --max-mib (256: the last size is 202 MiB) (a chase through one random cycle of
// 64-byte lines, so that every load waits on the one before and the hardware prefetchers cannot guess the
// next). The heap is set up as rocesim's (core/huge_pages.h), so the pages are the program's. The step from
// cache to DRAM latency is where the packet-hop rate of bench_scaling drops: a fabric whose hot data outgrows
// the last cache pays it on the misses every hop has (docs/architecture.md, "Speed").
//
// Usage: bench_memory_latency [--max-mib N] [--loads N]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

namespace {

struct alignas(64) Line {
  uint32_t next;
};

// ns per load over a working set of `bytes`, after one warm-up pass.
double chase_ns(size_t bytes, uint64_t loads, uint64_t seed) {
  const size_t n = bytes / sizeof(Line);
  std::vector<Line> lines(n);
  // Sattolo's shuffle: one cycle through every line.
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(seed);
  for (size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  for (size_t i = 0; i < n; ++i) lines[order[i]].next = order[(i + 1) % n];
  uint32_t at = order[0];
  for (size_t i = 0; i < n; ++i) at = lines[at].next;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < loads; ++i) at = lines[at].next;
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (at == UINT32_MAX) std::puts("");  // keeps the chase
  return ns / static_cast<double>(loads);
}

}  // namespace

int main(int argc, char** argv) {
  rocesim::use_huge_pages();
  CLI::App app{"Latency of a dependent random load against working-set size (1 MiB up to --max-mib)."};
  size_t max_mib = 256;
  uint64_t loads = 10'000'000;
  app.add_option("--max-mib", max_mib, "largest working set, MiB")->check(CLI::Range(1, 1 << 16));
  app.add_option("--loads", loads, "timed loads per size")->check(CLI::Range(1000, 1'000'000'000));
  CLI11_PARSE(app, argc, argv);
  std::printf("%10s %12s\n", "set MiB", "ns / load");
  for (size_t mib = 1; mib <= max_mib; mib = mib < 8 ? mib * 2 : mib + mib / 2) {
    std::printf("%10zu %12.1f\n", mib, chase_ns(mib << 20, loads, mib));
    std::fflush(stdout);
  }
  return 0;
}
