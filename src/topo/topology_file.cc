// Reader and writer for the ns-3 HPCC simulator's topology file; format notes in topology_file.h.
#include "topo/topology_file.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/text.h"
#include "core/text_fields.h"

namespace rocesim {
namespace {

using u128 = unsigned __int128;
constexpr int64_t kMaxRateBps = INT64_MAX;  // rates must stay below 2^63 bits/s

// ---- numbers -----------------------------------------------------------------------------------------

// A non-negative decimal "ddd", "ddd.ddd", ".ddd" or "ddd." as mantissa * 10^exp10 with up to 18
// significant digits (later digits are dropped: far below a picosecond or a bit per second).
struct Decimal {
  uint64_t mantissa = 0;
  int exp10 = 0;
};

std::optional<Decimal> parse_decimal(std::string_view s) {
  Decimal d;
  int sig = 0;
  bool dot = false, any_digit = false;
  for (char c : s) {
    if (c == '.') {
      if (dot) return std::nullopt;
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    any_digit = true;
    const int digit = c - '0';
    if (sig == 0 && digit == 0) {  // leading zero
      if (dot && d.exp10 > -1000) --d.exp10;
    } else if (sig < 18) {
      d.mantissa = d.mantissa * 10 + static_cast<uint64_t>(digit);
      ++sig;
      if (dot) --d.exp10;
    } else if (!dot && d.exp10 < 1000) {
      ++d.exp10;  // dropped integer digit still scales the value
    }
  }
  if (!any_digit) return std::nullopt;
  return d;
}

// mantissa * mult * 10^exp10, truncated (round = false) or rounded half up (round = true);
// nullopt if the result is 2^63 or more.
std::optional<int64_t> scale_decimal(Decimal d, uint64_t mult, int exp10, bool round) {
  u128 v = static_cast<u128>(d.mantissa) * mult;  // < 1e18 * 2^34: fits easily
  if (v == 0) return 0;
  const u128 limit = static_cast<u128>(INT64_MAX);
  if (exp10 >= 0) {
    for (int i = 0; i < exp10; ++i) {
      v *= 10;
      if (v > limit) return std::nullopt;
    }
  } else {
    if (exp10 < -38) return 0;  // v < 1e29 < 10^38 / 2: rounds and truncates to 0
    u128 div = 1;
    for (int i = 0; i < -exp10; ++i) div *= 10;
    const u128 q = v / div, r = v % div;
    v = q + ((round && 2 * r >= div) ? 1 : 0);
  }
  if (v > limit) return std::nullopt;
  return static_cast<int64_t>(v);
}

struct RateUnit {
  std::string_view suffix;
  uint64_t bps;
};
// ns-3.17 DataRate::DoParse's suffixes (B = 8 bits; k/K/M/G decimal, Ki/Mi/Gi binary).
// clang-format off
constexpr RateUnit kRateUnits[] = {
    {"bps", 1},            {"b/s", 1},            {"Bps", 8},            {"B/s", 8},
    {"kbps", 1000},        {"kb/s", 1000},        {"Kbps", 1000},        {"Kb/s", 1000},
    {"kBps", 8000},        {"kB/s", 8000},        {"KBps", 8000},        {"KB/s", 8000},
    {"Kib/s", 1024},       {"KiB/s", 8192},
    {"Mbps", 1000000},     {"Mb/s", 1000000},     {"MBps", 8000000},     {"MB/s", 8000000},
    {"Mib/s", 1048576},    {"MiB/s", 8388608},
    {"Gbps", 1000000000},  {"Gb/s", 1000000000},  {"GBps", 8000000000},  {"GB/s", 8000000000},
    {"Gib/s", 1073741824}, {"GiB/s", 8589934592},
};
// clang-format on

struct TimeUnit {
  std::string_view suffix;
  int exp10;  // picoseconds per unit = 10^exp10
};
// ns-3.17 Time(std::string)'s suffixes; no suffix means seconds.
constexpr TimeUnit kTimeUnits[] = {{"s", 12}, {"ms", 9}, {"us", 6}, {"ns", 3}, {"ps", 0}, {"fs", -3}};

enum class IntStatus { kOk, kNotInteger, kNegative, kTooBig };
struct IntParse {
  IntStatus status = IntStatus::kNotInteger;
  int64_t value = 0;
};

// An optionally signed run of decimal digits; values above INT_MAX are kTooBig.
IntParse parse_int(std::string_view s) {
  IntParse r;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return r;
  for (char c : s)
    if (c < '0' || c > '9') return r;
  while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
  uint64_t v = 0;
  if (s.size() > 18) {
    v = UINT64_MAX;
  } else {
    std::from_chars(s.data(), s.data() + s.size(), v);
  }
  if (negative && v != 0) {
    r.status = IntStatus::kNegative;
  } else if (v > static_cast<uint64_t>(INT_MAX)) {
    r.status = IntStatus::kTooBig;
  } else {
    r.status = IntStatus::kOk;
    r.value = static_cast<int64_t>(v);
  }
  return r;
}

// A double as "istream >> double" would read it (optional sign, decimal or exponent form), whole token.
std::optional<double> parse_double(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// ---- error-message helpers ---------------------------------------------------------------------------

// A token for an error message: quoted, non-printable bytes as \xNN, cut after 40 characters.
std::string quote(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  out += s.size() > kMax ? "'..." : "'";
  return out;
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ---- lines -------------------------------------------------------------------------------------------

struct Line {
  int number = 0;
  std::vector<std::string_view> tokens;
};

// Yields the non-blank lines of a text with their 1-based numbers.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}

  bool next(Line& out) {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      const std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      if (line_ < INT_MAX) ++line_;
      out.number = line_;
      out.tokens.clear();
      size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && is_space(line[i])) ++i;
        const size_t start = i;
        while (i < line.size() && !is_space(line[i])) ++i;
        if (i > start) out.tokens.push_back(line.substr(start, i - start));
      }
      if (!out.tokens.empty()) return true;
    }
    return false;
  }

