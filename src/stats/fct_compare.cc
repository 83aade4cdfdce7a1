#include "stats/fct_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "core/error.h"
#include "core/text.h"
#include "stats/writers.h"

namespace rocesim {

namespace {

bool parse_int(std::string_view s, int64_t& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v);
}

// A flows.csv time in microseconds ("12.345678", exact to the picosecond with its 6 decimals; further
// decimals are below a picosecond and dropped) as picoseconds. False for anything else.
bool parse_us(std::string_view s, int64_t& ps) {
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  int64_t us = 0;
  if (whole.empty() || !parse_int(whole, us) || us < 0 || us > INT64_MAX / 1'000'000) return false;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    const std::string_view digits = s.substr(dot + 1);
    if (digits.empty()) return false;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (digits[i] < '0' || digits[i] > '9') return false;
      if (i < 6) frac = frac * 10 + (digits[i] - '0');
    }
    for (size_t i = digits.size(); i < 6; ++i) frac *= 10;
  }
  ps = us * 1'000'000 + frac;
  return ps >= 0;
}

std::ifstream open_or_throw(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the file");
  return in;
}

}  // namespace

FlowSlowdowns read_hpcc_fct(const std::string& path) {
  std::ifstream in = open_or_throw(path);
  FlowSlowdowns out;
  out.source = path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto f = words(line);
    if (f.empty()) continue;
    if (f.size() != 8)
      throw InputError(path, n,
                       fmt::format("expected 8 fields 'sip dip sport dport size_bytes start_ns fct_ns "
                                   "standalone_fct_ns' (the ns-3 HPCC simulator's fct.txt), found {}",
                                   f.size()));
    int64_t size = 0, start = 0, fct = 0, ideal = 0;
    if (!parse_int(f[4], size) || size <= 0)
      throw InputError(path, n, fmt::format("size_bytes (field 5): '{}' is not a positive integer", f[4]));
    if (!parse_int(f[5], start) || start < 0)
      throw InputError(path, n, fmt::format("start_ns (field 6): '{}' is not a non-negative integer", f[5]));
    if (start > INT64_MAX / 1000)
      throw InputError(path, n, fmt::format("start_ns (field 6): {} is too large (over 106 days)", start));
    if (!parse_int(f[6], fct) || fct < 0)
      throw InputError(path, n, fmt::format("fct_ns (field 7): '{}' is not a non-negative integer", f[6]));
    if (!parse_int(f[7], ideal) || ideal <= 0)
      throw InputError(path, n,
                       fmt::format("standalone_fct_ns (field 8): '{}' is not a positive integer", f[7]));
    out.flows.push_back({size, std::max(1.0, static_cast<double>(fct) / static_cast<double>(ideal))});
    out.all.push_back({size, Time::from_ps(start * 1000), n});
  }
  if (out.flows.empty()) throw InputError(path, 0, "no flows: expected lines of the simulator's fct.txt");
  return out;
}

FlowSlowdowns read_flows_csv(const std::string& path) {
  std::ifstream in = open_or_throw(path);
  FlowSlowdowns out;
  out.source = path;
  out.csv = true;
  std::string line;
  constexpr std::string_view kHeader =
      "id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,";
  if (!std::getline(in, line) || line.compare(0, kHeader.size(), kHeader) != 0)
    throw InputError(path, 1, fmt::format("expected rocesim's flows.csv header '{}class'", kHeader));
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    // The first nine columns hold no commas (class, the last one, may).
    std::string_view rest(line);
    std::string_view cols[9];
    for (int c = 0; c < 9; ++c) {
      const size_t comma = rest.find(',');
      if (comma == std::string_view::npos)
        throw InputError(path, n, fmt::format("expected 10 comma-separated columns, found {}", c + 1));
      cols[c] = rest.substr(0, comma);
      rest.remove_prefix(comma + 1);
    }
    int64_t size = 0;
    if (!parse_int(cols[3], size) || size <= 0)
      throw InputError(path, n, fmt::format("size_bytes: '{}' is not a positive integer", cols[3]));
    int64_t start_ps = 0;
    if (!parse_us(cols[4], start_ps))
      throw InputError(path, n,
                       fmt::format("start_us: '{}' is not a non-negative number of microseconds", cols[4]));
    out.all.push_back({size, Time::from_ps(start_ps), n});
    if (cols[8].empty()) {  // unfinished, or no ideal FCT
      ++out.unfinished;
      continue;
    }
    double sd = 0;
    if (!parse_double(cols[8], sd) || sd < 1)
      throw InputError(path, n, fmt::format("slowdown: '{}' is not a number >= 1", cols[8]));
    out.flows.push_back({size, sd});
  }
  if (out.flows.empty()) throw InputError(path, 0, "no finished flows with a slowdown");
  return out;
}

