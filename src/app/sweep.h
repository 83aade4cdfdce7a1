// `rocesim sweep`: the cartesian product of a grid of scenario values, each point run as a separate
// `rocesim run` process (at most `jobs` at once) in its own directory under the sweep directory, then
// one tidy results.csv (one row per run x flow-size bucket, plus an "all" row per run).
//
// Grid keys: `scheme` sets cc.scheme, `load` sets the load of every [[traffic]] table, `seed` sets seed;
// any other key is a dotted scenario key as for --set. A run directory holding summary.json is complete
// and is skipped, so an interrupted sweep resumes where it stopped.
#pragma once
#include <toml++/toml.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rocesim {

struct GridAxis {
  std::string key;                  // as written: "scheme", "load", "switch.buffer_bytes"
  std::vector<std::string> values;  // in the order given
};

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> values;  // (grid key, value), in axis order
  std::string name;                                         // "scheme=dcqcn,load=0.5,seed=1"
  std::vector<std::string> sets;                            // the --set overrides of this point
};

struct SweepOptions {
  std::string scenario;           // scenario file
  std::filesystem::path out_dir;  // the sweep directory
  std::vector<GridAxis> grid;
  std::vector<std::string> sets;          // --set overrides common to every run
  int jobs = 1;                           // runs at once
  bool force = false;                     // re-run complete runs too
  bool quiet = false;                     // no per-run lines, no progress line
  std::string binary = "/proc/self/exe";  // the rocesim executable the runs use
  bool mpi = false;            // under mpirun: rank 0 hands the runs to the others (app/mpi_sweep.h)
  double rank_timeout_s = 30;  // --mpi: a rank silent this long is lost, and its run failed
  // Runs get `--threads 1` (what --set values and grid values say still wins): asked for by `--threads 1`,
  // or set by the sweep for a scenario that leaves its threads out when it runs several at once or over
  // ranks, which already use the cores (docs/parallel.md, "Threads by default").
  bool one_thread_runs = false;
};

// Parses "key=v1,v2,..." arguments. Throws InputError on a malformed or repeated key or an empty value.
std::vector<GridAxis> parse_grid(const std::vector<std::string>& args);

// The --set overrides of one grid value. `load_tables`: the indexes of the [[traffic]] tables that have a
// load (an incast or a burst has none), which `load` sets.
std::vector<std::string> grid_overrides(const std::string& key, const std::string& value,
                                        const std::vector<size_t>& load_tables);

// The indexes of the [[traffic]] tables of a loaded scenario whose pattern takes a load.
std::vector<size_t> tables_with_load(const toml::table& resolved);

// A file-name-safe form of a run's name: characters other than [A-Za-z0-9._+=,-] become '_'.
std::string safe_dir_name(const std::string& name);

// Every point of the grid (the first axis varies slowest). Throws InputError when two points would share
// a directory name.
std::vector<SweepPoint> expand_grid(const std::vector<GridAxis>& grid,
                                    const std::vector<size_t>& load_tables);

// Writes `out_dir`/results.csv from the summary.json of every complete run among `points`. Returns the
// number of runs included.
size_t write_results_csv(const std::filesystem::path& out_dir, const std::vector<GridAxis>& grid,
                         const std::vector<SweepPoint>& points);

// Runs the sweep; returns the process exit status (0: every run complete; 1: some run failed;
// 130: interrupted). Throws InputError for bad input (grid, scenario, sweep directory).
int run_sweep(const SweepOptions& opt);
// run_sweep's work on this process; `ranks` > 1: the runs go to MPI ranks 1..ranks-1.
int run_sweep_here(const SweepOptions& opt, int ranks);

// `rocesim report DIR`: runs tools/report.py on a run directory or a sweep directory (it writes
// DIR/report.html and DIR/figures/*.png and prints the page's path). Returns its exit status. The Python is
// $ROCESIM_PYTHON, else /usr/bin/python3 (Debian's, which has matplotlib), else python3 on PATH.
int make_report(const std::filesystem::path& dir, bool quiet);

// Runs tools/<tool> (a Python script) with `args` using the same Python; returns its exit status. SIGINT
// reaches the child too (same process group), so an interrupted tool returns its own status (130).
int run_python_tool(const std::string& tool, const std::vector<std::string>& args);

}  // namespace rocesim