  // Number of the last line read (1 for an empty text), for "file ends ..." errors.
  int last_line() const { return std::max(line_, 1); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 0;
};

// ---- the parser --------------------------------------------------------------------------------------

class TopologyParser {
 public:
  TopologyParser(std::string_view text, const std::string& file) : lines_(text), file_(file) {}

  TopoSpec parse() {
    parse_header();
    parse_switches();
    parse_links();
    Line extra;
    while (lines_.next(extra)) parse_kind_line(extra);
    check_every_node_linked();
    return build();
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw InputError(file_, line, what); }

  int64_t parse_count(const Line& l, size_t i, const char* what) const {
    const IntParse r = parse_int(l.tokens[i]);
    switch (r.status) {
      case IntStatus::kOk:
        return r.value;
      case IntStatus::kNegative:
        fail(l.number, std::string("the ") + what + " must not be negative, got " + quote(l.tokens[i]));
      case IntStatus::kTooBig:
        fail(l.number, std::string("the ") + what + " " + quote(l.tokens[i]) + " is too large");
      case IntStatus::kNotInteger:
        break;
    }
    fail(l.number, std::string("expected the ") + what + " (a whole number) on the header line, got " +
                       quote(l.tokens[i]));
  }

  // A node id in 0..num_nodes-1; `what` is "node id" or "switch id".
  int parse_id(const Line& l, std::string_view tok, const char* what, const std::string& where) const {
    const IntParse r = parse_int(tok);
    const std::string range = "0.." + std::to_string(num_nodes_ - 1);
    switch (r.status) {
      case IntStatus::kOk:
        if (r.value < num_nodes_) return static_cast<int>(r.value);
        [[fallthrough]];
      case IntStatus::kTooBig:  // tok is digits with an optional sign: print it bare, clipped
        fail(l.number, where + what + " " + std::string(tok.substr(0, 40)) + (tok.size() > 40 ? "..." : "") +
                           " out of range " + range);
      case IntStatus::kNegative:
        fail(l.number, where + std::string(what) + " must not be negative, got " + quote(tok) +
                           " (valid ids are " + range + ")");
      case IntStatus::kNotInteger:
        break;
    }
    fail(l.number, where + "expected a " + what + " (a whole number " + range + "), got " + quote(tok));
  }

  void parse_header() {
    Line l;
    if (!lines_.next(l)) fail(1, "file is empty: expected a header line 'nodes switches links'");
    header_line_ = l.number;
    if (l.tokens.size() != 3)
      fail(l.number, "expected a header line of 3 whole numbers 'nodes switches links', got " +
                         plural(static_cast<int64_t>(l.tokens.size()), "field", "fields"));
    num_nodes_ = parse_count(l, 0, "node count");
    num_switches_ = parse_count(l, 1, "switch count");
    num_links_ = parse_count(l, 2, "link count");
    if (num_nodes_ < 2)
      fail(l.number, "a topology needs at least 2 nodes, the header says " + std::to_string(num_nodes_));
    if (num_switches_ > num_nodes_)
      fail(l.number, "switch count " + std::to_string(num_switches_) + " exceeds the node count " +
                         std::to_string(num_nodes_));
    if (num_links_ == 0) fail(l.number, "link count is 0: every node needs at least one link");
  }

