// Writes finished flows to flows.csv and fct.txt as they finish, so that a run's memory does not grow with
// its number of flows (the files are byte-identical to write_flows_csv / write_hpcc_fct of all records).
//
// fct.txt lines go out in completion order. flows.csv rows must be in id order: a row is written as soon as
// every smaller id has been written; records that finish before a smaller id wait in a reorder buffer
// (ids are distinct and dense, 0, 1, 2, ..., as Network assigns them, so the buffer holds only the flows
// that finished while an older one was still running). Should the buffer pass max_pending records (an old
// flow starved for long), its rows are spilled, sorted, to a run file next to flows.csv
// (flows.csv.run<k>); from then on every row goes through such runs, merged by id at finish() (ties in
// completion order, as write_flows_csv's stable sort) and removed. Rows of ids that never finished are
// simply absent. Records with an id already written (ids must be distinct) are written where they come.
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/flow_record.h"
#include "stats/writers.h"

namespace rocesim {

class FlowStreamWriter {
 public:
  struct Options {
    std::string flows_csv;                 // empty: not written
    std::vector<std::string> fct_txt;      // each gets the same fct.txt (ns-3 layout); may be empty
    size_t max_pending = size_t{1} << 18;  // reorder-buffer records before spilling (~30 MB)
    bool transport_columns = false;        // flows.csv's retransmission and out-of-order columns
    FlowNameOf name_of;                    // flows.csv's name column (stats/writers.h); empty: none
  };

  // Opens (creates or truncates) the files; throws std::runtime_error if one cannot be written.
  FlowStreamWriter(Options opt, std::vector<std::string> class_labels);
  ~FlowStreamWriter();
  FlowStreamWriter(const FlowStreamWriter&) = delete;
  FlowStreamWriter& operator=(const FlowStreamWriter&) = delete;

  void add(const FlowRecord& r);
  // Writes the rows still waiting, merges the spilled runs and closes the files (throws on write errors).
  // Call once; add() must not be called afterwards.
  void finish();

  size_t pending() const { return pending_.size(); }  // records held in memory, waiting
  size_t spilled_runs() const { return runs_.size(); }
  uint64_t records() const { return records_; }
  // Largest reorder buffer seen (records).
  size_t max_pending_seen() const { return max_pending_seen_; }

 private:
  struct Out;
  void write_row(const FlowRecord& r);
  void spill();
  void merge_runs();

  Options opt_;
  std::vector<std::string> labels_;
  std::unique_ptr<Out> csv_;
  std::vector<std::unique_ptr<Out>> fct_;
  std::unique_ptr<Out> fct_lines_;  // the buffer of the current fct.txt lines, shared by every copy
  uint64_t next_id_ = 0;            // every id below has been written (or spilled)
  std::multimap<uint64_t, FlowRecord> pending_;
  std::vector<std::string> runs_;  // spilled run files, in spill order
  bool spilling_ = false;
  bool finished_ = false;
  uint64_t records_ = 0;
  size_t max_pending_seen_ = 0;
};

}  // namespace rocesim
