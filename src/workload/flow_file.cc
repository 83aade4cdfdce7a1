#include "workload/flow_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <string_view>

#include "core/error.h"
#include "core/text_fields.h"

namespace rocesim {

namespace {

// A decimal integer (optional sign) in int64; false for anything else (including "3.0").
bool parse_int(std::string_view s, int64_t& v) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool parse_seconds_exact(std::string_view s, Time& out) {
  size_t i = 0;
  if (i < s.size() && s[i] == '+') ++i;
  // Mantissa: digits [. digits]
  const size_t mant_begin = i;
  int digits = 0, frac_digits = 0;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    if (is_digit(s[i])) {
      ++digits;
      if (seen_point) ++frac_digits;
    } else if (s[i] == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  const size_t mant_end = i;
  if (digits == 0) return false;
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == s.size()) return false;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (exponent < 100000) exponent = exponent * 10 + (s[i] - '0');
    }
    if (neg) exponent = -exponent;
  }
  if (i != s.size()) return false;
  // value_ps = D x 10^(exponent - frac_digits + 12), D = all mantissa digits; the first `int_len` digits
  // of D form the integer part, the next one decides rounding (half up).
  const int64_t int_len = digits + exponent - frac_digits + 12;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t acc = 0;
  int64_t k = 0;
  bool round_up = false;
  for (size_t j = mant_begin; j < mant_end; ++j) {
    if (s[j] == '.') continue;
    const int d = s[j] - '0';
    if (k < int_len) {
      if (acc > (kMax - d) / 10) return false;
      acc = acc * 10 + d;
    } else if (k == int_len) {
      round_up = d >= 5;
    }
    ++k;
  }
  for (int64_t z = digits; z < int_len && acc != 0; ++z) {
    if (acc > kMax / 10) return false;
    acc *= 10;
  }
  if (round_up) {
    if (acc == kMax) return false;
    ++acc;
  }
  out = Time::from_ps(acc);
  return true;
}

bool parse_seconds_hpcc_sim(std::string_view s, Time& out) {
  Time exact;
  if (!parse_seconds_exact(s, exact)) return false;  // the same syntax and range
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double d = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);  // nearest double, as strtod
  if (ec != std::errc() || p != s.data() + s.size() || !(d >= 0)) return false;
  if (d == 0) {
    out = Time{};
    return true;
  }
  // d = m x 2^e exactly, with m an integer below 2^53. exact fits int64 ps, so d < 2^24 s and e < 0;
  // floor(d x 10^9) = (m x 10^9) >> -e, computed in 128 bits (m x 10^9 < 2^83).
  int e = 0;
  const double frac = std::frexp(d, &e);
  const auto m = static_cast<uint64_t>(std::ldexp(frac, 53));
  e -= 53;
  if (e >= 0) return false;
  __extension__ using U128 = unsigned __int128;
  const U128 product = static_cast<U128>(m) * 1'000'000'000u;
  const int shift = -e;
  const U128 ns = shift >= 128 ? 0 : product >> shift;
  // Kept within int64 ps even if the double rounds up past the largest exact value (none does today).
  if (ns > static_cast<U128>(std::numeric_limits<int64_t>::max() / 1000)) return false;
  out = Time::from_ps(static_cast<int64_t>(ns) * 1000);
  return true;
}

HpccFlowFile::HpccFlowFile(const std::string& path, int num_nodes, std::function<bool(int)> is_host,
                           ClassOfDport class_of_dport)
    : path_(path),
      num_nodes_(num_nodes),
      is_host_(std::move(is_host)),
      class_of_dport_(std::move(class_of_dport)) {
  auto f = std::make_unique<std::ifstream>(path);
  if (!*f) throw InputError(path, 0, "cannot open flow file");
  in_ = std::move(f);
  read_header();
}

HpccFlowFile::HpccFlowFile(const std::string& path, const std::vector<bool>& is_host,
                           ClassOfDport class_of_dport)
    : HpccFlowFile(
          path, static_cast<int>(is_host.size()),
          [is_host](int id) { return is_host[static_cast<size_t>(id)]; }, std::move(class_of_dport)) {}

HpccFlowFile::HpccFlowFile(std::unique_ptr<std::istream> in, const std::string& path, int num_nodes,
                           std::function<bool(int)> is_host, ClassOfDport class_of_dport)
    : in_(std::move(in)),
      path_(path),
      num_nodes_(num_nodes),
      is_host_(std::move(is_host)),
      class_of_dport_(std::move(class_of_dport)) {
  if (!in_ || !*in_) throw InputError(path, 0, "cannot read flow file");
  read_header();
}

