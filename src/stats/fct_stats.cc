#include "stats/fct_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace rocesim {
namespace {

std::string size_label(Bytes b) {
  if (b != 0 && b % 1'000'000 == 0) return fmt::format("{}MB", b / 1'000'000);
  if (b != 0 && b % 1'000 == 0) return fmt::format("{}KB", b / 1'000);
  return fmt::format("{}B", b);
}

// v[ceil(num / den * n) - 1] with the rank in integer arithmetic; `v` sorted, non-empty.
double nearest_rank(const std::vector<double>& v, size_t num, size_t den) {
  size_t rank = (num * v.size() + den - 1) / den;
  if (rank < 1) rank = 1;
  if (rank > v.size()) rank = v.size();
  return v[rank - 1];
}

Dist dist_of(ValueSummary& v) {
  Dist d;
  if (v.count() == 0) return d;
  d.count = v.count();
  d.avg = v.avg();
  d.p50 = v.percentile(50, 100);
  d.p95 = v.percentile(95, 100);
  d.p99 = v.percentile(99, 100);
  d.p999 = v.percentile(999, 1000);
  d.max = v.max();
  d.rel_error = v.exact() ? 0.0 : kSketchRelError;
  return d;
}

}  // namespace

SizeBuckets SizeBuckets::defaults() { return from_edges({10'000, 100'000, 1'000'000, 10'000'000}); }

SizeBuckets SizeBuckets::from_edges(std::vector<Bytes> edges) {
  for (size_t i = 0; i < edges.size(); ++i) {
    if (edges[i] < 0) throw std::invalid_argument(fmt::format("size bucket edge {} is negative", edges[i]));
    if (i > 0 && edges[i] <= edges[i - 1]) {
      throw std::invalid_argument(
          fmt::format("size bucket edges must be strictly increasing ({} after {})", edges[i], edges[i - 1]));
    }
  }
  SizeBuckets b;
  std::string lower = "0";
  for (Bytes e : edges) {
    const std::string upper = size_label(e);
    b.labels.push_back(lower + "-" + upper);
    lower = upper;
  }
  b.labels.push_back(lower + "+");
  b.upper_bytes = std::move(edges);
  return b;
}

int SizeBuckets::index_of(Bytes size) const {
  const auto it = std::lower_bound(upper_bytes.begin(), upper_bytes.end(), size);
  return static_cast<int>(it - upper_bytes.begin());
}

Bytes SizeBuckets::min_bytes(int i) const { return i == 0 ? 0 : upper_bytes[i - 1] + 1; }

Bytes SizeBuckets::max_bytes(int i) const {
  return static_cast<size_t>(i) < upper_bytes.size() ? upper_bytes[i] : -1;
}

Dist summarize(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  Dist d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  long double sum = 0;  // summed in sorted order: deterministic
  for (double v : values) sum += v;
  d.avg = static_cast<double>(sum / static_cast<long double>(values.size()));
  d.p50 = nearest_rank(values, 50, 100);
  d.p95 = nearest_rank(values, 95, 100);
  d.p99 = nearest_rank(values, 99, 100);
  d.p999 = nearest_rank(values, 999, 1000);
  d.max = values.back();
  return d;
}

void FctAccumulator::Group::add(const FlowRecord& r) {
  fct_us.add(r.fct().us());
  if (r.ideal_fct.ps > 0) slowdown.add(r.slowdown());
}

GroupStats FctAccumulator::Group::finish() {
  GroupStats g;
  g.count = fct_us.count();
  g.fct_us = dist_of(fct_us);
  g.slowdown = dist_of(slowdown);
  return g;
}

FctAccumulator::FctAccumulator(SizeBuckets buckets, std::vector<std::string> class_labels,
                               Bytes short_threshold, size_t exact_limit)
    : buckets_(std::move(buckets)),
      class_labels_(std::move(class_labels)),
      short_threshold_(short_threshold),
      limit_(exact_limit),
      overall_(exact_limit),
      short_(exact_limit),
      long_(exact_limit),
      by_bucket_(buckets_.size(), Group(exact_limit)),
      by_class_(class_labels_.size(), Group(exact_limit)) {
  if (buckets_.labels.size() != buckets_.upper_bytes.size() + 1) {
    throw std::invalid_argument("size buckets need one more label than edges");
  }
}

