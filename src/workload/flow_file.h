// Flow files of the ns-3 HPCC simulator (alibaba-edu/High-Precision-Congestion-Control), read unchanged,
// and in-memory flow lists.
#pragma once
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workload/flow.h"

namespace rocesim {

// How a flow file's start times (decimal seconds) become simulated time.
enum class FlowStartTimes {
  kExact,    // the decimal value, exactly to the picosecond [rocesim choice]
  kHpccSim,  // quirk of the ns-3 HPCC simulator: the nearest double, floored to the nanosecond
};

// Streams an HPCC flow file: line 1 the flow count N; then N lines `src dst pg dport size_bytes start_s`
// sorted by start (as traffic_gen.py writes them, e.g. `2 7 3 100 52000 2.000001234`). The file is read
// lazily, one line per next(). Blank lines and `#` comments are skipped (an extension; upstream files
// have none). Every problem throws InputError(path, line, ...):
//   node ids in [0, num_nodes) and hosts, src != dst, pg 0..7, dport 0..65535, size > 0 (integer bytes),
//   start >= 0 and non-decreasing, exactly 6 numeric fields, exactly N flows (fewer: "file ends after k
//   of N flows"; more: "extra flow line after the N flows", detected by the next() that returns false).
// Start times are parsed from the decimal text exactly to picoseconds (digits beyond 1 ps are rounded
// half up), e.g. "2.000000001" -> 2,000,000,001,000 ps; an exponent ("2e-3") is accepted. With
// FlowStartTimes::kHpccSim they are read as the simulator reads them (parse_seconds_hpcc_sim).
class HpccFlowFile : public FlowSource {
 public:
  // Maps a dport to a class id (FlowSpec::class_id); the default maps every dport to 0 ("default").
  // A run maps dport 200 to its "incast" class, e.g. [](uint16_t p) { return p == 200 ? incast : 0; }.
  using ClassOfDport = std::function<uint16_t(uint16_t dport)>;

  HpccFlowFile(const std::string& path, int num_nodes, std::function<bool(int)> is_host,
               ClassOfDport class_of_dport = {});
  HpccFlowFile(const std::string& path, const std::vector<bool>& is_host, ClassOfDport class_of_dport = {});
  // Reads from `in` instead of opening `path` (`path` is used in messages only).
  HpccFlowFile(std::unique_ptr<std::istream> in, const std::string& path, int num_nodes,
               std::function<bool(int)> is_host, ClassOfDport class_of_dport = {});

  bool next(FlowSpec& out) override;
  void set_start_times(FlowStartTimes s) { start_times_ = s; }

  uint64_t declared_count() const { return count_; }  // N from line 1
  uint64_t flows_read() const { return read_; }
  const std::string& path() const { return path_; }

 private:
  void read_header();
  [[noreturn]] void fail(const std::string& what) const;

  std::unique_ptr<std::istream> in_;
  std::string path_;
  int num_nodes_;
  std::function<bool(int)> is_host_;
  ClassOfDport class_of_dport_;
  std::string line_;  // reused line buffer
  int lineno_ = 0;
  uint64_t count_ = 0;
  uint64_t read_ = 0;
  Time last_start_;
  bool done_ = false;
  FlowStartTimes start_times_ = FlowStartTimes::kExact;
};

// Parses a start time in seconds ("2.000001", "2", "1.5e-3") exactly into picoseconds. Returns false on
// anything that is not a non-negative decimal number or overflows int64 picoseconds.
bool parse_seconds_exact(std::string_view text, Time& out);

// Parses a start time in seconds as the ns-3 HPCC simulator does (docs/coming-from-hpcc-sim.md, "Flow
// start times"): its third.cc reads the text into a double, and ns-3's Seconds() converts that double to
// its 1 ns time step by flooring the double's exact value times 10^9. Decimal nanoseconds that the double
// rounds down start 1 ns early: "2.000006703" is 2.00000670299999990 as a double and starts at
// 2,000,006,702 ns. Same accepted forms and failures as parse_seconds_exact.
bool parse_seconds_hpcc_sim(std::string_view text, Time& out);

// A fixed list of flows, handed out in start order (stable for equal starts).
class InlineFlows : public FlowSource {
 public:
  explicit InlineFlows(std::vector<FlowSpec> flows);
  bool next(FlowSpec& out) override;
  size_t size() const { return flows_.size(); }

 private:
  std::vector<FlowSpec> flows_;
  size_t pos_ = 0;
};

}  // namespace rocesim
