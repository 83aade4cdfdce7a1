// Collectives and dependency traces (workload/collectives.h, workload/dependency_trace.h, DagRunner):
// the graphs they build, the closed forms on a non-blocking fabric, dependency order, bad input.
#include "workload/collectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "app/run.h"
#include "config/scenario.h"
#include "core/error.h"
#include "stats/collective_stats.h"
#include "topo/builders.h"
#include "workload/dependency_trace.h"

namespace rocesim {
namespace {

namespace fs = std::filesystem;

std::vector<int> iota_hosts(int n) {
  std::vector<int> h;
  for (int i = 0; i < n; ++i) h.push_back(100 + i);
  return h;
}

CollectiveParams params(const std::string& a, int n, Bytes s, int chunks = 1) {
  CollectiveParams p;
  p.algorithm = a;
  p.hosts = iota_hosts(n);
  p.bytes = s;
  p.chunks = chunks;
  return p;
}

// Bytes each rank sends in one iteration.
std::map<int, Bytes> sent(const FlowDag& d) {
  std::map<int, Bytes> m;
  for (uint32_t i = 0; i < d.size(); ++i) m[d.flow(i).src] += d.flow(i).bytes;
  return m;
}

TEST(CollectiveGraph, RingAllreduceSendsTwiceNMinusOneSegments) {
  const FlowDag d = build_collective(params("ring_allreduce", 5, 1'000'003, 3));
  EXPECT_EQ(d.size(), 2u * 4 * 5 * 3);
  EXPECT_EQ(d.steps(), 8u);
  // Every rank sends 2(N-1) segments; over all ranks every segment twice (N-1) times.
  EXPECT_EQ(d.total_bytes(), 2 * 4 * Bytes{1'000'003});
  for (auto [rank, b] : sent(d))
    EXPECT_NEAR(static_cast<double>(b), 2.0 * 4 / 5 * 1'000'003, 2 * 4 * 3) << rank;
  // Ring neighbours only; a step's chunk waits for the previous chunk and the upstream chunk.
  for (uint32_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d.flow(i).dst - 100, (d.flow(i).src - 100 + 1) % 5);
    EXPECT_EQ(d.flow(i).waits, (d.flow(i).step > 0 ? 1u : 0u) + (i % 3 > 0 ? 1u : 0u)) << i;
  }
}

TEST(CollectiveGraph, HalvingDoublingExchangesWithXorPartners) {
  const FlowDag d = build_collective(params("halving_doubling_allreduce", 8, 8000));
  EXPECT_EQ(d.steps(), 6u);
  const int dist[] = {4, 2, 1, 1, 2, 4};
  const Bytes size[] = {4000, 2000, 1000, 1000, 2000, 4000};
  for (uint32_t i = 0; i < d.size(); ++i) {
    const auto& f = d.flow(i);
    EXPECT_EQ((f.src - 100) ^ (f.dst - 100), dist[f.step]);
    EXPECT_EQ(f.bytes, size[f.step]);
  }
  for (auto [rank, b] : sent(d)) EXPECT_EQ(b, 2 * 7 * 1000) << rank;
  EXPECT_THROW(build_collective(params("halving_doubling_allreduce", 6, 6000)), InputError);
}

TEST(CollectiveGraph, AlltoallSendsOneSegmentToEveryOtherRank) {
  const FlowDag d = build_collective(params("alltoall", 6, 6000));
  std::map<std::pair<int, int>, int> pairs;
  for (uint32_t i = 0; i < d.size(); ++i) ++pairs[{d.flow(i).src, d.flow(i).dst}];
  EXPECT_EQ(pairs.size(), 30u);
  for (auto [p, n] : pairs) EXPECT_EQ(n, 1);
  EXPECT_EQ(d.total_bytes(), 6 * 5 * 1000);
}

TEST(CollectiveGraph, BadParametersAreErrors) {
  EXPECT_THROW(build_collective(params("ring_allreduce", 1, 1000)), InputError);
  EXPECT_THROW(build_collective(params("ring_allreduce", 4, 3)), InputError);  // < 1 byte per flow
  EXPECT_THROW(build_collective(params("ring_all_reduce", 4, 4000)), InputError);
  auto p = params("allgather", 3, 3000);
  p.hosts[1] = p.hosts[0];
  EXPECT_THROW(build_collective(p), InputError);
}

// --- on the simulated fabric ---

// A star of `n` hosts at 100 Gb/s (non-blocking), no scheme, one collective table. 4000-byte payloads
// (48 bytes of headers) and one 60-byte ACK per 4 packets, as RoCE NICs run: the wire carries 1.6 % more
// than the payload (with the defaults, 1000-byte payloads and an ACK per packet sharing each link with the
// data going the other way, it is 10.8 %, and no closed form at the link rate holds to 3 %).
std::string star_scenario(int n, const std::string& table) {
  return "duration_ms = 1000\n[topology]\nkind = \"star\"\nhosts = " + std::to_string(n) +
         "\nrate_gbps = 100\nlink_delay_us = 1\n[nic]\nmtu_bytes = 4000\nack_interval = 4\n[cc]\nscheme = "
         "\"none\"\n[[traffic]]\npattern = \"collective\"\n" +
         table;
}

struct JobRun {
  nlohmann::json job;
  double duration_us = 0;
  std::vector<FlowRecord> flows;
};

JobRun run_job(const std::string& text) {
  const Scenario s = load_scenario_text(text, "collective.toml");
  RunOptions o;
  o.keep_flows = true;
  const RunResult r = run_scenario(s, o);
  EXPECT_TRUE(r.summary["complete"].get<bool>());
  JobRun j;
  j.job = r.summary["jobs"][0];
  j.duration_us = j.job["iteration_us"]["mean"].get<double>();
  j.flows = r.flows;
  return j;
}

// S/B at the link rate B = 100 Gb/s, in us.
double us_at_link_rate(double bytes) { return bytes * 8 / (100.0 * 1e3); }

TEST(CollectiveRun, RingAllreduceMatchesClosedForm) {
  const int n = 8;
  const double s = 64e6, l_us = 2;
  const JobRun r =
      run_job(star_scenario(n, "collective = \"ring_allreduce\"\nbytes = 64000000\nstep_latency_us = 2\n"));
  const double expect = 2.0 * (n - 1) / n * us_at_link_rate(s) + 2 * (n - 1) * l_us;
  EXPECT_NEAR(r.duration_us / expect, 1.0, 0.03) << r.duration_us << " us vs " << expect;
  std::printf("  measured %.3f us, closed form %.3f us (%+.2f %%)\n", r.duration_us, expect,
              100 * (r.duration_us / expect - 1));
  EXPECT_GE(r.duration_us, expect);
  EXPECT_EQ(r.flows.size(), 2u * (n - 1) * n);
}

TEST(CollectiveRun, HalvingDoublingMatchesClosedForm) {
  const int n = 8;
  const double s = 64e6, l_us = 2;
  const JobRun r = run_job(star_scenario(
      n, "collective = \"halving_doubling_allreduce\"\nbytes = 64000000\nstep_latency_us = 2\n"));
  const double expect = 2.0 * (n - 1) / n * us_at_link_rate(s) + 2 * 3 * l_us;
  EXPECT_NEAR(r.duration_us / expect, 1.0, 0.03) << r.duration_us << " us vs " << expect;
  std::printf("  measured %.3f us, closed form %.3f us (%+.2f %%)\n", r.duration_us, expect,
              100 * (r.duration_us / expect - 1));
  EXPECT_GE(r.duration_us, expect);
}

TEST(CollectiveRun, AlltoallMatchesClosedForm) {
  const int n = 8;
  const double s = 64e6, l_us = 2;
  const JobRun r =
      run_job(star_scenario(n, "collective = \"alltoall\"\nbytes = 64000000\nstep_latency_us = 2\n"));
  const double expect = (n - 1.0) / n * us_at_link_rate(s) + (n - 1) * l_us;
  EXPECT_NEAR(r.duration_us / expect, 1.0, 0.03) << r.duration_us << " us vs " << expect;
  std::printf("  measured %.3f us, closed form %.3f us (%+.2f %%)\n", r.duration_us, expect,
              100 * (r.duration_us / expect - 1));
  EXPECT_GE(r.duration_us, expect);
}

TEST(CollectiveRun, PipelinedBroadcastMatchesClosedForm) {
  const int n = 6, c = 8;
  const double s = 64e6;
  const JobRun r = run_job(star_scenario(n, "collective = \"broadcast\"\nbytes = 64000000\nchunks = 8\n"));
  const double expect = (n - 1.0 + c - 1.0) * us_at_link_rate(s / c);
  EXPECT_NEAR(r.duration_us / expect, 1.0, 0.03) << r.duration_us << " us vs " << expect;
  std::printf("  measured %.3f us, closed form %.3f us (%+.2f %%)\n", r.duration_us, expect,
              100 * (r.duration_us / expect - 1));
}

TEST(CollectiveRun, IterationsAreSeparatedByComputeAndAllFlowsWaitTheirTurn) {
  const JobRun r = run_job(star_scenario(4,
                                         "collective = \"reduce_scatter\"\nbytes = 4000000\niterations = "
                                         "3\ncompute_us = 50\nstep_latency_us = 1\n"));
  EXPECT_EQ(r.job["iterations_finished"].get<int>(), 3);
  EXPECT_EQ(r.flows.size(), 3u * 3 * 4);
  // Iteration k + 1 starts compute_us after iteration k's last flow: no flow of it starts earlier.
  std::vector<FlowRecord> f = r.flows;
  std::sort(f.begin(), f.end(), [](auto& a, auto& b) { return a.start < b.start; });
  const Time first_iter_end = f[11].finish;  // 12 flows per iteration, all before the next
  for (size_t i = 12; i < f.size(); ++i) EXPECT_GE(f[i].start, first_iter_end + Time::from_us(51));
}

// --- dependency traces ---

struct TmpDir {
  fs::path path = fs::temp_directory_path() / ("rocesim_coll_" + std::to_string(::getpid()));
  TmpDir() { fs::create_directories(path); }
  ~TmpDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

HostResolver numeric_hosts() {
  return [](const std::string& v) {
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("no such host");
    return std::stoi(v);
  };
}

std::string trace_error(const std::string& text) {
  std::istringstream in(text);
  try {
    (void)read_dependency_trace(in, "t.csv", numeric_hosts());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DependencyTrace, BadTracesNameTheLine) {
  EXPECT_NE(trace_error("id,src,dst,bytes,after\na,1,2,100,\nb,2,3,100,c\n")
                .find("t.csv:3: flow 'b' waits for 'c'"),
            std::string::npos);
  EXPECT_NE(trace_error("id,src,dst,bytes,after\na,1,2,100,b\nb,2,3,100,a\n").find("dependency cycle"),
            std::string::npos);
  EXPECT_NE(
      trace_error("id,src,dst,bytes\na,1,2,100\na,2,3,100\n").find("t.csv:3: flow id 'a' is used twice"),
      std::string::npos);
  EXPECT_NE(trace_error("id,src,bytes\n").find("no 'dst' column"), std::string::npos);
  EXPECT_NE(trace_error("id,src,dst,bytes\na,1,x,100\n").find("t.csv:2: dst 'x'"), std::string::npos);
  EXPECT_NE(trace_error("id,src,dst,bytes,delay_us\na,1,2,100,5\n").find("delay_us"), std::string::npos);
  EXPECT_NE(trace_error("{\"id\": \"a\", \"src\": 1, \"dst\": 2}\n").find("t.csv:1: missing key 'bytes'"),
            std::string::npos);
  EXPECT_NE(trace_error("# nothing\n").find("no flows"), std::string::npos);
  EXPECT_EQ(
      trace_error("{\"id\": 1, \"src\": 1, \"dst\": 2, \"bytes\": 5}\n{\"id\": 2, \"src\": 2, \"dst\": 1, "
                  "\"bytes\": 5, \"after\": [1], \"delay_us\": 3}\n"),
      "");
}

TEST(DependencyTrace, FlowsRunInDependencyOrder) {
  TmpDir tmp;
  // A diamond, a chain with a delay, a flow with both a start and a dependency, and an independent flow.
  const std::string trace = tmp.write("t.csv",
                                      "# from a generator\n"
                                      "id,src,dst,bytes,start_us,after,delay_us\n"
                                      "d,h3,h0,300000,,b;c,0\n"
                                      "a,h0,h1,1000000,5,,\n"
                                      "b,h1,h2,200000,,a,3\n"
                                      "c,h2,h3,2000000,,a,\n"
                                      "e,h0,h2,100000,400,a,\n"
                                      "z,h1,h3,50000,1,,\n");
  const std::string text =
      "duration_ms = 100\n[topology]\nkind = \"star\"\nhosts = 4\n[cc]\nscheme = \"none\"\n"
      "[[traffic]]\npattern = \"dependency_trace\"\nfile = \"" +
      trace + "\"\njob = \"tr\"\nstart_us = 10\n";
  const Scenario s = load_scenario_text(text, "trace.toml");
  RunOptions o;
  o.keep_flows = true;
  const RunResult r = run_scenario(s, o);
  ASSERT_EQ(r.flows.size(), 6u);
  std::map<std::pair<int, int>, FlowRecord> by;
  for (const FlowRecord& f : r.flows) by[{f.src, f.dst}] = f;
  auto h = [&](const char* name) { return lookup_node(s.topo, name); };
  const FlowRecord a = by[{h("h0"), h("h1")}], b = by[{h("h1"), h("h2")}], c = by[{h("h2"), h("h3")}],
                   d = by[{h("h3"), h("h0")}], e = by[{h("h0"), h("h2")}], z = by[{h("h1"), h("h3")}];
  EXPECT_EQ(a.start, Time::from_us(15));
  EXPECT_EQ(z.start, Time::from_us(11));
  // A flow released by another's finish starts at the earliest one lookahead later (FlowTable::release; a
  // star is one partition, whose lookahead is 1 us).
  const Time look = Time::from_us(1);
  EXPECT_EQ(b.start, a.finish + Time::from_us(3));
  EXPECT_EQ(c.start, a.finish + look);
  EXPECT_EQ(d.start, std::max(b.finish, c.finish) + look);
  EXPECT_EQ(e.start, std::max(a.finish + look, Time::from_us(410)));
  EXPECT_EQ(r.summary["jobs"][0]["steps"].get<int>(), 3);
  EXPECT_EQ(r.summary["jobs"][0]["iterations_finished"].get<int>(), 1);
}

TEST(DependencyTrace, ScenarioErrorsNameTheFile) {
  TmpDir tmp;
  const std::string trace =
      tmp.write("bad.jsonl", "{\"id\": \"a\", \"src\": \"h0\", \"dst\": \"h9\", \"bytes\": 5}\n");
  const std::string text =
      "[topology]\nkind = \"star\"\nhosts = 4\n[[traffic]]\npattern = \"dependency_trace\"\nfile = \"" +
      trace + "\"\n";
  try {
    (void)load_scenario_text(text, "x.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:1: dst 'h9'"), std::string::npos) << e.what();
  }
}

TEST(CollectiveConfig, KeysAreChecked) {
  auto err = [](const std::string& table) {
    try {
      (void)load_scenario_text(star_scenario(6, table), "c.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("bytes = 1000\n").find("needs collective"), std::string::npos);
  EXPECT_NE(err("collective = \"ring_allreduce\"\n").find("needs bytes"), std::string::npos);
  EXPECT_NE(err("collective = \"halving_doubling_allreduce\"\nbytes = 6000\n").find("power-of-two"),
            std::string::npos);
  EXPECT_NE(err("collective = \"ring_allreduce\"\nbytes = 6000\nstop_us = 5\n").find("does not apply"),
            std::string::npos);
  EXPECT_NE(err("collective = \"ring_alreduce\"\nbytes = 6000\n").find("ring_allreduce"), std::string::npos);
  EXPECT_EQ(err("collective = \"ring_allreduce\"\nbytes = 6000\nhosts = \"h0..h3\"\n"), "");
}

TEST(CollectiveConfig, EnabledFalseSwitchesATableOffAndKeepsTheOthersStreams) {
  const std::string base = star_scenario(6, "collective = \"ring_allreduce\"\nbytes = 6000\n") +
                           "[[traffic]]\nload = 0.3\nstop_us = 5000\nhosts = \"h0..h5\"\n";
  const Scenario on = load_scenario_text(base, "on.toml");
  const Scenario off = load_scenario_text(base, "off.toml", {"traffic[0].enabled=false"});
  const Scenario bg_off = load_scenario_text(base, "bg.toml", {"traffic[1].enabled=false"});
  EXPECT_TRUE(on.make_dependent_flows());
  EXPECT_FALSE(off.make_dependent_flows());
  auto a = on.make_flow_source(), b = off.make_flow_source(), c = bg_off.make_flow_source();
  FlowSpec fa, fb, fc;
  EXPECT_FALSE(c->next(fc));  // the only generator is off
  int n = 0;
  for (; a->next(fa); ++n) {
    ASSERT_TRUE(b->next(fb));
    EXPECT_EQ(fa.start, fb.start);
    EXPECT_EQ(fa.src, fb.src);
    EXPECT_EQ(fa.dst, fb.dst);
    EXPECT_EQ(fa.size_bytes, fb.size_bytes);
  }
  EXPECT_FALSE(b->next(fb));
  EXPECT_GT(n, 10);
}

TEST(CollectiveStats, CsvRowsPerIteration) {
  const Scenario s = load_scenario_text(
      star_scenario(4, "collective = \"allgather\"\nbytes = 400000\niterations = 2\njob = \"ag\"\n"),
      "c.toml");
  Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  auto runner = s.make_dependent_flows();
  ASSERT_TRUE(runner);
  net.set_dependent_flows(runner.get());
  net.run(s.duration);
  std::ostringstream out;
  write_collectives_csv(out, *runner);
  std::istringstream in(out.str());
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].rfind("ag,allgather,4,0,400000,0.000000,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("ag,allgather,4,1,400000,", 0), 0u) << lines[2];
}

}  // namespace
}  // namespace rocesim
