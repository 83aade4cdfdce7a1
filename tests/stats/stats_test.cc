// Tests of src/stats: FCT summaries, flows.csv / fct.txt writers, ideal FCT.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/flow_record.h"
#include "net/ideal_fct.h"
#include "stats/fct_stats.h"
#include "stats/writers.h"

namespace rocesim {
namespace {

FlowRecord make_record(uint64_t id, int src, int dst, Bytes size, int64_t start_ps, int64_t fct_ps,
                       int64_t ideal_ps, uint16_t class_id = 0) {
  FlowRecord r;
  r.id = id;
  r.src = src;
  r.dst = dst;
  r.size_bytes = size;
  r.start = Time::from_ps(start_ps);
  r.finish = Time::from_ps(start_ps + fct_ps);
  r.ideal_fct = Time::from_ps(ideal_ps);
  r.class_id = class_id;
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Percentiles

TEST(StatsSummarize, NearestRankOnOneToHundred) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const Dist d = summarize(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.avg, 50.5);
  EXPECT_DOUBLE_EQ(d.p50, 50);
  EXPECT_DOUBLE_EQ(d.p95, 95);
  EXPECT_DOUBLE_EQ(d.p99, 99);
  EXPECT_DOUBLE_EQ(d.p999, 100);
  EXPECT_DOUBLE_EQ(d.max, 100);
}

TEST(StatsSummarize, NearestRankExactRanksOnThousand) {
  // ceil(0.999 * 1000) = 999 exactly (no floating-point rank error): p99.9 is the 999th value.
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  const Dist d = summarize(v);
  EXPECT_DOUBLE_EQ(d.p50, 500);
  EXPECT_DOUBLE_EQ(d.p99, 990);
  EXPECT_DOUBLE_EQ(d.p999, 999);
  EXPECT_DOUBLE_EQ(d.max, 1000);
}

TEST(StatsSummarize, SingleValueAndEmpty) {
  const Dist one = summarize({7.5});
  EXPECT_EQ(one.count, 1u);
  EXPECT_DOUBLE_EQ(one.p50, 7.5);
  EXPECT_DOUBLE_EQ(one.p999, 7.5);
  const Dist none = summarize({});
  EXPECT_EQ(none.count, 0u);
  for (double x : {none.avg, none.p50, none.p95, none.p99, none.p999, none.max}) EXPECT_EQ(x, 0.0);
}

TEST(StatsSummarize, IgnoresNaN) {
  const Dist d = summarize({1.0, std::nan(""), 3.0});
  EXPECT_EQ(d.count, 2u);
  EXPECT_DOUBLE_EQ(d.avg, 2.0);
  EXPECT_DOUBLE_EQ(d.max, 3.0);
}

// ---------------------------------------------------------------------------------------------------
// Size buckets

TEST(StatsBuckets, DefaultsLabelsAndEdges) {
  const SizeBuckets b = SizeBuckets::defaults();
  EXPECT_EQ(b.labels, (std::vector<std::string>{"0-10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", "10MB+"}));
  EXPECT_EQ(b.upper_bytes, (std::vector<Bytes>{10'000, 100'000, 1'000'000, 10'000'000}));
  EXPECT_EQ(b.index_of(0), 0);
  EXPECT_EQ(b.index_of(1), 0);
  EXPECT_EQ(b.index_of(10'000), 0);
  EXPECT_EQ(b.index_of(10'001), 1);
  EXPECT_EQ(b.index_of(100'000), 1);
  EXPECT_EQ(b.index_of(100'001), 2);
  EXPECT_EQ(b.index_of(1'000'000), 2);
  EXPECT_EQ(b.index_of(1'000'001), 3);
  EXPECT_EQ(b.index_of(10'000'000), 3);
  EXPECT_EQ(b.index_of(10'000'001), 4);
  EXPECT_EQ(b.index_of(int64_t{1} << 40), 4);
  EXPECT_EQ(b.min_bytes(0), 0);
  EXPECT_EQ(b.max_bytes(0), 10'000);
  EXPECT_EQ(b.min_bytes(1), 10'001);
  EXPECT_EQ(b.min_bytes(4), 10'000'001);
  EXPECT_EQ(b.max_bytes(4), -1);
}

TEST(StatsBuckets, FromEdgesLabelsAndErrors) {
  const SizeBuckets b = SizeBuckets::from_edges({1500, 3000, 2'000'000});
  EXPECT_EQ(b.labels, (std::vector<std::string>{"0-1500B", "1500B-3KB", "3KB-2MB", "2MB+"}));
  EXPECT_EQ(b.index_of(1500), 0);
  EXPECT_EQ(b.index_of(1501), 1);
  EXPECT_EQ(SizeBuckets::from_edges({}).labels, (std::vector<std::string>{"0+"}));
  EXPECT_EQ(SizeBuckets::from_edges({}).index_of(5), 0);
  EXPECT_THROW(SizeBuckets::from_edges({100, 100}), std::invalid_argument);
  EXPECT_THROW(SizeBuckets::from_edges({100, 50}), std::invalid_argument);
  EXPECT_THROW(SizeBuckets::from_edges({-1, 50}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// FctStats

TEST(StatsFct, GroupsAndJsonKeys) {
  std::vector<FlowRecord> flows = {
      make_record(0, 1, 2, 5'000, 0, 10'000'000, 5'000'000, 0),          // 10 us, slowdown 2
      make_record(1, 1, 2, 50'000, 0, 20'000'000, 40'000'000, 1),        // 20 us, slowdown 0.5 -> 1
      make_record(2, 1, 2, 20'000'000, 0, 400'000'000, 100'000'000, 7),  // 400 us, slowdown 4, no label
      make_record(3, 1, 2, 100'000, 0, 30'000'000, 0, 0),                // no ideal: no slowdown
  };
  const FctStats s = compute_fct_stats(flows, SizeBuckets::defaults(), {"web", "incast"}, 100'000);
  EXPECT_EQ(s.overall.count, 4u);
  EXPECT_EQ(s.overall.fct_us.count, 4u);
  EXPECT_EQ(s.overall.slowdown.count, 3u);
  EXPECT_DOUBLE_EQ(s.overall.fct_us.max, 400.0);
  EXPECT_DOUBLE_EQ(s.overall.slowdown.p50, 2.0);
  ASSERT_EQ(s.buckets.size(), 5u);
  EXPECT_EQ(s.buckets[0].stats.count, 1u);
  EXPECT_EQ(s.buckets[1].stats.count, 2u);  // 50 KB and exactly 100 KB
  EXPECT_EQ(s.buckets[2].stats.count, 0u);
  EXPECT_EQ(s.buckets[4].stats.count, 1u);
  ASSERT_EQ(s.classes.size(), 3u);
  EXPECT_EQ(s.classes[0].label, "web");
  EXPECT_EQ(s.classes[0].stats.count, 2u);
  EXPECT_EQ(s.classes[1].label, "incast");
  EXPECT_DOUBLE_EQ(s.classes[1].stats.slowdown.max, 1.0);  // clipped
  EXPECT_EQ(s.classes[2].class_id, 7);
  EXPECT_EQ(s.classes[2].label, "7");
  EXPECT_EQ(s.short_flows.count, 3u);  // <= 100 KB
  EXPECT_EQ(s.long_flows.count, 1u);

  const nlohmann::json j = to_json(s);
  for (const char* k :
       {"count", "fct_us", "slowdown", "buckets", "classes", "short_threshold_bytes", "short", "long"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  for (const char* k : {"count", "avg", "p50", "p95", "p99", "p999", "max"}) {
    EXPECT_TRUE(j["fct_us"].contains(k)) << k;
    EXPECT_TRUE(j["slowdown"].contains(k)) << k;
  }
  EXPECT_EQ(j["count"], 4);
  EXPECT_DOUBLE_EQ(j["fct_us"]["max"].get<double>(), 400.0);
  ASSERT_EQ(j["buckets"].size(), 5u);
  const auto& b0 = j["buckets"][0];
  for (const char* k : {"label", "min_bytes", "max_bytes", "count", "fct_us", "slowdown"}) {
    EXPECT_TRUE(b0.contains(k)) << k;
  }
  EXPECT_EQ(b0["label"], "0-10KB");
  EXPECT_EQ(b0["min_bytes"], 0);
  EXPECT_EQ(b0["max_bytes"], 10'000);
  EXPECT_TRUE(j["buckets"][4]["max_bytes"].is_null());
  EXPECT_EQ(j["classes"]["web"]["count"], 2);
  EXPECT_EQ(j["classes"]["7"]["class_id"], 7);
  EXPECT_EQ(j["short_threshold_bytes"], 100'000);
  EXPECT_EQ(j["short"]["count"], 3);
  EXPECT_EQ(j["long"]["fct_us"]["p50"], 400.0);
}

TEST(StatsFct, EmptyInputIsAllZeros) {
  const FctStats s = compute_fct_stats({}, SizeBuckets::defaults(), {"default"});
  EXPECT_EQ(s.overall.count, 0u);
  EXPECT_EQ(s.short_threshold_bytes, kDefaultShortFlowBytes);
  const nlohmann::json j = to_json(s);
  EXPECT_EQ(j["fct_us"]["avg"], 0.0);
  EXPECT_EQ(j["slowdown"]["p999"], 0.0);
  EXPECT_EQ(j["classes"]["default"]["count"], 0);
  // The only null is the unbounded bucket's max_bytes (NaN would also dump as null).
  const std::string dumped = j.dump();
  size_t nulls = 0;
  for (size_t at = dumped.find("null"); at != std::string::npos; at = dumped.find("null", at + 1)) ++nulls;
  EXPECT_EQ(nulls, 1u);
}

// ---------------------------------------------------------------------------------------------------
// Writers

TEST(StatsWriters, FormatTimeUs) {
  EXPECT_EQ(format_time_us(Time::from_ps(0)), "0.000000");
  EXPECT_EQ(format_time_us(Time::from_ps(1)), "0.000001");
  EXPECT_EQ(format_time_us(Time::from_ps(1'234'567)), "1.234567");
  EXPECT_EQ(format_time_us(Time::from_ps(-5)), "-0.000005");
  EXPECT_EQ(format_time_us(Time::max()), "9223372036854.775807");
  EXPECT_EQ(format_time_us(Time::from_ps(INT64_MIN)), "-9223372036854.775808");
}

TEST(StatsWriters, FlowsCsvByteExact) {
  // Record A: starts at 2 s + 123 ps (sub-ns), FCT 10.0005 us, ideal 6.26384 us.
  // Record B: ideal larger than fct (slowdown clipped to 1), class id without a label.
  std::vector<FlowRecord> recs = {
      make_record(2, 1, 300, 1000, 2'000'000'000'123, 10'000'500, 6'263'840, 0),
      make_record(1, 0, 5, 1'000'000, 1000, 90'000'000, 90'020'000, 5),
  };
  std::ostringstream out;
  write_flows_csv(out, recs, {"web,search"});
  EXPECT_EQ(out.str(),
            "id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,class,name\n"
            "1,0,5,1000000,0.001000,90.001000,90.000000,90.020000,1.000000,5,\n"
            "2,1,300,1000,2000000.000123,2000010.000623,10.000500,6.263840,1.596545,\"web,search\",\n");
  // A workload's own name (a trace's id) in the last column, quoted as the class is; name id 0: none.
  recs[0].name_id = 2;
  const std::vector<std::string> names = {"", "a", "say \"hi\""};
  std::ostringstream named;
  write_flows_csv(named, recs, {"web,search"}, false,
                  [&](uint32_t id) -> const std::string& { return names.at(id); });
  EXPECT_EQ(named.str(),
            "id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,class,name\n"
            "1,0,5,1000000,0.001000,90.001000,90.000000,90.020000,1.000000,5,\n"
            "2,1,300,1000,2000000.000123,2000010.000623,10.000500,6.263840,1.596545,\"web,search\","
            "\"say \"\"hi\"\"\"\n");
}

TEST(StatsWriters, IpHex) {
  EXPECT_EQ(ip_hex_of_node(0), "0b000001");
  EXPECT_EQ(ip_hex_of_node(1), "0b000101");
  EXPECT_EQ(ip_hex_of_node(255), "0b00ff01");
  EXPECT_EQ(ip_hex_of_node(256), "0b010001");
  EXPECT_EQ(ip_hex_of_node(300), "0b012c01");
  EXPECT_EQ(ip_hex_of_node(65535), "0bffff01");
  EXPECT_THROW(ip_hex_of_node(-1), std::invalid_argument);
  EXPECT_THROW(ip_hex_of_node(65536), std::invalid_argument);
}

TEST(StatsWriters, HpccFctLine) {
  FlowRecord r = make_record(9, 1, 300, 1000, 2'000'000'000'999, 10'000'500, 6'263'840);
  r.sport = 10003;
  r.dport = 200;
  FlowRecord r2 = make_record(3, 17, 2, 52, 2'000'000'001'000, 7'000'000, 6'100'000);
  r2.sport = 10000;
  // Completion order is kept (no sorting by id).
  std::ostringstream out;
  write_hpcc_fct(out, {r, r2});
  EXPECT_EQ(out.str(),
            "0b000101 0b012c01 10003 200 1000 2000000000 10000 6263\n"
            "0b001101 0b000201 10000 100 52 2000000001 7000 6100\n");
  EXPECT_EQ(hpcc_fct_line(r2), "0b001101 0b000201 10000 100 52 2000000001 7000 6100\n");
  EXPECT_EQ(floor_ns(Time::from_ps(-1)), -1);
  EXPECT_EQ(floor_ns(Time::from_ps(1999)), 1);
}

// ---------------------------------------------------------------------------------------------------
// Ideal FCT

PathInfo three_hop_path() {
  // host -100G- ToR -400G- switch -100G- host, 1 us per link.
  return PathInfo{{Rate::from_gbps(100), Rate::from_gbps(400), Rate::from_gbps(100)},
                  {Time::from_us(1), Time::from_us(1), Time::from_us(1)}};
}

TEST(StatsIdealFct, ThreeHopClosedForm) {
  const PathInfo p = three_hop_path();
  // base RTT = 2 x 3 us + (1000 B x 8 / 100G = 80 ns) + (1000 B x 8 / 400G = 20 ns) + 80 ns = 6180 ns.
  EXPECT_EQ(base_rtt(p), Time::from_ns(6180));
  EXPECT_EQ(base_rtt_ns_hpcc(p), 6180);

  // 1000 B: 1 packet, (1000 + 48) x 8 / 100G = 83.84 ns -> 6263.84 ns.
  EXPECT_EQ(ideal_fct(1000, p).ps, 6'263'840);
  EXPECT_EQ(ideal_fct_ns_hpcc(1000, p), 6263);

  // 1 MB = 1,000,000 B: 1000 packets, 1,048,000 B x 8 / 100G = 83,840 ns -> 90,020 ns.
  EXPECT_EQ(ideal_fct(1'000'000, p).ps, 90'020'000);
  EXPECT_EQ(ideal_fct_ns_hpcc(1'000'000, p), 90'020);

  // 1 MiB = 1,048,576 B: 1049 packets, 1,098,928 B x 8 / 100G = 87,914.24 ns -> 94,094.24 ns.
  EXPECT_EQ(ideal_fct(1'048'576, p).ps, 94'094'240);
  EXPECT_EQ(ideal_fct_ns_hpcc(1'048'576, p), 94'094);

  // 1 B still costs one full header.
  EXPECT_EQ(ideal_fct(1, p).ps, 6'180'000 + 3'920);  // (1 + 48) x 8 / 100G = 3.92 ns
}

TEST(StatsIdealFct, NsVersionIsFloorOfPsVersion) {
  const PathInfo p = three_hop_path();
  for (Bytes size : {Bytes{1}, Bytes{999}, Bytes{1000}, Bytes{1001}, Bytes{4321}, Bytes{123'457},
                     Bytes{1'000'000}, Bytes{1'048'576}, Bytes{30'000'000}}) {
    const int64_t ps = ideal_fct(size, p).ps;
    const int64_t ns = ideal_fct_ns_hpcc(size, p);
    EXPECT_LE(ns * 1000, ps) << size;
    EXPECT_LT(ps - ns * 1000, 1000) << size;
    EXPECT_EQ(ns, ps / 1000) << size;
  }
}

TEST(StatsIdealFct, OddRatesRoundAsTheSimulatorDoes) {
  // 3 Gb/s: 8000 bits / 3e9 = 2666.67 ns. The simulator floors each hop (2666 ns); the ps
  // version rounds up to the picosecond (2,666,667 ps).
  const PathInfo p{{Rate::from_gbps(3)}, {Time::from_ns(500)}};
  EXPECT_EQ(base_rtt(p).ps, 1'000'000 + 2'666'667);
  EXPECT_EQ(base_rtt_ns_hpcc(p), 1000 + 2666);
  // 10 B: (10 + 48) x 8 = 464 bits / 3e9 = 154.67 ns.
  EXPECT_EQ(ideal_fct(10, p).ps, 1'000'000 + 2'666'667 + 154'667);
  EXPECT_EQ(ideal_fct_ns_hpcc(10, p), 1000 + 2666 + 154);
  // Different payload and header sizes.
  EXPECT_EQ(ideal_fct(4096, three_hop_path(), 4096, 0).ps, 6'000'000 + 327'680 + 81'920 + 327'680 + 327'680);
}

TEST(StatsIdealFct, RejectsBadInput) {
  const PathInfo p = three_hop_path();
  EXPECT_THROW(ideal_fct(1000, PathInfo{}), std::invalid_argument);
  EXPECT_THROW(ideal_fct(1000, PathInfo{{Rate::from_gbps(100)}, {}}), std::invalid_argument);
  EXPECT_THROW(ideal_fct(1000, PathInfo{{Rate{0}}, {Time::zero()}}), std::invalid_argument);
  EXPECT_THROW(ideal_fct(-1, p), std::invalid_argument);
  EXPECT_THROW(ideal_fct(1000, p, 0), std::invalid_argument);
  EXPECT_THROW(ideal_fct_ns_hpcc(1000, PathInfo{}), std::invalid_argument);
  EXPECT_EQ(ideal_fct(0, p), base_rtt(p));
}

}  // namespace
}  // namespace rocesim