  void parse_switches() {
    if (num_switches_ == 0) return;  // no switch-id line (ns-3 would read an empty line 2)
    Line l;
    if (!lines_.next(l))
      fail(lines_.last_line(), "file ends before the switch ids: expected " +
                                   plural(num_switches_, "switch id", "switch ids") +
                                   " on the line after the header");
    const int64_t got = static_cast<int64_t>(l.tokens.size());
    if (got != num_switches_)
      fail(l.number, "expected " + plural(num_switches_, "switch id", "switch ids") + " on line " +
                         std::to_string(l.number) + ", got " + std::to_string(got) + " (line " +
                         std::to_string(header_line_) + " declares " + std::to_string(num_switches_) +
                         " switches)");
    switch_ids_.reserve(l.tokens.size());
    for (std::string_view tok : l.tokens) switch_ids_.push_back(parse_id(l, tok, "switch id", ""));
    std::vector<int> sorted = switch_ids_;
    std::sort(sorted.begin(), sorted.end());
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end())
      fail(l.number, "duplicate switch id " + std::to_string(*dup) + " on line " + std::to_string(l.number));
  }

  void parse_links() {
    Line l;  // reused: keeps its token vector's capacity
    for (int64_t i = 0; i < num_links_; ++i) {
      if (!lines_.next(l))
        fail(lines_.last_line(), "file ends after " + std::to_string(i) + " of " +
                                     plural(num_links_, "link", "links") + " declared on line " +
                                     std::to_string(header_line_));
      const std::string where = "link " + std::to_string(i + 1) + " of " + std::to_string(num_links_) + ": ";
      if (l.tokens.size() != 5)
        fail(l.number, where + "expected 5 fields 'a b rate delay error_rate', got " +
                           plural(static_cast<int64_t>(l.tokens.size()), "field", "fields"));
      LinkSpec link;
      link.a = parse_id(l, l.tokens[0], "node id", where);
      link.b = parse_id(l, l.tokens[1], "node id", where);
      if (link.a == link.b)
        fail(l.number, where + "link " + std::to_string(link.a) + "-" + std::to_string(link.b) +
                           " connects a node to itself");

      const std::optional<Rate> rate = parse_ns3_rate(l.tokens[2]);
      if (!rate) fail(l.number, where + "expected a rate like 100Gbps, got " + quote(l.tokens[2]));
      if (rate->bps <= 0) fail(l.number, where + "link rate must be positive, got " + quote(l.tokens[2]));
      link.rate = *rate;

      const std::optional<Time> delay = parse_ns3_time(l.tokens[3]);
      if (!delay)
        fail(l.number, where + "expected a delay like 1000ns or 0.001ms, got " + quote(l.tokens[3]));
      if (delay->ps < 0) fail(l.number, where + "link delay must not be negative, got " + quote(l.tokens[3]));
      link.delay = *delay;

      const std::optional<double> err = parse_double(l.tokens[4]);
      if (!err)
        fail(l.number, where + "expected an error rate (a number in [0,1]), got " + quote(l.tokens[4]));
      if (!(*err >= 0.0 && *err <= 1.0))
        fail(l.number, where + "error rate must be in [0,1], got " + quote(l.tokens[4]));
      link.error_rate = *err;
      links_.push_back(link);
    }
  }

