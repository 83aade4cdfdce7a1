#include "workload/cdf.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <istream>
#include <set>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/text_fields.h"

namespace rocesim {

namespace {

bool parse_double(std::string_view s, double& v) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(v);
}

std::string num(double v) {
  std::ostringstream o;
  o.precision(12);
  o << v;
  return o.str();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Short names of the catalogue (SOURCES.md "Primary files"; the *_hpcc names are the verbatim HPCC copies).
struct Alias {
  const char* name;
  const char* file;
};
constexpr Alias kAliases[] = {
    {"websearch", "websearch.cdf"},
    {"hadoop", "fb_hadoop.cdf"},
    {"fb_hadoop_hpcc", "FbHdp_distribution.txt"},
    {"webserver", "fb_webserver.cdf"},
    {"cachefollower", "fb_cachefollower.cdf"},
    {"enterprise", "enterprise.cdf"},
    {"datamining", "datamining.cdf"},
    // Alibaba storage 2019 is intra-DC; no public cross-DC (FlashPass) table exists (SOURCES.md).
    {"alistorage", "ali_storage2019.cdf"},
    {"google_rpc", "google_rpc.cdf"},
    {"websearch_hpcc", "WebSearch_distribution.txt"},
    {"alistorage_hpcc", "AliStorage2019.txt"},
    {"google_rpc_hpcc", "GoogleRPC2008.txt"},
};

std::filesystem::path workload_dir(const std::string& data_dir) {
  return std::filesystem::path(data_dir) / "workloads";
}

// (name, file) pairs of the catalogue: aliases first, then *.cdf stems not already used as a name.
std::vector<std::pair<std::string, std::string>> catalogue(const std::string& data_dir) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> names;
  for (const Alias& a : kAliases) {
    out.emplace_back(a.name, a.file);
    names.insert(a.name);
  }
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(workload_dir(data_dir), ec)) {
    if (e.path().extension() == ".cdf") stems.push_back(e.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  for (const std::string& s : stems) {
    if (names.insert(s).second) out.emplace_back(s, s + ".cdf");
  }
  return out;
}

}  // namespace

SizeCdf SizeCdf::load(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open flow-size CDF file");
  return parse(in, path, name);
}

SizeCdf SizeCdf::parse(std::istream& in, const std::string& path, const std::string& name) {
  SizeCdf c;
  c.path_ = path;
  c.name_ = name.empty() ? std::filesystem::path(path).stem().string() : name;
  std::string line;
  int lineno = 0, first_line = 0, last_line = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string_view f[2];
    size_t n = split_fields(line, f, 2);
    if (n == 0) continue;
    if (n != 2) {
      throw InputError(path, lineno, "expected 2 fields '<size_bytes> <cdf>', found " + std::to_string(n));
    }
    double x, y;
    if (!parse_double(f[0], x)) {
      throw InputError(path, lineno, "expected a number for the flow size, got '" + std::string(f[0]) + "'");
    }
    if (!parse_double(f[1], y)) {
      throw InputError(path, lineno, "expected a number for the CDF value, got '" + std::string(f[1]) + "'");
    }
    if (x < 0) throw InputError(path, lineno, "negative size " + num(x) + "; sizes must be >= 0 bytes");
    // Samples become integer Bytes: larger sizes would overflow (found by fuzz/fuzz_cdf.cc).
    if (x > 1e15) throw InputError(path, lineno, "size " + num(x) + " is too large; at most 1e15 bytes");
    if (c.x_.empty()) {
      first_line = lineno;
      if (y != 0) throw InputError(path, lineno, "first CDF value must be 0, got " + num(y));
    } else {
      if (x < c.x_.back()) {
        throw InputError(
            path, lineno,
            "size decreases (" + num(x) + " after " + num(c.x_.back()) + "); sizes must be non-decreasing");
      }
      if (y < c.f_.back()) {
        throw InputError(path, lineno,
                         "CDF decreases (" + num(y) + " after " + num(c.f_.back()) +
                             "); CDF values must be non-decreasing");
      }
    }
    c.x_.push_back(x);
    c.f_.push_back(y);
    last_line = lineno;
  }
  if (c.x_.size() < 2) {
    throw InputError(path, c.x_.empty() ? 0 : first_line,
                     "a CDF needs at least 2 points ('<size> 0' ... '<size> 100' or '<size> 1'), found " +
                         std::to_string(c.x_.size()));
  }
  const double last = c.f_.back();
  if (last == 100.0) {
    c.scale_ = 100.0;
  } else if (last == 1.0) {
    c.scale_ = 1.0;
  } else {
    throw InputError(path, last_line,
                     "last CDF value must be 100 (percent format) or 1 (fraction format), got " + num(last));
  }
  double s = 0;
  for (size_t i = 1; i < c.x_.size(); ++i) s += (c.x_[i - 1] + c.x_[i]) / 2.0 * (c.f_[i] - c.f_[i - 1]);
  c.mean_ = s / c.scale_;
  return c;
}

