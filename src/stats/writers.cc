#include "stats/writers.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace rocesim {
namespace {

void append_time_us(fmt::memory_buffer& buf, Time t) {
  // |ps| as unsigned so that the most negative value is handled too.
  const bool neg = t.ps < 0;
  const uint64_t a = neg ? uint64_t{0} - static_cast<uint64_t>(t.ps) : static_cast<uint64_t>(t.ps);
  fmt::format_to(std::back_inserter(buf), "{}{}.{:06}", neg ? "-" : "", a / 1'000'000, a % 1'000'000);
}

void append_csv_field(fmt::memory_buffer& buf, const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) {
    buf.append(s);
    return;
  }
  buf.push_back('"');
  for (char c : s) {
    if (c == '"') buf.push_back('"');
    buf.push_back(c);
  }
  buf.push_back('"');
}

void append_hpcc_line(fmt::memory_buffer& buf, const FlowRecord& r) {
  fmt::format_to(std::back_inserter(buf), "{} {} {} {} {} {} {} {}\n", ip_hex_of_node(r.src),
                 ip_hex_of_node(r.dst), r.sport, r.dport, r.size_bytes, floor_ns(r.start), floor_ns(r.fct()),
                 floor_ns(r.ideal_fct));
}

}  // namespace

std::string csv_field(const std::string& s) {
  fmt::memory_buffer buf;
  append_csv_field(buf, s);
  return fmt::to_string(buf);
}

std::string format_time_us(Time t) {
  fmt::memory_buffer buf;
  append_time_us(buf, t);
  return fmt::to_string(buf);
}

void append_flows_csv_header(fmt::memory_buffer& buf, bool transport) {
  buf.append(std::string_view("id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,"));
  if (transport)
    buf.append(std::string_view(
        "retransmitted_packets,retransmitted_bytes,out_of_order_packets,spurious_retransmissions,"));
  buf.append(std::string_view("class,name\n"));
}

void append_flows_csv_row(fmt::memory_buffer& buf, const FlowRecord& r,
                          const std::vector<std::string>& class_labels, bool transport,
                          const FlowNameOf& name_of) {
  fmt::format_to(std::back_inserter(buf), "{},{},{},{},", r.id, r.src, r.dst, r.size_bytes);
  append_time_us(buf, r.start);
  buf.push_back(',');
  append_time_us(buf, r.finish);
  buf.push_back(',');
  append_time_us(buf, r.fct());
  buf.push_back(',');
  append_time_us(buf, r.ideal_fct);
  buf.push_back(',');
  if (r.ideal_fct.ps > 0) fmt::format_to(std::back_inserter(buf), "{:.6f}", r.slowdown());
  buf.push_back(',');
  if (transport)
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},", r.retransmitted_packets, r.retransmitted_bytes,
                   r.out_of_order_packets, r.spurious_retransmissions);
  if (r.class_id < class_labels.size()) {
    append_csv_field(buf, class_labels[r.class_id]);
  } else {
    fmt::format_to(std::back_inserter(buf), "{}", r.class_id);
  }
  buf.push_back(',');
  if (r.name_id != 0 && name_of) append_csv_field(buf, name_of(r.name_id));
  buf.push_back('\n');
}

void append_hpcc_fct_line(fmt::memory_buffer& buf, const FlowRecord& r) { append_hpcc_line(buf, r); }

void write_flows_csv(std::ostream& out, const std::vector<FlowRecord>& records,
                     const std::vector<std::string>& class_labels, bool transport,
                     const FlowNameOf& name_of) {
  std::vector<size_t> order(records.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return records[a].id < records[b].id; });

  fmt::memory_buffer buf;
  append_flows_csv_header(buf, transport);
  for (size_t i : order) {
    append_flows_csv_row(buf, records[i], class_labels, transport, name_of);
    if (buf.size() >= kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

std::string ip_hex_of_node(int node) {
  if (node < 0 || node > 0xffff) {
    throw std::invalid_argument(fmt::format("node id {} has no 11.x.y.1 address (0..65535)", node));
  }
  const uint32_t ip =
      0x0b000001u + static_cast<uint32_t>(node / 256) * 0x10000u + static_cast<uint32_t>(node % 256) * 0x100u;
  return fmt::format("{:08x}", ip);
}

int64_t floor_ns(Time t) {
  int64_t q = t.ps / 1000;
  if (t.ps % 1000 < 0) --q;  // round toward minus infinity
  return q;
}

std::string hpcc_fct_line(const FlowRecord& r) {
  fmt::memory_buffer buf;
  append_hpcc_line(buf, r);
  return fmt::to_string(buf);
}

void write_hpcc_fct(std::ostream& out, const std::vector<FlowRecord>& in_completion_order) {
  fmt::memory_buffer buf;
  for (const FlowRecord& r : in_completion_order) {
    append_hpcc_line(buf, r);
    if (buf.size() >= kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

}  // namespace rocesim
