#include "config/hpcc_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "cc/registry.h"
#include "config/profiles.h"
#include "core/text.h"
#include "topo/topology_file.h"

namespace fs = std::filesystem;

namespace rocesim {

namespace {

enum class Kind { kUint, kDouble, kRate, kPath, kMap, kLinkDown };

struct KeyInfo {
  std::string_view key;
  Kind kind;
};

// Every key scratch/third.cc reads, with the form of its value.
constexpr KeyInfo kKeys[] = {
    {"ENABLE_QCN", Kind::kUint},
    {"USE_DYNAMIC_PFC_THRESHOLD", Kind::kUint},
    {"CLAMP_TARGET_RATE", Kind::kUint},
    {"PAUSE_TIME", Kind::kDouble},
    {"DATA_RATE", Kind::kPath},
    {"LINK_DELAY", Kind::kPath},
    {"PACKET_PAYLOAD_SIZE", Kind::kUint},
    {"L2_CHUNK_SIZE", Kind::kUint},
    {"L2_ACK_INTERVAL", Kind::kUint},
    {"L2_BACK_TO_ZERO", Kind::kUint},
    {"TOPOLOGY_FILE", Kind::kPath},
    {"FLOW_FILE", Kind::kPath},
    {"TRACE_FILE", Kind::kPath},
    {"TRACE_OUTPUT_FILE", Kind::kPath},
    {"SIMULATOR_STOP_TIME", Kind::kDouble},
    {"ALPHA_RESUME_INTERVAL", Kind::kDouble},
    {"RP_TIMER", Kind::kDouble},
    {"EWMA_GAIN", Kind::kDouble},
    {"FAST_RECOVERY_TIMES", Kind::kUint},
    {"RATE_AI", Kind::kRate},
    {"RATE_HAI", Kind::kRate},
    {"ERROR_RATE_PER_LINK", Kind::kDouble},
    {"CC_MODE", Kind::kUint},
    {"RATE_DECREASE_INTERVAL", Kind::kDouble},
    {"MIN_RATE", Kind::kRate},
    {"FCT_OUTPUT_FILE", Kind::kPath},
    {"HAS_WIN", Kind::kUint},
    {"GLOBAL_T", Kind::kUint},
    {"MI_THRESH", Kind::kUint},
    {"VAR_WIN", Kind::kUint},
    {"FAST_REACT", Kind::kUint},
    {"U_TARGET", Kind::kDouble},
    {"INT_MULTI", Kind::kUint},
    {"RATE_BOUND", Kind::kUint},
    {"ACK_HIGH_PRIO", Kind::kUint},
    {"DCTCP_RATE_AI", Kind::kRate},
    {"PFC_OUTPUT_FILE", Kind::kPath},
    {"LINK_DOWN", Kind::kLinkDown},
    {"ENABLE_TRACE", Kind::kUint},
    {"KMAX_MAP", Kind::kMap},
    {"KMIN_MAP", Kind::kMap},
    {"PMAX_MAP", Kind::kMap},
    {"BUFFER_SIZE", Kind::kUint},
    {"QLEN_MON_FILE", Kind::kPath},
    {"QLEN_MON_START", Kind::kUint},
    {"QLEN_MON_END", Kind::kUint},
    {"MULTI_RATE", Kind::kUint},
    {"SAMPLE_FEEDBACK", Kind::kUint},
    {"PINT_LOG_BASE", Kind::kDouble},
    {"PINT_PROB", Kind::kDouble},
};

// Keys rocesim does not support that have no effect on results: a warning each.
const std::map<std::string_view, std::string_view> kNoEffect = {
    {"TRACE_FILE", "the packet-level trace is not written by rocesim"},
    {"TRACE_OUTPUT_FILE", "the packet-level trace is not written by rocesim"},
    {"ENABLE_TRACE", "the packet-level trace is not written by rocesim"},
    {"QLEN_MON_FILE", "the queue-length dump is not written; rocesim's [monitors] sample queues instead"},
    {"QLEN_MON_START", "the queue-length dump is not written; rocesim's [monitors] sample queues instead"},
    {"QLEN_MON_END", "the queue-length dump is not written; rocesim's [monitors] sample queues instead"},
    {"DATA_RATE", "no effect in the simulator either: link rates come from the topology file"},
    {"LINK_DELAY", "no effect in the simulator either: link delays come from the topology file"},
    {"PAUSE_TIME", "no effect in the simulator either: a pause lasts until the resume frame"},
};

// Keys every mode uses, and the keys of each mode.
const std::set<std::string_view> kCommon = {"ENABLE_QCN",
                                            "USE_DYNAMIC_PFC_THRESHOLD",
                                            "PACKET_PAYLOAD_SIZE",
                                            "TOPOLOGY_FILE",
                                            "FLOW_FILE",
                                            "FCT_OUTPUT_FILE",
                                            "PFC_OUTPUT_FILE",
                                            "SIMULATOR_STOP_TIME",
                                            "CC_MODE",
                                            "MIN_RATE",
                                            "ERROR_RATE_PER_LINK",
                                            "L2_CHUNK_SIZE",
                                            "L2_ACK_INTERVAL",
                                            "L2_BACK_TO_ZERO",
                                            "RATE_BOUND",
                                            "ACK_HIGH_PRIO",
                                            "LINK_DOWN",
                                            "KMAX_MAP",
                                            "KMIN_MAP",
                                            "PMAX_MAP",
                                            "BUFFER_SIZE",
                                            "HAS_WIN"};

struct ModeInfo {
  uint64_t mode;
  std::string_view label;
  std::string_view scheme;          // empty: not supported
  std::set<std::string_view> keys;  // keys of this mode besides kCommon
};

const std::vector<ModeInfo>& modes() {
  static const std::vector<ModeInfo> m = {
      {1,
       "DCQCN",
       "dcqcn",
       {"ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "CLAMP_TARGET_RATE", "RP_TIMER", "EWMA_GAIN",
        "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI"}},
      {3,
       "HPCC",
       "hpcc",
       {"RATE_AI", "VAR_WIN", "GLOBAL_T", "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE",
        "SAMPLE_FEEDBACK"}},
      {7, "TIMELY", "timely", {"RATE_AI", "RATE_HAI"}},
      {8, "DCTCP", "dctcp", {"EWMA_GAIN", "DCTCP_RATE_AI", "VAR_WIN", "GLOBAL_T"}},
      {10, "HPCC-PINT", "", {"PINT_LOG_BASE", "PINT_PROB"}},
  };
  return m;
}

struct Entry {
  int line = 0;
  std::vector<std::string> tokens;               // the values as written
  uint64_t u = 0;                                // kUint
  double d = 0;                                  // kDouble
  Rate rate;                                     // kRate
  std::vector<std::pair<uint64_t, double>> map;  // kMap: rate (bps) -> value
  uint64_t down[3] = {0, 0, 0};                  // kLinkDown
};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A non-negative integer; "32.0" is accepted as 32 (Python 3 versions of run.py write such values).
bool parse_uint(const std::string& s, uint64_t& out) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto [p, ec] = std::from_chars(b, e, out);
  if (ec != std::errc() || p == b) return false;
  if (p == e) return true;
  if (*p != '.') return false;
  for (++p; p < e; ++p)
    if (*p != '0') return false;
  return true;
}

bool parse_double(const std::string& s, double& out) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e && std::isfinite(out);
}