  // After the links, optional lines naming node kinds: "gpu <host ids>", "nvswitch <switch ids>" or
  // "nic <switch ids>" (a NIC shared by GPUs)
  // (ns-3 stops reading after the links, so such a file is still its).
  void parse_kind_line(const Line& l) {
    const std::string_view word = l.tokens[0];
    const bool gpu = word == "gpu", nvswitch = word == "nvswitch", nic = word == "nic";
    if (!gpu && !nvswitch && !nic)
      fail(l.number, "expected the end of the file after the " + plural(num_links_, "link", "links") +
                         " declared on line " + std::to_string(header_line_) +
                         ", got another line starting " + quote(word) +
                         " (after the links, only lines of node kinds: 'gpu <host ids>', " +
                         "'nvswitch <switch ids>', 'nic <switch ids>')");
    if (l.tokens.size() < 2) fail(l.number, std::string(word) + ": expected at least one node id after it");
    if (kinds_.empty()) {
      check_every_node_linked();  // bounds num_nodes_ by the file's size before allocating per node
      kinds_.assign(static_cast<size_t>(num_nodes_), 0);
      is_switch_ = switch_mask();
    }
    const std::vector<char>& is_switch = is_switch_;
    for (size_t i = 1; i < l.tokens.size(); ++i) {
      const int id = parse_id(l, l.tokens[i], "node id", std::string(word) + ": ");
      if (gpu && is_switch[id])
        fail(l.number, "gpu: node " + std::to_string(id) + " is a switch (a GPU is a host: an endpoint)");
      if (!gpu && !is_switch[id])
        fail(l.number, std::string(word) + ": node " + std::to_string(id) +
                           " is not a switch (list it on the switch line)");
      if (kinds_[id])
        fail(l.number, std::string(word) + ": node " + std::to_string(id) + " is given a kind twice");
      kinds_[id] = gpu ? 1 : nvswitch ? 2 : 3;
    }
  }

  std::vector<char> switch_mask() const {
    std::vector<char> m(static_cast<size_t>(num_nodes_), 0);
    for (int id : switch_ids_) m[id] = 1;
    return m;
  }

  void check_every_node_linked() const {
    // Bound memory by the file's size before allocating per-node state: links touch 2 nodes each.
    if (num_nodes_ > 2 * num_links_)
      fail(header_line_, std::to_string(num_nodes_) + " nodes but only " +
                             plural(num_links_, "link", "links") +
                             ": some node has no link (every node needs at least one)");
    std::vector<char> linked(static_cast<size_t>(num_nodes_), 0);
    for (const LinkSpec& l : links_) linked[l.a] = linked[l.b] = 1;
    for (int64_t i = 0; i < num_nodes_; ++i)
      if (!linked[i])
        fail(header_line_, "node " + std::to_string(i) + " has no link (every one of the " +
                               std::to_string(num_nodes_) + " nodes declared on line " +
                               std::to_string(header_line_) + " needs at least one)");
  }

  TopoSpec build() {
    TopoSpec t;
    t.name = file_;
    t.num_nodes = static_cast<int>(num_nodes_);
    t.is_switch.assign(num_nodes_, false);
    for (int id : switch_ids_) t.is_switch[id] = true;
    t.links = std::move(links_);
    t.node_names.resize(num_nodes_);
    int hosts = 0, switches = 0;
    for (int i = 0; i < t.num_nodes; ++i)
      t.node_names[i] = t.is_switch[i] ? "s" + std::to_string(switches++) : "h" + std::to_string(hosts++);
    if (!kinds_.empty()) {
      t.kind.resize(static_cast<size_t>(num_nodes_));
      for (int i = 0; i < t.num_nodes; ++i)
        t.kind[i] = kinds_[i] == 1   ? NodeKind::kGpu
                    : kinds_[i] == 2 ? NodeKind::kNvSwitch
                    : kinds_[i] == 3 ? NodeKind::kNic
                    : t.is_switch[i] ? NodeKind::kSwitch
                                     : NodeKind::kHost;
    }
    return t;
  }

  LineReader lines_;
  const std::string& file_;
  int header_line_ = 1;
  int64_t num_nodes_ = 0, num_switches_ = 0, num_links_ = 0;
  std::vector<int> switch_ids_;
  std::vector<LinkSpec> links_;
  std::vector<char> kinds_;      // per node: 0 none named, 1 gpu, 2 nvswitch, 3 nic (empty: no kind line)
  std::vector<char> is_switch_;  // per node, once there is a kind line
};

std::string format_error_rate(double e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", e);  // ns-3's generators write 0.000000
  if (parse_double(buf) == e) return buf;
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, e);  // shortest exact form
  return std::string(buf, ec == std::errc() ? end : buf);
}

}  // namespace

std::optional<Rate> parse_ns3_rate(std::string_view s) {
  const size_t n = s.find_first_not_of("0123456789.");
  const std::string_view number = s.substr(0, n);
  const std::string_view suffix = n == std::string_view::npos ? std::string_view() : s.substr(n);
  const std::optional<Decimal> d = parse_decimal(number);
  if (!d) return std::nullopt;
  uint64_t mult = 0;
  if (suffix.empty()) {
    mult = 1;  // ns-3: a bare number is bits/s
  } else {
    for (const RateUnit& u : kRateUnits)
      if (u.suffix == suffix) mult = u.bps;
  }
  if (mult == 0) return std::nullopt;
  const std::optional<int64_t> bps = scale_decimal(*d, mult, d->exp10, /*round=*/false);
  if (!bps || *bps > kMaxRateBps) return std::nullopt;
  return Rate::from_bps(static_cast<double>(*bps));
}

