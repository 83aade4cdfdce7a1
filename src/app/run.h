// Running one scenario and writing its result directory.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/estimate.h"
#include "config/scenario.h"
#include "core/rank_comm.h"
#include "net/checks.h"
#include "net/network.h"

namespace rocesim {

struct RunOptions {
  std::string out_dir;    // empty: do not write files
  bool fct_hpcc = false;  // also write fct.txt in the ns-3 layout
  bool progress = false;  // live progress line on stderr
  // Without a terminal: a progress line every this many wall seconds (0 = none; app/progress.h).
  double progress_every_s = 60;
  bool force = false;  // replace an existing result directory
  // The ns-3 HPCC simulator's own outputs at paths of its config (FCT_OUTPUT_FILE, PFC_OUTPUT_FILE);
  // empty = not written. fct.txt: stats/writers.h; pfc.txt: one line per PFC frame received,
  // "time_ns node node_type ifindex 1/0" (node_type 1 = switch; ifindex = port + 1; 1 = pause).
  std::string fct_txt_path;
  std::string pfc_txt_path;
  // Deadlock detection and the no-progress watchdog (on by default), invariant mode (--check): net/checks.h.
  // A run they stop is written with "stopped" in summary.json and RunResult::stopped set.
  CheckOptions checks;
  // Also return every finished flow in RunResult::flows (memory grows with the flow count). Off, finished
  // flows only stream to the files and the statistics (stats/flow_stream.h, stats/fct_stats.h).
  bool keep_flows = false;
  // One run over the ranks of mpirun (`rocesim run --mpi`; docs/cluster.md), or null. Every rank calls
  // run_scenario with the same scenario; only the options of rank 0 should name output files.
  RankComm* ranks = nullptr;
};

struct RunResult {
  nlohmann::json summary;
  std::vector<FlowRecord> flows;  // in completion order; only with RunOptions::keep_flows
  double wall_seconds = 0;
  CheckFailure stopped;  // kind kNone unless a check stopped the run
  bool partial = false;  // interrupted by request_stop()
  // Things the user must hear about (also under "warnings" in summary.json), e.g. flows that start after
  // the end of the run. `rocesim run` prints them on stderr.
  std::vector<std::string> warnings;
};

// Builds the network, runs it and (when out_dir is set) writes flows.csv, summary.json,
// scenario.resolved.toml (and fct.txt). Files go to a temporary directory renamed when complete; flows.csv
// and fct.txt are written into it as flows finish, so memory stays flat however many flows a run has.
RunResult run_scenario(const Scenario& s, const RunOptions& opt);
// Runs on an already-built network (tests inspect it afterwards).
RunResult run_network(const Scenario& s, Network& net, const RunOptions& opt);

// Throws unless `out` is absent, an empty directory, or (with force) a previous result directory.
void check_output_dir(const std::filesystem::path& out, bool force);

// A lower bound of the memory a run of `s` needs before its first event (routing tables, nodes, ports),
// and the memory this machine (or cgroup) makes available. run_scenario refuses a run that cannot fit.
int64_t estimate_run_memory_bytes(const Scenario& s);
int64_t available_memory_bytes();  // 0 when unknown
// Throws (naming the estimate and what is available) when the run cannot fit; else returns the estimate.
int64_t check_run_memory(const Scenario& s);

// What a run of `s` holds at its peak, predicted from the scenario and its work (`rocesim validate`;
// docs/user-guide.md, "How long a run will take"): the program itself, the network before the first event
// (estimate_run_memory_bytes), each partition's calendar, mailboxes and first packet chunk, the packets in
// flight at the busiest moment and the flows under way then. The packets in flight follow Little's law: the
// offered bytes per second (the flows' payload over the span of their starts, at most what the hosts' links
// carry) times the time a byte spends in the fabric, taken as kSojournRtts base round trips (the benchmark
// fat-trees measured 1.6 to 4.8: docs/performance.md, "Memory of large fabrics").
struct MemoryEstimate {
  int64_t setup_bytes = 0;       // estimate_run_memory_bytes
  int64_t partitions = 1;        // as the run would choose them (threads, partitions, the fabric's size)
  int64_t partition_bytes = 0;   // all partitions together
  double packets_in_flight = 0;  // at the busiest moment
  int64_t packet_bytes = 0;      // those packets, their pools' slack and their events
  double flows_at_once = 0;      // flows under way at the busiest moment
  int64_t flow_bytes = 0;        // their QP slots and scheme state
  int64_t peak_bytes = 0;        // the sum, with kProcessBytes
};
inline constexpr double kSojournRtts = 2.5;
inline constexpr int64_t kProcessBytes = int64_t{12} << 20;  // the program and its libraries, resident
MemoryEstimate estimate_peak_memory(const Scenario& s, const WorkEstimate& w);

// Ctrl-C: asks a running run_network to stop at its next progress check (every 2^20 events); the finished
// flows are then written as a partial result ("partial": true in summary.json, and a PARTIAL file).
// Async-signal-safe (a lock-free atomic flag).
void request_stop();
bool stop_requested();

// A short run of the scenario itself, from its start, for `validate`'s wall-time estimate: its network is set
// up (announced on stderr when large, with `announce`) and run, writing nothing, until `wall_s` wall
// seconds have passed (or the run ends).
struct ProbeResult {
  double setup_s = 0;  // building the network
  double wall_s = 0;   // running it
  Time sim;            // simulated time reached
  uint64_t events = 0, packet_hops = 0;
  Bytes delivered = 0;
  bool finished = false;  // the whole run fitted in the probe
  int threads = 1;        // the threads it ran on (those left out: chosen by the fabric's size)
  // Over the probe's second half (its first fills the fabric; the whole probe when it ended earlier).
  double events_per_s = 0, hops_per_s = 0;
};
ProbeResult probe_scenario(const Scenario& s, double wall_s, bool announce = false);

// Peak resident memory of this process, in bytes.
int64_t peak_rss_bytes();

}  // namespace rocesim
