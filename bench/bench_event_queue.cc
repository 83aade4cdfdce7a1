// Micro-benchmark of the event queue (the simulator's hot path): hold-model push/pop at several sizes.
#include <benchmark/benchmark.h>

#include "core/event_queue.h"
#include "core/rng.h"
#include "core/simulator.h"

using namespace rocesim;

static void BM_HoldModel(benchmark::State& state) {
  EventQueue q;
  Rng rng(1);
  const int64_t n = state.range(0);
  uint64_t seq = 0;
  auto push = [&](Time t) { q.push(Event{Simulator::make_key(t, 1, seq++), 0, 0, 0}); };
  for (int64_t i = 0; i < n; ++i) push(Time{static_cast<int64_t>(rng.below(1'000'000))});
  for (auto _ : state) {
    Event e = q.pop();
    push(Time{e.t_ps() + 1 + static_cast<int64_t>(rng.below(1'000'000))});
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HoldModel)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);

BENCHMARK_MAIN();
