#include "config/profiles.h"

#include <fmt/format.h>

#include <sstream>

#include "cc/registry.h"
#include "core/text.h"

namespace rocesim {

namespace {

// The ns-3 HPCC simulator as its run.py configures it at 100 Gb/s hosts (docs/hpcc-sim-compat.md).
// Values that scale with the NIC speed in run.py (DCQCN R_AI/R_HAI, TIMELY's steps, HPCC's R_AI) are left
// to the scheme readers, which compute them from the topology's host rate the same way. The values of
// DCQCN, HPCC, TIMELY and DCTCP are the schemes' own (their registry entries, src/cc/<name>.cc).
constexpr std::string_view kHpccSimBase = R"(
[switch]
buffer_bytes = 33554432       # BUFFER_SIZE 32, in units of 2^20 B
pfc = true
pfc_mode = "dynamic"          # free shared buffer >> shift
reserve_bytes = 4096          # per (ingress port, queue)
resume_offset_bytes = 3072
dt_shift = 3                  # alpha 1/8 at host speed, one shift less per doubling
headroom_bytes = 0            # per port: 3 x rate x link delay
headroom_factor = 3.0
headroom_extra_bytes = 0      # (rocesim's own default adds 2 packets)
ecn = true
kmin_bytes = 400000           # KMIN_MAP/KMAX_MAP: 400/1600 KB at 100 Gb/s, x4 at 400 Gb/s
kmax_bytes = 1600000
pmax = 0.2
ecn_scale_with_rate = true
ecn_ref_rate_gbps = 100.0
acks_in_data_class = true     # quirk: its switches ignore ACK_HIGH_PRIO (docs/coming-from-hpcc-sim.md)
ecmp_hash = "hpcc_sim"        # its hash, seeds and next-hop order: every flow takes the simulator's path

[nic]
mtu_bytes = 1000              # PACKET_PAYLOAD_SIZE
header_bytes = 36             # on the wire: PPP 2 + IPv4 20 + UDP 8 + sequence header 6 (1036 B packets)
int_hop_bytes = 8             # HPCC data packets: 1000 + 36 + 2 + 5 x 8 = 1078 B
int_base_bytes = 2
timestamp_bytes = 8           # TIMELY data packets carry their send time: 1044 B
ack_bytes = 48                # padded to 60 B with a 14 B header it never sends; HPCC adds INT
ack_interval = 1              # L2_ACK_INTERVAL 1: every packet
ack_priority = "scheme"       # DCQCN/TIMELY: control class; HPCC/DCTCP: data class (ACK_HIGH_PRIO of run.py)
nack_interval_us = 500.0
rto_us = 0.0                  # automatic; the simulator has no timer, ours never fires on its lossless runs
data_priority = 3
rx_rate_gbps = 0.0
ideal_fct = "hpcc_ns"         # standalone FCT in its integer-ns arithmetic
source_ports = "per_pair"     # sport from 10000 per (source, destination), as its third.cc (ECMP hashes it)

[flow_file]
start_times = "hpcc_sim"      # quirk: a start is the double's value floored to 1 ns, half of them 1 ns early

[output]
fct_hpcc = true               # fct.txt beside flows.csv
)";

toml::table parse_builtin(std::string_view text, const std::string& what) {
  try {
    return toml::parse(text, what);
  } catch (const toml::parse_error& e) {
    throw std::logic_error(fmt::format("built-in profile {} is not TOML: {}", what, e.description()));
  }
}

// Copies every leaf of `from` into `into` (tables merged, leaves replaced).
void merge_into(toml::table& into, const toml::table& from) {
  for (const auto& [k, v] : from) {
    if (const auto* sub = v.as_table()) {
      if (!into.contains(k) || !into.get(k)->is_table()) into.insert_or_assign(k, toml::table{});
      merge_into(*into.get(k)->as_table(), *sub);
    } else {
      into.insert_or_assign(k, v);
    }
  }
}

// Every leaf as (dotted key, TOML text of the value).
void leaves(const toml::table& t, const std::string& prefix,
            std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = v.as_table()) {
      leaves(*sub, key, out);
    } else {
      std::ostringstream os;
      v.visit([&](const auto& x) { os << x; });
      out.emplace_back(key, os.str());
    }
  }
}

// The node at a dotted key of `t`, or nullptr. `blocked` is set when a component on the way is not a
// table (the profile then leaves the key alone and Config reports the scenario's own problem).
const toml::node* lookup(const toml::table& t, const std::string& key, bool& blocked) {
  const toml::node* at = &t;
  for (const auto& part : split(key, ".")) {
    const auto* tbl = at->as_table();
    if (!tbl) {
      blocked = true;
      return nullptr;
    }
    at = tbl->get(part);
    if (!at) return nullptr;
  }
  return at;
}

