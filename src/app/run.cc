#include "app/run.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "app/progress.h"
#include "config/traffic.h"
#include "core/text.h"
#include "net/host.h"
#include "net/qp.h"
#include "net/switch.h"
#include "stats/collective_stats.h"
#include "stats/fct_stats.h"
#include "stats/flow_stream.h"
#include "stats/monitors.h"
#include "stats/writers.h"
#include "workload/collectives.h"

namespace fs = std::filesystem;

namespace rocesim {

namespace {
std::atomic<bool> g_stop_requested{false};
// Set-up of networks above either size is announced on stderr (with progress on a terminal).
constexpr int64_t kSetupNoticeBytes = int64_t{1} << 30;
constexpr int kSetupNoticeNodes = 4096;
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_stop() { g_stop_requested.store(true, std::memory_order_relaxed); }
bool stop_requested() { return g_stop_requested.load(std::memory_order_relaxed); }

int64_t peak_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

namespace {

nlohmann::json pfc_summary(Network& net) {
  nlohmann::json ports = nlohmann::json::array();
  uint64_t pauses = 0, resumes = 0;
  double paused_us = 0;
  const Time now = net.now();
  for (int id = 0; id < net.num_nodes(); ++id) {
    Node& n = net.node(id);
    for (Port& p : n.ports()) {
      Time paused = p.stats.paused_time;
      for (int prio = 0; prio < kNumPriorities; ++prio)
        if (p.paused[prio]) paused += now - p.paused_since[prio];  // still paused at the end
      if (p.stats.pause_sent == 0 && paused == Time::zero()) continue;
      pauses += p.stats.pause_sent;
      resumes += p.stats.resume_sent;
      paused_us += paused.us();
      const auto& names = net.topo().node_names;
      const int peer = p.peer->id();
      ports.push_back(
          {{"node", id},
           {"node_name", names.size() > static_cast<size_t>(id) ? names[id] : std::to_string(id)},
           {"port", p.index},
           {"peer", peer},
           {"peer_name", names.size() > static_cast<size_t>(peer) ? names[peer] : std::to_string(peer)},
           {"pauses_sent", p.stats.pause_sent},
           {"resumes_sent", p.stats.resume_sent},
           {"pauses_received", p.stats.pause_received},
           {"paused_time_us", paused.us()}});
    }
  }
  return {
      {"pauses_sent", pauses}, {"resumes_sent", resumes}, {"paused_time_us", paused_us}, {"ports", ports}};
}

// summary.json's "ecn": the CE marks the switches made (RED, or a scheme's agent where it replaces RED:
// PCN's NP-ECN, TCD's), in all and by where the marking port leads, and the switches that marked most. Only
// the kEcnTopSwitches switches with the most marks are listed, the rest summed: a k = 48 fat-tree has 2,880
// switches, and a list of every marking one would outweigh the rest of the file (which sweeps read once per
// run); the monitors' overviews are bounded the same way.
constexpr size_t kEcnTopSwitches = 16;

nlohmann::json ecn_summary(Network& net, const NetStats& st) {
  uint64_t marked = 0, to_hosts = 0;
  std::vector<std::pair<uint64_t, int>> by_switch;  // (marks, switch id) of the switches that marked
  for (int id = 0; id < net.num_nodes(); ++id) {
    Node& n = net.node(id);
    if (!n.is_switch()) continue;
    uint64_t m = 0;
    for (const Port& p : n.ports()) {
      m += p.stats.ecn_marked;
      if (!p.peer->is_switch()) to_hosts += p.stats.ecn_marked;
    }
    marked += m;
    if (m > 0) by_switch.emplace_back(m, id);
  }
  // Most marks first, then by id: the same order for any partitioning.
  std::sort(by_switch.begin(), by_switch.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  const auto& names = net.topo().node_names;
  nlohmann::json top = nlohmann::json::array();
  uint64_t listed = 0;
  for (size_t i = 0; i < by_switch.size() && i < kEcnTopSwitches; ++i) {
    const auto [m, id] = by_switch[i];
    top.push_back({{"node", id},
                   {"node_name", names.size() > static_cast<size_t>(id) ? names[id] : std::to_string(id)},
                   {"marked", m}});
    listed += m;
  }
  return {{"marked", marked},
          {"marked_to_hosts", to_hosts},
          {"marked_to_switches", marked - to_hosts},
          {"switches_marking", by_switch.size()},
          {"top_switches", top},
          {"other_switches_marked", marked - listed},
          {"echo_acks_sent", st.ecn_echo_acks_sent}};
}

// The switch agents' named per-port counters (SwitchAgent::port_counters), ports with any non-zero value,
// plus under "totals" their sums over all ports (the largest value for counters named max_*). Empty when the
// scheme reports none.
nlohmann::json scheme_counters(Network& net) {
  nlohmann::json ports = nlohmann::json::array();
  std::map<std::string, double> totals;
  std::vector<std::pair<const char*, double>> c;
  const auto& names = net.topo().node_names;
  auto name_of = [&](int id) {
    return names.size() > static_cast<size_t>(id) ? names[id] : std::to_string(id);
  };
  for (int id = 0; id < net.num_nodes(); ++id) {
    Node& n = net.node(id);
    if (!n.is_switch()) continue;
    for (Port& p : n.ports()) {
      c.clear();
      net.scheme_port_counters(id, p.index, c);
      if (std::none_of(c.begin(), c.end(), [](const auto& kv) { return kv.second != 0; })) continue;
      nlohmann::json e = {
          {"node_name", name_of(id)}, {"port", p.index}, {"peer_name", name_of(p.peer->id())}};
      for (const auto& [k, v] : c) {
        e[k] = v;
        // Counters named max_* are per-port maxima: their "total" is the largest; the others add up.
        if (std::string_view(k).starts_with("max_")) {
          totals[k] = std::max(totals[k], v);
        } else {
          totals[k] += v;
        }
      }
      ports.push_back(std::move(e));
    }
  }
  if (ports.empty()) return nullptr;
  return {{"ports", ports}, {"totals", totals}};
}

// pfc.txt of the ns-3 HPCC simulator, written as frames arrive; restores the previous observer when done
// (declared before any Monitors of the run so that it outlives them: they restore ours).
class PfcTxt {
 public:
  PfcTxt(Network& net, const std::string& path) : net_(net), path_(path), saved_(net.observers().on_pfc_rx) {
    if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
    out_.open(path, std::ios::binary);
    if (!out_) throw std::runtime_error("cannot write " + path);
    net.observers().on_pfc_rx = [this](const Node& n, int port, int prio, bool pause, Time t) {
      if (saved_) saved_(n, port, prio, pause, t);
      out_ << floor_ns(t) << ' ' << n.id() << ' ' << (n.is_switch() ? 1 : 0) << ' ' << port + 1 << ' '
           << (pause ? 1 : 0) << '\n';
    };
  }
  ~PfcTxt() { net_.observers().on_pfc_rx = saved_; }
  void close() {
    out_.close();
    if (!out_) throw std::runtime_error("cannot write " + path_);
  }

 private:
  Network& net_;
  std::string path_;
  std::function<void(const Node&, int, int, bool, Time)> saved_;
  std::ofstream out_;
};

// Finished flows go to the files and the statistics as they finish (stats/flow_stream.h, FctAccumulator),
// so that no per-flow record stays in memory. Declared before the checks and monitors, which chain this
// observer and restore it when they go, so that it outlives them.
class FlowSink {
 public:
  FlowSink(Network& net, const Scenario& s, FlowStreamWriter::Options files)
      : net_(net),
        saved_(net.observers().on_flow_finished),
        acc_(SizeBuckets::from_edges(s.size_buckets), s.class_labels, s.short_flow_bytes) {
    if (!files.flows_csv.empty() || !files.fct_txt.empty())
      writer_ = std::make_unique<FlowStreamWriter>(std::move(files), s.class_labels);
    net.observers().on_flow_finished = [this](const FlowRecord& r) {
      if (saved_) saved_(r);
      acc_.add(r);
      if (writer_) writer_->add(r);
    };
  }
  ~FlowSink() { net_.observers().on_flow_finished = saved_; }
  FlowSink(const FlowSink&) = delete;
  FlowSink& operator=(const FlowSink&) = delete;

  void close_files() {
    if (writer_) writer_->finish();
  }
  FctStats stats() { return acc_.finish(); }

 private:
  Network& net_;
  std::function<void(const FlowRecord&)> saved_;
  FctAccumulator acc_;
  std::unique_ptr<FlowStreamWriter> writer_;
};

// Removes the temporary result directory unless the run got to rename it (an error left it half written).
struct TmpDirGuard {
  fs::path dir;
  ~TmpDirGuard() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// How the run was split (docs/parallel.md): threads, partitions with their events, windows, and the share
// of the threads' time spent waiting at the window barriers.
nlohmann::json parallel_json(Network& net, double wall_seconds) {
  const Simulator& sim = net.sim();
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json crossing = nlohmann::json::array();
  double busy = 0;
  for (const auto& p : sim.partition_stats()) {
    events.push_back(p.events);
    crossing.push_back(p.mailbox_events);
    busy += p.busy_seconds;
  }
  const double thread_seconds = wall_seconds * net.threads();
  nlohmann::json ranks = nullptr;
  if (net.ranks()) {
    nlohmann::json bytes = nlohmann::json::array(), secs = nlohmann::json::array();
    for (const auto& r : sim.rank_stats()) {
      bytes.push_back(r.bytes_sent);
      secs.push_back(r.exchange_seconds);
    }
    ranks = {
        {"ranks", net.ranks()->size()},
        {"bytes_sent_per_rank", bytes},
        {"exchange_seconds_per_rank", secs},
        {"seconds_per_window", sim.windows() > 0 && !sim.rank_stats().empty()
                                   ? sim.rank_stats()[0].exchange_seconds / static_cast<double>(sim.windows())
                                   : 0.0}};
  }
  // What the windows allow on other thread counts (Simulator::schedule_bound): one thread's work and the
  // coordinator's over the windows' makespans and the coordinator's. Over ranks a rank sees only its own
  // partitions' times: no figure.
  nlohmann::json schedule = nullptr;
  if (const auto bound = sim.schedule_bound(); !bound.empty() && !net.ranks()) {
    schedule = nlohmann::json::object();
    const double serial = sim.coordinator_seconds();
    for (const auto& b : bound)
      schedule[std::to_string(b.threads)] = (busy + serial) / std::max(1e-12, b.window_seconds + serial);
  }
  return {{"threads", net.threads()},
          {"mpi", ranks},
          {"partitions", sim.num_partitions()},
          {"lookahead_us", sim.lookahead().us()},
          {"windows", sim.windows()},
          {"events_per_partition", events},
          {"events_sent_to_other_partitions", crossing},
          {"busy_seconds", busy},
          {"barrier_wait_seconds", sim.wait_seconds()},
          {"coordinator_seconds", sim.coordinator_seconds()},
          {"barrier_wait_fraction", thread_seconds > 0 ? sim.wait_seconds() / thread_seconds : 0.0},
          {"speedup_the_windows_allow", schedule}};
}

}  // namespace

void check_output_dir(const std::filesystem::path& out, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw std::runtime_error(
        fmt::format("{} exists and is not a directory; choose another -o", out.string()));
  if (fs::is_empty(out, ec)) return;
  const bool is_result = fs::exists(out / "summary.json", ec) || fs::exists(out / "flows.csv", ec);
  if (!is_result)
    throw std::runtime_error(
        fmt::format("{} is a non-empty directory that does not hold rocesim results; refusing to replace it",
                    out.string()));
  if (!force)
    throw std::runtime_error(
        fmt::format("{} already holds results; use --force to replace them", out.string()));
}

namespace {

// The temporary result directory next to `out`, emptied; the run's files go there until it is renamed.
fs::path make_tmp_dir(const fs::path& out) {
  const fs::path tmp = out.string() + ".tmp-" + std::to_string(getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  return tmp;
}

// Where finished flows are written: flows.csv (and fct.txt) in the result directory, and the fct.txt an
// ns-3 HPCC simulator config asks for.
FlowStreamWriter::Options flow_files(const Scenario& s, const RunOptions& opt, const fs::path& tmp) {
  FlowStreamWriter::Options files;
  if (!tmp.empty()) {
    files.flows_csv = (tmp / "flows.csv").string();
    if (opt.fct_hpcc || s.write_hpcc_fct) files.fct_txt.push_back((tmp / "fct.txt").string());
    files.transport_columns = s.transport_columns;
  }
  if (!opt.fct_txt_path.empty()) {
    const fs::path p(opt.fct_txt_path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    files.fct_txt.push_back(opt.fct_txt_path);
  }
  return files;
}

// Flows that start after the end of the run: with a finite source (flow file and [[flows]], no
// [[traffic]] generator, whose arrivals go on until their stop), count them and warn; a run that started
// no flow at all is an error (no results are written).
struct FlowsAfterEnd {
  uint64_t count = 0;
  Time first = Time::max(), last;
};

FlowsAfterEnd flows_after_end(const Scenario& s, Network& net, FlowSource& source, const RunResult& res) {
  FlowsAfterEnd after;
  if (const FlowSpec* next = net.pending_flow();
      next && !res.partial && res.stopped.kind == CheckFailure::Kind::kNone) {
    after.first = after.last = next->start;
    after.count = 1;
    if (s.traffic.empty())
      for (FlowSpec f; source.next(f);) {
        ++after.count;
        after.last = f.start;
      }
  }
  return after;
}

// Throws when the run started no flow; adds the warnings about flows that never started.
void check_flows_started(const Scenario& s, Network& net, const DagRunner* jobs, const FlowsAfterEnd& after,
                         RunResult& res) {
  const NetStats& st = net.stats();
  if (st.flows_started == 0 && after.count > 0)
    throw InputError(s.file, 0, no_flow_before_end_message(s, after.first, after.last));
  if (st.flows_started == 0 && !res.partial && res.stopped.kind == CheckFailure::Kind::kNone)
    throw InputError(
        s.file, 0,
        "no flow started: the scenario's flows ([[flows]], [flow_file], [[traffic]]) produced none "
        "(an empty flow file, or traffic whose hosts or stop_us leave nothing to send)");
  if (after.count > 0 && s.traffic.empty())
    res.warnings.push_back(
        flows_after_end_message(s, after.count, st.flows_started + after.count, after.last));
  if (jobs && jobs->unreleased() + net.released_waiting() > 0 && !res.partial &&
      res.stopped.kind == CheckFailure::Kind::kNone)
    res.warnings.push_back(
        fmt::format("{} flows of the collective / dependency_trace jobs never started: the run ended at {} "
                    "ms (duration_ms) "
                    "before the flows they wait for finished; collectives.csv lists the iterations that did "
                    "finish (raise "
                    "duration_ms to run them all)",
                    jobs->unreleased() + net.released_waiting(), net.now().ms()));
}

// summary.json's counters: flows, FCT, PFC, ECN marks, CNPs, drops, transport, switch, performance.
nlohmann::json summary_json(const Scenario& s, Network& net, const RunResult& res, const FctStats& fct,
                            const FlowsAfterEnd& after) {
  const NetStats& st = net.stats();
  const uint64_t events = net.sim().events_executed();
  nlohmann::json j;
  j["scenario"] = s.name;
  j["scheme"] = s.scheme;
  j["seed"] = s.seed;
  j["simulated_time_ms"] = net.now().ms();
  j["complete"] = net.all_flows_done();
  if (res.partial) j["partial"] = true;  // interrupted (Ctrl-C): only the flows finished so far
  j["flows"] = {{"started", st.flows_started},
                {"finished", st.flows_finished},
                {"unfinished", st.flows_started - st.flows_finished}};
  if (after.count > 0 && s.traffic.empty()) j["flows"]["after_end"] = after.count;  // never started
  if (!res.warnings.empty()) j["warnings"] = res.warnings;
  j["fct"] = to_json(fct);
  j["pfc"] = pfc_summary(net);
  j["ecn"] = ecn_summary(net, st);
  // Congestion notifications: CNP packets (of receivers and of switches) and, under DCQCN's per-ACK mode
  // (the hpcc-sim profile), the flags receivers put on ACKs instead; each as sent and as it reached a live
  // flow's sender.
  j["cnp"] = {{"sent", st.cnps_sent + st.cnps_from_switches + st.cnp_acks_sent},
              {"sent_by_receivers", st.cnps_sent},
              {"sent_by_switches", st.cnps_from_switches},
              {"sent_on_acks", st.cnp_acks_sent},
              {"received", st.cnps_received + st.switch_cnps_received + st.cnp_acks_received},
              {"received_from_receivers", st.cnps_received},
              {"received_from_switches", st.switch_cnps_received},
              {"received_on_acks", st.cnp_acks_received}};
  if (s.scheme == "dcqcn_tcd") j["cnp"]["ue_cnps_sent"] = st.ue_cnps_sent;  // of sent_by_receivers (TCD)
  j["drops"] = {{"data_buffer", st.data_drops},
                {"control_buffer", st.ctrl_drops},
                {"wire", st.wire_drops},
                {"unroutable", st.unroutable}};
  // Link events (net/link_events.h): what was lost on failed links, and when what happened.
  if (!s.events.empty()) {
    j["drops"]["link_failure"] = st.link_down_drops;
    nlohmann::json log = nlohmann::json::array();
    for (const LinkLogEntry& e : net.link_log()) log.push_back({{"time_us", e.at.us()}, {"event", e.what}});
    j["link_events"] = {{"route_updates", st.route_updates}, {"log", log}};
  }
  j["transport"] = {{"data_packets_sent", st.data_packets_sent},
                    {"retransmitted_packets", st.retransmitted_packets},
                    {"acks_sent", st.acks_sent},
                    {"nacks_sent", st.nacks_sent},
                    {"timeouts", st.timeouts},
                    {"bytes_delivered", st.bytes_delivered},
                    {"out_of_order_packets", st.out_of_order_packets},
                    {"spurious_retransmissions", st.spurious_retransmissions},
                    {"timeout_retransmissions", st.timeout_retransmissions}};
  if (s.transport_columns) {
    const bool selective = net.selective();
    j["loss_recovery"] = {{"mode", selective ? "selective" : "go_back_n"},
                          {"retransmitted_bytes", st.retransmitted_bytes},
                          {"sacks_sent", st.sacks_sent},
                          {"sack_window_packets", net.sack_window_packets()}};
  }
  j["switch"] = {{"max_ingress_bytes", st.max_ingress_bytes},
                 {"max_buffer_bytes", st.max_switch_buffer_bytes},
                 {"switch_messages", st.switch_messages}};
  j["performance"] = {
      {"events", events},
      {"packet_hops", st.packet_hops},
      {"wall_seconds", res.wall_seconds},
      {"events_per_second", res.wall_seconds > 0 ? events / res.wall_seconds : 0.0},
      {"packet_hops_per_second", res.wall_seconds > 0 ? st.packet_hops / res.wall_seconds : 0.0},
      {"peak_memory_bytes", peak_rss_bytes()},
      {"parallel", parallel_json(net, res.wall_seconds)}};
  return j;
}

// summary.json's "stopped": why a check stopped the run (with the cycle of a deadlock).
nlohmann::json stopped_json(const CheckFailure& f) {
  nlohmann::json stop = {{"reason", to_string(f.kind)}, {"time_us", f.at.us()}, {"message", f.message}};
  if (f.kind == CheckFailure::Kind::kDeadlock) {
    stop["since_us"] = f.since.us();
    nlohmann::json cycle = nlohmann::json::array();
    for (const DeadlockEdge& e : f.cycle)
      cycle.push_back({{"node", e.node},
                       {"port", e.port},
                       {"priority", e.prio},
                       {"peer", e.peer},
                       {"peer_port", e.peer_port},
                       {"paused_since_us", e.since.us()},
                       {"queued_bytes", e.queued}});
    stop["cycle"] = cycle;
  }
  return stop;
}

// Writes the files that are not streamed (summary.json, PARTIAL, scenario.resolved.toml, the monitors' and
// the jobs' CSVs) into `tmp`, then renames it to `out`.
void write_result_dir(const fs::path& tmp, const fs::path& out, const Scenario& s, Network& net,
                      const RunResult& res, Monitors* monitors, const DagRunner* jobs) {
  const NetStats& st = net.stats();
  write_file(tmp / "summary.json", res.summary.dump(2) + "\n");
  if (res.partial)
    write_file(tmp / "PARTIAL", fmt::format("Interrupted at {:.3f} ms simulated: {} of {} flows finished. "
                                            "Not a complete result; run again to redo it.\n",
                                            net.now().ms(), st.flows_finished, st.flows_started));
  {
    std::ostringstream os;
    os << "# Every value this run used, defaults included (rocesim " ROCESIM_VERSION ")\n"
       << s.resolved << "\n";
    if (!s.resolved_notes.empty()) os << "\n# Values left out and decided by rule:\n" << s.resolved_notes;
    write_file(tmp / "scenario.resolved.toml", os.str());
  }
  if (monitors) monitors->write(tmp);
  if (jobs) {
    std::ostringstream c, steps, timeline;
    write_collectives_csv(c, *jobs);
    write_collective_steps_csv(steps, *jobs);
    write_job_timeline_csv(timeline, *jobs);
    write_file(tmp / "collectives.csv", c.str());
    write_file(tmp / "collective_steps.csv", steps.str());
    write_file(tmp / "job_timeline.csv", timeline.str());
  }
  // Replace atomically: the result directory is complete or absent. Only an empty directory or a
  // previous result directory (checked before the run) is ever removed.
  if (fs::exists(out)) fs::remove_all(out);
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  fs::rename(tmp, out);
}

}  // namespace

RunResult run_network(const Scenario& s, Network& net, const RunOptions& opt) {
  RunResult res;
  res.warnings = s.warnings;
  auto source = s.make_flow_source();
  auto jobs = s.make_dependent_flows();  // collective and dependency_trace tables, or nullptr
  net.set_class_labels(s.class_labels);
  net.set_flow_source(source.get());
  net.set_dependent_flows(jobs.get());
  net.set_keep_finished(opt.keep_flows);
  // The result files are written into a temporary directory while the run goes, renamed when complete.
  fs::path out, tmp;
  if (!opt.out_dir.empty()) {
    out = opt.out_dir;
    check_output_dir(out, opt.force);
    tmp = make_tmp_dir(out);
  }
  TmpDirGuard tmp_guard{tmp};
  FlowStreamWriter::Options files = flow_files(s, opt, tmp);
  if (jobs)  // flows.csv's name column: a trace's own flow ids
    files.name_of = [runner = jobs.get()](uint32_t id) -> const std::string& {
      return runner->flow_name(id);
    };
  FlowSink sink(net, s, std::move(files));
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<PfcTxt> pfc_txt;
  if (!opt.pfc_txt_path.empty()) pfc_txt = std::make_unique<PfcTxt>(net, opt.pfc_txt_path);
  // [monitors]: off unless asked; they only observe (stats/monitors.h), their CSVs go with the results.
  // Checks (net/checks.h) before the monitors, so that they outlive them (observers are restored in order).
  NetChecker checker(net, opt.checks);
  std::unique_ptr<Monitors> monitors;
  if (s.monitors.any()) monitors = std::make_unique<Monitors>(net, s.monitors);
  RunProgress progress(opt.progress, opt.progress_every_s, s, net);  // app/progress.h: stderr
  {
    const std::function<void(Time)> shown = progress.callback();
    net.run(s.duration, s.stop_when_done, [&](Time t) {
      if (shown) shown(t);
      checker.on_progress(t);
      if (stop_requested()) net.sim().stop();
    });
  }
  checker.finish();
  progress.finish();
  net.gather_node_results();  // across ranks: the ports' PFC statistics and scheme counters, to rank 0
  if (monitors) monitors->gather_ranks();  // and the sampled series
  if (monitors)
    for (std::string& w : monitors->warnings()) res.warnings.push_back(std::move(w));
  res.stopped = checker.failure();
  res.partial = stop_requested() && !net.all_flows_done();
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.keep_flows) res.flows = net.finished();
  if (pfc_txt) pfc_txt->close();
  sink.close_files();  // flows.csv (rows still waiting for an older flow) and fct.txt

  const FlowsAfterEnd after = flows_after_end(s, net, *source, res);
  check_flows_started(s, net, jobs.get(), after, res);
  nlohmann::json j = summary_json(s, net, res, sink.stats(), after);
  if (jobs) j["jobs"] = jobs_json(*jobs);
  if (monitors) j["monitors"] = monitors->summary();
  if (auto sc = scheme_counters(net); !sc.is_null()) j["scheme_counters"] = std::move(sc);
  if (opt.checks.invariants) j["checks"] = {{"invariant_samples", checker.invariant_checks()}};
  if (checker.failed()) j["stopped"] = stopped_json(checker.failure());
  res.summary = j;

  if (!tmp.empty()) {
    write_result_dir(tmp, out, s, net, res, monitors.get(), jobs.get());
    tmp_guard.dir.clear();
  }
  return res;
}

// The flow graphs of the collective and training jobs (one iteration each, re-run every iteration) and
// the iteration of each kept for job_timeline.csv (up to kTimelineMaxFlows nodes).
int64_t estimate_job_memory_bytes(const Scenario& s) {
  const auto timeline = [](int64_t nodes) {
    return std::min<int64_t>(nodes, kTimelineMaxFlows) * static_cast<int64_t>(sizeof(FlowInterval));
  };
  int64_t b = 0;
  for (const TrafficSpec& t : s.traffic)
    if (t.enabled && t.pattern == "collective") {
      const int64_t flows = collective_flow_count(collective_params(s, t));
      b += FlowDag::estimate_bytes(flows) + timeline(flows);
    } else if (t.enabled && t.training) {  // chakra, simai: the compiled graph (timers included)
      const auto nodes = static_cast<int64_t>(t.training->dag.size());
      b += FlowDag::estimate_bytes(nodes) + nodes * static_cast<int64_t>(sizeof(Time)) + timeline(nodes);
    }
  return b;
}

int64_t estimate_run_memory_bytes(const Scenario& s) {
  // Everything that grows with the network (net/network.h) and the collective jobs' flow graphs; what
  // grows with the flows in flight comes on top.
  return Network::estimate_memory_bytes(s.topo, s.sw) + estimate_job_memory_bytes(s);
}

MemoryEstimate estimate_peak_memory(const Scenario& s, const WorkEstimate& w) {
  MemoryEstimate m;
  m.setup_bytes = estimate_run_memory_bytes(s);
  const TopoSpec& t = s.topo;
  // The partitions, as PartitionedRun::partition_fabric chooses them: one per kCacheBlockWeight of ports
  // and nodes, at least kPartitionsPerThread per thread with several threads, a multiple
  // of the threads, at most one per switch. Threads left out: every core from kThreadsAutoWeight up, else 1.
  int64_t switches = 0;
  for (int i = 0; i < t.num_nodes; ++i) switches += t.is_switch[i] ? 1 : 0;
  const int64_t weight = Network::fabric_weight(t);
  const int64_t cores = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  const int64_t threads = s.threads > 0    ? s.threads
                          : s.threads == 0 ? cores
                                           : (weight >= Network::kThreadsAutoWeight ? cores : 1);
  const int64_t parts = s.partitions > 0 ? s.partitions : Network::chosen_partitions(weight, threads, 1);
  m.partitions = std::max<int64_t>(1, std::min(parts, std::max<int64_t>(switches, 1)));
  m.partition_bytes = m.partitions * (Simulator::partition_bytes(static_cast<uint32_t>(m.partitions)) +
                                      static_cast<int64_t>(sizeof(NetPartition) + PacketPool::kChunkBytes));
  // The fabric's base round trip (mean path, mean link delay) and what the hosts' links can carry.
  double delay_s = 0, host_bytes_per_s = 0, host_links = 0;
  for (const LinkSpec& l : t.links) {
    delay_s += l.delay.sec();
    if (!t.is_switch[l.a] || !t.is_switch[l.b]) {
      host_bytes_per_s += l.rate.bps / 8;
      host_links += 1;
    }
  }
  if (!t.links.empty()) delay_s /= static_cast<double>(t.links.size());
  const double rtt_s = 2 * std::max(w.mean_hops, 1.0) * delay_s;
  const double span_s =
      w.flows > 0 && w.last_start > w.first_start ? (w.last_start - w.first_start).sec() : 0;
  const double bytes = static_cast<double>(w.bytes);
  double offered = span_s > 0 ? bytes / span_s : host_bytes_per_s;  // all at once: as fast as the hosts send
  if (host_bytes_per_s > 0) offered = std::min(offered, host_bytes_per_s);
  const double in_flight_bytes = std::min(bytes, offered * kSojournRtts * rtt_s);
  const double per_packet = static_cast<double>(std::max<Bytes>(s.nic.mtu_bytes, 1));
  // Data packets: the ACKs, at control priority, rarely queue (the benchmark cases' counts are of all).
  m.packets_in_flight = in_flight_bytes / per_packet;
  // A packet is two cache lines; its pool's chunks and its arrival event add about a quarter (k = 24 and
  // k = 32: the pools held 1.13-1.14 times the most packets ever live at once).
  m.packet_bytes = static_cast<int64_t>(m.packets_in_flight * 1.25 * sizeof(Packet));
  // The flows under way: started per second, each lasting at least its size at its host's rate plus a
  // round trip (Little's law again), at most all of them.
  if (w.flows > 0) {
    const double host_rate = host_links > 0 ? host_bytes_per_s / host_links : 0;
    const double lasts_s =
        (host_rate > 0 ? bytes / static_cast<double>(w.flows) / host_rate : 0) + kSojournRtts * rtt_s;
    const double started_per_s = span_s > 0 ? static_cast<double>(w.flows) / span_s : 0;
    m.flows_at_once = span_s > 0 ? std::min(static_cast<double>(w.flows), started_per_s * lasts_s)
                                 : static_cast<double>(w.flows);
  }
  m.flow_bytes = static_cast<int64_t>(m.flows_at_once * (sizeof(Qp) + 256));  // + its scheme state, flow spec
  m.peak_bytes = kProcessBytes + m.setup_bytes + m.partition_bytes + m.packet_bytes + m.flow_bytes;
  return m;
}

int64_t available_memory_bytes() {
  int64_t avail = 0;
  std::ifstream mi("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (mi >> key >> kb >> unit)
    if (key == "MemAvailable:") avail = kb * 1024;
  for (const char* cg : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(cg);
    std::string v;
    if (f >> v && !v.empty() && v != "max" && std::isdigit(static_cast<unsigned char>(v[0]))) {
      const int64_t lim = std::stoll(v);
      if (lim > 0 && (avail == 0 || lim < avail)) avail = lim;
    }
  }
  return avail;
}

int64_t check_run_memory(const Scenario& s) {
  const int64_t need = estimate_run_memory_bytes(s), avail = available_memory_bytes();
  const int64_t jobs = estimate_job_memory_bytes(s);
  if (avail > 0 && need > avail)
    throw std::runtime_error(
        fmt::format("{}: this run needs at least {:.1f} GB ({} nodes: the routing tables alone take {:.1f} "
                    "GB{}) but only "
                    "{:.1f} GB of memory is available; use a smaller topology{}",
                    s.name, need / 1e9, s.topo.num_nodes, Network::estimate_route_table_bytes(s.topo) / 1e9,
                    jobs > 0 ? fmt::format("; the collective jobs' flow graphs {:.1f} GB", jobs / 1e9) : "",
                    avail / 1e9, jobs > 0 ? " or smaller jobs (fewer ranks or chunks)" : ""));
  return need;
}

namespace {

// Sets up the network of `s` as a run does: checks the memory first (throws when it cannot fit), says so
// on stderr for a large one (with `progress`), and splits it over threads, partitions or ranks.
std::unique_ptr<Network> build_network(const Scenario& s, const RunOptions& opt) {
  // Refuse, before allocating anything, a run that cannot fit (rather than being killed hours into it).
  const int64_t need = check_run_memory(s);
  // A large network takes a while to set up (routes: one breadth-first search per destination): say so.
  const bool big = need > kSetupNoticeBytes || s.topo.num_nodes > kSetupNoticeNodes;
  if (opt.progress && big)
    fmt::print(stderr, "setting up {} nodes ({} hosts), about {} before the first event...\n",
               s.topo.num_nodes, s.topo.num_hosts(),
               need >= 1e9 ? fmt::format("{:.1f} GB", need / 1e9) : fmt::format("{:.0f} MB", need / 1e6));
  StatusLine line(stderr, opt.progress && is_terminal(stderr));
  const auto t0 = std::chrono::steady_clock::now();
  auto net = std::make_unique<Network>(
      s.topo, s.sw, s.nic, s.seed, s.make_scheme(), [&](const char* stage, double fraction) {
        if (line.due(StatusLine::Clock::now()))
          line.draw(fmt::format("setting up: {} {:.0f} %", stage, 100 * fraction));
      });
  line.clear();
  net->set_link_events(s.events);
  if (opt.ranks) {
    if (opt.checks.invariants)
      throw InputError("--check", 0,
                       "invariant mode reads every switch at once and does not run across ranks; check the "
                       "scenario in one process (rocesim run --check --threads N)");
    try {
      net->set_ranks(opt.ranks, s.threads, s.partitions);
    } catch (const std::invalid_argument& e) {
      const std::string given = s.partitions != 0 ? fmt::format(", partitions = {}", s.partitions) : "";
      throw InputError(s.file, 0, fmt::format("--mpi{}: {}", given, e.what()));
    }
  } else if (s.threads != 1 || s.partitions != 0) {
    try {
      net->set_parallel(s.threads, s.partitions);
    } catch (const std::invalid_argument& e) {
      // The settings given, as the scenario names them.
      std::string given =
          s.threads != 1 && s.threads != Scenario::kThreadsAuto ? fmt::format("threads = {}", s.threads) : "";
      if (s.partitions != 0)
        given += fmt::format("{}partitions = {}", given.empty() ? "" : ", ", s.partitions);
      throw InputError(s.file, 0, fmt::format("{}: {}", given, e.what()));
    }
  }
  if (opt.progress && big)
    fmt::print(stderr, "set up in {}\n",
               format_duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  return net;
}

}  // namespace

static_assert(Scenario::kThreadsAuto == Network::kThreadsAuto);

RunResult run_scenario(const Scenario& s, const RunOptions& opt) {
  std::unique_ptr<Network> net = build_network(s, opt);
  return run_network(s, *net, opt);
}

ProbeResult probe_scenario(const Scenario& s, double wall_s, bool announce) {
  using Clock = std::chrono::steady_clock;
  ProbeResult r;
  const auto t0 = Clock::now();
  RunOptions o;
  o.progress = announce;  // a large network's set-up, on stderr as for a run
  std::unique_ptr<Network> net = build_network(s, o);
  auto source = s.make_flow_source();
  auto jobs = s.make_dependent_flows();
  net->set_class_labels(s.class_labels);
  net->set_flow_source(source.get());
  net->set_dependent_flows(jobs.get());
  net->set_keep_finished(false);
  r.threads = net->threads();
  const auto t1 = Clock::now();
  r.setup_s = std::chrono::duration<double>(t1 - t0).count();
  // (wall s, events, packet-hops) every 2^16 events, for the rates over the probe's second half.
  struct Point {
    double wall;
    uint64_t events, hops;
  };
  std::vector<Point> points{{0, 0, 0}};
  bool stopped = false;
  net->run(
      s.duration, s.stop_when_done,
      [&](Time) {
        const double w = std::chrono::duration<double>(Clock::now() - t1).count();
        points.push_back({w, net->sim().events_executed(), net->stats().packet_hops});
        if (w >= wall_s) {
          stopped = true;
          net->sim().stop();
        }
      },
      uint64_t{1} << 16);
  r.wall_s = std::chrono::duration<double>(Clock::now() - t1).count();
  const NetStats st = net->stats();
  r.sim = net->now();
  r.events = net->sim().events_executed();
  r.packet_hops = st.packet_hops;
  r.delivered = st.bytes_delivered;
  r.finished = !stopped;
  // The rates over the second half: from the last point in the first (the start when there is none).
  Point from = points.front();
  for (const Point& p : points)
    if (p.wall <= r.wall_s / 2) from = p;
  const double span = r.wall_s - from.wall;
  if (span > 0) {
    r.events_per_s = static_cast<double>(r.events - from.events) / span;
    r.hops_per_s = static_cast<double>(r.packet_hops - from.hops) / span;
  }
  return r;
}

}  // namespace rocesim