std::string repr(const std::string& s) {
  std::ostringstream os;
  os << toml::value<std::string>(s);
  return os.str();
}
std::string repr(double v) {  // shortest round-trip form, always a TOML float
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
std::string repr(int64_t v) { return fmt::format("{}", v); }
std::string repr(bool v) { return v ? "true" : "false"; }

std::string rate_text(uint64_t bps) {
  if (bps % 1'000'000'000 == 0) return fmt::format("{} Gb/s", bps / 1'000'000'000);
  if (bps % 1'000'000 == 0) return fmt::format("{} Mb/s", bps / 1'000'000);
  return fmt::format("{} b/s", bps);
}

// The generated scenario: top-level keys, then one table after another.
class TomlOut {
 public:
  void add(const std::string& table, const std::string& key, const std::string& value,
           const std::string& src = "", int line = 0) {
    auto it = std::find_if(tables_.begin(), tables_.end(), [&](const auto& t) { return t.first == table; });
    if (it == tables_.end()) {
      tables_.push_back({table, {}});
      it = tables_.end() - 1;
    }
    it->second.push_back({key, value, src, line});
  }
  std::string render(const std::string& header, std::vector<HpccConfig::Origin>& origins) const {
    std::string out = header;
    int line = static_cast<int>(std::count(header.begin(), header.end(), '\n'));
    for (const auto& [table, items] : tables_) {
      if (!table.empty()) {
        out += "\n[" + table + "]\n";  // "[name]": an array of tables, [[name]]
        line += 2;
      }
      for (const auto& it : items) {
        std::string l = it.key + " = " + it.value;
        if (!it.src.empty()) l += std::string(l.size() < 40 ? 40 - l.size() : 1, ' ') + "# " + it.src;
        out += l + "\n";
        ++line;
        if (it.line > 0) origins.push_back({line, it.src, it.line});
      }
    }
    return out;
  }

 private:
  struct Item {
    std::string key, value, src;
    int line;
  };
  std::vector<std::pair<std::string, std::vector<Item>>> tables_;
};

// Throws unless `key` on `line` has exactly `n` values (`what` says what they are).
void check_value_count(const std::string& path, int line, const std::string& key,
                       const std::vector<std::string>& v, size_t n, const std::string& what) {
  const auto fail = [&](const std::string& msg) { throw InputError(path, line, msg); };
  if (v.empty()) fail(fmt::format("{}: missing value; expected {}", key, what));
  if (v.size() < n)
    fail(fmt::format("{}: {} values after the key, expected {} ({})", key, v.size(), n, what));
  if (v.size() > n)
    fail(fmt::format("{}: unexpected '{}' after the value; expected {} (one key per line)", key, v[n], what));
}

class Reader {
 public:
  Reader(std::string path, std::string cwd, HpccConfig& out)
      : path_(std::move(path)), cwd_(std::move(cwd)), out_(out) {}

  void parse(std::string_view text) {
    int lineno = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      const size_t nl = text.find('\n', pos);
      const std::string_view line =
          text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++lineno;
      auto t = words(line);
      if (t.empty() || t[0][0] == '#') continue;
      read_key(lineno, t);
    }
  }

  void translate();

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw InputError(path_, line, what); }
  std::string at(int line) const { return line > 0 ? fmt::format("{}:{}", path_, line) : path_; }
  void warn(int line, const std::string& what) {
    out_.warnings.push_back(fmt::format("{}: {}", at(line), what));
  }

  void read_key(int line, const std::vector<std::string>& t);
  bool has(std::string_view k) const { return e_.count(std::string(k)) > 0; }
  const Entry& get(std::string_view k) const { return e_.at(std::string(k)); }
  int line_of(std::string_view k) const { return has(k) ? get(k).line : 0; }
  uint64_t uint_or(std::string_view k, uint64_t def) const { return has(k) ? get(k).u : def; }
  std::string resolve(const std::string& p) const {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (fs::path(out_.base_dir) / p).lexically_normal().string();
  }
  [[noreturn]] void fail_unknown_key(int line, const std::string& key) const;
  void read_map(int line, const std::string& key, Entry& e);
  const ModeInfo& find_mode() const;
  void note_unused_keys(const ModeInfo& m);
  void check_unsupported_values();
  void write_scenario(const ModeInfo& m);
  void find_base_dir();
  void check_ecn_maps(const ModeInfo& m);
  void map_dcqcn();
  void map_hpcc();
  void map_timely();
  void map_dctcp();
  // Adds `table.key = value` coming from config key `src`.
  void put(const std::string& table, const std::string& key, const std::string& value, std::string_view src) {
    toml_.add(table, key, value, std::string(src), line_of(src));
  }
  void require(std::string_view k, uint64_t want, uint64_t def, const std::string& why) {
    const uint64_t v = uint_or(k, def);
    if (v != want)
      fail(line_of(k), fmt::format("{} {}{}: {}", k, v, has(k) ? "" : " (not set: its run.py value)", why));
  }

  std::string path_, cwd_;
  HpccConfig& out_;
  std::map<std::string, Entry> e_;
  TomlOut toml_;
};

