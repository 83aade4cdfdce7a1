#include "app/sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "app/mpi_sweep.h"
#include "app/progress.h"
#include "config/scenario.h"
#include "core/error.h"
#include "core/text.h"

extern char** environ;

namespace fs = std::filesystem;

namespace rocesim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// 64-bit FNV-1a, a stable fingerprint of the scenario text (std::hash may differ between builds).
std::string fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

// The last `n` lines of a file (a failed run's stderr).
std::string tail_lines(const fs::path& p, size_t n) {
  std::string text = read_text(p).value_or("");
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t at = text.size();
  for (size_t lines = 0; at > 0 && lines < n;) {
    --at;
    if (text[at] == '\n') ++lines;
  }
  if (at > 0) ++at;
  return text.substr(at);
}

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int sig) { g_interrupted = sig; }

// Installs SIGINT/SIGTERM handlers for the lifetime of the object (the previous ones are restored).
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// An exclusive lock on the sweep directory, so two sweeps never write the same runs.
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) {
    const std::string p = (dir / ".sweep.lock").string();
    fd_ = open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot create {}: {}", p, std::strerror(errno)));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      close(fd_);
      throw InputError(dir.string(), 0, "another rocesim sweep is writing this directory");
    }
  }
  ~DirLock() { close(fd_); }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

struct Child {
  size_t point = 0;
  pid_t pid = -1;
  Clock::time_point start;
  fs::path log;
  int progress_fd = -1;  // read end of the run's progress pipe (app/progress.h, kProgressFdEnv)
  std::string pending;   // an incomplete progress line
  double fraction = 0;   // of the simulated duration, from the last progress line

  double elapsed() const { return seconds_since(start); }
  // Reads the progress lines the run wrote since the last call.
  void poll_progress() {
    if (progress_fd < 0) return;
    char buf[512];
    ssize_t n;
    while ((n = read(progress_fd, buf, sizeof buf)) > 0) pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      double f = 0;
      if (std::sscanf(pending.c_str(), "%lf", &f) == 1 && f >= 0 && f <= 1) fraction = f;
      pending.erase(0, nl + 1);
    }
  }
  void close_progress() {
    if (progress_fd >= 0) close(progress_fd);
    progress_fd = -1;
  }
};

// Starts `rocesim run` for one point: stdout to /dev/null, stderr to `log`, progress reports on a pipe.
// The command line of one point's run.
std::vector<std::string> run_args(const SweepOptions& opt, const std::string& scenario, const SweepPoint& p,
                                  const fs::path& run_dir, bool force) {
  std::vector<std::string> args{opt.binary, "run", scenario, "-o", run_dir.string(), "-q"};
  if (force) args.push_back("--force");
  if (opt.one_thread_runs) args.insert(args.end(), {"--threads", "1"});
  for (const auto& s : opt.sets) args.insert(args.end(), {"--set", s});
  for (const auto& s : p.sets) args.insert(args.end(), {"--set", s});
  return args;
}

Child spawn_run(const SweepOptions& opt, const std::string& scenario, const SweepPoint& p,
                const fs::path& run_dir, const fs::path& log, bool force) {
  std::vector<std::string> args = run_args(opt, scenario, p, run_dir, force);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The environment, with the progress descriptor (3 in the run) replacing any inherited one.
  const std::string fd_var = std::string(kProgressFdEnv) + "=";
  std::vector<std::string> env_store{fd_var + "3"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, fd_var.c_str(), fd_var.size()) != 0) env_store.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2] = {-1, -1};  // non-blocking both ways: neither side ever waits for the other
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 3);  // dup2 clears close-on-exec on the copy
  Child c;
  c.point = 0;
  const int rc = posix_spawn(&c.pid, opt.binary.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error(fmt::format("cannot start {}: {}", opt.binary, std::strerror(rc)));
  }
  c.start = Clock::now();
  c.log = log;
  c.progress_fd = fds[0];
  return c;
}

std::string describe_status(int st) {
  if (WIFEXITED(st)) return fmt::format("exit status {}", WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return fmt::format("killed by signal {} ({})", WTERMSIG(st), strsignal(WTERMSIG(st)));
  return "stopped";
}

// Refuses a directory that is neither absent, empty, nor a sweep directory; checks that a previous sweep in
// it used the same scenario text and --set values (else its runs would not be comparable).
void check_sweep_dir(const fs::path& out, const nlohmann::json& manifest, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec)) throw InputError(out.string(), 0, "exists and is not a directory");
  if (fs::is_empty(out, ec)) return;
  const fs::path mf = out / "sweep.json";
  if (!fs::exists(mf, ec))
    throw InputError(
        out.string(), 0,
        "is a non-empty directory that holds no rocesim sweep (no sweep.json); choose another -o");
  nlohmann::json old;
  try {
    old = nlohmann::json::parse(read_text(mf).value_or(""));
  } catch (const std::exception&) {
    throw InputError(mf.string(), 0, "unreadable sweep manifest; remove it or choose another -o");
  }
  if (force) return;
  if (old.value("scenario_fingerprint", "") != manifest["scenario_fingerprint"])
    throw InputError(
        out.string(), 0,
        fmt::format("holds a sweep of a different scenario text ({}); use another -o, or --force "
                    "to re-run every run",
                    old.value("scenario", "?")));
  if (old.value("sets", nlohmann::json::array()) != manifest["sets"])
    throw InputError(
        out.string(), 0,
        fmt::format("holds a sweep made with other --set values ({}); use another -o, or --force "
                    "to re-run every run",
                    old.value("sets", nlohmann::json::array()).dump()));
}

