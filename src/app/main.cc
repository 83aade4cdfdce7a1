// The `rocesim` command: run, validate, list.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/run.h"
#include "config/scenario.h"
#include "config/schemes.h"
#include "core/error.h"
#include "workload/cdf.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

void print_table(const Scenario& s, const RunResult& r, const std::string& out_dir) {
  const auto& j = r.summary;
  fmt::print("\n{} ({} scheme, seed {}): {} of {} flows finished in {:.3f} ms simulated, {:.2f} s wall\n",
             s.name, s.scheme, s.seed, j["flows"]["finished"].get<uint64_t>(), j["flows"]["started"].get<uint64_t>(),
             j["simulated_time_ms"].get<double>(), r.wall_seconds);
  fmt::print("  {:<14} {:>8} {:>12} {:>12} {:>12}\n", "flow size", "flows", "slowdown p50", "slowdown p99",
             "FCT p99 (us)");
  for (const auto& b : j["fct"]["buckets"]) {
    if (b["count"].get<uint64_t>() == 0) continue;
    fmt::print("  {:<14} {:>8} {:>12.2f} {:>12.2f} {:>12.1f}\n", b["label"].get<std::string>(),
               b["count"].get<uint64_t>(), b["slowdown"]["p50"].get<double>(), b["slowdown"]["p99"].get<double>(),
               b["fct_us"]["p99"].get<double>());
  }
  const auto& all = j["fct"];
  fmt::print("  {:<14} {:>8} {:>12.2f} {:>12.2f} {:>12.1f}\n", "all", all["count"].get<uint64_t>(),
             all["slowdown"]["p50"].get<double>(), all["slowdown"]["p99"].get<double>(),
             all["fct_us"]["p99"].get<double>());
  fmt::print("  PFC pauses sent: {}   paused time: {:.1f} us   CNPs: {}   data drops: {}\n",
             j["pfc"]["pauses_sent"].get<uint64_t>(), j["pfc"]["paused_time_us"].get<double>(),
             j["cnp"]["sent_by_receivers"].get<uint64_t>() + j["cnp"]["sent_by_switches"].get<uint64_t>(),
             j["drops"]["data_buffer"].get<uint64_t>());
  fmt::print("  {} events, {} packet-hops: {:.2f} M events/s, {:.2f} M packet-hops/s\n",
             j["performance"]["events"].get<uint64_t>(), j["performance"]["packet_hops"].get<uint64_t>(),
             j["performance"]["events_per_second"].get<double>() / 1e6,
             j["performance"]["packet_hops_per_second"].get<double>() / 1e6);
  if (!out_dir.empty()) fmt::print("  results: {}/ (flows.csv, summary.json, scenario.resolved.toml)\n", out_dir);
}

std::string find_scenario(const std::string& arg) {
  if (fs::exists(arg)) return arg;
  // A scenario name relative to the scenarios/ directory ("demo", "mercury/victim").
  for (const std::string& cand : {std::string(ROCESIM_SCENARIO_DIR) + "/" + arg + ".toml",
                                  std::string(ROCESIM_SCENARIO_DIR) + "/" + arg})
    if (fs::exists(cand) && fs::is_regular_file(cand)) return cand;
  return arg;  // load reports "cannot open"
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rocesim: a fast packet-level simulator of lossless RDMA (RoCEv2 + PFC) datacenter networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rocesim ") + ROCESIM_VERSION);

  std::string scenario_path, out_dir, fct_format = "csv";
  std::vector<std::string> sets;
  bool quiet = false, force = false;

  auto* run = app.add_subcommand("run", "Run a scenario and write flows.csv, summary.json and scenario.resolved.toml");
  run->add_option("scenario", scenario_path, "Scenario file (TOML), or a name under scenarios/ such as 'demo'")
      ->required();
  run->add_option("-o,--out", out_dir, "Result directory (written to a temporary name, then renamed)");
  run->add_option("--set", sets, "Override a scenario value, e.g. --set cc.scheme=none --set seed=7")
      ->type_name("KEY=VALUE");
  run->add_option("--fct-format", fct_format, "Also write fct.txt in the ns-3 HPCC simulator's layout")
      ->check(CLI::IsMember({"csv", "hpcc"}));
  run->add_flag("--force", force, "Replace a result directory that already holds results");
  run->add_flag("-q,--quiet", quiet, "No progress line and no table");

  auto* validate = app.add_subcommand("validate", "Check a scenario file and print the values it resolves to");
  validate->add_option("scenario", scenario_path, "Scenario file (TOML)")->required();
  validate->add_option("--set", sets, "Override a scenario value")->type_name("KEY=VALUE");

  std::string what = "all";
  auto* list = app.add_subcommand("list", "List schemes, topologies, workloads or scenarios");
  list->add_option("what", what, "schemes | topologies | workloads | scenarios | all")
      ->check(CLI::IsMember({"schemes", "topologies", "workloads", "scenarios", "all"}));

  CLI11_PARSE(app, argc, argv);

  try {
    if (run->parsed()) {
      const Scenario s = load_scenario(find_scenario(scenario_path), sets);
      RunOptions opt;
      opt.out_dir = out_dir;
      opt.fct_hpcc = fct_format == "hpcc";
      opt.progress = !quiet;
      opt.force = force;
      if (!out_dir.empty()) check_output_dir(out_dir, force);  // before spending time on the run
      const RunResult r = run_scenario(s, opt);
      if (!quiet) print_table(s, r, out_dir);
      return 0;
    }
    if (validate->parsed()) {
      const Scenario s = load_scenario(find_scenario(scenario_path), sets);
      std::cout << "# " << s.file << ": valid (" << s.topo.num_hosts() << " hosts, "
                << s.topo.num_nodes - s.topo.num_hosts() << " switches, scheme " << s.scheme << ")\n"
                << s.resolved << "\n";
      return 0;
    }
    if (list->parsed()) {
      if (what == "schemes" || what == "all") {
        fmt::print("schemes:\n");
        for (const auto& e : scheme_registry()) fmt::print("  {:<12} {}\n", e.name, e.summary);
      }
      if (what == "topologies" || what == "all") {
        fmt::print("topologies (topology.kind):\n");
        for (const auto& n : topology_kinds()) fmt::print("  {}\n", n);
      }
      if (what == "workloads" || what == "all") {
        fmt::print("workloads (traffic.workload; or a path to a CDF file):\n");
        fmt::print("  {:<28} {:>14} {:>10} {:>10}\n", "name", "mean (bytes)", "< 10 KB", "> 1 MB");
        for (const auto& w : list_workloads(ROCESIM_DATA_DIR))
          fmt::print("  {:<28} {:>14.0f} {:>9.1f}% {:>9.1f}%\n", w.name, w.mean_bytes, 100 * w.share_below_10kb,
                     100 * w.share_above_1mb);
      }
      if (what == "scenarios" || what == "all") {
        fmt::print("scenarios (rocesim run NAME):\n");
        std::vector<std::string> names;
        if (fs::exists(ROCESIM_SCENARIO_DIR))
          for (const auto& e : fs::recursive_directory_iterator(ROCESIM_SCENARIO_DIR))
            if (e.path().extension() == ".toml")
              names.push_back(fs::relative(e.path(), ROCESIM_SCENARIO_DIR).replace_extension("").string());
        std::sort(names.begin(), names.end());
        for (const auto& n : names) fmt::print("  {}\n", n);
      }
      return 0;
    }
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
