#include "stats/flow_stream.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "stats/writers.h"

namespace rocesim {
struct FlowStreamWriter::Out {
  std::string path;
  std::ofstream f;
  fmt::memory_buffer buf;

  explicit Out(std::string p) : path(std::move(p)) {
    if (path.empty()) return;
    f.open(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  void write(const char* data, size_t n) {
    f.write(data, static_cast<std::streamsize>(n));
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  void flush_buf() {
    write(buf.data(), buf.size());
    buf.clear();
  }
  void close() {
    f.close();
    if (!f) throw std::runtime_error("cannot write " + path);
  }
};

FlowStreamWriter::FlowStreamWriter(Options opt, std::vector<std::string> class_labels)
    : opt_(std::move(opt)), labels_(std::move(class_labels)) {
  if (opt_.max_pending == 0) opt_.max_pending = 1;
  if (!opt_.flows_csv.empty()) {
    csv_ = std::make_unique<Out>(opt_.flows_csv);
    append_flows_csv_header(csv_->buf, opt_.transport_columns);
  }
  for (const std::string& p : opt_.fct_txt) fct_.push_back(std::make_unique<Out>(p));
  fct_lines_ = std::make_unique<Out>("");
}

FlowStreamWriter::~FlowStreamWriter() {
  for (const std::string& r : runs_) std::remove(r.c_str());  // left by a run that did not finish()
}

void FlowStreamWriter::write_row(const FlowRecord& r) {
  append_flows_csv_row(csv_->buf, r, labels_, opt_.transport_columns, opt_.name_of);
  if (csv_->buf.size() >= kCsvFlushBytes) csv_->flush_buf();
}

void FlowStreamWriter::add(const FlowRecord& r) {
  ++records_;
  if (!fct_.empty()) {
    append_hpcc_fct_line(fct_lines_->buf, r);
    if (fct_lines_->buf.size() >= kCsvFlushBytes) {
      for (auto& o : fct_) o->write(fct_lines_->buf.data(), fct_lines_->buf.size());
      fct_lines_->buf.clear();
    }
  }
  if (!csv_) return;
  if (!spilling_ && r.id == next_id_) {
    write_row(r);
    ++next_id_;
    // Rows that were waiting for this one.
    while (!pending_.empty() && pending_.begin()->first == next_id_) {
      write_row(pending_.begin()->second);
      pending_.erase(pending_.begin());
      ++next_id_;
    }
    return;
  }
  if (!spilling_ && r.id < next_id_) {  // a repeated id: out of contract, written where it comes
    write_row(r);
    return;
  }
  pending_.emplace(r.id, r);
  if (pending_.size() > max_pending_seen_) max_pending_seen_ = pending_.size();
  if (pending_.size() >= opt_.max_pending) spill();
}

void FlowStreamWriter::spill() {
  // Every row written so far precedes the pending ones: flush them, then freeze the main file until
  // finish() appends the merged runs.
  csv_->flush_buf();
  spilling_ = true;
  Out run(fmt::format("{}.run{}", opt_.flows_csv, runs_.size()));
  runs_.push_back(run.path);
  for (const auto& [id, r] : pending_) {
    append_flows_csv_row(run.buf, r, labels_, opt_.transport_columns, opt_.name_of);
    if (run.buf.size() >= kCsvFlushBytes) run.flush_buf();
  }
  run.flush_buf();
  run.close();
  pending_.clear();
}

void FlowStreamWriter::merge_runs() {
  // k-way merge by (id, run index): within a run rows are sorted by id (ties in completion order), and
  // earlier runs hold earlier completions, so ties keep completion order.
  struct Cursor {
    std::ifstream in;
    std::string line;
    uint64_t id = 0;
    bool next() {
      if (!std::getline(in, line)) return false;
      id = std::strtoull(line.c_str(), nullptr, 10);
      return true;
    }
  };
  std::vector<Cursor> cur(runs_.size());
  using Key = std::tuple<uint64_t, size_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> heap;
  for (size_t i = 0; i < runs_.size(); ++i) {
    cur[i].in.open(runs_[i], std::ios::binary);
    if (!cur[i].in) throw std::runtime_error("cannot read " + runs_[i]);
    if (cur[i].next()) heap.emplace(cur[i].id, i);
  }
  while (!heap.empty()) {
    const size_t i = std::get<1>(heap.top());
    heap.pop();
    csv_->buf.append(cur[i].line);
    csv_->buf.push_back('\n');
    if (csv_->buf.size() >= kCsvFlushBytes) csv_->flush_buf();
    if (cur[i].next()) heap.emplace(cur[i].id, i);
  }
  cur.clear();
  for (const std::string& r : runs_) std::remove(r.c_str());
  runs_.clear();
}

void FlowStreamWriter::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& o : fct_) {
    o->write(fct_lines_->buf.data(), fct_lines_->buf.size());
    o->close();
  }
  fct_lines_->buf.clear();
  if (!csv_) return;
  if (spilling_) {
    if (!pending_.empty()) spill();
    merge_runs();
  } else {
    for (const auto& [id, r] : pending_) write_row(r);  // ids that never came: skipped
  }
  pending_.clear();
  csv_->flush_buf();
  csv_->close();
}

}  // namespace rocesim
