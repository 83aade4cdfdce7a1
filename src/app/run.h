// Running one scenario and writing its result directory.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.h"
#include "net/network.h"

namespace rocesim {

struct RunOptions {
  std::string out_dir;           // empty: do not write files
  bool fct_hpcc = false;         // also write fct.txt in the ns-3 layout
  bool progress = false;         // live progress line on stderr
  bool force = false;            // replace an existing result directory
  // The ns-3 HPCC simulator's own outputs at paths of its config (FCT_OUTPUT_FILE, PFC_OUTPUT_FILE);
  // empty = not written. fct.txt: stats/writers.h; pfc.txt: one line per PFC frame received,
  // "time_ns node node_type ifindex 1/0" (node_type 1 = switch; ifindex = port + 1; 1 = pause).
  std::string fct_txt_path;
  std::string pfc_txt_path;
};

struct RunResult {
  nlohmann::json summary;
  std::vector<FlowRecord> flows;     // in completion order
  double wall_seconds = 0;
};

// Builds the network, runs it and (when out_dir is set) writes flows.csv, summary.json,
// scenario.resolved.toml (and fct.txt). Files go to a temporary directory renamed when complete.
RunResult run_scenario(const Scenario& s, const RunOptions& opt);
// Runs on an already-built network (tests inspect it afterwards).
RunResult run_network(const Scenario& s, Network& net, const RunOptions& opt);

// Throws unless `out` is absent, an empty directory, or (with force) a previous result directory.
void check_output_dir(const std::filesystem::path& out, bool force);

// Peak resident memory of this process, in bytes.
int64_t peak_rss_bytes();

}  // namespace rocesim
