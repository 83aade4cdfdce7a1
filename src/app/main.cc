// The `rocesim` command: run, validate, draw, list, sweep, compare-fct, report, reproduce. Each subcommand
// has its options struct, an add_*_command that declares them, and a *_command that carries it out.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/estimate.h"
#include "app/mpi_run.h"
#include "app/mpi_sweep.h"
#include "app/progress.h"
#include "app/run.h"
#include "app/sweep.h"
#include "cc/registry.h"
#include "config/hpcc_config.h"
#include "config/profiles.h"
#include "config/scenario.h"
#include "core/error.h"
#include "core/huge_pages.h"
#include "core/text.h"
#include "stats/fct_compare.h"
#include "topo/drawing.h"
#include "topo/tiers.h"
#include "topo/topology_file.h"
#include "workload/cdf.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace {

void print_table(const Scenario& s, const RunResult& r, const std::string& out_dir) {
  const auto& j = r.summary;
  fmt::print("\n{} ({} scheme, seed {}): {} of {} flows finished in {:.3f} ms simulated, {:.2f} s wall\n",
             s.name, s.scheme, s.seed, j["flows"]["finished"].get<uint64_t>(),
             j["flows"]["started"].get<uint64_t>(), j["simulated_time_ms"].get<double>(), r.wall_seconds);
  fmt::print("  {:<14} {:>8} {:>12} {:>12} {:>12}\n", "flow size", "flows", "slowdown p50", "slowdown p99",
             "FCT p99 (us)");
  for (const auto& b : j["fct"]["buckets"]) {
    if (b["count"].get<uint64_t>() == 0) continue;
    fmt::print("  {:<14} {:>8} {:>12.2f} {:>12.2f} {:>12.1f}\n", b["label"].get<std::string>(),
               b["count"].get<uint64_t>(), b["slowdown"]["p50"].get<double>(),
               b["slowdown"]["p99"].get<double>(), b["fct_us"]["p99"].get<double>());
  }
  const auto& all = j["fct"];
  fmt::print("  {:<14} {:>8} {:>12.2f} {:>12.2f} {:>12.1f}\n", "all", all["count"].get<uint64_t>(),
             all["slowdown"]["p50"].get<double>(), all["slowdown"]["p99"].get<double>(),
             all["fct_us"]["p99"].get<double>());
  fmt::print("  PFC pauses sent: {}   paused time: {:.1f} us\n", j["pfc"]["pauses_sent"].get<uint64_t>(),
             j["pfc"]["paused_time_us"].get<double>());
  // Congestion notifications, CNP packets and (DCQCN's per-ACK mode) flags on ACKs together.
  const auto& cnp = j["cnp"];
  const uint64_t on_acks = cnp["sent_on_acks"].get<uint64_t>() + cnp["received_on_acks"].get<uint64_t>();
  fmt::print("  ECN marks: {}   CNPs: {} sent, {} received{}\n", j["ecn"]["marked"].get<uint64_t>(),
             cnp["sent"].get<uint64_t>(), cnp["received"].get<uint64_t>(),
             on_acks == 0
                 ? std::string()
                 : fmt::format(" (on ACKs: {} sent, {} received)", cnp["sent_on_acks"].get<uint64_t>(),
                               cnp["received_on_acks"].get<uint64_t>()));
  // Every drop kind of summary.json's "drops", by its name there.
  std::vector<std::string> drops;
  uint64_t dropped = 0;
  for (const auto& [kind, n] : j["drops"].items()) {
    drops.push_back(fmt::format("{} {}", kind, n.get<uint64_t>()));
    dropped += n.get<uint64_t>();
  }
  fmt::print("  drops: {} ({})\n", dropped, fmt::join(drops, ", "));
  if (j.contains("link_events")) {
    std::vector<std::string> log;
    for (const auto& e : j["link_events"]["log"])
      log.push_back(fmt::format("{:.1f} us {}", e["time_us"].get<double>(), e["event"].get<std::string>()));
    fmt::print("  link events: {}\n", fmt::join(log, "; "));
  }
  fmt::print("  {} events, {} packet-hops: {:.2f} M events/s, {:.2f} M packet-hops/s\n",
             j["performance"]["events"].get<uint64_t>(), j["performance"]["packet_hops"].get<uint64_t>(),
             j["performance"]["events_per_second"].get<double>() / 1e6,
             j["performance"]["packet_hops_per_second"].get<double>() / 1e6);
  // Collective, dependency_trace and training jobs (stats/collective_stats.h).
  if (j.contains("jobs"))
    for (const auto& job : j["jobs"]) {
      fmt::print("  job {} ({}, {} ranks): {} of {} iterations", job["job"].get<std::string>(),
                 job["collective"].get<std::string>(), job["ranks"].get<int>(),
                 job["iterations_finished"].get<int>(), job["iterations"].get<int>());
      if (job.contains("iteration_us")) {
        fmt::print(", mean {:.1f} us", job["iteration_us"]["mean"].get<double>());
        if (job.contains("slowdown"))
          fmt::print(" ({:.2f}x the closed form), bus bandwidth {:.1f} Gb/s", job["slowdown"].get<double>(),
                     job["busbw_gbps"].get<double>());
      }
      fmt::print("\n");
    }
  if (!out_dir.empty())
    fmt::print("  results: {}/ (flows.csv, summary.json, scenario.resolved.toml{})\n", out_dir,
               j.contains("jobs") ? ", collectives.csv, collective_steps.csv, job_timeline.csv" : "");
}

std::string find_scenario(const std::string& arg) {
  if (fs::exists(arg)) return arg;
  // A scenario name relative to the scenarios/ directory ("demo", "mercury/victim").
  for (const std::string& cand : {std::string(ROCESIM_SCENARIO_DIR) + "/" + arg + ".toml",
                                  std::string(ROCESIM_SCENARIO_DIR) + "/" + arg})
    if (fs::exists(cand) && fs::is_regular_file(cand)) return cand;
  return arg;  // load reports "cannot open"
}

