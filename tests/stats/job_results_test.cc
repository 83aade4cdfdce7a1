// The AI results of jobs (stats/collective_stats.h, DagRunner): iteration time mean and p99, bus bandwidth
// against the line rate, communication, compute and exposed communication, the per-host timeline, the trace
// ids in flows.csv's name column, and duplicate job names refused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "core/error.h"
#include "file_util.h"
#include "stats/collective_stats.h"
#include "stats/writers.h"
#include "workload/dependency_trace.h"
#include "workload/flow_dag.h"

// A namespace of its own: unity builds put several test files in one translation unit.
namespace rocesim {
namespace job_results_test {

namespace fs = std::filesystem;

// Stands in for the network: records the flows released, gives them ids 0, 1, 2, ...
class FakeNetwork : public DependentFlows::Releaser {
 public:
  uint64_t release(const FlowSpec& f) override {
    released.push_back(f);
    return released.size() - 1;
  }
  std::vector<FlowSpec> released;
};

struct TmpDir {
  fs::path path = fs::temp_directory_path() / ("rocesim_jobres_" + std::to_string(::getpid()));
  TmpDir() { fs::create_directories(path); }
  ~TmpDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// Lines of a text, without the header.
std::vector<std::string> rows_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// One flow h0 -> h1 per iteration, 100 iterations back to back; iteration k's flow takes k + 1 us. The mean
// is 50.5 us, the nearest-rank p99 the 99th smallest (99 us), not the max (100 us).
TEST(JobResults, IterationMeanAndP99AreOverTheFinishedIterations) {
  DagJob job;
  job.name = "one";
  job.kind = "trace";
  job.dag.add(0, 1, 1000, 0, Time::zero());
  ASSERT_EQ(job.dag.seal(true), -1);
  job.iterations = 100;
  job.ranks = 2;
  job.bytes_per_rank = 1000;
  DagRunner runner;
  runner.add(std::move(job));
  FakeNetwork net;
  runner.begin(net);
  Time now;
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(net.released.size(), static_cast<size_t>(k + 1));
    now = net.released.back().start + Time::from_us(k + 1);
    runner.on_flow_finished(net.released.size() - 1, now, net);
  }
  const nlohmann::json j = jobs_json(runner)[0];
  EXPECT_EQ(j["iterations_finished"].get<int>(), 100);
  EXPECT_DOUBLE_EQ(j["iteration_us"]["mean"].get<double>(), 50.5);
  EXPECT_DOUBLE_EQ(j["iteration_us"]["p99"].get<double>(), 99.0);
  EXPECT_DOUBLE_EQ(j["iteration_us"]["max"].get<double>(), 100.0);
  // No compute: all of an iteration is communication, all of it exposed.
  EXPECT_DOUBLE_EQ(j["comm_us"].get<double>(), 50.5);
  EXPECT_DOUBLE_EQ(j["compute_us"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["exposed_comm_us"].get<double>(), 50.5);
}

// timeline_iteration picks the iteration job_timeline.csv shows: here the third of four (k's flow takes
// k + 1 us, with 2 us of compute between iterations), and the compute after it.
TEST(JobResults, TimelineShowsTheChosenIteration) {
  for (const uint32_t keep : {0u, 2u, 3u}) {
    DagJob job;
    job.name = "one";
    job.kind = "trace";
    job.dag.add(0, 1, 1000, 0, Time::zero());
    ASSERT_EQ(job.dag.seal(true), -1);
    job.iterations = 4;
    job.gap = Time::from_us(2);
    job.timeline_iteration = keep;
    DagRunner runner;
    runner.add(std::move(job));
    FakeNetwork net;
    runner.begin(net);
    std::vector<Time> start;
    for (int k = 0; k < 4; ++k) {
      start.push_back(net.released.back().start);
      runner.on_flow_finished(net.released.size() - 1, start.back() + Time::from_us(k + 1), net);
      if (k == 0) {
        EXPECT_EQ(runner.timeline_iteration(0).empty(), keep != 0);  // kept from its beginning only
      }
    }
    std::ostringstream tl;
    write_job_timeline_csv(tl, runner);
    const Time a = start[keep], b = a + Time::from_us(keep + 1);
    std::string expect = fmt::format("one,{},0,comm,{},{}\n", keep, format_time_us(a), format_time_us(b));
    if (keep < 3)  // the compute after it, when another iteration follows
      expect += fmt::format("one,{},0,compute,{},{}\n", keep, format_time_us(b),
                            format_time_us(b + Time::from_us(2)));
    EXPECT_NE(tl.str().find(expect), std::string::npos) << tl.str();
    EXPECT_EQ(rows_of(tl.str()).size(), keep < 3 ? 4u : 2u) << tl.str();  // hosts 0 and 1
  }
}

// A trace whose delay is compute: a (h0 -> h1) runs [0, 10]; b (h1 -> h2) waits for a plus 5 us of compute,
// runs [15, 25]; c (h3 -> h0) runs [0, 30] beside them. Communication is in flight all 30 us, compute runs
// [10, 15], so 25 us of communication are exposed. The same delay as a collective's step latency (not
// compute) has all 30 us exposed.
TEST(JobResults, ExposedCommunicationIsCommunicationOutsideCompute) {
  for (const bool compute : {true, false}) {
    DagJob job;
    job.name = "t";
    job.kind = "trace";
    const uint32_t a = job.dag.add(0, 1, 1000, 0, Time::zero());
    const uint32_t b = job.dag.add(1, 2, 1000, 0, Time::from_us(5));
    job.dag.add(3, 0, 1000, 0, Time::zero());  // c
    job.dag.wait(b, a);
    job.dag.set_delays_compute(compute);
    ASSERT_EQ(job.dag.seal(true), -1);
    DagRunner runner;
    runner.add(std::move(job));
    FakeNetwork net;
    runner.begin(net);
    ASSERT_EQ(net.released.size(), 2u);  // a and c
    runner.on_flow_finished(a, Time::from_us(10), net);
    ASSERT_EQ(net.released.size(), 3u);
    EXPECT_EQ(net.released[2].start, Time::from_us(15));
    runner.on_flow_finished(2, Time::from_us(25), net);  // b
    runner.on_flow_finished(1, Time::from_us(30), net);  // c (released second)
    const IterationTimes& it = runner.iterations(0).at(0);
    ASSERT_TRUE(it.done);
    EXPECT_EQ(it.comm, Time::from_us(30));
    EXPECT_EQ(it.compute, compute ? Time::from_us(5) : Time::zero());
    EXPECT_EQ(it.exposed_comm, compute ? Time::from_us(25) : Time::from_us(30));
    std::ostringstream csv;
    write_collectives_csv(csv, runner);
    const auto rows = rows_of(csv.str());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NE(rows[0].find(compute ? ",30.000000,5.000000,25.000000" : ",30.000000,0.000000,30.000000"),
              std::string::npos)
        << rows[0];
    // The timeline: per host its communication merged (h0: a [0, 10] and c [0, 30]), compute on b's sender.
    // A step latency is communication: b is due from a's finish, so h1 communicates [0, 25] throughout.
    std::ostringstream tl;
    write_job_timeline_csv(tl, runner);
    const std::string t = tl.str();
    EXPECT_NE(t.find("t,0,0,comm,0.000000,30.000000\n"), std::string::npos) << t;
    if (compute) {
      EXPECT_NE(t.find("t,0,1,comm,0.000000,10.000000\nt,0,1,comm,15.000000,25.000000\n"
                       "t,0,1,compute,10.000000,15.000000\n"),
                std::string::npos)
          << t;
    } else {
      EXPECT_NE(t.find("t,0,1,comm,0.000000,25.000000\n"), std::string::npos) << t;
      EXPECT_EQ(t.find("compute"), std::string::npos) << t;
    }
  }
}

// A star of 8 hosts at 100 Gb/s is non-blocking: a ring all-reduce's bus bandwidth (algbw x 2(N-1)/N, as
// nccl-tests define it) is the line rate less the headers and ACKs (4000-byte payloads, an ACK per 4
// packets: 1.6 % of the wire) and the flows' start-up.
TEST(JobResults, RingAllreduceBusBandwidthIsNearTheLineRate) {
  const std::string text =
      "duration_ms = 1000\n[topology]\nkind = \"star\"\nhosts = 8\nrate_gbps = 100\nlink_delay_us = 1\n"
      "[nic]\nmtu_bytes = 4000\nack_interval = 4\n[cc]\nscheme = \"none\"\n[[traffic]]\npattern = "
      "\"collective\"\ncollective = \"ring_allreduce\"\nbytes = 64000000\niterations = 2\ncompute_us = 20\n"
      "job = \"ar\"\n";
  const RunResult r = run_scenario(load_scenario_text(text, "busbw.toml"), RunOptions{});
  const nlohmann::json& j = r.summary["jobs"][0];
  const double busbw = j["busbw_gbps"].get<double>(), algbw = j["algbw_gbps"].get<double>();
  std::printf("  ring all-reduce, 8 x 100 Gb/s: algbw %.2f Gb/s, busbw %.2f Gb/s\n", algbw, busbw);
  EXPECT_NEAR(busbw, algbw * 2 * 7 / 8, 1e-9);
  EXPECT_GT(busbw, 95.0);
  EXPECT_LT(busbw, 100.0);
  // The compute between iterations is not in an iteration: its communication is all exposed.
  EXPECT_DOUBLE_EQ(j["exposed_comm_us"].get<double>(), j["comm_us"].get<double>());
  EXPECT_NEAR(j["comm_us"].get<double>(), j["iteration_us"]["mean"].get<double>(), 1e-6);
  EXPECT_EQ(j["collective"].get<std::string>(), "ring_allreduce");
}

// flows.csv's name column holds each trace flow's own id (quoted when it has a comma), and is empty for
// generated flows; job_timeline.csv has the trace's compute.
TEST(JobResults, FlowsCsvNamesTraceFlowsByTheirIds) {
  TmpDir tmp;
  const std::string trace =
      tmp.write("t.jsonl",
                "{\"id\": \"fwd.layer0\", \"src\": \"h0\", \"dst\": \"h1\", \"bytes\": 20000}\n"
                "{\"id\": \"grad,1\", \"src\": \"h1\", \"dst\": \"h2\", \"bytes\": 30000, "
                "\"after\": [\"fwd.layer0\"], \"delay_us\": 7}\n"
                "{\"id\": 12, \"src\": \"h2\", \"dst\": \"h3\", \"bytes\": 40000, "
                "\"start_us\": 3}\n");
  const std::string text =
      "duration_ms = 10\n[topology]\nkind = \"star\"\nhosts = 4\n[cc]\nscheme = \"none\"\n"
      "[[flows]]\nsrc = \"h3\"\ndst = \"h0\"\nsize_bytes = 5000\nstart_us = 1\n"
      "[[traffic]]\npattern = \"dependency_trace\"\nfile = \"" +
      trace + "\"\njob = \"tr\"\n";
  RunOptions o;
  o.out_dir = (tmp.path / "out").string();
  const RunResult r = run_scenario(load_scenario_text(text, "names.toml"), o);
  ASSERT_TRUE(r.summary["complete"].get<bool>());
  const std::string flows = test::read_text_file(tmp.path / "out" / "flows.csv");
  ASSERT_EQ(
      flows.rfind("id,src,dst,size_bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,class,name\n", 0),
      0u)
      << flows;
  std::map<Bytes, std::string> name_by_size;  // sizes tell the flows apart
  for (const std::string& row : rows_of(flows)) {
    std::istringstream in(row);
    std::string id, src, dst, size;
    std::getline(in, id, ',');
    std::getline(in, src, ',');
    std::getline(in, dst, ',');
    std::getline(in, size, ',');
    const size_t cls = row.find(size == "5000" ? ",default," : ",tr,");
    ASSERT_NE(cls, std::string::npos) << row;
    name_by_size[std::stoll(size)] = row.substr(row.find(',', cls + 1) + 1);
  }
  ASSERT_EQ(name_by_size.size(), 4u) << flows;
  EXPECT_EQ(name_by_size[20000], "fwd.layer0");
  EXPECT_EQ(name_by_size[30000], "\"grad,1\"");
  EXPECT_EQ(name_by_size[40000], "12");
  EXPECT_EQ(name_by_size[5000], "");
  const nlohmann::json& j = r.summary["jobs"][0];
  EXPECT_DOUBLE_EQ(j["compute_us"].get<double>(), 7.0);
  const std::string tl = test::read_text_file(tmp.path / "out" / "job_timeline.csv");
  EXPECT_EQ(tl.rfind("job,iteration,host,activity,start_us,finish_us\n", 0), 0u) << tl;
  EXPECT_NE(tl.find(",compute,"), std::string::npos) << tl;
}

// A trace's collective column: collectives.csv has the iteration's row, then a row per collective with the
// trace's id, its hosts, its bytes, and its first start and last finish.
TEST(JobResults, CollectivesCsvCarriesTheTracesCollectiveIds) {
  TmpDir tmp;
  const std::string trace = tmp.write("c.csv",
                                      "id,src,dst,bytes,after,collective\n"
                                      "a0,h0,h1,100000,,allreduce.7\n"
                                      "a1,h1,h0,100000,,allreduce.7\n"
                                      "g0,h0,h2,50000,a0;a1,gather.2\n"
                                      "x,h3,h2,1000,,\n");
  // The same in JSON Lines, with a comma in an id (quoted in collectives.csv).
  const std::string jsonl = tmp.write("c.jsonl",
                                      "{\"id\": \"a0\", \"src\": \"h0\", \"dst\": \"h1\", \"bytes\": "
                                      "100000, \"collective\": \"allreduce.7\"}\n"
                                      "{\"id\": \"a1\", \"src\": \"h1\", \"dst\": \"h0\", \"bytes\": "
                                      "100000, \"collective\": \"allreduce.7\"}\n"
                                      "{\"id\": \"g0\", \"src\": \"h0\", \"dst\": \"h2\", \"bytes\": 50000, "
                                      "\"after\": [\"a0\", \"a1\"], \"collective\": \"gather,2\"}\n"
                                      "{\"id\": \"x\", \"src\": \"h3\", \"dst\": \"h2\", \"bytes\": 1000}\n");
  for (const auto& [file, gather] :
       {std::pair{trace, std::string("gather.2")}, std::pair{jsonl, std::string("\"gather,2\"")}}) {
    const std::string text =
        "duration_ms = 10\n[topology]\nkind = \"star\"\nhosts = 4\n[cc]\nscheme = \"none\"\n"
        "[[traffic]]\npattern = \"dependency_trace\"\nfile = \"" +
        file + "\"\njob = \"tr\"\n";
    RunOptions o;
    o.out_dir = (tmp.path / "out").string();
    o.force = true;
    (void)run_scenario(load_scenario_text(text, "coll.toml"), o);
    const std::string csv = test::read_text_file(tmp.path / "out" / "collectives.csv");
    const auto rows = rows_of(csv);
    ASSERT_EQ(rows.size(), 3u) << csv;
    EXPECT_EQ(csv.rfind("job,collective,ranks,iteration,bytes,start_us,finish_us,duration_us,algbw_gbps,"
                        "busbw_gbps,ideal_us,slowdown,comm_us,compute_us,exposed_comm_us,trace_id\n",
                        0),
              0u)
        << csv;
    const auto fields = [](const std::string& row) {  // (no quoted field before the last one)
      std::vector<std::string> f;
      size_t at = 0;
      for (int k = 0; k < 15; ++k) {
        const size_t comma = row.find(',', at);
        f.push_back(row.substr(at, comma - at));
        at = comma + 1;
      }
      f.push_back(row.substr(at));
      return f;
    };
    const auto it = fields(rows[0]), ar = fields(rows[1]), ga = fields(rows[2]);
    EXPECT_EQ(it[15], "");
    EXPECT_EQ(it[4], "251000");  // every byte of the trace
    EXPECT_EQ(ar[15], "allreduce.7");
    EXPECT_EQ(ar[2], "2");
    EXPECT_EQ(ar[4], "200000");
    EXPECT_EQ(ga[15], gather);
    EXPECT_EQ(ga[2], "2");
    EXPECT_EQ(ga[4], "50000");
    // The gather waits for both flows of the all-reduce: it is due when the all-reduce finishes, and ends
    // the iteration (x is small).
    EXPECT_EQ(ar[5], it[5]);
    EXPECT_EQ(ga[5], ar[6]);  // due at the all-reduce's finish (no delay)
    EXPECT_EQ(ga[6], it[6]);
    EXPECT_NEAR(std::stod(ar[8]), 200000 * 8 / std::stod(ar[7]) / 1e3, 1e-5);  // algbw, Gb/s
    for (size_t k = 9; k < 15; ++k) EXPECT_EQ(ar[k], "") << k;
  }
}

// A trace's collective_type gives its collectives' rows the type, the per-rank buffer its flows' bytes
// stand for and nccl-tests' bus bandwidth: what each rank sends per second.
TEST(JobResults, TypedTraceCollectivesHaveABusBandwidth) {
  TmpDir tmp;
  const std::string trace = tmp.write("typed.csv",
                                      "id,src,dst,bytes,after,collective,collective_type\n"
                                      "a0,h0,h1,100000,,ar,allreduce\n"
                                      "a1,h1,h0,100000,,ar,\n"
                                      "t0,h0,h2,30000,a0;a1,a2a,alltoall\n"
                                      "t1,h2,h3,30000,a0;a1,a2a,\n"
                                      "t2,h3,h0,30000,a0;a1,a2a,alltoall\n"
                                      "u,h3,h2,1000,,plain,\n");
  const std::string text =
      "duration_ms = 10\n[topology]\nkind = \"star\"\nhosts = 4\n[cc]\nscheme = \"none\"\n"
      "[[traffic]]\npattern = \"dependency_trace\"\nfile = \"" +
      trace + "\"\njob = \"tr\"\n";
  RunOptions o;
  o.out_dir = (tmp.path / "typed").string();
  o.force = true;
  (void)run_scenario(load_scenario_text(text, "typed.toml"), o);
  const std::string csv = test::read_text_file(tmp.path / "typed" / "collectives.csv");
  std::map<std::string, std::vector<std::string>> by_id;
  for (const std::string& row : rows_of(csv)) {
    std::vector<std::string> f;
    std::istringstream in(row);
    for (std::string cell; std::getline(in, cell, ',');) f.push_back(cell);
    if (f.size() == 16) by_id[f[15]] = f;
  }
  ASSERT_EQ(by_id.count("ar") + by_id.count("a2a") + by_id.count("plain"), 3u) << csv;
  const auto& ar = by_id["ar"];
  EXPECT_EQ(ar[1], "allreduce");
  EXPECT_EQ(ar[2], "2");
  EXPECT_EQ(ar[4], "100000");  // S: a 2-rank ring sends S / 2 twice from each rank: B = 200000 = 2 S
  const double ar_s = std::stod(ar[7]) * 1e-6;
  EXPECT_NEAR(std::stod(ar[9]), 200000.0 / 2 * 8 / ar_s / 1e9, 1e-4);  // B / N per second
  EXPECT_NEAR(std::stod(ar[9]), std::stod(ar[8]) * 1.0, 1e-4);         // algbw x 2(N-1)/N = 1
  const auto& a2a = by_id["a2a"];
  EXPECT_EQ(a2a[1], "alltoall");
  EXPECT_EQ(a2a[2], "3");
  EXPECT_EQ(a2a[4], "45000");  // B / (N - 1)
  EXPECT_NEAR(std::stod(a2a[9]), 90000.0 / 3 * 8 / (std::stod(a2a[7]) * 1e-6) / 1e9, 1e-4);
  EXPECT_EQ(by_id["plain"][1], "trace");  // untyped: as before, no busbw
  EXPECT_EQ(by_id["plain"][9], "");
  // A type that differs between a collective's rows, an unknown type, a type without a collective.
  for (const auto& [rows, what] :
       {std::pair{std::string("a,h0,h1,1,,c,allreduce\nb,h1,h0,1,,c,allgather\n"),
                  std::string(":3: collective 'c' is a allgather here but a allreduce on line 2")},
        std::pair{std::string("a,h0,h1,1,,c,allshuffle\n"),
                  std::string(":2: collective_type 'allshuffle' is not one of allreduce, allgather")},
        std::pair{std::string("a,h0,h1,1,,,allreduce\n"),
                  std::string(":2: collective_type 'allreduce' without")}}) {
    const std::string bad =
        tmp.write("bad.csv", "id,src,dst,bytes,after,collective,collective_type\n" + rows);
    std::string e;
    try {
      (void)load_scenario_text(
          "duration_ms = 10\n[topology]\nkind = \"star\"\nhosts = 4\n[[traffic]]\npattern = "
          "\"dependency_trace\"\nfile = \"" +
              bad + "\"\n",
          "bad.toml");
      // The spans are made when the run adds the job: read the trace the way it does.
      std::vector<std::string> types;
      (void)read_dependency_trace(
          bad, [](const std::string& h) { return std::stoi(h.substr(1)); }, &types);
    } catch (const InputError& x) {
      e = x.what();
    }
    EXPECT_NE(e.find("bad.csv" + what), std::string::npos) << e;
  }
}

std::string load_error(const std::string& text) {
  try {
    (void)load_scenario_text(text, "dup.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JobResults, DuplicateJobNamesAreRefusedNamingBothTables) {
  const std::string head =
      "[topology]\nkind = \"star\"\nhosts = 4\n"
      "[[traffic]]\npattern = \"collective\"\ncollective = \"allgather\"\nbytes = 4000\njob = \"ar\"\n"
      "[[traffic]]\nload = 0.1\nstop_us = 10\n";
  const std::string e =
      load_error(head +
                 "[[traffic]]\npattern = \"collective\"\ncollective = \"alltoall\"\nbytes = "
                 "4000\njob = \"ar\"\n");
  EXPECT_NE(e.find("dup.toml:16: traffic[2].job: job 'ar' is also the job of traffic[0].job (line 8)"),
            std::string::npos)
      << e;
  // The default name job<index> counts too.
  const std::string d =
      load_error(head +
                 "[[traffic]]\npattern = \"collective\"\ncollective = \"alltoall\"\nbytes = "
                 "4000\njob = \"job3\"\n[[traffic]]\npattern = \"collective\"\ncollective = "
                 "\"alltoall\"\nbytes = 4000\n");
  EXPECT_NE(d.find("job 'job3' is also the job of traffic[2].job"), std::string::npos) << d;
  EXPECT_NE(d.find("traffic[3].pattern"), std::string::npos) << d;
  // Distinct names (and a non-job table) are fine.
  EXPECT_EQ(
      load_error(head +
                 "[[traffic]]\npattern = \"collective\"\ncollective = \"alltoall\"\nbytes = 4000\njob = "
                 "\"b\"\n"),
      "");
}

}  // namespace job_results_test
}  // namespace rocesim