void Reader::read_key(int line, const std::vector<std::string>& t) {
  const std::string& key = t[0];
  const KeyInfo* info = nullptr;
  for (const auto& k : kKeys)
    if (k.key == key) info = &k;
  if (!info) fail_unknown_key(line, key);
  Entry e;
  e.line = line;
  e.tokens.assign(t.begin() + 1, t.end());
  const auto& v = e.tokens;
  auto count = [&](size_t n, const std::string& what) { check_value_count(path_, line, key, v, n, what); };
  switch (info->kind) {
    case Kind::kUint:
      count(1, "a non-negative integer");
      if (!parse_uint(v[0], e.u))
        fail(line, fmt::format("{}: '{}' is not a non-negative integer", key, v[0]));
      break;
    case Kind::kDouble:
      count(1, "a number");
      if (!parse_double(v[0], e.d)) fail(line, fmt::format("{}: '{}' is not a number", key, v[0]));
      break;
    case Kind::kRate: {
      count(1, "an ns-3 data rate such as 20Mb/s or 1Gbps");
      const auto r = parse_ns3_rate(v[0]);
      if (!r || r->bps <= 0)
        fail(line, fmt::format("{}: '{}' is not a positive ns-3 data rate (e.g. 20Mb/s, 1Gbps)", key, v[0]));
      e.rate = *r;
      break;
    }
    case Kind::kPath:
      count(1, key.find("FILE") != std::string::npos ? "a path" : "a value");
      break;
    case Kind::kLinkDown:
      count(3, "three numbers: time_us (after 2 s) node_a node_b (0 0 0 = no link failure)");
      for (int i = 0; i < 3; ++i)
        if (!parse_uint(v[i], e.down[i]))
          fail(line, fmt::format("{}: '{}' is not a non-negative integer", key, v[i]));
      break;
    case Kind::kMap:
      read_map(line, key, e);
      break;
  }
  if (auto it = e_.find(key); it != e_.end())
    warn(line, fmt::format("{} is set again (first on line {}); the later value wins, as in the simulator",
                           key, it->second.line));
  e_[key] = std::move(e);
}

void Reader::fail_unknown_key(int line, const std::string& key) const {
  std::string_view near;
  size_t best = 3;  // suggest a key at most 2 edits away
  for (const auto& k : kKeys)
    if (const size_t d = edit_distance(key, k.key); d < best) {
      best = d;
      near = k.key;
    }
  fail(line, fmt::format("unknown key '{}': not a key of the simulator's config (scratch/third.cc){}; "
                         "docs/coming-from-hpcc-sim.md lists the keys",
                         key, near.empty() ? "" : fmt::format("; did you mean {}?", near)));
}