// What `run` and `validate` read: a scenario file, a topology file + flow file pair, or an ns-3 HPCC
// simulator config.txt (config/hpcc_config.h), with the options that stand for --set overrides.
struct Source {
  std::string scenario, topology_file, flow_file, hpcc_config, scheme, profile;
  double duration_ms = 0;
  int threads = -1;     // --threads; -1: the scenario's
  int partitions = -1;  // --partitions; -1: the scenario's
};

Scenario load_source(const Source& src, const std::vector<std::string>& user_sets, bool quiet,
                     HpccConfig* cfg = nullptr) {
  const bool files = !src.topology_file.empty() || !src.flow_file.empty();
  const int n = !src.scenario.empty() + files + !src.hpcc_config.empty();
  if (n != 1)
    throw InputError("command line", 0,
                     "give one of: a scenario file, --topology-file with --flow-file, or --hpcc-config");
  if (files && (src.topology_file.empty() || src.flow_file.empty()))
    throw InputError("command line", 0, "--topology-file and --flow-file go together");
  if (!src.hpcc_config.empty() && (!src.scheme.empty() || !src.profile.empty()))
    throw InputError("command line", 0,
                     "--hpcc-config: the config's CC_MODE chooses the scheme and the profile is hpcc-sim; "
                     "drop --scheme / --profile (use --set to change a value)");
  if (!src.scheme.empty() && !src.scenario.empty())
    throw InputError(
        "command line", 0,
        "--scheme goes with --topology-file/--flow-file; with a scenario file use --set cc.scheme=NAME");
  std::vector<std::string> sets;
  if (!src.profile.empty()) sets.push_back("profile=" + src.profile);
  if (!src.scheme.empty()) sets.push_back("cc.scheme=" + src.scheme);
  if (src.duration_ms > 0) sets.push_back(fmt::format("duration_ms={}", src.duration_ms));
  if (src.threads >= 0) sets.push_back(fmt::format("threads={}", src.threads));
  if (src.partitions >= 0) sets.push_back(fmt::format("partitions={}", src.partitions));
  sets.insert(sets.end(), user_sets.begin(), user_sets.end());
  if (!src.scenario.empty()) return load_scenario(find_scenario(src.scenario), sets);
  if (files) return load_files_scenario(src.topology_file, src.flow_file, sets);
  HpccConfig c = read_hpcc_config(src.hpcc_config);
  for (const auto& w : c.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!quiet)
    for (const auto& note : c.notes) fmt::print(stderr, "note: {}\n", note);
  Scenario s = load_hpcc_config_scenario(c, sets);
  if (cfg) *cfg = std::move(c);
  return s;
}

// --hpcc-config writes fct.txt and pfc.txt where the config says, often next to the ns-3 simulator's own
// outputs: one that exists and was not written by rocesim (no "<file>.rocesim" marker beside it) is
// refused unless --force.
std::string marker_of(const std::string& path) { return path + ".rocesim"; }

void check_hpcc_outputs(const HpccConfig& cfg, bool force) {
  for (const std::string& p : {cfg.fct_output, cfg.pfc_output}) {
    std::error_code ec;
    if (p.empty() || !fs::exists(p, ec) || fs::exists(marker_of(p), ec) || force) continue;
    throw InputError(cfg.path, 0,
                     fmt::format("{} exists and was not written by rocesim (an ns-3 simulator output?); "
                                 "refusing to overwrite it: move it away, point the config's output "
                                 "elsewhere, or use --force",
                                 p));
  }
}

void mark_hpcc_outputs(const HpccConfig& cfg) {
  for (const std::string& p : {cfg.fct_output, cfg.pfc_output}) {
    if (p.empty()) continue;
    std::ofstream m(marker_of(p));
    m << "written by rocesim " ROCESIM_VERSION " (rocesim run --hpcc-config " << cfg.path
      << "); rocesim replaces it without asking\n";
  }
}

// The options of each subcommand, as the command line fills them.
struct RunArgs {
  Source src;
  std::string out_dir, fct_format = "csv";
  std::vector<std::string> sets;
  bool quiet = false, force = false, check = false;
  bool mpi = false;  // under mpirun: one run over the ranks
  double check_interval_us = 1, watchdog_ms = 50;
  double progress_every_s = 60;  // without a terminal: a progress line this often (0 = none)
};

struct ValidateArgs {
  Source src;
  std::vector<std::string> sets;
  double probe_s = 2;                         // the probe's wall seconds (0 = none)
  const CLI::Option* probe_option = nullptr;  // to tell --probe-s given from its default
};

struct DrawArgs {
  std::string scenario, topology_file, out, title;
  std::vector<std::string> sets;
  DrawOptions opt;
};

struct SweepArgs {
  std::string scenario, out_dir;
  std::vector<std::string> grid, sets;
  int jobs = 1;
  int threads = 1;                              // of each run
  const CLI::Option* threads_option = nullptr;  // to tell --threads 1 given from its default
  bool mpi = false;                             // under mpirun: rank 0 hands the runs to the other ranks
  double rank_timeout_s = 30;
  bool force = false, quiet = false;
};

struct CompareArgs {
  std::vector<std::string> files;  // REF RESULT [REF RESULT ...]
  std::vector<int64_t> edges = {10'000, 100'000, 1'000'000};
  size_t min_flows = 30;
  double max_p50 = 0, max_p99 = 0;
};

struct ReportArgs {
  std::string dir;
  bool quiet = false;
};

struct ReproduceArgs {
  std::vector<std::string> papers, sets, claims;
  std::string scale = "quick", out_dir, docs_dir, only;
  int seeds = 0;  // 0: the scale's default (5 at full, 1 at quick)
  bool sensitivity = false;
  std::string mpi;  // the MPI launcher of each sweep, e.g. "mpirun -np 64"; empty: local sweeps
  int jobs = 1;
  const CLI::Option* jobs_option = nullptr;  // to tell -j given from its default
  bool no_run = false, force = false, quiet = false, list_papers = false, rejudge = false;
};