// The value of an override "key=value" as a string (a TOML string, or a bare word).
std::string override_string(const std::string& value) {
  try {
    const toml::table t = toml::parse("v = " + value);
    if (auto s = t["v"].value<std::string>()) return *s;
  } catch (const toml::parse_error&) {
  }
  return value;
}

bool overridden(const std::vector<std::string>& overrides, const std::string& key) {
  for (const auto& o : overrides) {
    const std::string k = o.substr(0, o.find('='));
    if (k == key || key.rfind(k + ".", 0) == 0) return true;
  }
  return false;
}

// Each scheme's defaults in profile `profile`, as its registry entry declares them (cc/registry.h).
std::vector<std::pair<std::string, std::string>> scheme_defaults(const std::string& profile) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const SchemeEntry& e : scheme_registry())
    for (const auto& [name, text] : e.profiles)
      if (name == profile) out.emplace_back(e.name, text);
  return out;
}

}  // namespace

const std::vector<Profile>& profile_registry() {
  static const std::vector<Profile> r = {
      {"hpcc-sim",
       "the ns-3 HPCC simulator's defaults (its run.py at 100 Gb/s hosts): buffer, PFC, ECN, packets, ideal "
       "FCT, "
       "DCQCN/HPCC/TIMELY/DCTCP",
       std::string(kHpccSimBase), scheme_defaults("hpcc-sim")},
  };
  return r;
}

const Profile* find_profile(const std::string& name) {
  for (const auto& p : profile_registry())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> n;
  for (const auto& p : profile_registry()) n.push_back(p.name);
  return n;
}

toml::table profile_defaults(const Profile& p, const std::string& scheme) {
  toml::table t = parse_builtin(p.base_toml, "profile " + p.name);
  for (const auto& [s, text] : p.per_scheme)
    if (s == scheme) merge_into(t, parse_builtin(text, "profile " + p.name + " (" + s + ")"));
  return t;
}

AppliedProfile apply_profile(std::string_view text, const std::string& name,
                             const std::vector<std::string>& overrides) {
  AppliedProfile ap;
  ap.overrides = overrides;
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error&) {
    return ap;  // Config::parse reports it
  }
  // The profile: the last override wins over the file.
  std::string where = name;
  int line = 0;
  bool from_override = false;
  for (const auto& o : overrides)
    if (o.rfind("profile=", 0) == 0) {
      ap.name = override_string(o.substr(8));
      from_override = true;
    }
  if (!from_override) {
    const toml::node* n = doc.get("profile");
    if (!n) return ap;
    auto s = n->value_exact<std::string>();
    if (!s) return ap;  // Config reports the wrong type
    ap.name = *s;
    line = static_cast<int>(n->source().begin.line);
  } else {
    where = "--set profile";
  }
  const Profile* p = find_profile(ap.name);
  if (!p)
    throw InputError(where, line,
                     fmt::format("{}unknown profile '{}' (profiles: {})", from_override ? "" : "profile: ",
                                 ap.name, fmt::join(profile_names(), ", ")));

  // The scheme: the last override, else the file, else the profile's choice, else rocesim's default.
  ap.scheme = "dcqcn";
  const toml::table base = profile_defaults(*p, "");
  if (auto s = base["cc"]["scheme"].value<std::string>()) ap.scheme = *s;
  if (auto s = doc["cc"]["scheme"].value<std::string>()) ap.scheme = *s;
  for (const auto& o : overrides)
    if (o.rfind("cc.scheme=", 0) == 0) ap.scheme = override_string(o.substr(10));

  std::vector<std::pair<std::string, std::string>> kv;
  leaves(profile_defaults(*p, ap.scheme), "", kv);
  std::vector<std::string> out;
  for (const auto& [key, value] : kv) {
    bool blocked = false;
    if (lookup(doc, key, blocked) || blocked || overridden(overrides, key)) continue;
    out.push_back(key + "=" + value);
    ap.profile_keys.insert(key);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  ap.overrides = std::move(out);
  return ap;
}

InputError profile_error(const InputError& e, const AppliedProfile& p) {
  const std::string prefix = "--set ";
  if (p.name.empty() || e.file().rfind(prefix, 0) != 0) return e;
  const std::string key = e.file().substr(prefix.size());
  if (!p.profile_keys.count(key)) return e;
  std::string what = e.what();
  const std::string head = e.file() + ": ";
  if (what.rfind(head, 0) == 0) what = what.substr(head.size());
  return InputError(fmt::format("profile {} ({})", p.name, key), 0,
                    what + "; set the key in the scenario (or with --set) to replace the profile's value");
}

}  // namespace rocesim