// KMAX_MAP, KMIN_MAP, PMAX_MAP: a count n, then n pairs (rate in bits/s, value).
void Reader::read_map(int line, const std::string& key, Entry& e) {
  const auto& v = e.tokens;
  const bool pmax = key == "PMAX_MAP";
  const std::string form =
      fmt::format("a count n, then n pairs 'rate_bps {}'", pmax ? "probability" : "kilobytes");
  uint64_t n = 0;
  if (v.empty() || !parse_uint(v[0], n) || n == 0 || n > 64)
    fail(line, fmt::format("{}: expected {} (n from 1 to 64){}", key, form,
                           v.empty() ? "" : fmt::format("; got '{}'", v[0])));
  check_value_count(path_, line, key, v, 1 + 2 * n, form);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t rate = 0;
    double val = 0;
    const std::string& rs = v[1 + 2 * i];
    const std::string& vs = v[2 + 2 * i];
    if (!parse_uint(rs, rate) || rate == 0)
      fail(line, fmt::format("{}: '{}' is not a link rate in bits/s (e.g. 100000000000)", key, rs));
    uint64_t k = 0;
    if (pmax ? !parse_double(vs, val) || val < 0 || val > 1 : !parse_uint(vs, k))
      fail(line, fmt::format("{}: '{}' is not {}", key, vs,
                             pmax ? "a probability in [0, 1]" : "a whole number of KB"));
    if (!pmax) val = static_cast<double>(k);
    for (const auto& [r2, v2] : e.map)
      if (r2 == rate) fail(line, fmt::format("{}: rate {} appears twice", key, rate));
    e.map.emplace_back(rate, val);
  }
}

void Reader::find_base_dir() {
  if (!has("TOPOLOGY_FILE"))
    fail(0, "TOPOLOGY_FILE is not set: the simulator needs a topology file (e.g. TOPOLOGY_FILE mix/fat.txt)");
  if (!has("FLOW_FILE"))
    fail(0, "FLOW_FILE is not set: the simulator needs a flow file (e.g. FLOW_FILE mix/flow.txt)");
  const std::string topo = get("TOPOLOGY_FILE").tokens[0];
  const fs::path cwd = cwd_.empty() ? fs::current_path() : fs::absolute(cwd_);
  std::vector<fs::path> tried;
  std::error_code ec;
  if (fs::path(topo).is_absolute()) {
    out_.base_dir = cwd.string();
  } else {
    std::vector<fs::path> cand{cwd};
    fs::path dir = fs::absolute(path_).parent_path();
    while (true) {
      if (std::find(cand.begin(), cand.end(), dir) == cand.end()) cand.push_back(dir);
      if (!dir.has_parent_path() || dir.parent_path() == dir) break;
      dir = dir.parent_path();
    }
    for (const auto& c : cand) {
      tried.push_back((c / topo).lexically_normal());
      if (fs::is_regular_file(c / topo, ec)) {
        out_.base_dir = c.lexically_normal().string();
        break;
      }
    }
    if (out_.base_dir.empty()) {
      std::vector<std::string> t;
      for (size_t i = 0; i < tried.size() && i < 4; ++i) t.push_back(tried[i].string());
      fail(line_of("TOPOLOGY_FILE"), fmt::format("TOPOLOGY_FILE: cannot find '{}' (tried {}{})", topo,
                                                 fmt::join(t, ", "), tried.size() > 4 ? ", ..." : ""));
    }
    if (fs::path(out_.base_dir) != cwd.lexically_normal())
      out_.notes.push_back(
          fmt::format("{}: relative paths resolved against {} (where TOPOLOGY_FILE {} is), not the "
                      "working directory",
                      path_, out_.base_dir, topo));
  }
  out_.topology_file = resolve(topo);
  if (!fs::is_regular_file(out_.topology_file, ec))
    fail(line_of("TOPOLOGY_FILE"), fmt::format("TOPOLOGY_FILE: cannot find '{}'", out_.topology_file));
  out_.flow_file = resolve(get("FLOW_FILE").tokens[0]);
  if (!fs::is_regular_file(out_.flow_file, ec))
    fail(line_of("FLOW_FILE"), fmt::format("FLOW_FILE: cannot find '{}'", out_.flow_file));
  out_.fct_output = resolve(has("FCT_OUTPUT_FILE") ? get("FCT_OUTPUT_FILE").tokens[0] : "fct.txt");
  out_.pfc_output = resolve(has("PFC_OUTPUT_FILE") ? get("PFC_OUTPUT_FILE").tokens[0] : "pfc.txt");
}