CLI::App* add_run_command(CLI::App& app, RunArgs& a) {
  auto* run =
      app.add_subcommand("run",
                         "Run a scenario and write flows.csv, summary.json and scenario.resolved.toml (and "
                         "collectives.csv with collective, dependency_trace, chakra or simai jobs)");
  run->add_option("scenario", a.src.scenario,
                  "Scenario file (TOML), or a name under scenarios/ such as 'demo'");
  run->add_option("--topology-file", a.src.topology_file,
                  "Without a scenario: an ns-3 HPCC simulator topology file (needs --flow-file)");
  run->add_option("--flow-file", a.src.flow_file, "Without a scenario: an ns-3 HPCC simulator flow file");
  run->add_option("--scheme", a.src.scheme, "With --topology-file/--flow-file: the scheme (default dcqcn)")
      ->check(CLI::IsMember(scheme_names()));
  run->add_option("--profile", a.src.profile,
                  "Parameter profile, e.g. hpcc-sim (the ns-3 HPCC simulator's defaults)")
      ->check(CLI::IsMember(profile_names()));
  run->add_option("--hpcc-config", a.src.hpcc_config,
                  "Run an ns-3 HPCC simulator config.txt as it is; fct.txt/pfc.txt go where it says "
                  "(docs/coming-from-hpcc-sim.md)");
  run->add_option("--duration-ms", a.src.duration_ms,
                  "Simulated time limit (ms); with --topology-file default 4000 (run.py's 4.00 s)")
      ->check(CLI::PositiveNumber);
  run->add_option("--threads", a.src.threads,
                  "Threads of this run (0 = every core; left out: every core for a fabric of 1,000 ports "
                  "and nodes or more, else 1): the same results for any count (docs/parallel.md)")
      ->check(CLI::Range(0, 1024));
  run->add_option(
         "--partitions", a.src.partitions,
         "Partitions of the fabric (default 0: chosen from its size, four per thread with several): the "
         "same results for any count (docs/parallel.md)")
      ->check(CLI::Range(0, 65536));
  run->add_flag("--mpi", a.mpi,
                "Under mpirun (docs/cluster.md): split this run over the ranks (--threads each); rank 0 "
                "writes the same files as one process would");
  run->add_option("-o,--out", a.out_dir, "Result directory (written to a temporary name, then renamed)");
  run->add_option("--set", a.sets, "Override a scenario value, e.g. --set cc.scheme=none --set seed=7")
      ->type_name("KEY=VALUE");
  run->add_option("--fct-format", a.fct_format, "Also write fct.txt in the ns-3 HPCC simulator's layout")
      ->check(CLI::IsMember({"csv", "hpcc"}));
  run->add_flag("--force", a.force,
                "Replace a result directory that already holds results (and, with --hpcc-config, an fct.txt "
                "or pfc.txt that rocesim did not write)");
  run->add_flag("-q,--quiet", a.quiet, "No progress line and no table");
  run->add_option("--progress-every", a.progress_every_s,
                  "When stderr is not a terminal (a batch job's log): a line 'progress: ...' every this many "
                  "wall seconds with simulated time, work done, wall time, ETA and events/s (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SECONDS")
      ->capture_default_str();
  run->add_flag("--check", a.check,
                "Invariant mode: verify buffer, ingress, queue, PFC-state and per-flow byte counters at "
                "sampled times and stop at the first violation");
  run->add_option("--check-interval-us", a.check_interval_us,
                  "With --check: sampling period (simulated us; at least 10 ns per packet alive)")
      ->check(CLI::PositiveNumber);
  run->add_option("--watchdog-ms", a.watchdog_ms,
                  "Stop when no payload reaches any receiver for this long (simulated ms) while flows are "
                  "active; 0 = off")
      ->check(CLI::NonNegativeNumber);
  return run;
}

CLI::App* add_validate_command(CLI::App& app, ValidateArgs& a) {
  auto* validate = app.add_subcommand(
      "validate",
      "Check a scenario and every file a run would read (topology, CDFs, the whole flow file), estimate the "
      "run's work and wall time (with a short probe run), and print the values it resolves to");
  validate->add_option("scenario", a.src.scenario, "Scenario file (TOML)");
  validate->add_option("--hpcc-config", a.src.hpcc_config,
                       "An ns-3 HPCC simulator config.txt: print the equivalent rocesim scenario and its "
                       "values");
  validate->add_option("--profile", a.src.profile, "Parameter profile, e.g. hpcc-sim")
      ->check(CLI::IsMember(profile_names()));
  validate->add_option("--set", a.sets, "Override a scenario value")->type_name("KEY=VALUE");
  a.probe_option =
      validate
          ->add_option("--probe-s", a.probe_s,
                       "Run the scenario this many wall seconds to measure this machine's speed for the "
                       "wall-time estimate (0 = no probe; without this option, none for a network above "
                       "16384 nodes or 1 GB)")
          ->check(CLI::NonNegativeNumber)
          ->type_name("SECONDS")
          ->capture_default_str();
  return validate;
}