// Removes temporary run directories ("NAME.tmp-PID") and log files of runs left by an interrupted sweep.
void remove_leftovers(const fs::path& out, const std::vector<SweepPoint>& points) {
  std::set<std::string> names;
  for (const auto& p : points) names.insert(safe_dir_name(p.name));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string f = e.path().filename().string();
    const size_t at = f.rfind(".tmp-");
    if (at == std::string::npos || !names.count(f.substr(0, at))) continue;
    const std::string pid = f.substr(at + 5);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    fs::remove_all(e.path(), ec);
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string num(const nlohmann::json& j) {
  if (j.is_number_integer() || j.is_number_unsigned()) return j.dump();
  if (j.is_number_float()) return fmt::format("{}", j.get<double>());
  if (j.is_boolean()) return j.get<bool>() ? "1" : "0";
  if (j.is_string()) return j.get<std::string>();
  return "";
}

// Looks up "a/b/c" in `j`; null when absent.
nlohmann::json at(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* cur = &j;
  for (const auto& k : split(path, "/")) {
    if (!cur->is_object() || !cur->contains(k)) return nullptr;
    cur = &(*cur)[k];
  }
  return *cur;
}

// The traffic load of a run, from its scenario.resolved.toml ("" when it has no [[traffic]]; loads of
// several tables joined with ';' when they differ).
std::string resolved_load(const fs::path& run_dir) {
  try {
    const toml::table t = toml::parse_file((run_dir / "scenario.resolved.toml").string());
    const auto* arr = t["traffic"].as_array();
    if (!arr) return "";
    std::vector<std::string> loads;
    for (const auto& e : *arr)
      if (const auto* tbl = e.as_table())
        if (auto v = (*tbl)["load"].value<double>()) {
          const std::string s = fmt::format("{}", *v);
          if (std::find(loads.begin(), loads.end(), s) == loads.end()) loads.push_back(s);
        }
    std::string out;
    for (const auto& l : loads) out += (out.empty() ? "" : ";") + l;
    return out;
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::vector<GridAxis> parse_grid(const std::vector<std::string>& args) {
  std::vector<GridAxis> grid;
  std::set<std::string> seen;
  for (const auto& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--grid " + a, 0,
                       "expected KEY=V1,V2,..., e.g. --grid scheme=dcqcn,none load=0.3,0.5");
    GridAxis ax;
    ax.key = trim(a.substr(0, eq));
    if (ax.key.empty() || ax.key.find_first_of(" \t\"'/=,") != std::string::npos)
      throw InputError("--grid " + a, 0, fmt::format("bad key '{}'", ax.key));
    for (const auto& v : split(a.substr(eq + 1), ",")) {
      const std::string t = trim(v);
      if (t.empty())
        throw InputError("--grid " + a, 0, "empty value (values are separated by single commas)");
      if (std::find(ax.values.begin(), ax.values.end(), t) != ax.values.end())
        throw InputError("--grid " + a, 0, fmt::format("value '{}' is listed twice", t));
      ax.values.push_back(t);
    }
    const std::string canon = ax.key == "scheme" ? "cc.scheme" : ax.key;
    if (!seen.insert(canon).second)
      throw InputError("--grid " + a, 0,
                       fmt::format("key '{}' is given twice; list all values once", ax.key));
    grid.push_back(std::move(ax));
  }
  return grid;
}

std::vector<size_t> tables_with_load(const toml::table& resolved) {
  std::vector<size_t> out;
  if (const auto* arr = resolved["traffic"].as_array())
    for (size_t i = 0; i < arr->size(); ++i)
      if (const auto* t = arr->get(i)->as_table(); t && t->contains("load")) out.push_back(i);
  return out;
}

std::vector<std::string> grid_overrides(const std::string& key, const std::string& value,
                                        const std::vector<size_t>& load_tables) {
  if (key == "scheme") return {"cc.scheme=" + value};
  if (key == "load") {
    if (load_tables.empty())
      throw InputError(
          "--grid load=...", 0,
          "'load' sets the load of every [[traffic]] table that has one, but the scenario has none "
          "(an incast, burst or long_lived pattern has no load)");
    std::vector<std::string> out;
    for (size_t i : load_tables) out.push_back(fmt::format("traffic[{}].load={}", i, value));
    return out;
  }
  return {key + "=" + value};  // "seed" and any dotted scenario key
}

std::string safe_dir_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("._+=,-", c)) c = '_';
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');  // never hidden, never "." or ".."
  return out;
}

