// Per-flow output files: rocesim's flows.csv and the ns-3 HPCC simulator's fct.txt.
// Both are byte-identical across runs and platforms for the same records: times are printed from the
// integer picosecond count (no floating point, no locale).
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "net/flow_record.h"

namespace rocesim {

// The CSV writers format into a memory buffer and hand it to the stream every kCsvFlushBytes.
inline constexpr size_t kCsvFlushBytes = 1 << 16;

inline void flush_buffer(std::ostream& out, fmt::memory_buffer& buf) {
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  buf.clear();
}

// A time in microseconds with exactly 6 decimals (i.e. exact to the picosecond), e.g. 1234567 ps ->
// "1.234567", -5 ps -> "-0.000005".
std::string format_time_us(Time t);

// The workload's own name of a flow from its FlowRecord::name_id (DagRunner::flow_name); an empty
// function: no flow has one.
using FlowNameOf = std::function<const std::string&(uint32_t name_id)>;

// flows.csv: header
//   id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,class,name
// then one row per record sorted by id (stable for equal ids). Times in us with exactly 6 decimals;
// slowdown (FlowRecord::slowdown(), clipped at 1) with 6 decimals, empty when the ideal FCT is not
// positive; class = class_labels[class_id], or the id in decimal when there is no such label; name =
// name_of(name_id), empty when name_id is 0 or there is no name_of (both quoted as in RFC 4180 if they
// contain a comma, quote or line break). Lines end with "\n". With `transport`, four columns come before
// class: retransmitted_packets,retransmitted_bytes,out_of_order_packets,spurious_retransmissions.
void write_flows_csv(std::ostream& out, const std::vector<FlowRecord>& records,
                     const std::vector<std::string>& class_labels, bool transport = false,
                     const FlowNameOf& name_of = {});

// `s` as one CSV field: unchanged, or quoted as in RFC 4180 when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);

// The simulator's IP of host node n, 11.(n/256).(n%256).1, as 8 lowercase hex digits
// (node 1 -> "0b000101"). Throws std::invalid_argument unless 0 <= n <= 65535.
std::string ip_hex_of_node(int node);

// Time in whole ns as that simulator prints it: floor(ps / 1000).
int64_t floor_ns(Time t);

// fct.txt, one line per record in the given (completion) order:
//   sip_hex dip_hex sport dport size_bytes start_ns fct_ns standalone_fct_ns
// with start_ns = floor_ns(start), fct_ns = floor_ns(finish - start), standalone_fct_ns =
// floor_ns(ideal_fct). To match the simulator's standalone column to the ns, the caller stores
// ideal_fct = Time::from_ps(1000 * ideal_fct_ns_hpcc(...)) in the records (net/ideal_fct.h).
void write_hpcc_fct(std::ostream& out, const std::vector<FlowRecord>& in_completion_order);
// One fct.txt line (with its "\n") for incremental writing as flows finish.
std::string hpcc_fct_line(const FlowRecord& r);

// The pieces of both files, for writing them as flows finish (stats/flow_stream.h): the flows.csv header
// line, one flows.csv row, one fct.txt line (each with its "\n").
void append_flows_csv_header(fmt::memory_buffer& buf, bool transport = false);
void append_flows_csv_row(fmt::memory_buffer& buf, const FlowRecord& r,
                          const std::vector<std::string>& class_labels, bool transport = false,
                          const FlowNameOf& name_of = {});
void append_hpcc_fct_line(fmt::memory_buffer& buf, const FlowRecord& r);

}  // namespace rocesim