CLI::App* add_draw_command(CLI::App& app, DrawArgs& a) {
  auto* draw = app.add_subcommand(
      "draw",
      "Draw the network a scenario builds (tiers, servers, links coloured by rate; repeated pods, racks, "
      "servers and long rows of switches collapsed into boxes) as SVG, or export it as JSON");
  draw->add_option("scenario", a.scenario, "Scenario file (TOML), or a name under scenarios/");
  draw->add_option("--topology-file", a.topology_file,
                   "Without a scenario: an ns-3 HPCC simulator topology file (gpu / nvswitch lines too)");
  draw->add_option("--set", a.sets, "Override a scenario value, e.g. --set topology.servers=16")
      ->type_name("KEY=VALUE");
  draw->add_option("-o,--out", a.out,
                   "Output file: FILE.svg (the picture) or FILE.json (nodes, links, drawing)")
      ->required();
  draw->add_option("--title", a.title, "Title on top (default: the scenario's name and topology kind)");
  draw->add_option("--max-groups", a.opt.max_groups,
                   "A group (pod, rack, server) holding more groups than this shows its first and last and a "
                   "box for the others (0 = draw every group)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  draw->add_option(
          "--max-row", a.opt.max_row,
          "A row of more switches of one group than this shows its first N-2, a box and its last (0 = "
          "all; else at least 3)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  return draw;
}

CLI::App* add_list_command(CLI::App& app, std::string& what) {
  auto* list = app.add_subcommand("list", "List schemes, topologies, workloads or scenarios");
  list->add_option("what", what, "schemes | topologies | workloads | scenarios | profiles | all")
      ->check(CLI::IsMember({"schemes", "topologies", "workloads", "scenarios", "profiles", "all"}));
  return list;
}

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& a) {
  auto* sweep = app.add_subcommand("sweep",
                                   "Run the cartesian product of a grid of values, one run directory each, "
                                   "in parallel processes; write results.csv");
  sweep->add_option("scenario", a.scenario, "Scenario file (TOML), or a name under scenarios/")->required();
  sweep
      ->add_option("--grid", a.grid,
                   "KEY=V1,V2,...: scheme, load (every [[traffic]]), seed, or any dotted key")
      ->required()
      ->expected(1, -1);
  sweep->add_option("-o,--out", a.out_dir, "Sweep directory (default: runs/<scenario>-sweep)");
  sweep->add_option("-j,--jobs", a.jobs, "Runs at once")->check(CLI::Range(1, 1024));
  a.threads_option =
      sweep
          ->add_option(
              "--threads", a.threads,
              "Threads of each run (docs/parallel.md); -j x --threads is kept within the cores. Left "
              "out: the scenario's, else one per run with -j 2 or more, else the run's own choice")
          ->check(CLI::Range(1, 1024));
  sweep->add_flag("--mpi", a.mpi,
                  "Under mpirun (docs/cluster.md): rank 0 hands the runs, one at a time, to the other ranks, "
                  "each run a process on that rank's machine; -j is then the rank count less one");
  sweep
      ->add_option("--rank-timeout", a.rank_timeout_s,
                   "With --mpi: a rank not heard from for this many seconds is lost and its run failed; the "
                   "sweep goes on (start mpirun with --mca orte_enable_recovery 1 so that Open MPI does too)")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--set", a.sets, "Override a scenario value in every run")->type_name("KEY=VALUE");
  sweep->add_flag("--force", a.force, "Re-run complete runs too (otherwise they are skipped)");
  sweep->add_flag("-q,--quiet", a.quiet, "No per-run lines and no progress line");
  return sweep;
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs& a) {
  auto* compare = app.add_subcommand(
      "compare-fct",
      "Per flow-size bucket slowdown p50/p95/p99 of an ns-3 HPCC simulator fct.txt beside a rocesim result, "
      "with relative errors (docs/coming-from-hpcc-sim.md). REF and RESULT must hold the same flows (count, "
      "sizes, starts within 1 ns); otherwise exit 2 naming the first flow that differs. Several REF RESULT "
      "pairs (the same experiment on several inputs or seeds): the table compares the means of each "
      "bucket's quantiles over the pairs");
  compare
      ->add_option(
          "files", a.files,
          "REF RESULT [REF RESULT ...]: REF a reference fct.txt of the ns-3 HPCC simulator, RESULT a "
          "rocesim result directory (its flows.csv), a flows.csv, or another fct.txt")
      ->required()
      ->expected(2, -1)
      ->type_name("REF RESULT");
  compare->add_option("--buckets", a.edges, "Bucket upper edges in bytes (default 10000,100000,1000000)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  compare->add_option("--min-flows", a.min_flows, "Buckets with fewer flows are marked and not judged")
      ->check(CLI::Range(1, 1 << 30));
  compare
      ->add_option("--max-p50-error", a.max_p50,
                   "Exit 1 when a judged bucket's p50 differs by more than this many percent (0 = no check)")
      ->check(CLI::NonNegativeNumber);
  compare
      ->add_option("--max-p99-error", a.max_p99,
                   "Exit 1 when a judged bucket's p99 differs by more than this many percent (0 = no check)")
      ->check(CLI::NonNegativeNumber);
  return compare;
}

CLI::App* add_report_command(CLI::App& app, ReportArgs& a) {
  auto* report =
      app.add_subcommand("report", "Write DIR/report.html (figures and tables) for a run or a sweep");
  report->add_option("dir", a.dir, "A run directory or a sweep directory")->required();
  report->add_flag("-q,--quiet", a.quiet, "Print only the report's path");
  return report;
}

CLI::App* add_reproduce_command(CLI::App& app, ReproduceArgs& a) {
  auto* reproduce = app.add_subcommand(
      "reproduce",
      "Run a seed paper's experiments (reproduce/<paper>.toml) as sweeps, measure each of its claims, "
      "draw its figures; write OUT/report.html and regenerate docs/REPRODUCTION.md");
  reproduce->add_option("paper", a.papers, "Paper key(s): mercury, rcm, icc, tcd, lscc (see --list), or all")
      ->expected(0, -1);
  reproduce
      ->add_option("--scale", a.scale,
                   "quick: smaller fabrics or shorter runs (said in the report); full: "
                   "the papers' sizes")
      ->check(CLI::IsMember({"quick", "full"}));
  a.jobs_option = reproduce->add_option("-j,--jobs", a.jobs, "Runs at once")->check(CLI::Range(1, 1024));
  reproduce->add_option("-o,--out", a.out_dir, "Output directory (default runs/reproduce-SCALE)");
  reproduce->add_option("--docs", a.docs_dir,
                        "Where REPRODUCTION.md and reproduction/*.json go (default: the "
                        "repository's docs/)");
  reproduce->add_option("--set", a.sets, "Override a scenario value in every run")->type_name("KEY=VALUE");
  reproduce->add_option("--only", a.only, "test: only each paper's small test sweep")
      ->check(CLI::IsMember({"test"}));
  reproduce
      ->add_option("--seeds", a.seeds,
                   "Run every sweep over seeds 1..N; each claim is the mean with its 95 % confidence "
                   "interval (default: 5 at full scale, 1 at quick)")
      ->check(CLI::Range(1, 100));
  reproduce
      ->add_option("--claim", a.claims,
                   "Only this claim (e.g. M6) and the sweeps it reads; REPRODUCTION.md prints this command "
                   "beside each claim")
      ->type_name("ID");
  reproduce->add_flag("--sensitivity", a.sensitivity,
                      "Run the claims' sensitivity sweeps (reproduce/<paper>.toml [[sensitivity]]) instead");
  reproduce
      ->add_option("--mpi", a.mpi,
                   "Run each sweep over MPI ranks, started with this launcher (docs/cluster.md): e.g. "
                   "--mpi 'mpirun -np 64', or --mpi mpirun inside an sbatch allocation")
      ->type_name("LAUNCHER");
  reproduce->add_flag("--no-run", a.no_run,
                      "Evaluate the claims and draw the figures from existing results only");
  reproduce->add_flag("--rejudge", a.rejudge,
                      "Run nothing: judge the stored per-seed values (docs/reproduction/*.json) again under "
                      "the manifests' verdict rule and rewrite REPRODUCTION.md");
  reproduce->add_flag("--force", a.force,
                      "Re-run complete runs too (otherwise an interrupted reproduction resumes)");
  reproduce->add_flag("-q,--quiet", a.quiet, "Print only the report's path");
  reproduce->add_flag("--list", a.list_papers, "List the papers, their sweeps and claims");
  return reproduce;
}

int mpi_run_command(const RunArgs& a);

// The run's table (unless quiet) and warnings; true when it was interrupted (a partial result).
bool print_outcome(const Scenario& s, const RunResult& r, const RunArgs& a) {
  if (!a.quiet) print_table(s, r, a.out_dir);
  for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!r.partial) return false;
  fmt::print(stderr, "interrupted: partial result{} (marked \"partial\": true, and a PARTIAL file)\n",
             a.out_dir.empty() ? "" : " in " + a.out_dir);
  return true;
}

