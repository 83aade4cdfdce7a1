// The scheme registry: every congestion-control scheme, one entry each. A scheme's entry comes from its own
// files (<name>_scheme() in src/cc/<name>.cc): its name, a summary, the reader of its [cc.<name>] table
// (through KeyReader, core/key_reader.h, so that cc/ does not depend on config/), the switch settings it
// expects and its values in named profiles. registry.cc lists the entries, one line per scheme.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/key_reader.h"
#include "core/time.h"
#include "net/cc_api.h"
#include "net/settings.h"

namespace rocesim {

struct SchemeContext {
  Rate nic_rate;      // fastest host link of the topology
  Time max_base_rtt;  // longest host-to-host base RTT (filled by the network; zero at parse time)
};

using SchemeFactory = std::function<std::unique_ptr<CongestionControl>()>;

// The switch settings a scheme expects (DCTCP: step marking at K; HPCC: INT, no ECN; ...), declared with
// the scheme (src/cc/<name>.cc). They replace the [switch] defaults before the scenario's [switch] is
// read, so that any value the scenario (or its profile, or --set) gives still wins; scenario.resolved.toml
// shows the values used and says which came from the scheme. Returns what was set, for that note ("" when
// the scheme keeps the generic defaults).
using SwitchDefaultsFn = std::function<std::string(SwitchSettings&)>;

struct SchemeEntry {
  std::string name;
  std::string summary;  // one line for `rocesim list schemes`
  // Reads [cc.<name>] (every key through the KeyReader getters, so that resolved output and unknown-key
  // checks work).
  std::function<SchemeFactory(KeyReader&, const SchemeContext&)> read;
  SwitchDefaultsFn switch_defaults = {};  // empty: the generic [switch] defaults (DCQCN's RED marking)
  // The scheme's defaults in named profiles (config/profiles.h): (profile name, TOML text of its
  // [cc.<name>] table and any [switch] values), applied only when the scenario selects this scheme.
  std::vector<std::pair<std::string, std::string>> profiles = {};
};

// Every scheme, in the order of `rocesim list schemes`.
const std::vector<SchemeEntry>& scheme_registry();
const SchemeEntry* find_scheme(const std::string& name);

}  // namespace rocesim
