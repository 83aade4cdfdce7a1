#include "workload/dependency_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/text.h"
#include "workload/collectives.h"

namespace rocesim {

namespace {

struct Row {
  std::string id, src, dst, bytes, start_us, delay_us, collective, collective_type;
  std::vector<std::string> after;
  bool has_start = false, has_delay = false;
  int line = 0;
};

// What a trace's fields and lines are trimmed of (CRLF files included).
constexpr std::string_view kTraceBlank = " \t\r";

// The fields of `s` between any of the characters `seps`, trimmed.
std::vector<std::string> trace_fields(const std::string& s, std::string_view seps) {
  std::vector<std::string> out = split(s, seps);
  for (std::string& f : out) f = trim(f, kTraceBlank);
  return out;
}

const std::vector<std::string> kColumns{"id",    "src",      "dst",        "bytes",          "start_us",
                                        "after", "delay_us", "collective", "collective_type"};
const std::vector<std::string> kCollectiveTypes{"allreduce", "allgather", "reduce_scatter",
                                                "alltoall",  "broadcast", "sendrecv"};

class Reader {
 public:
  Reader(const std::string& path, const HostResolver& host) : path_(path), host_(host) {}

  [[noreturn]] void fail(int line, const std::string& what) const { throw InputError(path_, line, what); }

  void csv_header(const std::string& line, int lineno) {
    const auto cols = trace_fields(line, ",");
    col_.assign(kColumns.size(), -1);
    for (size_t i = 0; i < cols.size(); ++i) {
      auto it = std::find(kColumns.begin(), kColumns.end(), cols[i]);
      if (it == kColumns.end())
        fail(lineno, fmt::format("unknown column '{}' in the header; the columns are {}", cols[i],
                                 fmt::join(kColumns, ", ")));
      if (col_[it - kColumns.begin()] >= 0) fail(lineno, fmt::format("column '{}' given twice", cols[i]));
      col_[it - kColumns.begin()] = static_cast<int>(i);
    }
    for (size_t k = 0; k < 4; ++k)
      if (col_[k] < 0)
        fail(lineno, fmt::format("the header has no '{}' column; a dependency trace's CSV header names at "
                                 "least id,src,dst,bytes (e.g. id,src,dst,bytes,start_us,after,delay_us)",
                                 kColumns[k]));
    ncols_ = cols.size();
  }

  Row csv_row(const std::string& line, int lineno) {
    const auto f = trace_fields(line, ",");
    if (f.size() != ncols_)
      fail(lineno, fmt::format("{} fields where the header has {} columns", f.size(), ncols_));
    Row r;
    r.line = lineno;
    auto get = [&](size_t k) { return col_[k] >= 0 ? f[static_cast<size_t>(col_[k])] : std::string(); };
    r.id = get(0);
    r.src = get(1);
    r.dst = get(2);
    r.bytes = get(3);
    r.start_us = get(4);
    r.has_start = !r.start_us.empty();
    for (const std::string& a : trace_fields(get(5), "; "))
      if (!a.empty()) r.after.push_back(a);
    r.delay_us = get(6);
    r.has_delay = !r.delay_us.empty();
    r.collective = get(7);
    r.collective_type = get(8);
    return r;
  }

  Row json_row(const std::string& line, int lineno) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      fail(lineno, fmt::format("not a JSON object: {}", e.what()));
    }
    if (!j.is_object()) fail(lineno, "expected one JSON object per line");
    for (auto it = j.begin(); it != j.end(); ++it)
      if (std::find(kColumns.begin(), kColumns.end(), it.key()) == kColumns.end())
        fail(lineno, fmt::format("unknown key '{}'; the keys are {}", it.key(), fmt::join(kColumns, ", ")));
    auto text = [&](const nlohmann::json& v, const char* key) -> std::string {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
      if (v.is_number()) return fmt::format("{}", v.get<double>());
      fail(lineno, fmt::format("'{}' must be a string or a number, got {}", key, v.dump()));
    };
    Row r;
    r.line = lineno;
    for (size_t k = 0; k < 4; ++k)
      if (!j.contains(kColumns[k])) fail(lineno, fmt::format("missing key '{}'", kColumns[k]));
    r.id = text(j["id"], "id");
    r.src = text(j["src"], "src");
    r.dst = text(j["dst"], "dst");
    r.bytes = text(j["bytes"], "bytes");
    if (j.contains("start_us")) {
      r.start_us = text(j["start_us"], "start_us");
      r.has_start = true;
    }
    if (j.contains("delay_us")) {
      r.delay_us = text(j["delay_us"], "delay_us");
      r.has_delay = true;
    }
    if (j.contains("collective")) r.collective = text(j["collective"], "collective");
    if (j.contains("collective_type")) r.collective_type = text(j["collective_type"], "collective_type");
    if (j.contains("after")) {
      const auto& a = j["after"];
      if (!a.is_array()) fail(lineno, "'after' must be an array of flow ids, e.g. [\"a\", \"b\"]");
      for (const auto& e : a) r.after.push_back(text(e, "after"));
    }
    return r;
  }