FlowSlowdowns read_result_slowdowns(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) {
    const fs::path csv = fs::path(path) / "flows.csv";
    if (!fs::exists(csv))
      throw InputError(path, 0, "expected a rocesim result directory holding flows.csv (rocesim run -o DIR)");
    return read_flows_csv(csv.string());
  }
  if (!fs::exists(path)) throw InputError(path, 0, "no such file or directory");
  if (fs::path(path).extension() == ".csv") return read_flows_csv(path);
  return read_hpcc_fct(path);
}

namespace {

// A flow's start as its file writes it: start_ns of an fct.txt, start_us of a flows.csv.
std::string start_text(const FlowSlowdowns& f, Time t) {
  return f.csv ? "start_us " + format_time_us(t) : fmt::format("start_ns {}", t.ps / 1000);
}

std::string where(const FlowSlowdowns& f, const FlowIdentity& x) {
  return fmt::format("{}:{}", f.source, x.line);
}

}  // namespace

std::string flows_differ(const FlowSlowdowns& ref, const FlowSlowdowns& res) {
  const auto by_start = [](const FlowIdentity& x, const FlowIdentity& y) {
    return x.start.ps != y.start.ps
               ? x.start.ps < y.start.ps
               : (x.size_bytes != y.size_bytes ? x.size_bytes < y.size_bytes : x.line < y.line);
  };
  std::vector<FlowIdentity> a = ref.all, b = res.all;
  std::sort(a.begin(), a.end(), by_start);
  std::sort(b.begin(), b.end(), by_start);
  const auto close = [](Time x, Time y) { return std::abs(x.ps - y.ps) <= kStartTolerance.ps; };
  const std::string counts = a.size() == b.size() ? ""
                                                  : fmt::format("{} flows in {}, {} in {}; ", a.size(),
                                                                ref.source, b.size(), res.source);
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i].size_bytes == b[i].size_bytes && close(a[i].start, b[i].start)) continue;
    // Starts this close may be ordered differently in the two files (each rounds its own way): the
    // partner of a[i] may come a little later in b. (Starts further apart: the earlier flow has none.)
    const bool same_start = close(a[i].start, b[i].start);
    if (same_start) {
      size_t j = i + 1;
      while (j < b.size() && b[j].start.ps <= a[i].start.ps + kStartTolerance.ps &&
             b[j].size_bytes != a[i].size_bytes)
        ++j;
      if (j < b.size() && b[j].start.ps <= a[i].start.ps + kStartTolerance.ps) {
        std::rotate(b.begin() + static_cast<std::ptrdiff_t>(i), b.begin() + static_cast<std::ptrdiff_t>(j),
                    b.begin() + static_cast<std::ptrdiff_t>(j) + 1);
        continue;
      }
    }
    const std::string what =
        same_start ? fmt::format("size_bytes {} ({}) vs {} ({})", a[i].size_bytes, where(ref, a[i]),
                                 b[i].size_bytes, where(res, b[i]))
                   : fmt::format("{} ({}) vs {} ({})", start_text(ref, a[i].start), where(ref, a[i]),
                                 start_text(res, b[i].start), where(res, b[i]));
    return fmt::format("{}the first flow that differs, flow {} in start order: {}", counts, i, what);
  }
  if (a.size() == b.size()) return "";
  const bool ref_longer = a.size() > b.size();
  const FlowSlowdowns& f = ref_longer ? ref : res;
  const FlowIdentity& x = (ref_longer ? a : b)[n];
  return fmt::format(
      "{}the first flow that differs, flow {} in start order: size_bytes {}, {} ({}), only in {}", counts, n,
      x.size_bytes, start_text(f, x.start), where(f, x), ref_longer ? "the reference" : "the result");
}

