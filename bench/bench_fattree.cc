// The standard benchmark: the 320-host 3-tier fat-tree, WebSearch at 30 % load, DCQCN, 10 ms simulated, on
// one thread (a run that leaves threads out would take every core on this fabric). Prints its speed and
// memory against the targets: >= 5 M packet-hops per wall second, < 1 GiB.
//
// Usage: bench_fattree [duration_ms] [load]
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "app/run.h"
#include "config/scenario.h"

using namespace rocesim;

int main(int argc, char** argv) {
  const double duration_ms = argc > 1 ? std::atof(argv[1]) : 10.0;
  const double load = argc > 2 ? std::atof(argv[2]) : 0.3;
  const std::string text = fmt::format(R"(
name = "bench-fattree"
seed = 1
duration_ms = {}
stop_when_done = false
threads = 1
[topology]
kind = "fat_tree_3tier"
[cc]
scheme = "dcqcn"
[[traffic]]
workload = "websearch"
load = {}
)",
                                       duration_ms, load);
  const Scenario s = load_scenario_text(text, "bench-fattree");
  const RunResult r = run_scenario(s, RunOptions{});
  const auto& p = r.summary["performance"];
  fmt::print("bench_fattree: 320-host fat-tree, WebSearch {:.0f}% load, DCQCN, {} ms simulated\n", load * 100,
             duration_ms);
  fmt::print("  flows started         {}\n", r.summary["flows"]["started"].get<uint64_t>());
  fmt::print("  flows finished        {}\n", r.summary["flows"]["finished"].get<uint64_t>());
  fmt::print("  events                {}\n", p["events"].get<uint64_t>());
  fmt::print("  packet-hops           {}\n", p["packet_hops"].get<uint64_t>());
  fmt::print("  wall seconds          {:.3f}\n", r.wall_seconds);
  fmt::print("  events/s              {:.3f} M\n", p["events_per_second"].get<double>() / 1e6);
  fmt::print("  packet-hops/s         {:.3f} M   (target >= 5 M)\n",
             p["packet_hops_per_second"].get<double>() / 1e6);
  fmt::print("  peak memory           {:.1f} MiB (target < 1024 MiB)\n", peak_rss_bytes() / 1048576.0);
  return 0;
}