// KMIN_MAP/KMAX_MAP/PMAX_MAP -> one threshold per map at the slowest switch port speed, scaled with port
// speed (the maps must be proportional to the speed over the speeds the topology uses).
void Reader::check_ecn_maps(const ModeInfo& m) {
  const TopoSpec topo = read_hpcc_topology(out_.topology_file);
  std::set<uint64_t> rates;
  for (const auto& l : topo.links)
    if (topo.is_switch[l.a] || topo.is_switch[l.b])
      rates.insert(static_cast<uint64_t>(std::llround(l.rate.bps)));
  if (rates.empty()) return;
  const uint64_t r0 = *rates.begin();
  const toml::table prof = profile_defaults(*find_profile("hpcc-sim"), std::string(m.scheme));
  const bool any = has("KMIN_MAP") || has("KMAX_MAP") || has("PMAX_MAP");
  if (!any) return;  // the profile's thresholds (at 100 Gb/s, scaled with speed)
  struct MapOut {
    std::string_view key, toml_key, prof_key;
    bool bytes;
  };
  const MapOut maps[] = {{"KMIN_MAP", "kmin_bytes", "kmin_bytes", true},
                         {"KMAX_MAP", "kmax_bytes", "kmax_bytes", true},
                         {"PMAX_MAP", "pmax", "pmax", false}};
  const double prof_ref = prof["switch"]["ecn_ref_rate_gbps"].value_or(100.0) * 1e9;
  for (const auto& mo : maps) {
    if (!has(mo.key)) {
      const double pv = prof["switch"][mo.prof_key].value_or(0.0);
      if (mo.bytes)
        toml_.add("switch", std::string(mo.toml_key),
                  repr(static_cast<int64_t>(std::llround(pv * static_cast<double>(r0) / prof_ref))),
                  fmt::format("not set: the profile's value at {}", rate_text(r0)));
      else
        toml_.add("switch", std::string(mo.toml_key), repr(pv), "not set: the profile's value");
      continue;
    }
    const Entry& e = get(mo.key);
    auto value_at = [&](uint64_t r) -> const double* {
      for (const auto& [rate, v] : e.map)
        if (rate == r) return &v;
      return nullptr;
    };
    for (uint64_t r : rates)
      if (!value_at(r))
        fail(e.line,
             fmt::format("{} has no entry for {} ({}), a switch port speed of {}; the simulator aborts "
                         "('must set {} for each link speed')",
                         mo.key, r, rate_text(r), out_.topology_file, mo.toml_key.substr(0, 4)));
    const double v0 = *value_at(r0);
    for (uint64_t r : rates) {
      const double v = *value_at(r);
      // Proportional to speed (thresholds) or equal (pmax), exactly: whole KB and whole bits/s.
      const bool ok =
          mo.bytes ? static_cast<long double>(v) * r0 == static_cast<long double>(v0) * r : v == v0;
      if (!ok)
        fail(e.line,
             fmt::format("{}: {} at {} and {} at {} are not {}; rocesim sets one value{} (not supported)",
                         mo.key, v0, rate_text(r0), v, rate_text(r),
                         mo.bytes ? "proportional to the port speed" : "equal",
                         mo.bytes ? " and scales it with port speed" : " for every port"));
    }
    if (mo.bytes)
      put("switch", std::string(mo.toml_key), repr(static_cast<int64_t>(std::llround(v0 * 1000))), mo.key);
    else
      put("switch", std::string(mo.toml_key), repr(v0), mo.key);
  }
  if (has("KMIN_MAP") && has("KMAX_MAP")) {
    const Entry& kmax = get("KMAX_MAP");
    for (const auto& [r, v] : get("KMIN_MAP").map)
      for (const auto& [r2, v2] : kmax.map)
        if (r == r2 && v2 < v && rates.count(r))
          fail(kmax.line,
               fmt::format("KMAX_MAP: {} KB at {} is below KMIN_MAP's {} KB", v2, rate_text(r), v));
  }
  put("switch", "ecn_scale_with_rate", "true", "KMIN_MAP");
  put("switch", "ecn_ref_rate_gbps", repr(static_cast<double>(r0) / 1e9),
      has("KMIN_MAP")   ? "KMIN_MAP"
      : has("KMAX_MAP") ? "KMAX_MAP"
                        : "PMAX_MAP");
}

void Reader::map_dcqcn() {
  require("HAS_WIN", 0, 0,
          "DCQCN with a window (run.py's dcqcn_vwin) is not supported; rocesim's DCQCN is rate-based (use "
          "HAS_WIN 0)");
  const std::string t = "cc.dcqcn";
  put(t, "variant", repr(std::string("hpcc_sim")), "CC_MODE");
  auto us = [&](std::string_view k, const std::string& tk) {
    if (has(k)) put(t, tk, repr(get(k).d), k);
  };
  us("ALPHA_RESUME_INTERVAL", "alpha_period_us");
  us("RATE_DECREASE_INTERVAL", "dec_period_us");
  us("RP_TIMER", "inc_period_us");
  if (has("EWMA_GAIN")) put(t, "g", repr(get("EWMA_GAIN").d), "EWMA_GAIN");
  if (has("FAST_RECOVERY_TIMES"))
    put(t, "fast_recovery_steps", repr(static_cast<int64_t>(get("FAST_RECOVERY_TIMES").u)),
        "FAST_RECOVERY_TIMES");
  if (has("RATE_AI")) put(t, "rate_ai_mbps", repr(get("RATE_AI").rate.mbps()), "RATE_AI");
  if (has("RATE_HAI")) put(t, "rate_hai_mbps", repr(get("RATE_HAI").rate.mbps()), "RATE_HAI");
  if (has("MIN_RATE")) put(t, "min_rate_mbps", repr(get("MIN_RATE").rate.mbps()), "MIN_RATE");
  if (has("CLAMP_TARGET_RATE"))
    put(t, "clamp_target", repr(get("CLAMP_TARGET_RATE").u != 0), "CLAMP_TARGET_RATE");
}