  double number(const Row& r, const std::string& v, const char* what, double lo) const {
    double x = 0;
    const auto res = std::from_chars(v.data(), v.data() + v.size(), x);
    if (res.ec != std::errc() || res.ptr != v.data() + v.size() || !std::isfinite(x))
      fail(r.line, fmt::format("{} '{}' is not a number", what, v));
    if (x < lo) fail(r.line, fmt::format("{} must be >= {}, got {}", what, lo, v));
    return x;
  }

  int node(const Row& r, const std::string& v, const char* what) const {
    if (v.empty()) fail(r.line, fmt::format("empty {}", what));
    try {
      return host_(v);
    } catch (const std::invalid_argument& e) {
      fail(r.line, fmt::format("{} '{}': {}", what, v, e.what()));
    }
  }

  FlowDag build(std::vector<Row>& rows) {
    if (rows.empty()) fail(0, "the dependency trace has no flows");
    std::unordered_map<std::string, uint32_t> index;
    index.reserve(rows.size());
    FlowDag dag;
    std::unordered_map<std::string, uint32_t>
        collectives;               // the trace's collective ids, in order of first use
    dag.set_delays_compute(true);  // delay_us: what the sender computes before the data exists
    for (const Row& r : rows) {
      if (r.id.empty()) fail(r.line, "empty flow id");
      if (auto [it, fresh] = index.emplace(r.id, static_cast<uint32_t>(dag.size())); !fresh)
        fail(r.line,
             fmt::format("flow id '{}' is used twice (first on line {})", r.id, rows[it->second].line));
      const int src = node(r, r.src, "src"), dst = node(r, r.dst, "dst");
      if (src == dst) fail(r.line, fmt::format("src and dst are the same host '{}'", r.src));
      const double bytes = number(r, r.bytes, "bytes", 1);
      if (bytes != std::floor(bytes) || bytes > 1e15)
        fail(r.line, fmt::format("bytes must be a whole number of bytes, got {}", r.bytes));
      const Time start = r.has_start ? Time::from_us(number(r, r.start_us, "start_us", 0)) : Time::zero();
      if (r.has_delay && r.after.empty())
        fail(r.line,
             "delay_us counts from the flows in 'after', and this flow has none; give start_us instead");
      const Time delay = r.has_delay ? Time::from_us(number(r, r.delay_us, "delay_us", 0)) : Time::zero();
      const uint32_t f = dag.add(src, dst, static_cast<Bytes>(bytes), 0, delay, start);
      dag.set_name(f, r.id);
      if (!r.collective_type.empty()) {
        if (r.collective.empty())
          fail(r.line, fmt::format("collective_type '{}' without a collective id: it says what the "
                                   "collective named in 'collective' is",
                                   r.collective_type));
        if (std::find(kCollectiveTypes.begin(), kCollectiveTypes.end(), r.collective_type) ==
            kCollectiveTypes.end())
          fail(r.line, fmt::format("collective_type '{}' is not one of {}", r.collective_type,
                                   fmt::join(kCollectiveTypes, ", ")));
      }
      if (!r.collective.empty()) {
        auto [c, fresh] = collectives.emplace(r.collective, static_cast<uint32_t>(collectives.size()));
        if (fresh) {
          dag.add_collective(r.collective);
          types_.emplace_back();
          type_line_.push_back(0);
        }
        std::string& type = types_[c->second];
        if (!r.collective_type.empty()) {
          if (!type.empty() && type != r.collective_type)
            fail(r.line, fmt::format("collective '{}' is a {} here but a {} on line {}", r.collective,
                                     r.collective_type, type, type_line_[c->second]));
          type = r.collective_type;
          type_line_[c->second] = r.line;
        }
        dag.set_collective(f, c->second);
      }
    }
    for (size_t i = 0; i < rows.size(); ++i)
      for (const std::string& a : rows[i].after) {
        auto it = index.find(a);
        if (it == index.end())
          fail(rows[i].line,
               fmt::format("flow '{}' waits for '{}', which no line of the trace defines", rows[i].id, a));
        if (it->second == i) fail(rows[i].line, fmt::format("flow '{}' waits for itself", rows[i].id));
        dag.wait(static_cast<uint32_t>(i), it->second);
      }
    if (const int64_t on = dag.seal(true); on >= 0) {
      const Row& r = rows[static_cast<size_t>(on)];
      fail(r.line,
           fmt::format("flow '{}' is on a dependency cycle (it waits, through 'after', for a flow that "
                       "waits for it); no flow of a cycle could ever start",
                       r.id));
    }
    return dag;
  }