// Ctrl-C stops the run at its next progress check and keeps the finished flows as a partial result.
void install_stop_on_ctrl_c() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { request_stop(); };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

int run_command(const RunArgs& a) {
  if (a.mpi) return mpi_run_command(a);
  HpccConfig cfg;
  const Scenario s = load_source(a.src, a.sets, a.quiet, &cfg);
  RunOptions opt;
  opt.fct_txt_path = cfg.fct_output;  // --hpcc-config: where its config says
  opt.pfc_txt_path = cfg.pfc_output;
  opt.out_dir = a.out_dir;
  opt.fct_hpcc = a.fct_format == "hpcc";
  opt.progress = !a.quiet;
  opt.progress_every_s = a.progress_every_s;
  opt.force = a.force;
  if (!a.out_dir.empty()) check_output_dir(a.out_dir, a.force);  // before spending time on the run
  opt.checks.invariants = a.check;
  opt.checks.invariant_interval = Time::from_us(a.check_interval_us);
  opt.checks.watchdog = Time::from_ms(a.watchdog_ms);
  install_stop_on_ctrl_c();
  if (!cfg.path.empty()) {  // before spending time on the run; marked as rocesim's before writing them
    check_hpcc_outputs(cfg, a.force);
    mark_hpcc_outputs(cfg);
  }
  const RunResult r = run_scenario(s, opt);
  signal(SIGINT, SIG_DFL);
  if (print_outcome(s, r, a)) return 130;
  if (!a.quiet && !cfg.path.empty()) fmt::print("  {}: {}, {}\n", cfg.path, cfg.fct_output, cfg.pfc_output);
  if (r.stopped.kind != CheckFailure::Kind::kNone) {
    fmt::print(stderr, "error: run stopped ({}): {}\n", to_string(r.stopped.kind), r.stopped.message);
    return 3;
  }
  return 0;
}

// `rocesim run --mpi` under mpirun: every rank loads the scenario and runs its share; rank 0 alone checks
// and writes the result directory, prints the table, and reports input errors (the other ranks, reading
// the same input, stop with the same error silently).
int mpi_run_command(const RunArgs& a) {
  MpiSession session;
  const bool root = session.rank() == 0;
  std::unique_ptr<RankComm> comm = make_mpi_comm();
  try {
    if (!a.src.hpcc_config.empty())
      throw InputError("--mpi", 0,
                       "runs a scenario or a topology/flow file pair; --hpcc-config writes files where its "
                       "config says, run it in one process");
    const Scenario s = load_source(a.src, a.sets, a.quiet || !root, nullptr);
    RunOptions opt;
    opt.ranks = comm.get();
    opt.progress = root && !a.quiet;
    opt.progress_every_s = a.progress_every_s;
    opt.checks.invariants = a.check;
    // Deadlock detection and the watchdog read every node at once: not across ranks.
    opt.checks.deadlock = false;
    opt.checks.watchdog = Time::zero();
    // Rank 0 checks the result directory; every rank learns whether it may go on.
    int64_t ok = 1;
    std::string dir_error;
    if (root && !a.out_dir.empty()) {
      try {
        check_output_dir(a.out_dir, a.force);
      } catch (const std::exception& e) {
        dir_error = e.what();
        ok = 0;
      }
    }
    comm->all_min(&ok, 1);
    if (!ok) {
      if (root) throw std::runtime_error(dir_error);
      return 1;
    }
    if (root) {
      opt.out_dir = a.out_dir;
      opt.fct_hpcc = a.fct_format == "hpcc";
      opt.force = a.force;
    }
    install_stop_on_ctrl_c();
    const RunResult r = run_scenario(s, opt);
    signal(SIGINT, SIG_DFL);
    if (!root) return r.partial ? 130 : 0;
    return print_outcome(s, r, a) ? 130 : 0;
  } catch (const InputError& e) {
    if (root) fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: rank {}: {}\n", session.rank(), e.what());
    return 1;
  }
}