void Reader::map_hpcc() {
  require("HAS_WIN", 1, 1, "HPCC without a window is not supported (use HAS_WIN 1)");
  require("VAR_WIN", 1, 1, "HPCC with a fixed window is not supported (use VAR_WIN 1)");
  require("GLOBAL_T", 1, 1,
          "a T per host pair is not supported; rocesim's HPCC uses the longest base RTT (GLOBAL_T 1)");
  require("MULTI_RATE", 0, 0,
          "one rate per hop is not supported; rocesim's HPCC keeps one rate (MULTI_RATE 0)");
  require("SAMPLE_FEEDBACK", 0, 0, "sampled feedback is not supported (use SAMPLE_FEEDBACK 0)");
  if (has("INT_MULTI") && get("INT_MULTI").u != 1)
    warn(line_of("INT_MULTI"),
         fmt::format(
             "INT_MULTI {}: ignored; rocesim's INT records hold exact queue lengths and byte counts (the "
             "simulator counts them in units of 80 x {} B and 128 x {} B)",
             get("INT_MULTI").u, get("INT_MULTI").u, get("INT_MULTI").u));
  const std::string t = "cc.hpcc";
  if (has("U_TARGET")) put(t, "eta", repr(get("U_TARGET").d), "U_TARGET");
  if (has("MI_THRESH")) put(t, "max_stage", repr(static_cast<int64_t>(get("MI_THRESH").u)), "MI_THRESH");
  if (has("RATE_AI")) put(t, "rate_ai_mbps", repr(get("RATE_AI").rate.mbps()), "RATE_AI");
  if (has("MIN_RATE")) put(t, "min_rate_mbps", repr(get("MIN_RATE").rate.mbps()), "MIN_RATE");
  if (has("FAST_REACT")) put(t, "fast_react", repr(get("FAST_REACT").u != 0), "FAST_REACT");
  if (has("GLOBAL_T")) put(t, "t_us", repr(0.0), "GLOBAL_T");
}

void Reader::map_timely() {
  require("HAS_WIN", 0, 0, "TIMELY with a window (run.py's timely_vwin) is not supported (use HAS_WIN 0)");
  const std::string t = "cc.timely";
  if (has("RATE_AI")) put(t, "delta_mbps", repr(get("RATE_AI").rate.mbps()), "RATE_AI");
  if (has("RATE_HAI")) put(t, "hai_mbps", repr(get("RATE_HAI").rate.mbps()), "RATE_HAI");
  if (has("MIN_RATE")) put(t, "min_rate_mbps", repr(get("MIN_RATE").rate.mbps()), "MIN_RATE");
}

void Reader::map_dctcp() {
  const std::string t = "cc.dctcp";
  const bool win = uint_or("HAS_WIN", 1) != 0;
  if (win) {
    require("VAR_WIN", 1, 1, "DCTCP with a fixed window is not supported (use VAR_WIN 1, or HAS_WIN 0)");
    require("GLOBAL_T", 1, 1,
            "a T per host pair is not supported; the window is rate x the longest base RTT");
  }
  if (has("HAS_WIN")) put(t, "rate_window", repr(win), "HAS_WIN");
  if (has("EWMA_GAIN")) put(t, "g", repr(get("EWMA_GAIN").d), "EWMA_GAIN");
  if (has("DCTCP_RATE_AI")) put(t, "rate_ai_mbps", repr(get("DCTCP_RATE_AI").rate.mbps()), "DCTCP_RATE_AI");
  if (has("MIN_RATE")) put(t, "min_rate_mbps", repr(get("MIN_RATE").rate.mbps()), "MIN_RATE");
}

// CC_MODE (1 when not set): a mode of the simulator that rocesim supports with a scheme of this build.
const ModeInfo& Reader::find_mode() const {
  const uint64_t mode = uint_or("CC_MODE", 1);
  const ModeInfo* m = nullptr;
  for (const auto& mi : modes())
    if (mi.mode == mode) m = &mi;
  if (!m)
    fail(line_of("CC_MODE"),
         fmt::format("CC_MODE {} is not a mode of the simulator (1 DCQCN, 3 HPCC, 7 TIMELY, "
                     "8 DCTCP, 10 HPCC-PINT)",
                     mode));
  if (m->scheme.empty())
    fail(line_of("CC_MODE"), fmt::format("CC_MODE {} ({}) is not supported by rocesim", mode, m->label));
  if (!find_scheme(std::string(m->scheme)))
    fail(line_of("CC_MODE"), fmt::format("CC_MODE {} ({}) needs the {} scheme, not available in this build",
                                         mode, m->label, m->scheme));
  return *m;
}

