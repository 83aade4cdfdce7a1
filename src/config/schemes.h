// The scheme registry: each congestion-control scheme reads its own [cc.<name>] table into its settings
// struct and returns a factory. One entry per scheme in schemes.cc; each reader in config/cc_<name>.cc.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
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
// the scheme (config/cc_<name>.cc). They replace the [switch] defaults before the scenario's [switch] is
// read, so that any value the scenario (or its profile, or --set) gives still wins; scenario.resolved.toml
// shows the values used and says which came from the scheme. Returns what was set, for that note ("" when
// the scheme keeps the generic defaults).
using SwitchDefaultsFn = std::function<std::string(SwitchSettings&)>;

struct SchemeEntry {
  std::string name;
  std::string summary;  // one line for `rocesim list schemes`
  // Reads [cc.<name>] (every key via the Config getters, so resolved output and unknown-key checks work).
  std::function<SchemeFactory(Config&, const SchemeContext&)> read;
  SwitchDefaultsFn switch_defaults;  // empty: the generic [switch] defaults (DCQCN's RED marking)
};

const std::vector<SchemeEntry>& scheme_registry();
const SchemeEntry* find_scheme(const std::string& name);

// Readers, one per scheme (config/cc_<name>.cc).
SchemeFactory read_scheme_none(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_dcqcn(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_dctcp(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_timely(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_hpcc(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_pcn(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_pacc(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_icc(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_dcqcn_tcd(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_mercury(Config& c, const SchemeContext& ctx);
SchemeFactory read_scheme_lscc(Config& c, const SchemeContext& ctx);       // config/cc_lscc.cc
SchemeFactory read_scheme_hpcc_star(Config& c, const SchemeContext& ctx);  // config/cc_lscc.cc
SchemeFactory read_scheme_swing(Config& c, const SchemeContext& ctx);      // config/cc_lscc.cc
SchemeFactory read_scheme_rcm(Config& c, const SchemeContext& ctx);

// Switch defaults, one per scheme that has its own (config/cc_<name>.cc).
std::string switch_defaults_dctcp(SwitchSettings& s);
std::string switch_defaults_hpcc(SwitchSettings& s);  // hpcc and hpcc_star
std::string switch_defaults_timely(SwitchSettings& s);
std::string switch_defaults_none(SwitchSettings& s);  // config/cc_dcqcn.cc
std::string switch_defaults_pcn(SwitchSettings& s);
std::string switch_defaults_pacc(SwitchSettings& s);
std::string switch_defaults_icc(SwitchSettings& s);
std::string switch_defaults_mercury(SwitchSettings& s);
std::string switch_defaults_swing(SwitchSettings& s);  // config/cc_lscc.cc

// The DCQCN keys of [cc.dcqcn] read at `prefix` (config/cc_dcqcn.cc), for schemes whose sender is DCQCN's.
struct DcqcnSettings;
DcqcnSettings read_dcqcn_settings(Config& c, const std::string& prefix, Rate nic_rate);
// The DCQCN keys at `prefix` over `base` (no variant key); `np_keys`: also the notification point's
// cnp_interval_us and cnp_on_ack.
DcqcnSettings read_dcqcn_keys(Config& c, const std::string& prefix, DcqcnSettings base, bool np_keys);
// The HPCC keys of [cc.hpcc] (eta, max_stage, rate_ai_mbps, t_us, min_rate_mbps, fast_react, u_init) at
// `prefix` over `base` (config/cc_hpcc.cc).
struct HpccSettings;
HpccSettings read_hpcc_keys(Config& c, const std::string& prefix, HpccSettings base);

}  // namespace rocesim
