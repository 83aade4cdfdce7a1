#include "stats/value_summary.h"

#include <algorithm>
#include <cmath>

namespace rocesim {
namespace {

// g = (1 + a) / (1 - a): a value in (g^(i-1), g^i] is within a relative a of 2 g^i / (g + 1).
const double kGamma = (1 + kSketchRelError) / (1 - kSketchRelError);
const double kLogGamma = std::log(kGamma);

}  // namespace

int64_t ValueSummary::bucket_of(double v) const {
  return static_cast<int64_t>(std::ceil(std::log(v) / kLogGamma));
}

double ValueSummary::bucket_value(int64_t i) const {
  return 2.0 * std::exp(static_cast<double>(i) * kLogGamma) / (kGamma + 1.0);
}

void ValueSummary::add(double v) {
  if (std::isnan(v)) return;
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  if (sketched_) {
    sum_ += v;
    add_to_sketch(v);
    return;
  }
  values_.push_back(v);
  sorted_ = false;
  if (values_.size() > exact_limit_) to_sketch();
}

void ValueSummary::sort_exact() {
  if (sorted_) return;
  std::sort(values_.begin(), values_.end());
  sorted_ = true;
}

void ValueSummary::add_to_sketch(double v) {
  if (v <= 0) {
    nonpositive_max_ = nonpositive_ == 0 ? v : std::max(nonpositive_max_, v);
    ++nonpositive_;
    return;
  }
  if (std::isinf(v)) return;  // +inf: above every bucket; percentiles past the buckets are max_ (= inf)
  const int64_t b = bucket_of(v);
  if (counts_.empty()) {
    first_bucket_ = b;
    counts_.assign(1, 0);
  } else if (b < first_bucket_) {
    counts_.insert(counts_.begin(), static_cast<size_t>(first_bucket_ - b), 0);
    first_bucket_ = b;
  } else if (b >= first_bucket_ + static_cast<int64_t>(counts_.size())) {
    counts_.resize(static_cast<size_t>(b - first_bucket_ + 1), 0);
  }
  ++counts_[static_cast<size_t>(b - first_bucket_)];
}

void ValueSummary::to_sketch() {
  sort_exact();
  sum_ = 0;
  for (double v : values_) sum_ += v;  // in sorted order, as the exact average
  for (double v : values_) add_to_sketch(v);
  sketched_ = true;
  std::vector<double>().swap(values_);
}

double ValueSummary::avg() {
  if (count_ == 0) return 0;
  if (!sketched_) {
    sort_exact();
    long double sum = 0;  // summed in sorted order: deterministic
    for (double v : values_) sum += v;
    return static_cast<double>(sum / static_cast<long double>(values_.size()));
  }
  return static_cast<double>(sum_ / static_cast<long double>(count_));
}

double ValueSummary::percentile(size_t num, size_t den) {
  if (count_ == 0) return 0;
  size_t rank = (num * count_ + den - 1) / den;
  rank = std::clamp<size_t>(rank, 1, count_);
  if (!sketched_) {
    sort_exact();
    return values_[rank - 1];
  }
  if (rank <= nonpositive_) return nonpositive_max_;
  uint64_t seen = nonpositive_;
  for (size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (seen >= rank) return std::clamp(bucket_value(first_bucket_ + static_cast<int64_t>(k)), min_, max_);
  }
  return max_;
}

}  // namespace rocesim