// Keys rocesim ignores (warnings); keys of other modes and keys left unset (notes).
void Reader::note_unused_keys(const ModeInfo& m) {
  std::vector<std::string> unused, unset;
  std::vector<std::pair<int, std::string>> by_line;
  for (const auto& [k, e] : e_) by_line.emplace_back(e.line, k);
  std::sort(by_line.begin(), by_line.end());
  for (const auto& [line, k] : by_line) {
    if (auto it = kNoEffect.find(k); it != kNoEffect.end()) {
      warn(line, fmt::format("{} is not supported and is ignored: {}", k, it->second));
      continue;
    }
    if (!kCommon.count(k) && !m.keys.count(k)) unused.push_back(k);
  }
  if (!unused.empty())
    out_.notes.push_back(
        fmt::format("{}: not used by CC_MODE {} ({}): {}", path_, m.mode, m.label, fmt::join(unused, ", ")));
  for (const auto& k : kCommon)
    if (!has(k) && k != "FCT_OUTPUT_FILE" && k != "PFC_OUTPUT_FILE") unset.emplace_back(k);
  for (const auto& k : m.keys)
    if (!has(k)) unset.emplace_back(k);
  if (!unset.empty())
    out_.notes.push_back(fmt::format("{}: not set, so the hpcc-sim profile's (run.py's) values are used: {}",
                                     path_, fmt::join(unset, ", ")));
}

// Keys whose other values rocesim cannot honour.
void Reader::check_unsupported_values() {
  if (has("USE_DYNAMIC_PFC_THRESHOLD") && get("USE_DYNAMIC_PFC_THRESHOLD").u == 0)
    warn(line_of("USE_DYNAMIC_PFC_THRESHOLD"),
         "USE_DYNAMIC_PFC_THRESHOLD 0 has no effect in the simulator (its switch buffer always uses the "
         "dynamic "
         "threshold); rocesim uses the dynamic threshold too");
  require("RATE_BOUND", 1, 1, "sending without the rate limiter is not supported (use RATE_BOUND 1)");
  require("L2_BACK_TO_ZERO", 0, 0,
          "go-back-0 is not supported; rocesim retransmits go-back-N (L2_BACK_TO_ZERO 0)");
  if (has("ERROR_RATE_PER_LINK") && get("ERROR_RATE_PER_LINK").d != 0)
    fail(
        line_of("ERROR_RATE_PER_LINK"),
        fmt::format(
            "ERROR_RATE_PER_LINK {}: not supported; give the error rate in the topology file's fifth column, "
            "which rocesim honours per link",
            get("ERROR_RATE_PER_LINK").tokens[0]));
  const uint64_t payload = uint_or("PACKET_PAYLOAD_SIZE", 1000);
  if (has("PACKET_PAYLOAD_SIZE") && (payload < 64 || payload > 9000))
    fail(line_of("PACKET_PAYLOAD_SIZE"),
         fmt::format("PACKET_PAYLOAD_SIZE {}: expected 64 to 9000 bytes", payload));
  if (has("L2_ACK_INTERVAL")) {
    const uint64_t ai = get("L2_ACK_INTERVAL").u;
    if (ai == 0)
      fail(line_of("L2_ACK_INTERVAL"),
           "L2_ACK_INTERVAL 0 turns ACKs off in the simulator (its flows never finish); "
           "use 1 (ACK every packet)");
    if (ai > payload)
      fail(line_of("L2_ACK_INTERVAL"),
           fmt::format(
               "L2_ACK_INTERVAL {} (bytes) is more than a packet's payload ({}): the simulator's ACK pattern "
               "for it is not supported; rocesim ACKs every packet (L2_ACK_INTERVAL 1)",
               ai, payload));
  }
  if (has("SIMULATOR_STOP_TIME") &&
      !(get("SIMULATOR_STOP_TIME").d > 0 && get("SIMULATOR_STOP_TIME").d <= 1e4))
    fail(line_of("SIMULATOR_STOP_TIME"), fmt::format("SIMULATOR_STOP_TIME {}: expected seconds in (0, 10000]",
                                                     get("SIMULATOR_STOP_TIME").tokens[0]));
  if (has("BUFFER_SIZE") && (get("BUFFER_SIZE").u == 0 || get("BUFFER_SIZE").u > (uint64_t{1} << 20)))
    fail(line_of("BUFFER_SIZE"),
         fmt::format("BUFFER_SIZE {}: expected 1 to 1048576 (MB of 2^20 bytes)", get("BUFFER_SIZE").u));
}