int compare_command(const CompareArgs& a) {
  SizeBuckets buckets;
  try {
    buckets = SizeBuckets::from_edges(std::vector<Bytes>(a.edges.begin(), a.edges.end()));
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", 0, std::string("--buckets: ") + e.what());
  }
  if (a.files.size() % 2 != 0)
    throw InputError("command line", 0,
                     fmt::format("compare-fct takes REF RESULT pairs, got {} files (the last, '{}', has no "
                                 "partner)",
                                 a.files.size(), a.files.back()));
  std::vector<std::vector<SlowdownRow>> per_pair;
  for (size_t k = 0; k < a.files.size(); k += 2) {
    const FlowSlowdowns ref = read_hpcc_fct(a.files[k]);
    const FlowSlowdowns res = read_result_slowdowns(a.files[k + 1]);
    // Tails of different flows compare nothing: the same flows, or no table.
    if (const std::string diff = flows_differ(ref, res); !diff.empty())
      throw InputError(res.source, 0,
                       fmt::format("not the flows of {} (compare-fct compares the same flows: as many, each "
                                   "with the same size and a start within 1 ns): {}. A run that ended before "
                                   "every flow finished lists only the finished ones in flows.csv (its "
                                   "summary.json counts the others)",
                                   ref.source, diff));
    per_pair.push_back(compare_slowdowns(ref, res, buckets));
    fmt::print("slowdown (fct / standalone fct, clipped at 1): ref {} ({} flows) vs result {} ({} flows{})\n",
               ref.source, ref.flows.size(), res.source, res.flows.size(),
               res.unfinished ? fmt::format(", {} unfinished left out", res.unfinished) : "");
    const std::string worst = format_worst_errors(per_pair.back(), a.min_flows);
    if (a.files.size() > 2 && !worst.empty()) fmt::print("  {}", worst);
  }
  if (per_pair.size() > 1)
    fmt::print("mean over the {} pairs of each bucket's quantiles (n: the fewest flows of any pair):\n",
               per_pair.size());
  const auto rows = mean_slowdown_rows(per_pair);
  fmt::print("{}", format_slowdown_table(rows, a.min_flows));
  const WorstErrors w = worst_errors(rows, a.min_flows);
  bool fail = false;
  if (a.max_p50 > 0 && 100 * std::abs(w.p50) > a.max_p50) {
    fmt::print(stderr, "error: p50 of bucket {} differs by {:+.1f}% (limit {}%)\n", w.p50_bucket, 100 * w.p50,
               a.max_p50);
    fail = true;
  }
  if (a.max_p99 > 0 && 100 * std::abs(w.p99) > a.max_p99) {
    fmt::print(stderr, "error: p99 of bucket {} differs by {:+.1f}% (limit {}%)\n", w.p99_bucket, 100 * w.p99,
               a.max_p99);
    fail = true;
  }
  return fail ? 1 : 0;
}

// A count for humans: "412", "28.8 M", "1.25 G".
std::string human_count(double x) {
  if (x < 1e6) return fmt::format("{:.0f}", x);
  if (x < 1e9) return fmt::format("{:.1f} M", x / 1e6);
  return fmt::format("{:.2f} G", x / 1e9);
}

std::string human_bytes(double b) {
  return b >= 1e9   ? fmt::format("{:.1f} GB", b / 1e9)
         : b >= 1e6 ? fmt::format("{:.1f} MB", b / 1e6)
                    : fmt::format("{:.0f} KB", b / 1e3);
}

// Networks `validate` probes without being asked: set up in a few seconds (k = 32, 9,472 nodes: about
// 2 s; k = 64, 70,656 nodes: 18 s, on the project's machine).
constexpr int kProbeMaxNodes = 16384;
constexpr int64_t kProbeMaxBytes = int64_t{1} << 30;
// Packets in flight (the memory estimate's) above which a probe that saw less than half the arrivals gives a
// lower bound on the wall time: beyond the caches of the machines measured (docs/performance.md).
constexpr int64_t kProbeEarlyPacketBytes = int64_t{64} << 20;