std::vector<SlowdownRow> compare_slowdowns(const FlowSlowdowns& ref, const FlowSlowdowns& res,
                                           const SizeBuckets& buckets) {
  const size_t nb = buckets.size();
  std::vector<std::vector<double>> a(nb + 1), b(nb + 1);  // the last one: all flows
  for (const auto& f : ref.flows) {
    a[static_cast<size_t>(buckets.index_of(f.size_bytes))].push_back(f.slowdown);
    a[nb].push_back(f.slowdown);
  }
  for (const auto& f : res.flows) {
    b[static_cast<size_t>(buckets.index_of(f.size_bytes))].push_back(f.slowdown);
    b[nb].push_back(f.slowdown);
  }
  std::vector<SlowdownRow> rows(nb + 1);
  for (size_t i = 0; i <= nb; ++i) {
    SlowdownRow& r = rows[i];
    r.label = i < nb ? buckets.labels[i] : "all";
    r.ref_count = a[i].size();
    r.res_count = b[i].size();
    const Dist da = summarize(std::move(a[i])), db = summarize(std::move(b[i]));
    const double qa[3] = {da.p50, da.p95, da.p99}, qb[3] = {db.p50, db.p95, db.p99};
    for (int q = 0; q < 3; ++q) {
      r.ref[q] = qa[q];
      r.res[q] = qb[q];
      r.err[q] = qa[q] > 0 && r.res_count > 0 ? qb[q] / qa[q] - 1 : 0;
    }
  }
  return rows;
}

std::vector<SlowdownRow> mean_slowdown_rows(const std::vector<std::vector<SlowdownRow>>& per_input) {
  if (per_input.empty()) return {};
  std::vector<SlowdownRow> mean = per_input.front();
  for (size_t k = 1; k < per_input.size(); ++k) {
    if (per_input[k].size() != mean.size()) throw std::invalid_argument("inputs with different size buckets");
    for (size_t i = 0; i < mean.size(); ++i) {
      const SlowdownRow& r = per_input[k][i];
      if (r.label != mean[i].label) throw std::invalid_argument("inputs with different size buckets");
      mean[i].ref_count = std::min(mean[i].ref_count, r.ref_count);
      mean[i].res_count = std::min(mean[i].res_count, r.res_count);
      for (int q = 0; q < 3; ++q) {
        mean[i].ref[q] += r.ref[q];
        mean[i].res[q] += r.res[q];
      }
    }
  }
  const auto n = static_cast<double>(per_input.size());
  for (SlowdownRow& r : mean)
    for (int q = 0; q < 3; ++q) {
      r.ref[q] /= n;
      r.res[q] /= n;
      r.err[q] = r.ref[q] > 0 && r.res_count > 0 ? r.res[q] / r.ref[q] - 1 : 0;
    }
  return mean;
}

WorstErrors worst_errors(const std::vector<SlowdownRow>& rows, size_t min_flows) {
  WorstErrors w;
  for (const auto& r : rows) {
    if (r.label == "all" || r.ref_count < min_flows || r.res_count < min_flows) continue;
    if (w.p50_bucket.empty() || std::abs(r.err[0]) > std::abs(w.p50))
      w.p50 = r.err[0], w.p50_bucket = r.label;
    if (w.p99_bucket.empty() || std::abs(r.err[2]) > std::abs(w.p99))
      w.p99 = r.err[2], w.p99_bucket = r.label;
  }
  return w;
}

std::string format_slowdown_table(const std::vector<SlowdownRow>& rows, size_t min_flows) {
  std::string s = fmt::format("{:<12} {:>6} {:>6}  {:>23}  {:>23}  {:>23}\n", "flow size", "n ref", "n res",
                              "p50 ref / res (err)", "p95 ref / res (err)", "p99 ref / res (err)");
  for (const auto& r : rows) {
    if (r.ref_count == 0 && r.res_count == 0) continue;
    s += fmt::format("{:<12} {:>6} {:>6}", r.label, r.ref_count, r.res_count);
    // A side without flows has no quantiles, and the error none either: "-" (not 0.00 and +0.0 %).
    const auto value = [](size_t count, double v) { return count > 0 ? fmt::format("{:.2f}", v) : "-"; };
    for (int q = 0; q < 3; ++q)
      s += fmt::format("  {:>6} / {:>6} ({:>7})", value(r.ref_count, r.ref[q]), value(r.res_count, r.res[q]),
                       r.ref_count > 0 && r.res_count > 0 ? fmt::format("{:+.1f}%", 100 * r.err[q]) : "-");
    if (r.label != "all" && (r.ref_count < min_flows || r.res_count < min_flows)) s += "  (few flows)";
    s += "\n";
  }
  return s + format_worst_errors(rows, min_flows);
}

std::string format_worst_errors(const std::vector<SlowdownRow>& rows, size_t min_flows) {
  const WorstErrors w = worst_errors(rows, min_flows);
  if (w.p50_bucket.empty() && w.p99_bucket.empty()) return "";
  return fmt::format("worst (buckets with >= {} flows): p50 {:+.1f}% ({}), p99 {:+.1f}% ({})\n", min_flows,
                     100 * w.p50, w.p50_bucket, 100 * w.p99, w.p99_bucket);
}

}  // namespace rocesim