std::optional<Time> parse_ns3_time(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const size_t n = s.find_first_not_of("0123456789.");
  const std::string_view number = s.substr(0, n);
  const std::string_view suffix = n == std::string_view::npos ? std::string_view() : s.substr(n);
  const std::optional<Decimal> d = parse_decimal(number);
  if (!d) return std::nullopt;
  std::optional<int> unit_exp;
  if (suffix.empty()) {
    unit_exp = 12;  // ns-3: a bare number is seconds
  } else {
    for (const TimeUnit& u : kTimeUnits)
      if (u.suffix == suffix) unit_exp = u.exp10;
  }
  if (!unit_exp) return std::nullopt;
  const std::optional<int64_t> ps = scale_decimal(*d, 1, d->exp10 + *unit_exp, /*round=*/true);
  if (!ps) return std::nullopt;
  return Time::from_ps(negative ? -*ps : *ps);
}

std::string format_ns3_rate(Rate r) {
  if (!std::isfinite(r.bps) || r.bps >= 9.2e18) throw std::invalid_argument("rate cannot be written");
  const int64_t bps = std::llround(r.bps);
  if (bps < 1) throw std::invalid_argument("rate below 1 bps cannot be written in ns-3 syntax");
  if (bps % 1000000000 == 0) return std::to_string(bps / 1000000000) + "Gbps";
  if (bps % 1000000 == 0) return std::to_string(bps / 1000000) + "Mbps";
  return std::to_string(bps) + "bps";
}

std::string format_ns3_time(Time t) {
  if (t.ps < 0) throw std::invalid_argument("negative time cannot be written as a link delay");
  if (t.ps % 1000 == 0) return std::to_string(t.ps / 1000) + "ns";
  return std::to_string(t.ps) + "ps";
}

TopoSpec parse_hpcc_topology(std::string_view text, const std::string& file) {
  return TopologyParser(text, file).parse();
}

TopoSpec read_hpcc_topology(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, 0, "cannot open topology file: it is a directory");
  const std::optional<std::string> text = read_text(path);
  if (!text) throw InputError(path, 0, "cannot open topology file (missing or unreadable)");
  return parse_hpcc_topology(*text, path);
}

void write_hpcc_topology(const TopoSpec& topo, std::ostream& out) {
  const int n = topo.num_nodes;
  if (n < 0 || topo.is_switch.size() != static_cast<size_t>(n))
    throw std::invalid_argument("write_hpcc_topology: is_switch size differs from num_nodes");
  std::vector<int> switches;
  for (int i = 0; i < n; ++i)
    if (topo.is_switch[i]) switches.push_back(i);

  std::string text;
  text += std::to_string(n) + " " + std::to_string(switches.size()) + " " +
          std::to_string(topo.links.size()) + "\n";
  for (size_t i = 0; i < switches.size(); ++i) text += (i ? " " : "") + std::to_string(switches[i]);
  text += "\n";
  for (const LinkSpec& l : topo.links) {
    if (l.a < 0 || l.a >= n || l.b < 0 || l.b >= n || l.a == l.b)
      throw std::invalid_argument("write_hpcc_topology: link " + std::to_string(l.a) + "-" +
                                  std::to_string(l.b) +
                                  " has an id out of range or connects a node to itself");
    if (!(l.error_rate >= 0.0 && l.error_rate <= 1.0))
      throw std::invalid_argument("write_hpcc_topology: error_rate outside [0,1]");
    text += std::to_string(l.a) + " " + std::to_string(l.b) + " " + format_ns3_rate(l.rate) + " " +
            format_ns3_time(l.delay) + " " + format_error_rate(l.error_rate) + "\n";
  }
  if (!topo.kind.empty()) {
    if (topo.kind.size() != static_cast<size_t>(n))
      throw std::invalid_argument("write_hpcc_topology: kind size differs from num_nodes");
    for (const NodeKind k : {NodeKind::kGpu, NodeKind::kNvSwitch, NodeKind::kNic}) {
      std::string line;
      for (int i = 0; i < n; ++i)
        if (topo.kind[i] == k) line += " " + std::to_string(i);
      if (!line.empty()) text += std::string(node_kind_name(k)) + line + "\n";
    }
  }
  out << text;
}

}  // namespace rocesim