// The equivalent rocesim scenario, into out_.scenario_toml.
void Reader::write_scenario(const ModeInfo& m) {
  toml_.add("", "name", repr(fs::path(path_).stem().string()));
  toml_.add("", "profile", repr(std::string("hpcc-sim")));
  if (has("SIMULATOR_STOP_TIME"))
    put("", "duration_ms", repr(get("SIMULATOR_STOP_TIME").d * 1000), "SIMULATOR_STOP_TIME");
  else
    toml_.add("", "duration_ms", repr(4000.0), "not set: run.py's 4.00 s");
  put("topology", "kind", repr(std::string("file")), "TOPOLOGY_FILE");
  put("topology", "file", repr(out_.topology_file), "TOPOLOGY_FILE");
  put("flow_file", "path", repr(out_.flow_file), "FLOW_FILE");
  if (has("ENABLE_QCN")) put("switch", "ecn", repr(get("ENABLE_QCN").u != 0), "ENABLE_QCN");
  if (has("USE_DYNAMIC_PFC_THRESHOLD"))
    put("switch", "pfc_mode", repr(std::string("dynamic")), "USE_DYNAMIC_PFC_THRESHOLD");
  if (has("BUFFER_SIZE"))
    put("switch", "buffer_bytes", repr(static_cast<int64_t>(get("BUFFER_SIZE").u << 20)), "BUFFER_SIZE");
  check_ecn_maps(m);
  if (has("PACKET_PAYLOAD_SIZE"))
    put("nic", "mtu_bytes", repr(static_cast<int64_t>(get("PACKET_PAYLOAD_SIZE").u)), "PACKET_PAYLOAD_SIZE");
  if (has("L2_ACK_INTERVAL")) put("nic", "ack_interval", repr(int64_t{1}), "L2_ACK_INTERVAL");
  if (has("ACK_HIGH_PRIO"))
    put("nic", "ack_priority", repr(std::string(get("ACK_HIGH_PRIO").u ? "high" : "data")), "ACK_HIGH_PRIO");
  put("cc", "scheme", repr(out_.scheme), "CC_MODE");
  if (m.mode == 1) map_dcqcn();
  if (m.mode == 3) map_hpcc();
  if (m.mode == 7) map_timely();
  if (m.mode == 8) map_dctcp();
  // LINK_DOWN t a b (t > 0): the simulator takes the link between nodes a and b down at 2 s + t us (its
  // flows' time origin) and recomputes every route at once: a link event with no detection delay.
  if (has("LINK_DOWN") && get("LINK_DOWN").down[0] > 0) {
    const auto& d = get("LINK_DOWN").down;
    put("switch", "failure_detection_us", repr(0.0), "LINK_DOWN");
    put("[events]", "at_us", repr(2e6 + static_cast<double>(d[0])), "LINK_DOWN");
    put("[events]", "link", fmt::format("[{}, {}]", d[1], d[2]), "LINK_DOWN");
    put("[events]", "action", repr(std::string("down")), "LINK_DOWN");
  }

  const std::string header = fmt::format(
      "# The rocesim scenario equivalent to {} (an ns-3 HPCC simulator config, CC_MODE {} = {}).\n"
      "# Keys it does not set come from the hpcc-sim profile (config/profiles.cc).\n",
      path_, m.mode, m.label);
  out_.scenario_toml = toml_.render(header, out_.origins);
}

void Reader::translate() {
  // The mode first: it decides which keys matter.
  const ModeInfo& m = find_mode();
  out_.cc_mode = static_cast<int>(m.mode);
  out_.scheme = std::string(m.scheme);
  note_unused_keys(m);
  check_unsupported_values();
  find_base_dir();
  write_scenario(m);
}

}  // namespace

HpccConfig parse_hpcc_config(std::string_view text, const std::string& path, const std::string& cwd) {
  HpccConfig out;
  out.path = path;
  Reader r(path, cwd, out);
  r.parse(text);
  r.translate();
  return out;
}

HpccConfig read_hpcc_config(const std::string& path, const std::string& cwd) {
  const std::optional<std::string> text = read_text(path);
  std::error_code ec;
  if (!text || fs::is_directory(path, ec))
    throw InputError(path, 0, "cannot open the simulator's config file");
  return parse_hpcc_config(*text, path, cwd);
}

Scenario load_hpcc_config_scenario(const HpccConfig& cfg, const std::vector<std::string>& overrides) {
  const std::string name = cfg.path + " (as a rocesim scenario)";
  try {
    return load_scenario_text(cfg.scenario_toml, name, overrides);
  } catch (const InputError& e) {
    if (e.file() != name) throw;
    std::string what = e.what();
    const std::string head = e.line() > 0 ? fmt::format("{}:{}: ", name, e.line()) : name + ": ";
    if (what.rfind(head, 0) == 0) what = what.substr(head.size());
    for (const auto& o : cfg.origins)
      if (o.toml_line == e.line()) throw InputError(cfg.path, o.line, fmt::format("{}: {}", o.key, what));
    throw InputError(
        cfg.path, 0,
        what + " (in the equivalent rocesim scenario, which `rocesim validate --hpcc-config` prints)");
  }
}

std::string files_scenario_toml(const std::string& topology_file, const std::string& flow_file) {
  return fmt::format(
      "# An ns-3 HPCC simulator topology file and flow file, run as they are.\n"
      "name = {}\n"
      "duration_ms = 4000.0                    # run.py's SIMULATOR_STOP_TIME 4.00 s (its flows start at 2 "
      "s)\n"
      "\n[topology]\nkind = \"file\"\nfile = {}\n"
      "\n[flow_file]\npath = {}\n",
      repr(fs::path(flow_file).stem().string()),
      repr(fs::absolute(topology_file).lexically_normal().string()),
      repr(fs::absolute(flow_file).lexically_normal().string()));
}

Scenario load_files_scenario(const std::string& topology_file, const std::string& flow_file,
                             const std::vector<std::string>& overrides) {
  return load_scenario_text(files_scenario_toml(topology_file, flow_file), "--topology-file/--flow-file",
                            overrides);
}

}  // namespace rocesim
