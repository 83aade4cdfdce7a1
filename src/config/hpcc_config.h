// Running the ns-3 HPCC simulator's experiments as they are (docs/coming-from-hpcc-sim.md):
//
//  - its config.txt (`KEY value` per line, as run.py writes it for scratch/third.cc), translated into an
//    equivalent rocesim scenario with profile "hpcc-sim" (config/profiles.h) plus every key's value;
//  - a bare topology file + flow file pair (`rocesim run --topology-file T --flow-file F`).
//
// config.txt rules (each problem is an InputError "config.txt:LINE: KEY ..."):
//  - one key per line, then exactly the values that key takes (KMAX_MAP/KMIN_MAP/PMAX_MAP: a count n and
//    n "rate value" pairs; LINK_DOWN: three numbers); blank lines and lines starting with '#' are skipped
//    (an extension: the simulator has no comments);
//  - a key the simulator does not know is an error; a key set twice is a warning (the last value wins, as
//    in the simulator); keys rocesim does not support are a warning when they have no effect on results
//    (TRACE_FILE, TRACE_OUTPUT_FILE, ENABLE_TRACE, QLEN_MON_*, ...) and an error otherwise (e.g. HAS_WIN 1
//    with DCQCN, L2_BACK_TO_ZERO 1, MULTI_RATE 1 with HPCC), naming the key; LINK_DOWN t a b with t > 0
//    is a link event ([[events]]: the link a-b goes down at 2 s + t us, routes recomputed at once);
//  - keys of other CC modes are checked for syntax and otherwise unused; keys not set take the hpcc-sim
//    profile's values (those of run.py) and are listed in a note;
//  - relative paths resolve as the simulator resolves them, against the working directory; when
//    TOPOLOGY_FILE is not found there, against the config file's directory and then each directory above
//    it (run.py writes "mix/x.txt" for a run from the directory that holds mix/), and the directory where it
//    is found is used for every relative path, outputs included (a note says so).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "config/scenario.h"

namespace rocesim {

struct HpccConfig {
  std::string path;      // the config file
  std::string base_dir;  // relative paths resolve against it
  int cc_mode = 1;
  std::string scheme;                 // the rocesim scheme of CC_MODE
  std::string topology_file;          // resolved
  std::string flow_file;              // resolved
  std::string fct_output;             // FCT_OUTPUT_FILE, resolved ("fct.txt" when not set, as the simulator)
  std::string pfc_output;             // PFC_OUTPUT_FILE, resolved ("pfc.txt" when not set)
  std::string scenario_toml;          // the equivalent rocesim scenario
  std::vector<std::string> warnings;  // "config.txt:LINE: KEY ...": unsupported keys without effect, repeats
  std::vector<std::string> notes;     // keys left at the profile's values, unused keys, base directory

  // Line of the generated scenario -> the config key and line it came from (for error messages).
  struct Origin {
    int toml_line = 0;
    std::string key;
    int line = 0;
  };
  std::vector<Origin> origins;
};

// Reads a config.txt; `cwd` is the directory relative paths start from (the simulator's working
// directory; default: the current one). Checks that the topology and flow files exist and that the ECN
// maps cover every switch port speed of the topology. Throws InputError.
HpccConfig read_hpcc_config(const std::string& path, const std::string& cwd = "");
HpccConfig parse_hpcc_config(std::string_view text, const std::string& path, const std::string& cwd);

// The scenario of a config (plus --set `overrides`). Errors about a generated key name the config line.
Scenario load_hpcc_config_scenario(const HpccConfig& cfg, const std::vector<std::string>& overrides = {});

// A scenario made of an ns-3 topology file and flow file alone: `kind = "file"`, the flow file, and
// duration_ms = 4000 (run.py's SIMULATOR_STOP_TIME 4.00 s; its flows start at 2 s). Scheme, profile and
// duration come from `overrides` (cc.scheme=..., profile=..., duration_ms=...).
std::string files_scenario_toml(const std::string& topology_file, const std::string& flow_file);
Scenario load_files_scenario(const std::string& topology_file, const std::string& flow_file,
                             const std::vector<std::string>& overrides = {});

}  // namespace rocesim
