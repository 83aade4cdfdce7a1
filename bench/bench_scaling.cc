// Speed and memory against fabric size: k-ary fat-trees (k = 8, 16, 24, 32: 128 to 8,192 hosts) and the ns-3
// HPCC simulator's 320-host fat-tree, DCQCN, WebSearch at 30 % load, each run to completion as its own
// `rocesim run` process, so that its peak resident memory (getrusage of the child) is its own.
// Prints hosts, flows, packet-hops, wall and CPU seconds, M packet-hops per wall and per CPU second (the
// latter holds on a shared machine) and peak memory, and
// writes them as CSV (bench/plot_scaling.py draws docs/figures/scaling.png from it).
//
// With --threads 1,2,0 each case also runs on 2 threads and on every core (0), and the table adds the
// speed-up over one thread, the share of thread time spent waiting at window barriers and the partitions'
// balance (largest partition's events over the mean), and the speed-up the run's windows would allow on 16
// threads from its partitions' times (summary.json's speedup_the_windows_allow, "-" for one partition):
// docs/parallel.md.
//
// With --rounds N the whole list runs N times, round after round, and a summary follows: per case the median
// speed, and its speed against the first case's taken within each round (so that a machine whose speed drifts
// over minutes moves both runs of a ratio together), median and range.
//
// With --partitions N every run takes N partitions (at least its threads): one thread with N = 64 tells a
// 2-core machine what a 64-partition cut allows on 16 threads.
//
// Usage: bench_scaling --help. An older build given as --rocesim gives the "before" figures.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  std::string topology;  // the [topology] table's body
  int hosts = 0;
  double arrivals_us = 500;
};

struct Measured {
  uint64_t flows = 0, hops = 0, events = 0;
  double wall_s = 0, cpu_s = 0;
  long peak_kib = 0;
  bool ok = false;
  int threads = 1, partitions = 1;
  double wait_fraction = 0, balance = 1;  // barrier wait share; largest partition's events / mean
  double allow16 = NAN;  // the speed-up 16 threads' windows allow, from this run's partitions (NAN: none)
};

Case fat_tree_case(int k, double arrivals_us) {
  return {fmt::format("k{}", k), fmt::format("kind = \"fat_tree\"\nk = {}\n", k), k * k * k / 4, arrivals_us};
}

Measured run(const std::string& rocesim, const Case& c, const fs::path& scratch, int threads,
             int partitions) {
  const fs::path scenario = scratch / (c.name + ".toml");
  const fs::path out = scratch / (c.name + "_out");
  std::ofstream(scenario) << fmt::format(
      "name = \"scaling-{}\"\nseed = 1\nduration_ms = 1000\n[topology]\n{}[cc]\nscheme = \"dcqcn\"\n"
      "[[traffic]]\nworkload = \"websearch\"\nload = 0.3\nstop_us = {}\n",
      c.name, c.topology, c.arrivals_us);
  Measured m;
  const auto t0 = std::chrono::steady_clock::now();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
    const std::string t = std::to_string(threads), p = std::to_string(partitions);
    execl(rocesim.c_str(), rocesim.c_str(), "run", scenario.c_str(), "-o", out.c_str(), "--force",
          "--threads", t.c_str(), "--partitions", p.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) return m;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu_s = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec / 1e6 +
            static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec / 1e6;
  m.peak_kib = ru.ru_maxrss;
  std::ifstream in(out / "summary.json");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !in) return m;
  const nlohmann::json j = nlohmann::json::parse(in);
  m.flows = j["flows"]["finished"].get<uint64_t>();
  m.hops = j["performance"]["packet_hops"].get<uint64_t>();
  m.events = j["performance"]["events"].get<uint64_t>();
  m.ok = j["complete"].get<bool>();
  if (const auto& p = j["performance"]; p.contains("parallel")) {  // builds before the parallel loop lack it
    m.threads = p["parallel"]["threads"].get<int>();
    m.partitions = p["parallel"]["partitions"].get<int>();
    m.wait_fraction = p["parallel"]["barrier_wait_fraction"].get<double>();
    double most = 0, sum = 0;
    for (const auto& e : p["parallel"]["events_per_partition"]) {
      most = std::max(most, e.get<double>());
      sum += e.get<double>();
    }
    if (sum > 0) m.balance = most / (sum / m.partitions);
    if (const auto& a = p["parallel"].value("speedup_the_windows_allow", nlohmann::json()); a.contains("16"))
      m.allow16 = a["16"].get<double>();
  }
  fs::remove_all(out);
  return m;
}

