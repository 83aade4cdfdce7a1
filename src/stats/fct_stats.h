// Flow-completion-time summaries: overall, by flow-size bucket, by class, short vs long.
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/time.h"
#include "net/flow_record.h"
#include "stats/value_summary.h"

namespace rocesim {

// Flow-size buckets. With edges e_0 < e_1 < ... < e_{n-1} (upper_bytes) there are n + 1 buckets:
// bucket 0 holds sizes <= e_0, bucket i holds e_{i-1} < size <= e_i, and bucket n holds size > e_{n-1}
// (unbounded). labels has n + 1 entries. KB and MB are decimal (1 KB = 1000 B, 1 MB = 1000000 B), as in
// the flow-size CDF files.
struct SizeBuckets {
  std::vector<Bytes> upper_bytes;
  std::vector<std::string> labels;

  // <=10KB, 10-100KB, 100KB-1MB, 1-10MB, >10MB.
  static SizeBuckets defaults();
  // Edges must be non-negative and strictly increasing (otherwise std::invalid_argument). Labels are
  // generated as "0-10KB", "10KB-100KB", ..., "10MB+" (MB if the edge is a multiple of 1000000, KB if a
  // multiple of 1000, else B). No edges gives one bucket labelled "0+".
  static SizeBuckets from_edges(std::vector<Bytes> edges);

  size_t size() const { return labels.size(); }
  // Index of the bucket holding `size`.
  int index_of(Bytes size) const;
  // Inclusive byte range of bucket i; max is -1 for the unbounded last bucket.
  Bytes min_bytes(int i) const;
  Bytes max_bytes(int i) const;
};

// Summary of a sample. Percentiles by nearest rank on the sorted values: pq = v[ceil(q * n) - 1]
// (ranks computed in integer arithmetic, so p99.9 of 1000 values is v[998]). NaN values are ignored.
// An empty sample gives count 0 and zeros everywhere.
// FctAccumulator keeps groups of more than kExactSummaryLimit flows in a histogram (stats/value_summary.h):
// their percentiles are then within a relative error rel_error (kSketchRelError, 0.5 %); 0 = exact.
struct Dist {
  size_t count = 0;
  double avg = 0, p50 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
  double rel_error = 0;
};
Dist summarize(std::vector<double> values);

// FCT and slowdown of one group of flows. fct_us.count == count; slowdown may count fewer flows, as
// flows without a positive ideal FCT have no slowdown.
struct GroupStats {
  size_t count = 0;
  Dist fct_us;    // flow completion time in microseconds
  Dist slowdown;  // fct / ideal fct, clipped at 1
};

struct BucketStats {
  std::string label;
  Bytes min_bytes = 0;   // inclusive
  Bytes max_bytes = -1;  // inclusive; -1 = unbounded
  GroupStats stats;
};

struct ClassStats {
  uint16_t class_id = 0;
  std::string label;  // class_labels[class_id], or the id in decimal when there is no label
  GroupStats stats;
};

struct FctStats {
  GroupStats overall;
  std::vector<BucketStats> buckets;  // one per SizeBuckets bucket, in order (empty ones included)
  std::vector<ClassStats> classes;   // every labelled class (empty ones included), then unlabelled ids
  Bytes short_threshold_bytes = 0;
  GroupStats short_flows;  // size <= short_threshold_bytes
  GroupStats long_flows;   // size > short_threshold_bytes
};

inline constexpr Bytes kDefaultShortFlowBytes = 100'000;

// The statistics of a stream of finished flows in bounded memory: add() each record as it finishes,
// finish() once. Up to exact_limit flows per group, the result equals compute_fct_stats (byte-identical
// JSON); past it, that group's percentiles carry rel_error (stats/value_summary.h).
class FctAccumulator {
 public:
  FctAccumulator(SizeBuckets buckets, std::vector<std::string> class_labels,
                 Bytes short_threshold = kDefaultShortFlowBytes, size_t exact_limit = kExactSummaryLimit);
  void add(const FlowRecord& r);
  FctStats finish();
  size_t memory_bytes() const;  // held by the value summaries

 private:
  struct Group {
    explicit Group(size_t limit) : fct_us(limit), slowdown(limit) {}
    ValueSummary fct_us, slowdown;
    void add(const FlowRecord& r);
    GroupStats finish();
  };
  SizeBuckets buckets_;
  std::vector<std::string> class_labels_;
  Bytes short_threshold_;
  size_t limit_;
  Group overall_, short_, long_;
  std::vector<Group> by_bucket_, by_class_;
  std::map<uint16_t, Group> unlabelled_;
};

FctStats compute_fct_stats(const std::vector<FlowRecord>& flows, const SizeBuckets& buckets,
                           const std::vector<std::string>& class_labels,
                           Bytes short_threshold = kDefaultShortFlowBytes);

// {"count":.., "avg":.., "p50":.., "p95":.., "p99":.., "p999":.., "max":..} plus "rel_error":.. when
// the percentiles come from the histogram (more than kExactSummaryLimit values).
nlohmann::json to_json(const Dist& d);
// {"count":.., "fct_us":{Dist}, "slowdown":{Dist}}
nlohmann::json to_json(const GroupStats& g);
// {"count":.., "fct_us":{..}, "slowdown":{..},
//  "buckets":[{"label":.., "min_bytes":.., "max_bytes":.. (null if unbounded), "count":.., "fct_us":{..},
//              "slowdown":{..}}, ...],
//  "classes":{"<label>":{"class_id":.., "count":.., "fct_us":{..}, "slowdown":{..}}, ...},
//  "short_threshold_bytes":.., "short":{group}, "long":{group}}
nlohmann::json to_json(const FctStats& s);

}  // namespace rocesim