std::vector<SweepPoint> expand_grid(const std::vector<GridAxis>& grid,
                                    const std::vector<size_t>& load_tables) {
  std::vector<SweepPoint> points(1);
  for (const auto& ax : grid) {
    if (ax.values.empty()) throw InputError("--grid " + ax.key, 0, "no values");
    std::vector<SweepPoint> next;
    for (const auto& p : points)
      for (const auto& v : ax.values) {
        SweepPoint q = p;
        q.values.emplace_back(ax.key, v);
        q.name += (q.name.empty() ? "" : ",") + ax.key + "=" + v;
        for (auto& s : grid_overrides(ax.key, v, load_tables)) q.sets.push_back(std::move(s));
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  std::map<std::string, std::string> dirs;
  for (const auto& p : points) {
    const auto [it, fresh] = dirs.emplace(safe_dir_name(p.name), p.name);
    if (!fresh)
      throw InputError(
          "--grid", 0,
          fmt::format("'{}' and '{}' would share the run directory '{}'", it->second, p.name, it->first));
  }
  return points;
}

// The summary.json of a complete run directory; nothing when it is absent, partial (Ctrl-C), stopped by a
// check (deadlock, watchdog, invariant: exit 3, "stopped" in summary.json) or unreadable. A sweep re-runs
// such a run when resumed, and reports it as failed if it stops again.
std::optional<nlohmann::json> complete_summary(const fs::path& dir) {
  try {
    if (!fs::exists(dir / "summary.json") || fs::exists(dir / "PARTIAL")) return std::nullopt;
    auto j = nlohmann::json::parse(read_text(dir / "summary.json").value_or(""));
    if (j.contains("stopped")) return std::nullopt;
    return j;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The jobs of the complete runs (collective and dependency_trace tables), when any has one: a line per run
// and job with its algorithm, iterations finished, iteration time (mean, p99), bus bandwidth and exposed
// communication time (summary.json "jobs").
void print_jobs_table(const fs::path& out_dir, const std::vector<SweepPoint>& points, size_t run_width) {
  std::vector<std::array<std::string, 8>> lines;
  const auto f1 = [](const nlohmann::json& v) {
    return v.is_number() ? fmt::format("{:.1f}", v.get<double>()) : "-";
  };
  size_t wj = 3, wa = 9;
  for (const auto& p : points) {
    const auto summary = complete_summary(out_dir / safe_dir_name(p.name));
    if (!summary) continue;
    const auto jobs = at(*summary, "jobs");
    if (!jobs.is_array()) continue;
    for (const auto& job : jobs) {
      lines.push_back({p.name, num(at(job, "job")), num(at(job, "collective")),
                       num(at(job, "iterations_finished")) + "/" + num(at(job, "iterations")),
                       f1(at(job, "iteration_us/mean")), f1(at(job, "iteration_us/p99")),
                       f1(at(job, "busbw_gbps")), f1(at(job, "exposed_comm_us"))});
      wj = std::max(wj, lines.back()[1].size());
      wa = std::max(wa, lines.back()[2].size());
    }
  }
  if (lines.empty()) return;
  fmt::print("\n{:<{}}  {:<{}}  {:<{}}  {:>10}  {:>14}  {:>13}  {:>12}  {:>17}\n", "run", run_width, "job",
             wj, "algorithm", wa, "iterations", "iteration (us)", "p99 iter (us)", "busbw (Gb/s)",
             "exposed comm (us)");
  for (const auto& l : lines)
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>10}  {:>14}  {:>13}  {:>12}  {:>17}\n", l[0], run_width, l[1], wj,
               l[2], wa, l[3], l[4], l[5], l[6], l[7]);
}

// A short table on stdout: one line per complete run (flows, slowdown p50/p99 overall and in the
// smallest and largest size buckets, PFC pauses).
void print_summary_table(const fs::path& out_dir, const std::vector<SweepPoint>& points) {
  struct Line {
    std::string run, flows, p50, p99, small_p99, large_p99, pauses;
  };
  std::vector<Line> lines;
  std::string small_label, large_label;
  for (const auto& p : points) {
    const auto summary = complete_summary(out_dir / safe_dir_name(p.name));
    if (!summary) continue;
    const nlohmann::json& j = *summary;
    const auto f2 = [](const nlohmann::json& v) {
      return v.is_number() ? fmt::format("{:.2f}", v.get<double>()) : "-";
    };
    Line l{p.name,
           num(at(j, "flows/finished")) + "/" + num(at(j, "flows/started")),
           f2(at(j, "fct/slowdown/p50")),
           f2(at(j, "fct/slowdown/p99")),
           "-",
           "-",
           num(at(j, "pfc/pauses_sent"))};
    const auto buckets = at(j, "fct/buckets");
    if (buckets.is_array()) {
      const nlohmann::json* first = nullptr;
      const nlohmann::json* last = nullptr;
      for (const auto& b : buckets)
        if (at(b, "count").is_number() && at(b, "count").get<uint64_t>() > 0) {
          if (!first) first = &b;
          last = &b;
        }
      if (first) {
        l.small_p99 = f2(at(*first, "slowdown/p99"));
        l.large_p99 = f2(at(*last, "slowdown/p99"));
        if (small_label.empty()) small_label = num(at(*first, "label"));
        if (large_label.empty()) large_label = num(at(*last, "label"));
      }
    }
    lines.push_back(l);
  }
  if (lines.empty()) return;
  size_t w = 3;
  for (const auto& l : lines) w = std::max(w, l.run.size());
  const std::string hs = "p99 " + small_label, hl = "p99 " + large_label;
  fmt::print("\n{:<{}}  {:>11}  {:>12}  {:>12}  {:>14}  {:>14}  {:>10}\n", "run", w, "flows", "slowdown p50",
             "slowdown p99", hs, hl, "PFC pauses");
  for (const auto& l : lines)
    fmt::print("{:<{}}  {:>11}  {:>12}  {:>12}  {:>14}  {:>14}  {:>10}\n", l.run, w, l.flows, l.p50, l.p99,
               l.small_p99, l.large_p99, l.pauses);
  print_jobs_table(out_dir, points, w);
}

namespace {

// results.csv's metric columns: (column, path in a bucket's JSON) and (column, path in the summary).
const std::vector<std::pair<std::string, std::string>> kBucketColumns = {{"count", "count"},
                                                                         {"fct_avg_us", "fct_us/avg"},
                                                                         {"fct_p50_us", "fct_us/p50"},
                                                                         {"fct_p95_us", "fct_us/p95"},
                                                                         {"fct_p99_us", "fct_us/p99"},
                                                                         {"fct_p999_us", "fct_us/p999"},
                                                                         {"slowdown_avg", "slowdown/avg"},
                                                                         {"slowdown_p50", "slowdown/p50"},
                                                                         {"slowdown_p95", "slowdown/p95"},
                                                                         {"slowdown_p99", "slowdown/p99"},
                                                                         {"slowdown_p999", "slowdown/p999"}};
const std::vector<std::pair<std::string, std::string>> kRunColumns = {
    {"flows_started", "flows/started"},
    {"flows_finished", "flows/finished"},
    {"complete", "complete"},
    {"simulated_ms", "simulated_time_ms"},
    {"pauses", "pfc/pauses_sent"},
    {"paused_time_us", "pfc/paused_time_us"},
    {"max_buffer_bytes", "switch/max_buffer_bytes"},
    {"wall_seconds", "performance/wall_seconds"}};
// The per-job columns (path in a summary.json "jobs" entry): filled on the job rows (bucket "job"), one per
// collective or dependency_trace job of a run; empty on the other rows.
const std::vector<std::pair<std::string, std::string>> kJobColumns = {
    {"job", "job"},
    {"algorithm", "collective"},
    {"ranks", "ranks"},
    {"bytes_per_rank", "bytes"},
    {"iterations", "iterations_finished"},
    {"iteration_mean_us", "iteration_us/mean"},
    {"iteration_p99_us", "iteration_us/p99"},
    {"algbw_gbps", "algbw_gbps"},
    {"busbw_gbps", "busbw_gbps"},
    {"comm_us", "comm_us"},
    {"exposed_comm_us", "exposed_comm_us"}};

// results.csv's leading columns: the grid keys, then scheme / load / seed when they are not grid keys.
struct LeadColumns {
  std::vector<std::string> names;
  bool scheme = false, load = false, seed = false;  // added after the grid keys
};

LeadColumns lead_columns(const std::vector<GridAxis>& grid) {
  LeadColumns c;
  for (const auto& ax : grid) c.names.push_back(ax.key);
  const auto has = [&](const std::string& k) {
    return std::find(c.names.begin(), c.names.end(), k) != c.names.end();
  };
  c.scheme = !has("scheme") && !has("cc.scheme");
  c.load = !has("load");
  c.seed = !has("seed");
  if (c.scheme) c.names.push_back("scheme");
  if (c.load) c.names.push_back("load");
  if (c.seed) c.names.push_back("seed");
  return c;
}

void append_csv_row(std::string& csv, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) csv += (i ? "," : "") + csv_field(fields[i]);
  csv += "\n";
}

std::string results_csv_header(const LeadColumns& cols) {
  std::vector<std::string> head = cols.names;
  head.insert(head.end(), {"run", "bucket", "class", "min_bytes", "max_bytes"});
  for (const auto& [c, _] : kBucketColumns) head.push_back(c);
  for (const auto& [c, _] : kRunColumns) head.push_back(c);
  head.insert(head.end(), {"cnps", "drops"});
  for (const auto& [c, _] : kJobColumns) head.push_back(c);
  std::string csv;
  append_csv_row(csv, head);
  return csv;
}

// One complete run's rows of results.csv: one per size bucket, an "all" row, and one per traffic class.
void append_run_rows(std::string& csv, const LeadColumns& cols, const SweepPoint& p, const fs::path& dir,
                     const nlohmann::json& j) {
  std::vector<std::string> lead;
  for (const auto& kv : p.values) lead.push_back(kv.second);
  if (cols.scheme) lead.push_back(num(at(j, "scheme")));
  if (cols.load) lead.push_back(resolved_load(dir));
  if (cols.seed) lead.push_back(num(at(j, "seed")));
  lead.push_back(safe_dir_name(p.name));
  std::vector<std::string> tail;
  for (const auto& [_, path] : kRunColumns) tail.push_back(num(at(j, path)));
  const auto sum = [&](std::initializer_list<const char*> paths) {
    uint64_t s = 0;
    for (const char* q : paths) {
      const auto v = at(j, q);
      if (v.is_number()) s += v.get<uint64_t>();
    }
    return std::to_string(s);
  };
  tail.push_back(sum({"cnp/sent_by_receivers", "cnp/sent_by_switches", "cnp/sent_on_acks"}));
  // Every kind summary.json's "drops" has (link_failure only with [[events]]), so that none is left out.
  uint64_t drops = 0;
  if (const auto d = at(j, "drops"); d.is_object())
    for (const auto& [_, v] : d.items())
      if (v.is_number_unsigned()) drops += v.get<uint64_t>();
  tail.push_back(std::to_string(drops));

  const auto row = [&](const std::string& bucket, const std::string& cls, const nlohmann::json& b,
                       const std::string& lo, const std::string& hi) {
    std::vector<std::string> f = lead;
    f.insert(f.end(), {bucket, cls, lo, hi});
    for (const auto& [_, path] : kBucketColumns) f.push_back(num(at(b, path)));
    f.insert(f.end(), tail.begin(), tail.end());
    f.resize(f.size() + kJobColumns.size());
    append_csv_row(csv, f);
  };
  const auto buckets = at(j, "fct/buckets");
  if (buckets.is_array())
    for (const auto& b : buckets)
      row(num(at(b, "label")), "all", b, num(at(b, "min_bytes")), num(at(b, "max_bytes")));
  row("all", "all", at(j, "fct"), "", "");
  // Per class (traffic.class, flows' class: e.g. incast vs background), all sizes, when the scenario has
  // more than one class; classes without finished flows are left out.
  const auto classes = at(j, "fct/classes");
  if (classes.is_object() && classes.size() > 1)
    for (const auto& [label, c] : classes.items())
      if (at(c, "count").is_number() && at(c, "count").get<uint64_t>() > 0) row("all", label, c, "", "");
  // Per job (summary.json "jobs"): its iteration time, algorithm, bandwidths and exposed communication.
  const auto jobs = at(j, "jobs");
  if (jobs.is_array())
    for (const auto& job : jobs) {
      std::vector<std::string> f = lead;
      f.insert(f.end(), {"job", "all", "", ""});
      f.resize(f.size() + kBucketColumns.size());
      f.insert(f.end(), tail.begin(), tail.end());
      for (const auto& [_, path] : kJobColumns) f.push_back(num(at(job, path)));
      append_csv_row(csv, f);
    }
}

}  // namespace

size_t write_results_csv(const fs::path& out_dir, const std::vector<GridAxis>& grid,
                         const std::vector<SweepPoint>& points) {
  const LeadColumns cols = lead_columns(grid);
  std::string csv = results_csv_header(cols);
  size_t runs = 0;
  for (const auto& p : points) {
    const fs::path dir = out_dir / safe_dir_name(p.name);
    const auto summary = complete_summary(dir);
    if (!summary) continue;  // absent, partial or unreadable: not complete
    ++runs;
    append_run_rows(csv, cols, p, dir, *summary);
  }
  write_atomically(out_dir / "results.csv", csv);
  return runs;
}

namespace {

// sweep.json: what the sweep directory holds (check_sweep_dir compares a resumed sweep with it).
nlohmann::json sweep_manifest(const SweepOptions& opt, const std::string& scenario,
                              const std::vector<SweepPoint>& points) {
  nlohmann::json manifest;
  manifest["scenario"] = scenario;
  manifest["scenario_fingerprint"] = fingerprint(read_text(scenario).value_or(""));
  manifest["sets"] = opt.sets;
  manifest["grid"] = nlohmann::json::array();
  for (const auto& ax : opt.grid) manifest["grid"].push_back({{"key", ax.key}, {"values", ax.values}});
  manifest["runs"] = nlohmann::json::array();
  for (const auto& p : points) manifest["runs"].push_back(safe_dir_name(p.name));
  manifest["rocesim"] = ROCESIM_VERSION;
  return manifest;
}

// The indexes of the points still to run: complete runs are skipped (unless --force), and said so. `at_once`:
// the runs that run side by side (-j here; under --mpi the ranks less rank 0).
std::vector<size_t> runs_to_do(const SweepOptions& opt, const std::vector<SweepPoint>& points,
                               size_t at_once) {
  const size_t n = points.size();
  size_t skipped = 0;
  std::vector<size_t> pending;
  for (size_t i = 0; i < n; ++i) {
    const fs::path dir = opt.out_dir / safe_dir_name(points[i].name);
    if (!opt.force && complete_summary(dir)) {
      ++skipped;
      if (!opt.quiet) fmt::print("[{}/{}] {} skipped (already complete)\n", skipped, n, points[i].name);
    } else {
      pending.push_back(i);
    }
  }
  if (!opt.quiet) {
    if (pending.empty())
      fmt::print("all {} runs already complete; rewriting results.csv\n", n);
    else
      fmt::print("sweep: {} run{} to do ({} skipped), {} at once, in {}\n", pending.size(),
                 pending.size() == 1 ? "" : "s", skipped, std::min(at_once, pending.size()),
                 opt.out_dir.string());
    std::fflush(stdout);
  }
  return pending;
}

// Runs the pending points as child processes, at most opt.jobs at once, reporting each as it ends and
// drawing a status line with an ETA.
class SweepLoop {
 public:
  SweepLoop(const SweepOptions& opt, const std::string& scenario, const std::vector<SweepPoint>& points,
            std::vector<size_t> pending, Clock::time_point t0)
      : opt_(opt),
        scenario_(scenario),
        points_(points),
        pending_(std::move(pending)),
        finished_(points.size() - pending_.size()),
        t0_(t0),
        line_(stderr, !opt.quiet && is_terminal(stderr)) {}

  // Until every pending run has ended, or an interrupt.
  void run() {
    while (next_ < pending_.size() || !running_.empty()) {
      if (g_interrupted) break;
      start_runs();
      const bool reaped = reap();
      if (!reaped && !running_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      draw_status();
    }
    line_.clear();
  }

  // After an interrupt: ends the runs still going and removes their temporary directories and logs.
  void stop_running() {
    for (const auto& c : running_) kill(c.pid, SIGTERM);
    for (auto& c : running_) {
      int st = 0;
      while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
      }
      c.close_progress();
      std::error_code ec;
      fs::remove_all(opt_.out_dir / (safe_dir_name(points_[c.point].name) + ".tmp-" + std::to_string(c.pid)),
                     ec);
      fs::remove(c.log, ec);
    }
  }

  size_t done_runs() const { return done_runs_; }
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  fs::path logs() const { return opt_.out_dir / "logs"; }

  void start_runs() {
    while (next_ < pending_.size() && running_.size() < static_cast<size_t>(opt_.jobs)) {
      const size_t i = pending_[next_++];
      const std::string dname = safe_dir_name(points_[i].name);
      const fs::path log = logs() / (dname + ".log");
      // A run directory without summary.json is a leftover (say, summary.json deleted to redo the run):
      // replace it (the run refuses, even so, a directory that holds no rocesim results).
      const bool replace = opt_.force || fs::exists(opt_.out_dir / dname);
      running_.push_back(spawn_run(opt_, scenario_, points_[i], opt_.out_dir / dname, log, replace));
      running_.back().point = i;
    }
  }

  // Reads the runs' progress and collects those that ended; true when any did.
  bool reap() {
    bool reaped = false;
    for (size_t k = 0; k < running_.size();) {
      running_[k].poll_progress();
      int st = 0;
      const pid_t r = waitpid(running_[k].pid, &st, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) {
        ++k;
        continue;
      }
      running_[k].close_progress();
      const Child c = running_[k];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
      reaped = true;
      if (g_interrupted) continue;  // the terminal's Ctrl-C reached the runs too: not a failure
      const double wall = c.elapsed();
      ++finished_;
      const SweepPoint& p = points_[c.point];
      const bool ok = r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
                      fs::exists(opt_.out_dir / safe_dir_name(p.name) / "summary.json");
      line_.clear();
      if (ok)
        report_done(c, wall);
      else
        report_failed(c, wall,
                      r < 0 ? fmt::format("waitpid: {}", std::strerror(errno)) : describe_status(st));
    }
    return reaped;
  }

  void report_done(const Child& c, double wall) {
    done_wall_ += wall;
    ++done_runs_;
    std::error_code ec;
    fs::remove(c.log, ec);
    if (opt_.quiet) return;
    const size_t left = pending_.size() - next_ + running_.size();
    fmt::print("[{}/{}] {} done in {}{}\n", finished_, points_.size(), points_[c.point].name,
               format_duration(wall), left ? fmt::format(" (sweep ETA {})", eta()) : "");
    std::fflush(stdout);
  }

  void report_failed(const Child& c, double wall, const std::string& why) {
    const SweepPoint& p = points_[c.point];
    failures_.push_back(p.name);
    std::string tail = tail_lines(c.log, 12);
    if (tail.empty()) tail = "(no output)";
    std::string indented;
    for (const auto& l : split(tail, "\n")) indented += "    " + l + "\n";
    fmt::print(stderr, "[{}/{}] {} FAILED ({}) after {}; its stderr ({}):\n{}", finished_, points_.size(),
               p.name, why, format_duration(wall), c.log.string(), indented);
    std::fflush(stderr);
  }

  void draw_status() {
    if (!line_.active() || !line_.due(Clock::now())) return;
    std::string text =
        fmt::format("  {}/{} finished, {} running", finished_, points_.size(), running_.size());
    for (const auto& c : running_)
      text += fmt::format(" | {} {:.0f}% {}", points_[c.point].name, 100 * c.fraction,
                          format_duration(c.elapsed()));
    text += fmt::format(" | {} elapsed, ETA {}", format_duration(seconds_since(t0_)), eta());
    line_.draw(text);
  }

  // Remaining wall time: a running run's own estimate (from its simulated-time fraction, an upper bound
  // when it stops as soon as its flows finish) and, per pending run, the mean time of the finished ones (or
  // of the running ones' estimates), spread over the parallel slots.
  std::string eta() const {
    double est_sum = 0;
    size_t est_n = 0;
    for (const auto& c : running_)
      if (c.fraction > 0.02) {
        est_sum += c.elapsed() / c.fraction;
        ++est_n;
      }
    if (done_runs_ == 0 && est_n == 0) return "?";
    const double avg =
        done_runs_ ? done_wall_ / static_cast<double>(done_runs_) : est_sum / static_cast<double>(est_n);
    double work = static_cast<double>(pending_.size() - next_) * avg;
    for (const auto& c : running_)
      work += c.fraction > 0.02 ? c.elapsed() / c.fraction - c.elapsed() : std::max(0.0, avg - c.elapsed());
    const size_t left = pending_.size() - next_ + running_.size();
    return format_duration(work /
                           static_cast<double>(std::max<size_t>(1, std::min<size_t>(opt_.jobs, left))));
  }

  const SweepOptions& opt_;
  const std::string& scenario_;
  const std::vector<SweepPoint>& points_;
  const std::vector<size_t> pending_;
  size_t finished_;  // skipped, done or failed
  Clock::time_point t0_;
  StatusLine line_;
  std::vector<Child> running_;
  std::vector<std::string> failures_;
  double done_wall_ = 0;  // wall seconds of the runs finished by this sweep
  size_t done_runs_ = 0;
  size_t next_ = 0;  // into pending_
};

// results.csv of the runs complete so far, and how to resume; the exit status of an interrupted sweep.
int finish_interrupted_sweep(const SweepOptions& opt, const std::vector<SweepPoint>& points) {
  const size_t complete = write_results_csv(opt.out_dir, opt.grid, points);
  fmt::print(stderr,
             "\ninterrupted: {} of {} runs complete (results.csv has them); run the same command again "
             "to resume\n",
             complete, points.size());
  return 130;
}

// results.csv, the short table and the closing lines; the exit status of the sweep.
int finish_sweep(const SweepOptions& opt, const std::vector<SweepPoint>& points, size_t done_runs,
                 const std::vector<std::string>& failures, size_t skipped, Clock::time_point t0) {
  const size_t n = points.size();
  const size_t complete = write_results_csv(opt.out_dir, opt.grid, points);
  const fs::path logs = opt.out_dir / "logs";
  std::error_code ec;
  if (fs::exists(logs, ec) && fs::is_empty(logs, ec)) fs::remove(logs, ec);
  if (!opt.quiet) print_summary_table(opt.out_dir, points);
  if (!opt.quiet)
    fmt::print("sweep finished in {}: {} run{} done, {} skipped, {} failed\nresults: {}\n",
               format_duration(seconds_since(t0)), done_runs, done_runs == 1 ? "" : "s", skipped,
               failures.size(), (opt.out_dir / "results.csv").string());
  if (!failures.empty()) {
    fmt::print(stderr, "error: {} of {} runs failed (results.csv holds the {} complete ones):\n",
               failures.size(), n, complete);
    for (const auto& f : failures) fmt::print(stderr, "  {}\n", f);
    return 1;
  }
  return 0;
}

// `--mpi` with more than one rank: the pending runs go to the other ranks, one at a time each.
int run_on_ranks(const SweepOptions& opt, const std::string& scenario, const std::vector<SweepPoint>& points,
                 const std::vector<size_t>& pending, size_t skipped, Clock::time_point t0) {
  std::vector<RemoteRun> runs;
  for (size_t i : pending) {
    const std::string dname = safe_dir_name(points[i].name);
    const bool replace = opt.force || fs::exists(opt.out_dir / dname);
    runs.push_back({run_args(opt, scenario, points[i], opt.out_dir / dname, replace),
                    (opt.out_dir / "logs" / (dname + ".log")).string()});
  }
  size_t done_runs = 0, finished = skipped;
  std::vector<std::string> failures;
  hand_out_runs(
      runs,
      [&](size_t k, int status, double wall) {
        const std::string& name = points[pending[k]].name;
        ++finished;
        const bool ok = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                        fs::exists(opt.out_dir / safe_dir_name(name) / "summary.json");
        if (ok) {
          ++done_runs;
          std::error_code ec;
          fs::remove(runs[k].log, ec);
          if (!opt.quiet)
            fmt::print("[{}/{}] {} done in {}\n", finished, points.size(), name, format_duration(wall));
        } else {
          failures.push_back(name);
          std::string tail = tail_lines(runs[k].log, 12);
          const std::string why =
              status == kRankLost
                  ? fmt::format(
                        "its rank was lost: not heard from for {:.0f} s (its process or machine died)",
                        opt.rank_timeout_s)
              : status < 0 ? std::string("could not start")
                           : describe_status(status);
          fmt::print(stderr, "[{}/{}] {} FAILED ({}) after {}; its stderr ({}):\n{}\n", finished,
                     points.size(), name, why, format_duration(wall), runs[k].log,
                     tail.empty() ? "(no output)" : tail);
        }
        std::fflush(stdout);
        std::fflush(stderr);
      },
      opt.rank_timeout_s);
  return finish_sweep(opt, points, done_runs, failures, skipped, t0);
}

}  // namespace

int run_sweep(const SweepOptions& opt) {
  if (!opt.mpi) return run_sweep_here(opt, 1);
  MpiSession mpi;
  if (mpi.rank() != 0) {
    serve_runs();
    return 0;
  }
  try {
    return run_sweep_here(opt, mpi.size());
  } catch (...) {
    if (mpi.size() > 1) stop_serving();
    throw;
  }
}

// The sweep on this process (rank 0 of `ranks`): directory, resume, the runs (here, or on the other ranks),
// results.csv and the table.
int run_sweep_here(const SweepOptions& options, int ranks) {
  const auto t0 = Clock::now();
  SweepOptions opt = options;
  if (opt.jobs < 1) throw InputError("-j", 0, "needs at least 1 job");
  if (opt.grid.empty()) throw InputError("--grid", 0, "a sweep needs at least one KEY=V1,V2,... grid axis");
  const std::string scenario = fs::absolute(opt.scenario).lexically_normal().string();
  const Scenario base = load_scenario(scenario, opt.sets);  // fails early on a bad scenario or --set
  opt.one_thread_runs =
      opt.one_thread_runs || (base.threads == Scenario::kThreadsAuto && (opt.jobs > 1 || ranks > 1));
  const std::vector<SweepPoint> points = expand_grid(opt.grid, tables_with_load(base.resolved));

  const nlohmann::json manifest = sweep_manifest(opt, scenario, points);
  check_sweep_dir(opt.out_dir, manifest, opt.force);
  fs::create_directories(opt.out_dir);
  DirLock lock(opt.out_dir);
  remove_leftovers(opt.out_dir, points);
  write_atomically(opt.out_dir / "sweep.json", manifest.dump(2) + "\n");

  const size_t at_once = ranks > 1 ? static_cast<size_t>(ranks - 1) : static_cast<size_t>(opt.jobs);
  std::vector<size_t> pending = runs_to_do(opt, points, at_once);
  const size_t skipped = points.size() - pending.size();
  if (!pending.empty()) fs::create_directories(opt.out_dir / "logs");
  if (ranks > 1) return run_on_ranks(opt, scenario, points, pending, skipped, t0);
  InterruptGuard guard;
  SweepLoop loop(opt, scenario, points, std::move(pending), t0);
  loop.run();
  if (g_interrupted) {
    loop.stop_running();
    return finish_interrupted_sweep(opt, points);
  }
  return finish_sweep(opt, points, loop.done_runs(), loop.failures(), skipped, t0);
}

int run_python_tool(const std::string& tool, const std::vector<std::string>& tool_args) {
  std::error_code ec;
  const char* env = std::getenv("ROCESIM_PYTHON");
  std::string python =
      env && *env ? env : (fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3");
  const std::string script = std::string(ROCESIM_TOOLS_DIR) + "/" + tool;
  if (!fs::exists(script, ec)) throw std::runtime_error("cannot find " + script);
  std::vector<std::string> args{python, script};
  args.insert(args.end(), tool_args.begin(), tool_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", python, std::strerror(rc)));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  fmt::print(stderr, "error: {} {}: {}\n", python, script, describe_status(st));
  return 1;
}

int make_report(const fs::path& dir, bool quiet) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string(), 0, "no such directory");
  if (!fs::exists(dir / "summary.json", ec) && !fs::exists(dir / "results.csv", ec))
    throw InputError(dir.string(), 0, "holds neither a run (summary.json) nor a sweep (results.csv)");
  std::vector<std::string> args{dir.string()};
  if (quiet) args.push_back("--quiet");
  return run_python_tool("report.py", args);
}

}  // namespace rocesim