// validate's estimate of the run's work and wall time (docs/user-guide.md, "How long a run will take"), as
// comment lines that keep the output a valid scenario.
void print_estimate(const Scenario& s, const ValidateArgs& a, int64_t need) {
  const WorkEstimate w = estimate_work(s);
  std::cout << fmt::format(
      "# work: {} flows, {} of payload, {} data packets on paths of {:.2f} links{}{}\n",
      human_count(static_cast<double>(w.flows)), human_bytes(static_cast<double>(w.bytes)),
      human_count(w.data_packets), w.mean_hops,
      w.extrapolated
          ? fmt::format(" (flows drawn up to {:.3f} ms, the rest extrapolated)", w.scanned_until.ms())
          : "",
      w.jobs ? " (the jobs' every iteration)" : "");
  const MemoryEstimate m = estimate_peak_memory(s, w);
  std::cout << fmt::format(
      "# memory: about {} at the peak: {} before the first event, {} for {} partition{} (calendars, "
      "pools), about {} packets in flight at the busiest moment ({}), {} flows under way ({})\n",
      human_bytes(static_cast<double>(m.peak_bytes)), human_bytes(static_cast<double>(m.setup_bytes)),
      human_bytes(static_cast<double>(m.partition_bytes)), m.partitions, m.partitions == 1 ? "" : "s",
      human_count(m.packets_in_flight), human_bytes(static_cast<double>(m.packet_bytes)),
      human_count(m.flows_at_once), human_bytes(static_cast<double>(m.flow_bytes)));
  // The probe: by default only for networks that set up within seconds.
  const bool big = need > kProbeMaxBytes || s.topo.num_nodes > kProbeMaxNodes;
  const bool probe = a.probe_s > 0 && (!big || a.probe_option->count() > 0);
  ProbeResult p;
  if (probe) p = probe_scenario(s, a.probe_s, big);
  const double per_hop = probe && p.packet_hops > 0
                             ? static_cast<double>(p.events) / static_cast<double>(p.packet_hops)
                             : kTypicalEventsPerHop;
  std::cout << fmt::format(
      "# estimate: about {} packet-hops (data and ACKs) and {} events ({:.2f} per "
      "packet-hop, {})\n",
      human_count(w.packet_hops), human_count(w.packet_hops * per_hop), per_hop,
      probe ? "as the probe ran" : "typical");
  if (!probe) {
    std::cout << (a.probe_s > 0
                      ? fmt::format("# wall time: not estimated (no probe by default of a network above "
                                    "{} nodes or 1 GB, whose set-up takes a while; --probe-s {} runs one)\n",
                                    kProbeMaxNodes, a.probe_s)
                      : std::string("# wall time: not estimated (--probe-s 0)\n"));
    return;
  }
  const std::string threads = p.threads == 1 ? "1 thread" : fmt::format("{} threads", p.threads);
  if (p.finished) {
    std::cout << fmt::format(
        "# probe: the whole run took {} here ({}; set up in {}): {} packet-hops, {} events, "
        "{:.3f} ms simulated\n",
        format_duration(p.wall_s), threads, format_duration(p.setup_s),
        human_count(static_cast<double>(p.packet_hops)), human_count(static_cast<double>(p.events)),
        p.sim.ms());
    return;
  }
  std::cout << fmt::format(
      "# probe: {} of this run here ({}; set up in {}) reached {:.3f} ms simulated; {} "
      "packet-hops/s, {} events/s over its second half\n",
      format_duration(p.wall_s), threads, format_duration(p.setup_s), p.sim.ms(), human_count(p.hops_per_s),
      human_count(p.events_per_s));
  const double run_s = p.hops_per_s > 0 ? w.packet_hops / p.hops_per_s : -1;
  // A probe that saw the start of a large fabric's arrivals only timed its hops while the fabric was nearly
  // empty: once the packets in flight outgrow the caches, each hop waits on memory (k = 64: the run took
  // 2.4x the probe's estimate, docs/performance.md "k = 64 on a quiet machine"). Said, not corrected.
  const bool early = p.sim.ps * 2 < w.last_start.ps && m.packet_bytes > kProbeEarlyPacketBytes;
  std::cout << fmt::format(
      "# wall time: {}about {} to run, plus {} to set up{}\n", early ? "at least " : "",
      format_duration(run_s), format_duration(p.setup_s),
      early ? fmt::format(" (the probe saw the first {:.3f} ms of {:.3f} ms of arrivals; with about {} of "
                          "packets in flight a hop gets slower as the fabric fills: a k = 64 fat-tree ran "
                          "2.4x longer than its probe foretold; docs/performance.md)",
                          p.sim.ms(), w.last_start.ms(), human_bytes(static_cast<double>(m.packet_bytes)))
            : "");
}

int validate_command(const ValidateArgs& a) {
  HpccConfig cfg;
  const Scenario s = load_source(a.src, a.sets, false, &cfg);
  // Everything a run reads: the flow file too, every line (the topology file and the CDFs were read
  // with the scenario).
  const ListedFlows listed = scan_listed_flows(s);
  if (s.traffic.empty() && listed.flows == 0)
    throw InputError(s.flow_file.empty() ? s.file : s.flow_file, 0, "no flows: a run would start none");
  if (s.traffic.empty() && listed.after_end == listed.flows)
    throw InputError(s.file, 0, no_flow_before_end_message(s, listed.first_start, listed.last_start));
  if (listed.after_end > 0)
    fmt::print(stderr, "warning: {}\n",
               flows_after_end_message(s, listed.after_end, listed.flows, listed.last_start));
  for (const std::string& w : s.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!cfg.path.empty()) std::cout << cfg.scenario_toml << "\n# The values it resolves to:\n";
  const int64_t need = check_run_memory(s);  // as `run` refuses a network that cannot fit
  std::cout << "# " << s.file << ": valid (" << s.topo.num_hosts() << " hosts, "
            << s.topo.num_nodes - s.topo.num_hosts() << " switches, scheme " << s.scheme << ", about "
            << human_bytes(static_cast<double>(need)) << " of memory before the first event)\n";
  for (const std::string& line : describe_tiers(summarize_tiers(s.topo))) std::cout << "# " << line << "\n";
  print_estimate(s, a, need);
  std::cout << s.resolved << "\n";
  if (!s.resolved_notes.empty())
    std::cout << "\n# Values left out and decided by rule:\n" << s.resolved_notes;
  return 0;
}

int draw_command(const DrawArgs& a) {
  if (a.scenario.empty() == a.topology_file.empty())
    throw InputError("command line", 0, "give one of: a scenario file, or --topology-file");
  if (!a.topology_file.empty() && !a.sets.empty())
    throw InputError("command line", 0, "--set goes with a scenario file, not with --topology-file");
  const std::string ext = fs::path(a.out).extension().string();
  if (ext != ".svg" && ext != ".json")
    throw InputError(
        "command line", 0,
        fmt::format("-o {}: the file must end in .svg (a picture) or .json (the export)", a.out));
  if (a.opt.max_row != 0 && a.opt.max_row < 3)
    throw InputError("command line", 0, "--max-row must be 0 (no collapsing) or at least 3");
  TopoSpec topo;
  std::string source, title = a.title;
  if (!a.topology_file.empty()) {
    topo = read_hpcc_topology(a.topology_file);
    source = a.topology_file;
    if (title.empty()) title = fs::path(a.topology_file).filename().string();
  } else {
    const Scenario s = load_scenario(find_scenario(a.scenario), a.sets);
    topo = s.topo;
    source = s.file;
    if (title.empty()) title = fmt::format("{} ({})", s.name, s.topo.name);
  }
  Drawing d;
  try {
    d = draw_topology(topo, a.opt);
  } catch (const std::invalid_argument& e) {
    throw InputError(source, 0, e.what());
  }
  write_atomically(a.out, ext == ".svg" ? drawing_svg(topo, d, title) : drawing_json(topo, d, title));
  int shown = 0;
  for (const Drawing::Item& it : d.items) shown += it.node >= 0;
  fmt::print("{}: {} nodes and {} links, {} of the nodes drawn{}\n", a.out, topo.num_nodes, topo.links.size(),
             shown, d.collapsed ? " (the others in boxes)" : "");
  return 0;
}

