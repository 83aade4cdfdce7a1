// Empirical flow-size distributions (piecewise-linear CDFs) and the catalogue of shipped workloads.
//
// Two file formats are accepted (see data/workloads/SOURCES.md):
//   * HPCC traffic_gen percent files (`*.txt`): `<size_bytes> <cdf_percent>` per line, last value 100;
//   * uniform `*.cdf` files: `#` comment lines, then `<size_bytes> <cdf_fraction>`, last value 1.
// The scale is detected from the last CDF value (100 -> percent, 1 -> fraction), not from the file
// extension, so either format works under any name. `#` comments and blank lines are skipped in both.
// Equal consecutive sizes (a point mass) and equal consecutive CDF values (an empty size range) are
// allowed; the upstream checker (traffic_gen/custom_rand.py testCdf) insists on strict increase, which
// the HPCC files satisfy anyway.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/time.h"

namespace rocesim {

class SizeCdf {
 public:
  // Reads and validates a CDF file; throws InputError(path, line, what-was-expected) on bad input.
  // `name` defaults to the file's stem (e.g. "websearch" for ".../websearch.cdf").
  static SizeCdf load(const std::string& path, const std::string& name = "");
  // Same, from an open stream; `path` is only used in messages and returned by path().
  static SizeCdf parse(std::istream& in, const std::string& path, const std::string& name = "");

  // One flow size, sampled as HPCC traffic_gen/custom_rand.py does: r = U[0,1) x scale (100 for
  // percent files), the first point i >= 1 with r <= cdf[i], linear interpolation of the size between
  // points i-1 and i, truncated to an integer, clamped to >= 1 byte. One uniform() per call.
  Bytes sample(Rng& rng) const;
  // The (untruncated) size at cumulative probability u in [0,1] by the same rule as sample().
  double quantile(double u) const;

  // Mean of the piecewise-linear distribution: sum over segments (x[i-1]+x[i])/2 * (F[i]-F[i-1])
  // (custom_rand.py getAvg). Samples are truncated to integers, so their mean is about 0.5 B lower.
  double mean_bytes() const { return mean_; }
  // P(X <= size) of the piecewise-linear CDF in [0,1] (right-continuous at point masses).
  double cdf_at(double size) const;
  // Share of sampled flow sizes strictly below `b` bytes, i.e. P(max(1, floor(X)) < b) = F(b-)
  // (the left limit of the CDF at b; 0 for b <= 1).
  double fraction_below(Bytes b) const;

  double min_bytes() const { return x_.front(); }
  double max_bytes() const { return x_.back(); }
  size_t points() const { return x_.size(); }
  bool percent_format() const { return scale_ == 100.0; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

 private:
  SizeCdf() = default;
  std::vector<double> x_;  // sizes in bytes, non-decreasing
  std::vector<double> f_;  // CDF values in the file's own scale (0..scale_), non-decreasing
  double scale_ = 1.0;     // 100 for percent files, 1 for fraction files
  double mean_ = 0.0;
  std::string name_;
  std::string path_;
};

// Maps a workload name to a file. `name_or_path` naming an existing file is returned unchanged.
// Otherwise it is looked up (case-insensitively) among the catalogue's short names, which point into
// `data_dir`/workloads:
//   websearch, hadoop (fb_hadoop.cdf), fb_hadoop_hpcc (FbHdp_distribution.txt), webserver,
//   cachefollower, enterprise, datamining, alistorage (ali_storage2019.cdf: Alibaba intra-DC storage),
//   google_rpc, websearch_hpcc / alistorage_hpcc / google_rpc_hpcc (the verbatim HPCC .txt copies),
//   and every `*.cdf` file by its stem.
// Unknown names throw InputError(name_or_path, 0, "... valid names: ...").
std::string resolve_workload(const std::string& name_or_path, const std::string& data_dir);

// The data directory the workload names resolve in: $ROCESIM_DATA_DIR when set (a build run from elsewhere
// than its checkout, e.g. carried to another machine), else `built_in` (the checkout's data/).
std::string data_dir_or_env(const std::string& built_in);

// All names resolve_workload accepts (aliases first, then the remaining .cdf stems, sorted).
std::vector<std::string> workload_names(const std::string& data_dir);

struct WorkloadInfo {
  std::string name;             // short name accepted by resolve_workload
  std::string file;             // file name inside data_dir/workloads
  double mean_bytes = 0;        // SizeCdf::mean_bytes()
  double share_below_10kb = 0;  // share of sampled flows < 10,000 B
  double share_above_1mb = 0;   // share of sampled flows > 1,000,000 B
};

// One row per name of workload_names() (for `rocesim list workloads`); loads every file.
std::vector<WorkloadInfo> list_workloads(const std::string& data_dir);

}  // namespace rocesim
