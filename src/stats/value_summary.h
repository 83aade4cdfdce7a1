// Bounded-memory summary of a stream of values (FCTs, slowdowns): count, average, max and nearest-rank
// percentiles, as stats/fct_stats.h reports them.
//
// Exact up to `exact_limit` values: they are kept, and finish() sorts them exactly as summarize() does
// (same percentiles, same average summed in sorted order), so small runs give byte-identical results.
// Past the limit the kept values move into a log-bucketed histogram and are dropped: bucket i holds the
// values in (g^(i-1), g^i] with g = (1 + a) / (1 - a), and a percentile is its bucket's point
// 2 g^i / (g + 1), clipped to [min, max]. The nearest-rank value v of the rank lies in that bucket, so the
// reported percentile p satisfies |p - v| <= a * v: a relative error of at most a = kSketchRelError
// (0.5 %). Count, min, max and the average stay exact (the average up to the rounding of a long double
// sum, added in arrival order after the switch). Memory: one counter per occupied bucket span,
// ln(max/min) / ln(g) ~ 100 per factor of e, i.e. about 1,400 counters for values spanning 1 us..1 s.
// Values <= 0 are counted apart (reported as the largest of them), +inf above every bucket (reported as
// the max); NaNs are ignored.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocesim {

inline constexpr double kSketchRelError = 0.005;
// Values kept exactly per summary before switching to the histogram (64 Ki doubles = 512 KiB).
inline constexpr size_t kExactSummaryLimit = size_t{1} << 16;

class ValueSummary {
 public:
  explicit ValueSummary(size_t exact_limit = kExactSummaryLimit) : exact_limit_(exact_limit) {}

  void add(double v);

  size_t count() const { return count_; }
  bool exact() const { return !sketched_; }
  // Memory held, in bytes (values kept or histogram counters).
  size_t memory_bytes() const {
    return values_.capacity() * sizeof(double) + counts_.capacity() * sizeof(uint64_t);
  }

  // Nearest-rank percentile num/den (v[ceil(num/den * n) - 1] of the sorted values, in integer arithmetic)
  // and the other figures; 0 when empty. Exact until the switch, then within kSketchRelError (relative).
  double percentile(size_t num, size_t den);
  double avg();
  double max() const { return count_ ? max_ : 0.0; }

 private:
  void sort_exact();
  void to_sketch();
  void add_to_sketch(double v);
  int64_t bucket_of(double v) const;
  double bucket_value(int64_t i) const;

  size_t exact_limit_;
  size_t count_ = 0;
  bool sketched_ = false;
  bool sorted_ = true;
  std::vector<double> values_;  // exact mode
  double min_ = 0, max_ = 0;
  long double sum_ = 0;       // sketch mode: exact values summed in sorted order, then arrival order
  uint64_t nonpositive_ = 0;  // sketch mode: values <= 0, and the largest of them
  double nonpositive_max_ = 0;
  int64_t first_bucket_ = 0;  // counts_[k] counts bucket first_bucket_ + k
  std::vector<uint64_t> counts_;
};

}  // namespace rocesim
