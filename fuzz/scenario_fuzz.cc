// Scenario fuzzing of the simulator itself (`make fuzz-scenarios`; fuzz/README.md): from a seed, draws random
// valid scenarios (fabric kind and size, scheme, routing, loss recovery, flow control, switch model, link
// events, traffic patterns, threads), runs each briefly with the invariants of tests/app/run_invariants.h,
// and writes every failing one to <out>/<kind>-s<seed>-<n>.toml: the full scenario, with a comment giving
// the seed, the failure and the commands that replay it. Each run is a child process with a wall-clock
// limit, so that a crash or a hang is reported like any other failure.
//
//   rocesim_scenario_fuzz [--seed N] [--seconds S] [--count N] [--first N] [--out DIR] [--max-per-kind K]
//                         [--no-reduce]
//   rocesim_scenario_fuzz --replay FILE...      (each file once, in this process; exit 1 if any fails)
//   rocesim_scenario_fuzz --print SEED:N        (the scenario that seed and number draw)
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "app/run_invariants.h"
#include "cc/registry.h"
#include "config/scenario.h"
#include "core/error.h"
#include "draw.h"

using namespace rocesim;
namespace fs = std::filesystem;

namespace {

// --- drawing ---

using fuzz::Draw;

// A scenario in parts, so that the reducer can leave parts out.
struct Parts {
  std::string head;                  // name, seed, duration, threads
  std::string topology;              // [topology]
  std::string sw, nic, cc;           // [switch], [nic], [cc]
  std::vector<std::string> traffic;  // [[traffic]] tables
  std::vector<std::string> events;   // [[events]] tables (a failure and its repair together)
  int threads = 1;
  std::string text() const {
    std::string t =
        head + fmt::format("threads = {}\n\n", threads) + topology + "\n" + sw + "\n" + nic + "\n" + cc;
    for (const std::string& x : traffic) t += "\n" + x;
    for (const std::string& x : events) t += "\n" + x;
    return t;
  }
};

std::string topology_table(Draw& d) {
  const int kind = d.in(0, 99);
  const int host = d.pick(std::vector<int>{25, 50, 100, 100});
  if (kind < 40) {
    const int fabric = host * d.pick(std::vector<int>{1, 1, 2, 4});
    return fmt::format(
        "[topology]\nkind = \"leaf_spine\"\nleaves = {}\nspines = {}\nhosts_per_leaf = {}\nhost_rate_gbps = "
        "{}\n"
        "fabric_rate_gbps = {}\nlink_delay_us = {}\n",
        d.in(2, 4), d.in(1, 4), d.in(2, 4), host, fabric, d.pick(std::vector<double>{0.5, 1, 1, 2}));
  }
  if (kind < 65)
    return fmt::format(
        "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate_gbps = {}\nfabric_rate_gbps = {}\nlink_delay_us = "
        "1\n",
        host, host * d.pick(std::vector<int>{1, 1, 2}));
  if (kind < 80)
    return fmt::format(
        "[topology]\nkind = \"dumbbell\"\nsenders = {}\nreceivers = {}\nhost_rate_gbps = {}\n"
        "bottleneck_rate_gbps = {}\n",
        d.in(1, 6), d.in(1, 4), host, host * d.pick(std::vector<int>{1, 2, 4}) / 2);
  if (kind < 88)
    return fmt::format("[topology]\nkind = \"star\"\nhosts = {}\nrate_gbps = {}\n", d.in(3, 10), host);
  if (kind < 94)
    return fmt::format(
        "[topology]\nkind = \"fat_tree_3tier\"\npods = 2\ntors_per_pod = 2\naggs_per_pod = 2\nhosts_per_tor "
        "= "
        "{}\ncores = {}\nhost_rate_gbps = {}\nfabric_rate_gbps = {}\n",
        d.in(2, 4), d.pick(std::vector<int>{2, 4}), host, host * 2);
  return fmt::format(
      "[topology]\nkind = \"cross_dc\"\nk = 4\nhosts_per_edge = 1\nhost_rate_gbps = {}\nfabric_rate_gbps = "
      "100\nlong_haul_rate_gbps = 100\nlong_haul_delay_us = {}\n",
      std::min(host, 40), d.pick(std::vector<int>{5, 10, 20}));
}

std::string switch_table(Draw& d, const std::string& flow_control) {
  std::string t = "[switch]\n";
  t += fmt::format("flow_control = \"{}\"\n", flow_control);
  t += fmt::format("routing = \"{}\"\n",
                   d.pick(std::vector<std::string>{"ecmp", "flowlet", "spray", "adaptive"}));
  t += fmt::format("buffer_bytes = {}\n", d.pick(std::vector<int>{400000, 1000000, 4000000, 32000000}));
  if (d.chance(0.3)) t += fmt::format("spray = \"{}\"\n", d.chance(0.5) ? "random" : "round_robin");
  if (d.chance(0.3))
    t += fmt::format("adaptive_granularity = \"{}\"\n", d.chance(0.5) ? "packet" : "flowlet");
  if (d.chance(0.3)) t += fmt::format("flowlet_gap_us = {}\n", d.pick(std::vector<int>{2, 10, 50, 100}));
  if (d.chance(0.2)) t += "pfc_mode = \"static\"\n";
  if (d.chance(0.15)) {
    t += "model = \"input_output_queued\"\n";
    if (d.chance(0.5)) t += "input_queueing = \"voq\"\n";
  }
  if (d.chance(0.2))
    t += fmt::format("failure_detection_us = {}\n", d.pick(std::vector<int>{10, 50, 100, 300}));
  return t;
}

std::string nic_table(Draw& d) {
  std::string t = "[nic]\n";
  t += fmt::format("loss_recovery = \"{}\"\n", d.chance(0.5) ? "go_back_n" : "selective");
  if (d.chance(0.2)) t += fmt::format("mtu_bytes = {}\n", d.pick(std::vector<int>{512, 1500, 4000}));
  if (d.chance(0.2)) t += fmt::format("ack_interval = {}\n", d.pick(std::vector<int>{2, 4}));
  return t;
}

std::string hosts_range(const std::vector<std::string>& hosts) {
  std::string r = "[";
  for (size_t i = 0; i < hosts.size(); ++i) r += fmt::format("{}\"{}\"", i ? ", " : "", hosts[i]);
  return r + "]";
}

std::string traffic_table(Draw& d, const std::vector<std::string>& hosts) {
  const int n = static_cast<int>(hosts.size());
  const int p = d.in(0, 99);
  const int start = d.pick(std::vector<int>{0, 0, 10, 50});
  const int stop = start + d.pick(std::vector<int>{50, 100, 200, 400});
  const int size = d.pick(std::vector<int>{2000, 20000, 100000, 300000, 1000000});
  if (p < 25)
    return fmt::format(
        "[[traffic]]\npattern = \"permutation\"\nlong_lived = true\nsize_bytes = {}\nstart_us = {}\n", size,
        start);
  if (p < 45) {
    const int fan_in = d.in(2, std::max(2, n - 1));
    std::string t = fmt::format(
        "[[traffic]]\npattern = \"incast\"\nclass = \"incast\"\nfan_in = {}\nsize_bytes = {}\nstart_us = "
        "{}\n",
        std::min(fan_in, n - 1), std::min(size, 300000), start);
    if (d.chance(0.5)) t += fmt::format("dst = \"{}\"\n", d.pick(hosts));
    if (d.chance(0.3)) t += fmt::format("period_us = {}\nrounds = {}\n", d.in(20, 200), d.in(2, 3));
    if (d.chance(0.3)) t += fmt::format("jitter_us = {}\n", d.in(1, 20));
    return t;
  }
  if (p < 65)
    return fmt::format(
        "[[traffic]]\npattern = \"{}\"\nload = {:.2f}\nsize_bytes = {}\nstart_us = {}\nstop_us = "
        "{}\nmax_flows = "
        "{}\n",
        d.chance(0.7) ? "all_to_all" : "permutation", d.real(0.05, 0.5), std::min(size, 300000), start, stop,
        d.in(10, 200));
  if (p < 75)
    return fmt::format(
        "[[traffic]]\npattern = \"hotspot\"\nload = {:.2f}\nsize_bytes = {}\nstart_us = {}\nstop_us = "
        "{}\nmax_flows = "
        "{}\n",
        d.real(0.05, 0.4), std::min(size, 100000), start, stop, d.in(10, 100));
  if (p < 82)
    return fmt::format(
        "[[traffic]]\npattern = \"burst\"\ndst = \"{}\"\ncount = {}\nsize_bytes = {}\nstart_us = {}\n",
        d.pick(hosts), d.in(1, 3), std::min(size, 100000), start);
  // A collective over all hosts, or over a power-of-two prefix of them for halving-doubling.
  std::string coll = d.pick(std::vector<std::string>{"ring_allreduce", "reduce_scatter", "allgather",
                                                     "alltoall", "broadcast", "halving_doubling_allreduce"});
  std::vector<std::string> ranks = hosts;
  if (coll == "halving_doubling_allreduce") {
    size_t pow2 = 1;
    while (pow2 * 2 <= hosts.size()) pow2 *= 2;
    ranks.resize(pow2);
    if (pow2 < 2) coll = "ring_allreduce", ranks = hosts;
  }
  return fmt::format(
      "[[traffic]]\npattern = \"collective\"\ncollective = \"{}\"\nhosts = {}\nbytes = {}\niterations = {}\n"
      "chunks = {}\nstart_us = {}\n",
      coll, hosts_range(ranks), d.pick(std::vector<int>{16000, 64000, 256000, 1000000}), d.in(1, 2),
      d.in(1, 2), start);
}

// A link event on a random link of the fabric: a failure and its repair, a lower rate, or a loss rate.
std::vector<std::string> link_events(Draw& d, const Scenario& probe) {
  std::vector<std::string> ev;
  const auto& links = probe.topo.links;
  if (links.empty()) return ev;
  const auto& names = probe.topo.node_names;
  const int n = d.pick(std::vector<int>{0, 0, 1, 1, 2, 3});
  for (int i = 0; i < n; ++i) {
    const LinkSpec& l = links[static_cast<size_t>(d.in(0, static_cast<int>(links.size()) - 1))];
    const std::string link = fmt::format("link = [\"{}\", \"{}\"]", names[static_cast<size_t>(l.a)],
                                         names[static_cast<size_t>(l.b)]);
    const int at = d.in(0, 300);
    switch (d.in(0, 2)) {
      case 0:
        // A failure always with its repair (one unit for the reducer): a link that stays down could cut a
        // host off for good, and its flows would rightly never finish.
        ev.push_back(
            fmt::format("[[events]]\nat_us = {}\n{}\naction = \"down\"\n\n[[events]]\nat_us = {}\n{}\n"
                        "action = \"up\"\n",
                        at, link, at + d.in(10, 500), link));
        break;
      case 1:
        // Lower only: the ideal FCT uses the initial rates, which a raised rate could beat.
        ev.push_back(fmt::format("[[events]]\nat_us = {}\n{}\naction = \"rate\"\nrate_gbps = {}\n", at, link,
                                 l.rate.gbps() / d.pick(std::vector<double>{2, 4, 10})));
        break;
      default:
        ev.push_back(fmt::format("[[events]]\nat_us = {}\n{}\naction = \"loss\"\nloss = {}\n", at, link,
                                 d.pick(std::vector<double>{0.0001, 0.001, 0.01})));
    }
  }
  return ev;
}

// The scenario that (seed, number) draws; nullopt when even its fabric is refused (counted, not a bug).
std::optional<Parts> draw_scenario(uint64_t seed, uint64_t number, std::string* refusal) {
  Draw d(seed * 0x9E3779B97F4A7C15ull + number);
  Parts p;
  p.threads = d.chance(0.5) ? 1 : 2;
  p.head = fmt::format("# fuzz seed {} number {}\nname = \"fuzz_{}_{}\"\nseed = {}\nduration_ms = 50\n", seed,
                       number, seed, number, d.in(1, 1000));
  p.topology = topology_table(d);
  const std::string fc = d.pick(std::vector<std::string>{"pfc", "pfc", "credit", "none"});
  p.sw = switch_table(d, fc);
  p.nic = nic_table(d);
  std::vector<std::string> schemes;
  for (const SchemeEntry& e : scheme_registry()) schemes.push_back(e.name);
  p.cc = fmt::format("[cc]\nscheme = \"{}\"\n", d.pick(schemes));
  // The fabric's hosts and links, from the scenario so far with one placeholder flow.
  Scenario probe;
  try {
    probe = load_scenario_text(
        p.text() + "\n[[traffic]]\npattern = \"permutation\"\nlong_lived = true\nsize_bytes = 1000\n",
        "probe");
  } catch (const InputError& e) {
    *refusal = e.what();
    return std::nullopt;
  }
  std::vector<std::string> hosts;
  for (int i = 0; i < probe.topo.num_nodes; ++i)
    if (!probe.topo.is_switch[static_cast<size_t>(i)])
      hosts.push_back(probe.topo.node_names[static_cast<size_t>(i)]);
  const int tables = d.in(1, 3);
  for (int i = 0; i < tables; ++i) p.traffic.push_back(traffic_table(d, hosts));
  p.events = link_events(d, probe);
  return p;
}

// --- running ---

struct Outcome {
  std::string kind;     // "" (passed), "refused", or the failure's kind
  std::string message;  // the refusal or the violations
  double seconds = 0;
};

std::string kind_of(const test::CheckedRun& r) {
  if (r.refused) return "refused";
  if (r.violations.empty()) return "";
  const std::string& v = r.violations.front();
  if (v.starts_with("stopped by a check (stall)")) return "stall";
  if (v.starts_with("stopped by a check (deadlock)")) return "deadlock";
  if (v.starts_with("stopped by a check (invariant)")) return "invariant";
  if (v.find("flows unfinished") != std::string::npos) return "unfinished";
  if (v.starts_with("lossless run dropped")) return "lossless_drop";
  if (v.starts_with("selective repeat retransmitted")) return "spurious_retransmission";
  if (v.find("ideal FCT") != std::string::npos) return "beats_ideal_fct";
  if (v.starts_with("link rate exceeded")) return "link_rate";
  return "other";
}

// Go-back-N under per-packet routing is slow by design and warned about (scenario.cc warn_combinations):
// its receiver drops every packet that arrives early. A run of it that leaves flows unfinished at its
// duration is run again for kSlowRunTimes as long; when every flow then finishes with every invariant
// holding, it was slow, not stuck ("slow_warned", not a failure).
constexpr int kSlowRunTimes = 20;

bool warned_reordering_go_back_n(const Scenario& s) {
  for (const std::string& w : s.warnings)
    if (w.find("nic.loss_recovery = \"go_back_n\" is a RoCE NIC") != std::string::npos) return true;
  return false;
}

Outcome run_in_process(const std::string& text) {
  Outcome o;
  try {
    const test::CheckedRun r = test::run_text_checked(text, "fuzz");
    o.kind = kind_of(r);
    o.message = r.refused ? r.error : r.report();
    o.seconds = r.wall_seconds;
    if (o.kind == "unfinished") {
      Scenario s = load_scenario_text(text, "fuzz");
      if (warned_reordering_go_back_n(s)) {
        s.duration = s.duration * kSlowRunTimes;
        const test::CheckedRun longer = test::run_checked(s, test::invariant_options_for(s));
        o.seconds += longer.wall_seconds;
        if (longer.ok()) {
          o.kind = "slow_warned";
          o.message = fmt::format("every flow finished by {:.3f} ms ({} at {:.3f} ms)",
                                  longer.summary.value("simulated_time_ms", 0.0), o.message,
                                  s.duration.ms() / kSlowRunTimes);
        } else {
          o.message += fmt::format("\nand at {} x the duration: {}", kSlowRunTimes, longer.report());
        }
      }
    }
  } catch (const std::exception& e) {
    o.kind = "exception";
    o.message = e.what();
  }
  return o;
}

// Runs `text` in a child process with a wall-clock limit: a crash or a hang is an outcome too.
Outcome run_isolated(const std::string& text, double limit_s) {
  std::fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0) return {"harness", std::strerror(errno)};
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return {"harness", std::strerror(errno)};
  if (pid == 0) {
    close(fds[0]);
    const Outcome o = run_in_process(text);
    const std::string out = nlohmann::json{{"kind", o.kind}, {"message", o.message}}.dump();
    for (size_t off = 0; off < out.size();) {
      const ssize_t w = write(fds[1], out.data() + off, out.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const double left =
        limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pf{fds[0], POLLIN, 0};
    const int r = poll(&pf, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timed_out) {
    o.kind = "hang";
    o.message = fmt::format("no result after {:.0f} s of wall-clock time (killed)", limit_s);
  } else if (WIFSIGNALED(status)) {
    o.kind = "crash";
    o.message = fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    try {
      const nlohmann::json j = nlohmann::json::parse(got);
      o.kind = j["kind"].get<std::string>();
      o.message = j["message"].get<std::string>();
    } catch (const std::exception&) {
      o.kind = "crash";
      o.message = fmt::format("no result (exit status {})", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
  }
  return o;
}

// Leaves out events, traffic tables and the second thread while the failure keeps its kind.
Parts reduce(Parts p, const std::string& kind, double limit_s, int* runs) {
  auto same = [&](const Parts& q) {
    ++*runs;
    return run_isolated(q.text(), limit_s).kind == kind;
  };
  for (size_t i = p.events.size(); i-- > 0;) {
    Parts q = p;
    q.events.erase(q.events.begin() + static_cast<std::ptrdiff_t>(i));
    if (same(q)) p = q;
  }
  for (size_t i = p.traffic.size(); i-- > 0 && p.traffic.size() > 1;) {
    Parts q = p;
    q.traffic.erase(q.traffic.begin() + static_cast<std::ptrdiff_t>(i));
    if (same(q)) p = q;
  }
  if (p.threads != 1) {
    Parts q = p;
    q.threads = 1;
    if (same(q)) p = q;
  }
  return p;
}

std::string commented(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += "#   " + line + "\n";
  return out;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%d", std::gmtime(&t));
  return b;
}

int replay(const std::vector<std::string>& files) {
  int failed = 0;
  for (const std::string& f : files) {
    Outcome o;
    try {
      const Scenario s = load_scenario(f);
      const test::CheckedRun r = test::run_checked(s, test::invariant_options_for(s));
      o.kind = kind_of(r);
      o.message = r.refused ? r.error : r.report();
    } catch (const std::exception& e) {
      o.kind = "exception";
      o.message = e.what();
    }
    if (o.kind.empty()) {
      std::printf("PASS %s\n", f.c_str());
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n  %s\n", f.c_str(), o.kind.c_str(), o.message.c_str());
    }
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = static_cast<uint64_t>(std::time(nullptr));
  double seconds = 0, limit_s = 60;
  uint64_t count = 0, first = 0;
  int max_per_kind = 2;
  bool no_reduce = false;
  std::string out = "fuzz/scenarios", print;
  std::vector<std::string> replay_files;
  CLI::App app{
      "Scenario fuzzing of rocesim: random valid scenarios run with the invariants of "
      "tests/app/run_invariants.h; failures written (reduced) to --out (fuzz/README.md)"};
  app.add_option("--seed", seed, "Seed of the scenarios drawn (default: the time)");
  app.add_option("--seconds", seconds, "Run for this long (default 60 when --count is not given)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--count", count, "Run this many scenarios");
  app.add_option("--first", first, "Number of the first scenario drawn (default 0)");
  app.add_option("--out", out, "Folder for the failing scenarios");
  app.add_option("--max-per-kind", max_per_kind, "At most this many files per kind of failure")
      ->check(CLI::PositiveNumber);
  app.add_option("--limit-s", limit_s, "Wall-clock limit of one scenario (a hang past it is a failure)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-reduce", no_reduce, "Write failures as drawn, without shrinking them");
  app.add_option("--replay", replay_files, "Replay these scenario files with the invariants and stop");
  app.add_option("--print", print, "Print scenario NUMBER of SEED (SEED:NUMBER) and stop");
  CLI11_PARSE(app, argc, argv);
  const bool do_reduce = !no_reduce;
  if (!replay_files.empty()) return replay(replay_files);
  if (!print.empty()) {
    const size_t colon = print.find(':');
    if (colon == std::string::npos) {
      std::fprintf(stderr, "--print: expected SEED:NUMBER, got %s\n", print.c_str());
      return 2;
    }
    std::string why;
    const auto p =
        draw_scenario(std::stoull(print.substr(0, colon)), std::stoull(print.substr(colon + 1)), &why);
    std::printf("%s", p ? p->text().c_str() : ("# refused: " + why + "\n").c_str());
    return 0;
  }
  if (seconds <= 0 && count == 0) seconds = 60;
  std::printf("scenario fuzzing: seed %llu, %s, failures to %s/\n", static_cast<unsigned long long>(seed),
              count ? fmt::format("{} scenarios", count).c_str() : fmt::format("{:.0f} s", seconds).c_str(),
              out.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::map<std::string, int> kinds, written;
  std::map<std::string, int> refusals;
  uint64_t n = first, passed = 0, reduce_runs = 0;
  double slowest = 0;
  for (; (count == 0 || n - first < count) && (seconds <= 0 || elapsed() < seconds); ++n) {
    std::string why;
    const auto parts = draw_scenario(seed, n, &why);
    if (!parts) {
      ++refusals[why.substr(0, why.find('\n'))];
      ++kinds["refused"];
      continue;
    }
    const std::string text = parts->text();
    const Outcome o = run_isolated(text, limit_s);
    slowest = std::max(slowest, o.seconds);
    if (o.kind.empty()) {
      ++passed;
      continue;
    }
    ++kinds[o.kind];
    if (o.kind == "slow_warned") continue;  // not a failure (run_in_process)
    if (o.kind == "refused") {
      ++refusals[o.message.substr(0, o.message.find('\n'))];
      continue;
    }
    std::printf("[%5.0f s] scenario %llu: %s: %s\n", elapsed(), static_cast<unsigned long long>(n),
                o.kind.c_str(), o.message.substr(0, 300).c_str());
    if (written[o.kind] >= max_per_kind) continue;
    ++written[o.kind];
    Parts small = *parts;
    std::string message = o.message;
    if (do_reduce) {
      int runs = 0;
      small = reduce(*parts, o.kind, limit_s, &runs);
      reduce_runs += static_cast<uint64_t>(runs);
      if (small.text() != text) message = run_isolated(small.text(), limit_s).message;
    }
    fs::create_directories(out);
    const std::string name = fmt::format("{}-s{}-{}", o.kind, seed, n);
    const fs::path file = fs::path(out) / (name + ".toml");
    std::ofstream f(file);
    f << fmt::format(
             "# Found by `make fuzz-scenarios` (fuzz/scenario_fuzz.cc) on {}: seed {}, scenario {}{}.\n"
             "# Failure ({}):\n{}"
             "# Replay: build/rocesim_scenario_fuzz --replay {}\n"
             "#     or: build/rocesim run {} --check -o /tmp/replay --force\n"
             "# (ScenarioCorpus.EveryFileHoldsTheInvariants in make test replays every file here.)\n",
             today(), seed, n, small.text() != text ? ", reduced" : "", o.kind, commented(message),
             file.string(), file.string())
      << small.text();
    std::printf("          written to %s\n", file.string().c_str());
  }
  std::printf("\n%llu scenarios in %.0f s (slowest %.1f s; %llu more runs reducing): %llu passed\n",
              static_cast<unsigned long long>(n - first), elapsed(), slowest,
              static_cast<unsigned long long>(reduce_runs), static_cast<unsigned long long>(passed));
  for (const auto& [k, c] : kinds) std::printf("  %-24s %d\n", k.c_str(), c);
  if (!refusals.empty()) std::printf("refusals (not failures):\n");
  for (const auto& [m, c] : refusals) std::printf("  %4d x %s\n", c, m.substr(0, 240).c_str());
  int failures = 0;
  for (const auto& [k, c] : kinds)
    if (k != "refused" && k != "slow_warned") failures += c;
  return failures ? 1 : 0;
}
