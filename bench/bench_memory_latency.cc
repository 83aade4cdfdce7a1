// The machine's memory, as a large fabric sees it: the time of one dependent load at a random line of a
// working set of 1 MiB up to --max-mib (256: the last size is 202 MiB) (a chase through one random cycle of
// 64-byte lines, so that every load waits on the one before and the hardware prefetchers cannot guess the
// next). The heap is set up as rocesim's (core/huge_pages.h), so the pages are the program's. The step from
// cache to DRAM latency is where the packet-hop rate of bench_scaling drops: a fabric whose hot data outgrows
// the last cache pays it on the misses every hop has (docs/architecture.md, "Speed").
//
// A second column takes the same number of lines, one per 4 KiB page (4,160 bytes apart, so that they fall
// in different cache sets), up to --spread-max-mib of lines: the cost of reaching a line whose page is
// not among those the processor has translations for (on a virtual machine, a walk of two page tables).
// A fabric's hot data is spread so: a packet, a port, a queue in pages of their own.
//
// Usage: bench_memory_latency [--max-mib N] [--spread-max-mib N] [--loads N]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

namespace {

// ns per load over `n` lines placed `stride` bytes apart, after one warm-up pass.
double chase_ns(size_t n, size_t stride, uint64_t loads, uint64_t seed) {
  std::vector<char> memory(n * stride);
  auto next = [&](uint32_t i) -> uint32_t& { return *reinterpret_cast<uint32_t*>(&memory[i * stride]); };
  // Sattolo's shuffle: one cycle through every line.
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(seed);
  for (size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  for (size_t i = 0; i < n; ++i) next(order[i]) = order[(i + 1) % n];
  uint32_t at = order[0];
  for (size_t i = 0; i < n; ++i) at = next(at);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < loads; ++i) at = next(at);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (at == UINT32_MAX) std::puts("");  // keeps the chase
  return ns / static_cast<double>(loads);
}

constexpr size_t kLine = 64;
constexpr size_t kSpread = 4096 + kLine;  // a line per page, each in another cache set

}  // namespace

int main(int argc, char** argv) {
  rocesim::use_huge_pages();
  CLI::App app{
      "Latency of a dependent random load against working-set size (1 MiB up to --max-mib), with the "
      "lines side by side and one per page."};
  size_t max_mib = 256;
  size_t spread_max_mib = 8;
  uint64_t loads = 10'000'000;
  app.add_option("--max-mib", max_mib, "largest working set, MiB")->check(CLI::Range(1, 1 << 16));
  app.add_option("--spread-max-mib", spread_max_mib,
                 "largest working set with one line per page, MiB of lines (65 times as much memory)")
      ->check(CLI::Range(0, 64));
  app.add_option("--loads", loads, "timed loads per size")->check(CLI::Range(1000, 1'000'000'000));
  CLI11_PARSE(app, argc, argv);
  std::printf("%10s %12s %22s\n", "set MiB", "ns / load", "a line per page: ns");
  for (size_t mib = 1; mib <= max_mib; mib = mib < 8 ? mib * 2 : mib + mib / 2) {
    const size_t n = (mib << 20) / kLine;
    std::printf("%10zu %12.1f", mib, chase_ns(n, kLine, loads, mib));
    if (mib <= spread_max_mib) std::printf(" %22.1f", chase_ns(n, kSpread, loads, mib));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
