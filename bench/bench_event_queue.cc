// Micro-benchmark of the event queue (the simulator's hot path): hold-model push/pop at several sizes,
// for the calendar queue the simulator uses (EventQueue) and the plain heap (EventHeap).
// The hold model draws each event's delay the way a packet-level run does: most events one packet's
// serialisation to one link delay ahead (0.1 - 1 us), a few far ahead (timers, 50 us).
#include <benchmark/benchmark.h>

#include "core/event_queue.h"
#include "core/rng.h"
#include "core/simulator.h"

using namespace rocesim;

namespace {
int64_t delay_ps(Rng& rng) {
  if (rng.below(100) == 0) return 50'000'000;
  return 100'000 + static_cast<int64_t>(rng.below(900'000));
}
}  // namespace

template <class Queue>
static void BM_HoldModel(benchmark::State& state) {
  Queue q;
  Rng rng(1);
  const int64_t n = state.range(0);
  uint64_t seq = 0;
  auto push = [&](Time t) { q.push(Event{Simulator::make_key(t, 1, seq++), 0, 0, 0}); };
  for (int64_t i = 0; i < n; ++i) push(Time{delay_ps(rng)});
  for (auto _ : state) {
    Event e = q.pop();
    push(Time{e.t_ps() + delay_ps(rng)});
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
  if constexpr (requires { q.bucket_shift(); })
    state.counters["bucket_ps"] = double(int64_t{1} << q.bucket_shift());
}
BENCHMARK_TEMPLATE(BM_HoldModel, EventQueue)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);
BENCHMARK_TEMPLATE(BM_HoldModel, EventHeap)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);

BENCHMARK_MAIN();