double SizeCdf::quantile(double u) const {
  const double r = u * scale_;
  // First i >= 1 with r <= f_[i] (f_ is non-decreasing, so a binary search finds the same i as a scan).
  auto it = std::lower_bound(f_.begin() + 1, f_.end(), r);
  if (it == f_.end()) return x_.back();
  const size_t i = static_cast<size_t>(it - f_.begin());
  const double x0 = x_[i - 1], y0 = f_[i - 1], x1 = x_[i], y1 = f_[i];
  if (y1 == y0) return x0;  // only for r == 0 on a leading zero-probability segment
  return x0 + (x1 - x0) / (y1 - y0) * (r - y0);
}

Bytes SizeCdf::sample(Rng& rng) const {
  const Bytes v = static_cast<Bytes>(quantile(rng.uniform()));
  return v < 1 ? 1 : v;
}

double SizeCdf::cdf_at(double size) const {
  if (size < x_.front()) return 0.0;
  if (size >= x_.back()) return 1.0;
  // Last point with x <= size: at a point mass that is its top, so the CDF is right-continuous.
  const size_t j = static_cast<size_t>(std::upper_bound(x_.begin(), x_.end(), size) - x_.begin()) - 1;
  if (x_[j] == size) return f_[j] / scale_;
  const double v = f_[j] + (f_[j + 1] - f_[j]) * (size - x_[j]) / (x_[j + 1] - x_[j]);
  return v / scale_;
}

double SizeCdf::fraction_below(Bytes b) const {
  if (b <= 1) return 0.0;  // samples are clamped to >= 1 byte
  const double s = static_cast<double>(b);
  if (s <= x_.front()) return 0.0;
  if (s > x_.back()) return 1.0;
  // First point with x >= s; the left limit F(s-) is on the segment ending there.
  const size_t j = static_cast<size_t>(std::lower_bound(x_.begin(), x_.end(), s) - x_.begin());
  const double v = f_[j - 1] + (f_[j] - f_[j - 1]) * (s - x_[j - 1]) / (x_[j] - x_[j - 1]);
  return v / scale_;
}

std::vector<std::string> workload_names(const std::string& data_dir) {
  std::vector<std::string> out;
  for (auto& [name, file] : catalogue(data_dir)) out.push_back(name);
  return out;
}

std::string data_dir_or_env(const std::string& built_in) {
  const char* env = std::getenv("ROCESIM_DATA_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : built_in;
}

std::string resolve_workload(const std::string& name_or_path, const std::string& data_dir) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) return name_or_path;
  const std::string key = lower(name_or_path);
  const auto cat = catalogue(data_dir);
  for (const auto& [name, file] : cat) {
    if (name != key) continue;
    const std::string p = (workload_dir(data_dir) / file).string();
    if (!std::filesystem::is_regular_file(p, ec)) {
      throw InputError(p, 0, "workload '" + name + "' refers to this file, which does not exist");
    }
    return p;
  }
  std::string valid;
  for (const auto& [name, file] : cat) valid += (valid.empty() ? "" : ", ") + name;
  throw InputError(name_or_path, 0,
                   "unknown workload (not an existing file nor a known name); valid names: " + valid);
}

std::vector<WorkloadInfo> list_workloads(const std::string& data_dir) {
  std::vector<WorkloadInfo> out;
  for (const auto& [name, file] : catalogue(data_dir)) {
    const std::string p = (workload_dir(data_dir) / file).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) continue;
    const SizeCdf c = SizeCdf::load(p, name);
    WorkloadInfo w;
    w.name = name;
    w.file = file;
    w.mean_bytes = c.mean_bytes();
    w.share_below_10kb = c.fraction_below(10'000);
    w.share_above_1mb = 1.0 - c.fraction_below(1'000'001);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace rocesim
