// Named parameter profiles: sets of scenario defaults that stand in for rocesim's own defaults.
//
// A scenario chooses one with the top-level key `profile = "hpcc-sim"` (or `rocesim run --profile NAME`,
// which is `--set profile=NAME`). The profile's values are defaults: a key the scenario file or a --set
// override gives keeps that value; every other key the profile names takes the profile's value. Values
// that depend on the scheme (its [cc.<scheme>] table, and e.g. DCTCP's step marking in [switch]) are
// applied only for the scheme the scenario selects. Every value used, the profile's included, is
// recorded in scenario.resolved.toml like any other, so rerunning that file gives the same result.
//
// Profiles:
//   hpcc-sim - the ns-3 HPCC simulator (alibaba-edu/High-Precision-Congestion-Control) as its run.py
//              configures it at 100 Gb/s hosts (docs/hpcc-sim-compat.md;
//              docs/coming-from-hpcc-sim.md): 32 MiB switch buffer (BUFFER_SIZE 32 x 2^20 B), reserve 4 KiB,
//              resume offset 3 KiB, headroom 3 x rate x delay (no extra packets), alpha 1/8 at host speed
//              (one shift less per doubling), RED 400/1600 KB at 100 Gb/s scaled with port speed, Pmax 0.2;
//              1000 B payload + 48 B headers
//              (+ 2 + 5 x 8 B INT for HPCC); ACK every packet; the ideal FCT in its integer-ns arithmetic;
//              fct.txt in the result directory; DCQCN "Mellanox" timers with the per-ACK congestion flag,
//              and its HPCC, TIMELY and DCTCP defaults (each in its scheme's file, src/cc/<name>.cc).
#pragma once
#include <toml++/toml.h>

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace rocesim {

struct Profile {
  std::string name;
  std::string summary;    // one line for `rocesim list`
  std::string base_toml;  // defaults for every scheme
  // scheme -> further defaults (TOML), from the schemes' registry entries (cc/registry.h)
  std::vector<std::pair<std::string, std::string>> per_scheme;
};

const std::vector<Profile>& profile_registry();
const Profile* find_profile(const std::string& name);
std::vector<std::string> profile_names();

// The defaults a profile gives a scenario that uses `scheme`, as one table.
toml::table profile_defaults(const Profile& p, const std::string& scheme);

struct AppliedProfile {
  std::string name;                    // the profile in effect; empty = none
  std::string scheme;                  // the scheme its per-scheme defaults were chosen for
  std::vector<std::string> overrides;  // the profile's defaults ("key=value"), then the user's overrides
  std::set<std::string> profile_keys;  // keys whose value comes from the profile
};

// Finds the profile a scenario asks for (the last --set profile=..., else its top-level `profile`) and
// returns the overrides to give Config::parse: the profile's value for every key that neither `text` nor
// `overrides` sets, followed by `overrides`. Without a profile, `overrides` unchanged. Throws InputError
// for an unknown profile name (naming the file and line, or the --set). A scenario that is not valid
// TOML is returned unchanged: Config::parse reports the syntax error.
AppliedProfile apply_profile(std::string_view text, const std::string& name,
                             const std::vector<std::string>& overrides);

// An error about a value the profile supplied, labelled as such instead of as a --set override.
InputError profile_error(const InputError& e, const AppliedProfile& p);

// Runs `f` (which reads the scenario), relabelling errors about the profile's own values.
template <class F>
auto with_profile_errors(const AppliedProfile& p, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    throw profile_error(e, p);
  }
}

}  // namespace rocesim