int sweep_command(const SweepArgs& a) {
  SweepOptions opt;
  opt.scenario = find_scenario(a.scenario);
  opt.out_dir = a.out_dir.empty() ? "runs/" + fs::path(opt.scenario).stem().string() + "-sweep" : a.out_dir;
  opt.grid = parse_grid(a.grid);
  opt.sets = a.sets;
  opt.jobs = a.jobs;
  if (a.threads > 1) {
    opt.sets.push_back(fmt::format("threads={}", a.threads));
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (a.jobs * a.threads > cores) {
      opt.jobs = std::max(1, cores / a.threads);
      fmt::print(
          stderr,
          "note: -j {} x --threads {} is more than this machine's {} cores: running {} at once (results "
          "do not depend on it)\n",
          a.jobs, a.threads, cores, opt.jobs);
    }
  }
  opt.one_thread_runs = a.threads == 1 && a.threads_option->count() > 0;  // --threads 1, said
  opt.force = a.force;
  opt.quiet = a.quiet;
  opt.mpi = a.mpi;
  opt.rank_timeout_s = a.rank_timeout_s;
  return run_sweep(opt);
}

// `rocesim reproduce` is tools/reproduce.py, given this binary and the options.
int reproduce_command(const ReproduceArgs& a) {
  if (a.papers.empty() && !a.list_papers)
    throw InputError("reproduce", 0, "name a paper (or all); see --list");
  std::error_code ec;
  std::vector<std::string> args{"--rocesim", fs::canonical("/proc/self/exe", ec).string(),
                                "--scale",   a.scale,
                                "-j",        std::to_string(a.jobs)};
  if (a.jobs_option->count() == 0)
    args.back() = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  if (!a.out_dir.empty()) args.insert(args.end(), {"-o", a.out_dir});
  if (!a.docs_dir.empty()) args.insert(args.end(), {"--docs", a.docs_dir});
  if (!a.only.empty()) args.insert(args.end(), {"--only", a.only});
  if (!a.mpi.empty()) args.insert(args.end(), {"--mpi", a.mpi});
  if (a.seeds > 0) args.insert(args.end(), {"--seeds", std::to_string(a.seeds)});
  for (const auto& c : a.claims) args.insert(args.end(), {"--claim", c});
  if (a.sensitivity) args.push_back("--sensitivity");
  for (const auto& s : a.sets) args.insert(args.end(), {"--set", s});
  if (a.no_run) args.push_back("--no-run");
  if (a.rejudge) args.push_back("--rejudge");
  if (a.force) args.push_back("--force");
  if (a.quiet) args.push_back("-q");
  if (a.list_papers) args.push_back("--list");
  args.insert(args.end(), a.papers.begin(), a.papers.end());
  return run_python_tool("reproduce.py", args);
}

int list_command(const std::string& what) {
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
    for (const auto& w : list_workloads(data_dir_or_env(ROCESIM_DATA_DIR)))
      fmt::print("  {:<28} {:>14.0f} {:>9.1f}% {:>9.1f}%\n", w.name, w.mean_bytes, 100 * w.share_below_10kb,
                 100 * w.share_above_1mb);
  }
  if (what == "profiles" || what == "all") {
    fmt::print("profiles (profile = NAME, or --profile NAME):\n");
    for (const auto& p : profile_registry()) fmt::print("  {:<12} {}\n", p.name, p.summary);
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

}  // namespace

int main(int argc, char** argv) {
  rocesim::use_huge_pages();
  CLI::App app{"rocesim: a fast packet-level simulator of lossless RDMA (RoCEv2 + PFC) datacenter networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rocesim ") + ROCESIM_VERSION);
  // The subcommands in the order --help lists them.
  RunArgs run_args;
  ValidateArgs validate_args;
  DrawArgs draw_args;
  std::string list_what = "all";
  SweepArgs sweep_args;
  CompareArgs compare_args;
  ReportArgs report_args;
  ReproduceArgs reproduce_args;
  const CLI::App* run = add_run_command(app, run_args);
  const CLI::App* validate = add_validate_command(app, validate_args);
  const CLI::App* draw = add_draw_command(app, draw_args);
  const CLI::App* list = add_list_command(app, list_what);
  const CLI::App* sweep = add_sweep_command(app, sweep_args);
  const CLI::App* compare = add_compare_command(app, compare_args);
  const CLI::App* report = add_report_command(app, report_args);
  const CLI::App* reproduce = add_reproduce_command(app, reproduce_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version exit 0; any other command-line error is bad input: exit 2, as for a bad file.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (run->parsed()) return run_command(run_args);
    if (compare->parsed()) return compare_command(compare_args);
    if (validate->parsed()) return validate_command(validate_args);
    if (draw->parsed()) return draw_command(draw_args);
    if (sweep->parsed()) return sweep_command(sweep_args);
    if (report->parsed()) return make_report(report_args.dir, report_args.quiet);
    if (reproduce->parsed()) return reproduce_command(reproduce_args);
    if (list->parsed()) return list_command(list_what);
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
