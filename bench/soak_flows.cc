// Soak test of the per-flow memory: runs N flows (default 1,000,000) through a small
// leaf-spine and samples the resident memory (VmRSS of /proc/self/status) every 50,000 finished flows.
// After warm-up the series must stay flat: finished flows are streamed to flows.csv / fct.txt and their
// statistics kept in bounded sketches (stats/fct_stats.h), so nothing grows with the flow count.
//
// Usage: soak_flows [flows] [workload] [load] [series.csv]
//   defaults: 1000000 fb_hadoop 0.5 (no CSV). The result directory (flows.csv, fct.txt, summary.json)
//   goes to a temporary directory that is removed at the end.
// Scenario: leaf_spine 2 leaves x 8 hosts at 100 Gb/s, 2 spines, DCQCN, Poisson all-to-all arrivals of
// the workload at `load`, stop after `flows` flows have finished. `make bench` builds it; run it with
//   build/soak_flows                       (1 M fb_hadoop flows: about 2 CPU minutes), or make soak
//   build/soak_flows 200000 google_rpc     (a quick look)
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "net/network.h"

using namespace rocesim;

namespace {

int64_t vm_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  while (f >> key) {
    if (key == "VmRSS:") {
      int64_t kb = 0;
      f >> kb;
      return kb * 1024;
    }
    std::string rest;
    std::getline(f, rest);
  }
  return 0;
}

struct Sample {
  uint64_t flows = 0;
  double sim_ms = 0;
  double wall_s = 0;
  int64_t rss = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t flows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::string workload = argc > 2 ? argv[2] : "fb_hadoop";
  const double load = argc > 3 ? std::atof(argv[3]) : 0.5;
  const std::string series_csv = argc > 4 ? argv[4] : "";
  constexpr uint64_t kEvery = 50'000;

  const std::string text = fmt::format(R"(
name = "soak-flows"
seed = 1
duration_ms = 10000000
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
[cc]
scheme = "dcqcn"
[[traffic]]
workload = "{}"
load = {}
max_flows = {}
[output]
fct_hpcc = true
)",
                                       workload, load, flows);
  const Scenario s = load_scenario_text(text, "soak-flows");
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());

  std::vector<Sample> series;
  const auto t0 = std::chrono::steady_clock::now();
  auto sample = [&](uint64_t n) {
    series.push_back({n, net.now().ms(),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                      vm_rss_bytes()});
  };
  sample(0);
  uint64_t done = 0;
  net.observers().on_flow_finished = [&](const FlowRecord&) {
    if (++done % kEvery == 0) sample(done);
  };

  RunOptions opt;
  opt.out_dir = (std::filesystem::temp_directory_path() / fmt::format("rocesim-soak-{}", getpid())).string();
  const RunResult r = run_network(s, net, opt);
  sample(done);  // after the files and the summary were written
  std::error_code ec;
  std::filesystem::remove_all(opt.out_dir, ec);

  fmt::print("soak_flows: {} flows of {} at {:.0f}% load, leaf-spine 16 hosts, DCQCN\n", flows, workload,
             load * 100);
  fmt::print("{:>10} {:>12} {:>9} {:>10}\n", "flows", "sim_ms", "wall_s", "VmRSS_MiB");
  int64_t peak = 0;
  for (const Sample& x : series) {
    fmt::print("{:>10} {:>12.3f} {:>9.2f} {:>10.1f}\n", x.flows, x.sim_ms, x.wall_s, x.rss / 1048576.0);
    peak = std::max(peak, x.rss);
  }
  // Growth after warm-up: from the sample at 20% of the flows to the last sample during the run.
  const size_t warm = series.size() > 6 ? series.size() / 5 : 1;
  if (series.size() > warm + 1) {
    const Sample& a = series[warm];
    const Sample& b = series[series.size() - 2];
    fmt::print("growth after warm-up ({} -> {} flows): {:+.1f} MiB ({:+.1f} bytes/flow)\n", a.flows, b.flows,
               (b.rss - a.rss) / 1048576.0,
               b.flows > a.flows ? static_cast<double>(b.rss - a.rss) / static_cast<double>(b.flows - a.flows)
                                 : 0.0);
  }
  fmt::print("peak VmRSS {:.1f} MiB (getrusage maxrss {:.1f} MiB); {} flows finished; {:.1f} s wall\n",
             peak / 1048576.0, peak_rss_bytes() / 1048576.0, r.summary["flows"]["finished"].get<uint64_t>(),
             series.back().wall_s);
  if (!series_csv.empty()) {
    std::ofstream f(series_csv);
    f << "flows,sim_ms,wall_s,vm_rss_bytes\n";
    for (const Sample& x : series)
      f << fmt::format("{},{:.3f},{:.3f},{}\n", x.flows, x.sim_ms, x.wall_s, x.rss);
  }
  return 0;
}