  FlowDag read(std::istream& in) {
    std::vector<Row> rows;
    std::string line;
    int lineno = 0;
    int format = 0;  // 1 CSV (after its header), 2 JSON Lines
    while (std::getline(in, line)) {
      ++lineno;
      const std::string t = trim(line, kTraceBlank);
      if (t.empty() || t[0] == '#') continue;
      if (format == 0) {
        if (t[0] == '{') {
          format = 2;
        } else {
          csv_header(t, lineno);
          format = 1;
          continue;
        }
      }
      rows.push_back(format == 1 ? csv_row(t, lineno) : json_row(t, lineno));
    }
    if (in.bad()) fail(0, "read error");
    return build(rows);
  }

 private:
  std::string path_;
  const HostResolver& host_;
  std::vector<int> col_;
  size_t ncols_ = 0;

 public:
  std::vector<std::string> types_;  // per collective: its collective_type (empty: none given)
  std::vector<int> type_line_;      // the line that gave it
};

}  // namespace

FlowDag read_dependency_trace(std::istream& in, const std::string& path, const HostResolver& host,
                              std::vector<std::string>* collective_types) {
  Reader reader(path, host);
  FlowDag dag = reader.read(in);
  if (collective_types != nullptr) *collective_types = std::move(reader.types_);
  return dag;
}

FlowDag read_dependency_trace(const std::string& path, const HostResolver& host,
                              std::vector<std::string>* collective_types) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the dependency trace");
  return read_dependency_trace(in, path, host, collective_types);
}

std::vector<DagSpan> trace_collective_spans(const FlowDag& dag, const std::vector<std::string>& types) {
  std::vector<DagSpan> spans(dag.collectives());
  if (std::all_of(types.begin(), types.end(), [](const std::string& t) { return t.empty(); })) return {};
  std::vector<std::vector<int>> hosts(dag.collectives());
  std::vector<double> bytes(dag.collectives(), 0);
  for (uint32_t f = 0; f < dag.size(); ++f)
    if (const uint32_t c = dag.collective_of(f); c != FlowDag::kNoCollective) {
      hosts[c].push_back(dag.flow(f).src);
      hosts[c].push_back(dag.flow(f).dst);
      bytes[c] += static_cast<double>(dag.flow(f).bytes);
    }
  for (size_t c = 0; c < spans.size() && c < types.size(); ++c) {
    if (types[c].empty()) continue;
    std::sort(hosts[c].begin(), hosts[c].end());
    const int n = static_cast<int>(std::unique(hosts[c].begin(), hosts[c].end()) - hosts[c].begin());
    DagSpan& sp = spans[c];
    sp.kind = types[c];
    sp.ranks = n;
    // The per-rank buffer S whose bandwidth-optimal decomposition moves these bytes B: an all-reduce's ring
    // sends 2(N-1)/N S from each rank, the others (N-1)/N S (broadcast: N-1 copies of S), a sendrecv S.
    const double b = bytes[c];
    const double size = types[c] == "sendrecv"    ? b
                        : types[c] == "allreduce" ? b / (2.0 * (n - 1))
                                                  : b / (n - 1);
    sp.bytes_per_rank = std::max<Bytes>(1, static_cast<Bytes>(std::llround(size)));
    sp.bus_factor = types[c] == "sendrecv"    ? 1.0
                    : types[c] == "allreduce" ? bus_bandwidth_factor("ring_allreduce", n)
                                              : bus_bandwidth_factor(types[c], n);
  }
  return spans;
}

}  // namespace rocesim