void HpccFlowFile::fail(const std::string& what) const { throw InputError(path_, lineno_, what); }

void HpccFlowFile::read_header() {
  while (std::getline(*in_, line_)) {
    ++lineno_;
    std::string_view f[1];
    const size_t n = split_fields(line_, f, 1);
    if (n == 0) continue;
    int64_t c;
    if (n != 1 || !parse_int(f[0], c) || c < 0) {
      fail("expected the flow count (one non-negative integer) on the first line");
    }
    count_ = static_cast<uint64_t>(c);
    done_ = count_ == 0;
    return;
  }
  fail("empty flow file: expected the flow count on the first line");
}

bool HpccFlowFile::next(FlowSpec& out) {
  if (done_) {
    // After the N flows only blank lines or comments may follow (checked once).
    if (in_) {
      while (std::getline(*in_, line_)) {
        ++lineno_;
        std::string_view f[1];
        if (split_fields(line_, f, 1) != 0) {
          fail("extra flow line after the " + std::to_string(count_) + " flows announced on line 1");
        }
      }
      in_.reset();
    }
    return false;
  }
  while (std::getline(*in_, line_)) {
    ++lineno_;
    std::string_view f[6];
    const size_t n = split_fields(line_, f, 6);
    if (n == 0) continue;
    if (n != 6) {
      fail("expected 6 fields 'src dst pg dport size_bytes start_s', found " + std::to_string(n));
    }
    int64_t v[5];
    static constexpr const char* kNames[5] = {"src", "dst", "pg", "dport", "size_bytes"};
    for (int k = 0; k < 5; ++k) {
      if (!parse_int(f[k], v[k])) {
        fail(std::string("expected an integer for ") + kNames[k] + ", got '" + std::string(f[k]) + "'");
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (v[k] < 0 || v[k] >= num_nodes_) {
        fail(std::string(kNames[k]) + " node id " + std::to_string(v[k]) + " out of range [0, " +
             std::to_string(num_nodes_) + ")");
      }
      if (is_host_ && !is_host_(static_cast<int>(v[k]))) {
        fail(std::string(kNames[k]) + " node " + std::to_string(v[k]) + " is not a host (it is a switch)");
      }
    }
    if (v[0] == v[1]) fail("src equals dst (" + std::to_string(v[0]) + "); a flow needs two hosts");
    if (v[2] < 0 || v[2] > 7) fail("pg (priority group) " + std::to_string(v[2]) + " not in 0..7");
    if (v[3] < 0 || v[3] > 65535) fail("dport " + std::to_string(v[3]) + " not in 0..65535");
    if (v[4] <= 0) fail("size_bytes must be > 0, got " + std::to_string(v[4]));
    if (!f[5].empty() && f[5].front() == '-') {
      fail("start time must be >= 0 seconds, got '" + std::string(f[5]) + "'");
    }
    Time start;
    const bool parsed = start_times_ == FlowStartTimes::kHpccSim ? parse_seconds_hpcc_sim(f[5], start)
                                                                 : parse_seconds_exact(f[5], start);
    if (!parsed) {
      fail("expected a start time in seconds (e.g. 2.000001), got '" + std::string(f[5]) + "'");
    }
    if (read_ > 0 && start < last_start_) {
      fail("start times not sorted: " + std::string(f[5]) + " s is before the previous flow's start " +
           "(the ns-3 simulator requires flows sorted by start)");
    }
    out.src = static_cast<int>(v[0]);
    out.dst = static_cast<int>(v[1]);
    out.priority = static_cast<int>(v[2]);
    out.dport = static_cast<uint16_t>(v[3]);
    out.size_bytes = v[4];
    out.start = start;
    out.class_id = class_of_dport_ ? class_of_dport_(out.dport) : 0;
    last_start_ = start;
    if (++read_ == count_) done_ = true;
    return true;
  }
  fail("file ends after " + std::to_string(read_) + " of " + std::to_string(count_) + " flows");
}

InlineFlows::InlineFlows(std::vector<FlowSpec> flows) : flows_(std::move(flows)) {
  std::stable_sort(flows_.begin(), flows_.end(),
                   [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
}

bool InlineFlows::next(FlowSpec& out) {
  if (pos_ == flows_.size()) return false;
  out = flows_[pos_++];
  return true;
}

}  // namespace rocesim