// Median of the finite values, NAN when there are none.
double median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "median (min-max)" of the finite values; "-" when there are none.
std::string spread(const std::vector<double>& v) {
  double lo = INFINITY, hi = -INFINITY;
  for (double x : v)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  if (!std::isfinite(lo)) return "-";
  return fmt::format("{:.2f} ({:.2f}-{:.2f})", median(v), lo, hi);
}

}  // namespace

int main(int argc, char** argv) {
  std::string rocesim = (fs::path(argv[0]).parent_path() / "rocesim").string();
  std::vector<std::string> cases = {"k8", "k16", "k24", "k32", "fat320"};
  std::string csv = "scaling.csv";
  double arrivals_us = 500;
  std::vector<int> thread_counts = {1};
  int rounds = 1;
  int partitions = 0;
  CLI::App app{"bench_scaling: speed and peak memory of rocesim against fabric size"};
  app.add_option("--rocesim", rocesim, "the binary to measure (default: the rocesim beside this benchmark)");
  app.add_option("--cases", cases,
                 "k-ary fat-trees kN (N even, 2 to 64) and fat320, the ns-3 simulator's 320-host fat-tree")
      ->delimiter(',')
      ->check([](const std::string& n) -> std::string {
        if (n == "fat320") return "";
        int k = 0;
        const auto [end, ec] =
            std::from_chars(n.data() + std::min<size_t>(1, n.size()), n.data() + n.size(), k);
        if (n.size() > 1 && n[0] == 'k' && ec == std::errc() && end == n.data() + n.size() && k >= 2 &&
            k <= 64 && k % 2 == 0)
          return "";
        return "expected kN (N even, 2 to 64) or fat320, e.g. --cases k8,k16,fat320";
      })
      ->capture_default_str();
  app.add_option("--arrivals-us", arrivals_us, "flow arrivals of the kN cases; fat320 uses 5,000")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--csv", csv, "where the table goes as CSV")->capture_default_str();
  app.add_option("--threads", thread_counts,
                 "thread counts per case, e.g. 1,2,0 (0: every core); counts above the cores are skipped")
      ->delimiter(',')
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option(
         "--rounds", rounds,
         "runs of the whole case list, round after round; with more than one, a summary of each case's "
         "median speed and of its speed against the first case within each round")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option(
         "--partitions", partitions,
         "partitions of every run (0: as the run chooses); e.g. one thread with --partitions 64 gives "
         "the 16-thread ceiling of a 64-partition cut on a small machine (the 16 allow column)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  std::vector<Case> run_list;
  for (const std::string& n : cases) {
    if (n == "fat320")
      run_list.push_back({"fat320", "kind = \"fat_tree_3tier\"\n", 320, 5000});
    else
      run_list.push_back(fat_tree_case(std::stoi(n.substr(1)), arrivals_us));
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const fs::path scratch = fs::temp_directory_path() / fmt::format("rocesim_scaling_{}", ::getpid());
  fs::create_directories(scratch);
  std::ofstream out(csv);
  out << "case,hosts,arrivals_us,flows,events,packet_hops,wall_s,cpu_s,mhops_per_s,mhops_per_cpu_s,peak_"
         "mib,threads,partitions,speedup,barrier_wait_fraction,partition_balance,round,windows_allow_16\n";
  fmt::print("bench_scaling: {} (DCQCN, WebSearch 30 %, run to completion, one process per case)\n", rocesim);
  fmt::print("{:>7} {:>6} {:>7} {:>12} {:>8} {:>8} {:>10} {:>14} {:>10} {:>7} {:>8} {:>6} {:>8} {:>9}\n",
             "case", "hosts", "flows", "packet-hops", "wall s", "cpu s", "M hops/s", "M hops/cpu s",
             "peak MiB", "threads", "speed-up", "wait", "balance", "16 allow");
  // Per case and thread count, one entry per round (NAN where the run failed).
  const size_t nc = run_list.size(), nt = thread_counts.size();
  std::vector<std::vector<double>> wall_rate(nc * nt), cpu_rate_of(nc * nt);
  for (int round = 1; round <= rounds; ++round) {
    if (rounds > 1) fmt::print("round {} of {}\n", round, rounds);
    for (size_t ci = 0; ci < nc; ++ci) {
      const Case& c = run_list[ci];
      double one_thread_wall = 0;
      for (size_t ti = 0; ti < nt; ++ti) {
        if (thread_counts[ti] > cores) {  // a thread table meant for a larger machine: say, and go on
          if (round == 1 && ci == 0)
            fmt::print("{:>7}: {} threads skipped, more than this machine's {} cores\n", "",
                       thread_counts[ti], cores);
          wall_rate[ci * nt + ti].push_back(NAN);
          cpu_rate_of[ci * nt + ti].push_back(NAN);
          continue;
        }
        const Measured m = run(rocesim, c, scratch, thread_counts[ti], partitions);
        if (!m.ok) {
          fmt::print("{:>7}: the run failed or did not finish\n", c.name);
          wall_rate[ci * nt + ti].push_back(NAN);
          cpu_rate_of[ci * nt + ti].push_back(NAN);
          continue;
        }
        if (m.threads == 1 && one_thread_wall == 0) one_thread_wall = m.wall_s;
        const double speedup = one_thread_wall > 0 ? one_thread_wall / m.wall_s : 0;
        const double rate = m.hops / m.wall_s / 1e6;
        const double cpu_rate = m.hops / m.cpu_s / 1e6;  // unlike wall time, not inflated by other processes
        wall_rate[ci * nt + ti].push_back(rate);
        cpu_rate_of[ci * nt + ti].push_back(cpu_rate);
        fmt::print(
            "{:>7} {:>6} {:>7} {:>12} {:>8.2f} {:>8.2f} {:>10.2f} {:>14.2f} {:>10.1f} {:>7} {:>8.2f} "
            "{:>5.1f}% {:>8.2f} {:>9}\n",
            c.name, c.hosts, m.flows, m.hops, m.wall_s, m.cpu_s, rate, cpu_rate, m.peak_kib / 1024.0,
            m.threads, speedup, 100 * m.wait_fraction, m.balance,
            std::isfinite(m.allow16) ? fmt::format("{:.2f}x", m.allow16) : std::string("-"));
        out << fmt::format(
            "{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.1f},{},{},{:.3f},{:.4f},{:.3f},{},{:.3f}\n",
            c.name, c.hosts, c.arrivals_us, m.flows, m.events, m.hops, m.wall_s, m.cpu_s, rate, cpu_rate,
            m.peak_kib / 1024.0, m.threads, m.partitions, speedup, m.wait_fraction, m.balance, round,
            m.allow16);
      }
    }
  }
  if (rounds > 1) {
    // A case against the first one, round by round: both ran minutes apart at most, on the same machine
    // state.
    fmt::print(
        "\nover {} rounds, median (min-max); against {}: each round's M hops/s over {}'s in that round\n",
        rounds, run_list[0].name, run_list[0].name);
    fmt::print("{:>7} {:>7} {:>22} {:>22} {:>22}\n", "case", "threads", "M hops/s", "M hops/cpu s",
               "against " + run_list[0].name);
    for (size_t ci = 0; ci < nc; ++ci)
      for (size_t ti = 0; ti < nt; ++ti) {
        const std::vector<double>& r = wall_rate[ci * nt + ti];
        const std::vector<double>& first = wall_rate[ti];
        std::vector<double> against(r.size());
        for (size_t i = 0; i < r.size(); ++i) against[i] = r[i] / first[i];
        fmt::print("{:>7} {:>7} {:>22} {:>22} {:>22}\n", run_list[ci].name, thread_counts[ti], spread(r),
                   spread(cpu_rate_of[ci * nt + ti]), spread(against));
      }
  }
  fs::remove_all(scratch);
  fmt::print("written: {}\n", csv);
  return 0;
}