void FctAccumulator::add(const FlowRecord& r) {
  overall_.add(r);
  by_bucket_[buckets_.index_of(r.size_bytes)].add(r);
  if (r.class_id < class_labels_.size()) {
    by_class_[r.class_id].add(r);
  } else {
    unlabelled_.try_emplace(r.class_id, limit_).first->second.add(r);
  }
  (r.size_bytes <= short_threshold_ ? short_ : long_).add(r);
}

size_t FctAccumulator::memory_bytes() const {
  size_t b = 0;
  auto add = [&](const Group& g) { b += g.fct_us.memory_bytes() + g.slowdown.memory_bytes(); };
  add(overall_);
  add(short_);
  add(long_);
  for (const Group& g : by_bucket_) add(g);
  for (const Group& g : by_class_) add(g);
  for (const auto& [id, g] : unlabelled_) add(g);
  return b;
}

FctStats FctAccumulator::finish() {
  FctStats s;
  s.overall = overall_.finish();
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const int idx = static_cast<int>(i);
    s.buckets.push_back(BucketStats{buckets_.labels[i], buckets_.min_bytes(idx), buckets_.max_bytes(idx),
                                    by_bucket_[i].finish()});
  }
  for (size_t c = 0; c < class_labels_.size(); ++c) {
    s.classes.push_back(ClassStats{static_cast<uint16_t>(c), class_labels_[c], by_class_[c].finish()});
  }
  for (auto& [id, g] : unlabelled_) s.classes.push_back(ClassStats{id, std::to_string(id), g.finish()});
  s.short_threshold_bytes = short_threshold_;
  s.short_flows = short_.finish();
  s.long_flows = long_.finish();
  return s;
}

FctStats compute_fct_stats(const std::vector<FlowRecord>& flows, const SizeBuckets& buckets,
                           const std::vector<std::string>& class_labels, Bytes short_threshold) {
  if (buckets.labels.size() != buckets.upper_bytes.size() + 1) {
    throw std::invalid_argument("size buckets need one more label than edges");
  }
  // Every value kept: exact percentiles whatever the number of flows.
  FctAccumulator acc(buckets, class_labels, short_threshold, SIZE_MAX);
  for (const FlowRecord& r : flows) acc.add(r);
  return acc.finish();
}

nlohmann::json to_json(const Dist& d) {
  nlohmann::json j{{"count", d.count}, {"avg", d.avg},   {"p50", d.p50}, {"p95", d.p95},
                   {"p99", d.p99},     {"p999", d.p999}, {"max", d.max}};
  if (d.rel_error > 0) j["rel_error"] = d.rel_error;  // percentiles from the histogram (value_summary.h)
  return j;
}

nlohmann::json to_json(const GroupStats& g) {
  return nlohmann::json{{"count", g.count}, {"fct_us", to_json(g.fct_us)}, {"slowdown", to_json(g.slowdown)}};
}

nlohmann::json to_json(const FctStats& s) {
  nlohmann::json j = to_json(s.overall);
  nlohmann::json buckets = nlohmann::json::array();
  for (const BucketStats& b : s.buckets) {
    nlohmann::json e = to_json(b.stats);
    e["label"] = b.label;
    e["min_bytes"] = b.min_bytes;
    e["max_bytes"] = b.max_bytes < 0 ? nlohmann::json(nullptr) : nlohmann::json(b.max_bytes);
    buckets.push_back(std::move(e));
  }
  j["buckets"] = std::move(buckets);
  nlohmann::json classes = nlohmann::json::object();
  for (const ClassStats& c : s.classes) {
    nlohmann::json e = to_json(c.stats);
    e["class_id"] = c.class_id;
    std::string key = c.label;
    if (classes.contains(key)) key += fmt::format("#{}", c.class_id);  // duplicate labels stay distinct
    classes[key] = std::move(e);
  }
  j["classes"] = std::move(classes);
  j["short_threshold_bytes"] = s.short_threshold_bytes;
  j["short"] = to_json(s.short_flows);
  j["long"] = to_json(s.long_flows);
  return j;
}

}  // namespace rocesim
