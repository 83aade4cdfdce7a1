// Training jobs from Chakra execution traces and SimAI workload files (workload/training.h,
// workload/chakra.h, workload/simai.h): what is read, how it runs on the fabric, and the errors of bad input.
#include "workload/training.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "app/estimate.h"
#include "app/run.h"
#include "config/scenario.h"
#include "core/error.h"
#include "stats/collective_stats.h"
#include "stats/writers.h"
#include "topo/builders.h"
#include "workload/chakra.h"
#include "workload/simai.h"

namespace rocesim {
namespace {

namespace fs = std::filesystem;

// Chakra's NodeType and CollectiveCommType numbers (workload/chakra_et.proto).
constexpr int kMetadata = 1, kMemLoad = 2, kComp = 4, kSend = 5, kRecv = 6, kColl = 7;
constexpr int64_t kAllReduce = 0, kReduce = 1, kAllGather = 2, kBroadcast = 5, kAllToAll = 6,
                  kReduceScatter = 7, kBarrier = 9;

struct TraceDir {
  fs::path path =
      fs::temp_directory_path() / ("rocesim_train_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TraceDir() { fs::create_directories(path); }
  ~TraceDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return file(name);
  }
};

ChakraNodeOut comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {}) {
  ChakraNodeOut n;
  n.id = id;
  n.name = "comp" + std::to_string(id);
  n.type = kComp;
  n.duration_us = us;
  n.data_deps = std::move(deps);
  return n;
}

ChakraNodeOut coll(uint64_t id, int64_t type, int64_t bytes, std::vector<uint64_t> deps = {},
                   const std::string& pg = "") {
  ChakraNodeOut n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = kColl;
  n.ctrl_deps = std::move(deps);
  n.ints = {{"comm_type", type}, {"comm_size", bytes}};
  if (!pg.empty()) n.strings = {{"pg_name", pg}};
  return n;
}

ChakraNodeOut p2p(uint64_t id, bool send, int peer, int64_t bytes, int64_t tag,
                  std::vector<uint64_t> deps = {}) {
  ChakraNodeOut n;
  n.id = id;
  n.name = send ? "send" : "recv";
  n.type = send ? kSend : kRecv;
  n.data_deps = std::move(deps);
  n.ints = {{send ? "comm_dst" : "comm_src", peer}, {"comm_size", bytes}, {"comm_tag", tag}};
  return n;
}

// Writes rank r's nodes to <dir>/t.<r>.et; returns the folder.
std::string write_trace(const TraceDir& d, const std::vector<std::vector<ChakraNodeOut>>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r)
    write_chakra_trace(d.file("t." + std::to_string(r) + ".et"), ranks[r]);
  return d.path.string();
}

// A star of n hosts at 100 Gb/s (4000-byte payloads, an ACK per 4 packets, as collectives_test.cc), one
// training table.
std::string star(int n, const std::string& table) {
  return "duration_ms = 1000\n[topology]\nkind = \"star\"\nhosts = " + std::to_string(n) +
         "\nrate_gbps = 100\nlink_delay_us = 1\n[nic]\nmtu_bytes = 4000\nack_interval = 4\n[cc]\nscheme = "
         "\"none\"\n[[traffic]]\n" +
         table;
}

struct TrainingRun {
  Scenario s;
  RunResult r;
  std::vector<std::vector<std::string>> rows;  // collectives.csv, header first
  std::string timeline;                        // job_timeline.csv
  const std::vector<std::string>* row(const std::string& node, size_t iteration = 0) const {
    for (const auto& x : rows)
      if (x.size() == 16 && x[15] == node && x[3] == std::to_string(iteration)) return &x;
    return nullptr;
  }
  const std::vector<std::string>& job_row(size_t iteration) const {
    for (const auto& x : rows)
      if (x.size() == 16 && x[15].empty() && x[3] == std::to_string(iteration)) return x;
    throw std::runtime_error("no job row");
  }
};

TrainingRun run(const std::string& text) {
  TrainingRun x{load_scenario_text(text, "train.toml"), {}, {}, {}};
  Network net(x.s.topo, x.s.sw, x.s.nic, x.s.seed, x.s.make_scheme());
  RunOptions o;
  o.keep_flows = true;
  auto runner = x.s.make_dependent_flows();
  if (!runner) throw std::runtime_error("no job");
  // run_network makes its own runner: run it for the flows, and this one for collectives.csv.
  x.r = run_scenario(x.s, o);
  net.set_dependent_flows(runner.get());
  net.run(x.s.duration);
  std::ostringstream out;
  write_collectives_csv(out, *runner);
  std::ostringstream timeline;
  write_job_timeline_csv(timeline, *runner);
  x.timeline = timeline.str();
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    if (!line.empty() && line.back() == ',') f.push_back("");
    x.rows.push_back(f);
  }
  return x;
}

double num(const std::string& v) { return std::stod(v); }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// --- reading ---

TEST(ChakraTrace, ReadsEveryNodeType) {
  TraceDir d;
  ChakraNodeOut meta;
  meta.id = 9;
  meta.type = kMetadata;
  ChakraNodeOut c = comp(1, 250);
  c.ints = {{"num_ops", 7}};  // ignored
  c.strings = {{"op_schema", "aten::mm"}};
  std::vector<ChakraNodeOut> r0{meta,
                                c,
                                coll(2, kAllReduce, 4096, {1}),
                                coll(3, kAllGather, 4096, {2}),
                                coll(4, kReduceScatter, 4096, {3}),
                                coll(5, kAllToAll, 4096, {4}),
                                coll(6, kBroadcast, 4096, {5}),
                                coll(7, kBarrier, 0, {6}),
                                p2p(8, true, 1, 1000, 3, {7}),
                                p2p(10, false, 1, 500, 4, {8, 9})};
  r0.back().ctrl_deps = {1};
  const std::string f = d.file("x.0.et"), f1 = d.file("x.1.et");
  write_chakra_trace(f, r0);
  write_chakra_trace(f1, {comp(1, 1)});
  const TrainingGraph g = read_chakra_trace({f, f1}, {}, 2.0);
  ASSERT_EQ(g.ranks.size(), 2u);
  const auto& ops = g.ranks[0];
  ASSERT_EQ(ops.size(), r0.size());
  using K = TrainingOp::Kind;
  EXPECT_EQ(ops[0].kind, K::kNoop);
  EXPECT_EQ(ops[1].kind, K::kCompute);
  EXPECT_EQ(ops[1].duration, Time::from_us(500));  // 250 us x compute_scale 2
  EXPECT_EQ(ops[1].name, "comp1");
  const char* expect[] = {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "barrier"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ops[2 + i].kind, K::kCollective);
    EXPECT_EQ(ops[2 + i].collective, expect[i]);
    EXPECT_EQ(ops[2 + i].group, 0);  // no pg_name: every rank
    EXPECT_EQ(ops[2 + i].after, std::vector<uint32_t>{static_cast<uint32_t>(1 + i)});
  }
  EXPECT_EQ(ops[2].bytes, 4096);
  EXPECT_EQ(ops[8].kind, K::kSend);
  EXPECT_EQ(ops[8].peer, 1);
  EXPECT_EQ(ops[8].bytes, 1000);
  EXPECT_EQ(ops[8].tag, 3);
  EXPECT_EQ(ops[9].kind, K::kRecv);
  EXPECT_EQ(ops[9].tag, 4);
  EXPECT_EQ(ops[9].after, (std::vector<uint32_t>{8, 0, 1}));  // data deps, then control deps
}

TEST(ChakraTrace, FilesByFolderPatternAndRank) {
  TraceDir d;
  for (int r : {2, 0, 1}) write_chakra_trace(d.file("llm." + std::to_string(r) + ".et"), {comp(1, 1)});
  d.write("notes.txt", "x");
  const auto files = chakra_trace_files(d.path.string());
  ASSERT_EQ(files.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(fs::path(files[r]).filename(), "llm." + std::to_string(r) + ".et");
  EXPECT_EQ(chakra_trace_files(d.file("llm.*.et")), files);
  write_chakra_trace(d.file("llm.7.et"), {comp(1, 1)});
  EXPECT_NE(error_of([&] { (void)chakra_trace_files(d.path.string()); }).find("rank 7 but only 4 files"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)chakra_trace_files(d.file("none.*.et")); }).find("no .et files match"),
            std::string::npos);
}

TEST(ChakraTrace, ErrorsNameTheFileNodeAndWhatIsSupported) {
  TraceDir d;
  const std::string f = d.file("bad.0.et");
  ChakraNodeOut mem = comp(5, 1);
  mem.type = kMemLoad;
  write_chakra_trace(f, {comp(1, 1), mem});
  std::string e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(
      e.find(f + ": node 5 ('comp5'): node type MEM_LOAD_NODE is not supported; rocesim reads COMP_NODE, "
                 "COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE and METADATA_NODE"),
      std::string::npos)
      << e;
  ChakraNodeOut odd = comp(6, 1);
  odd.type = 42;
  write_chakra_trace(f, {odd});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("node 6 ('comp6'): node type 42 is not supported"), std::string::npos) << e;
  write_chakra_trace(f, {coll(3, kReduce, 100)});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("node 3 ('coll3'): comm_type 1 (REDUCE) is not supported; supported: ALL_REDUCE"),
            std::string::npos)
      << e;
  ChakraNodeOut nosize = coll(4, kAllReduce, 1);
  nosize.ints.pop_back();
  write_chakra_trace(f, {nosize});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("COMM_COLL_NODE needs the attribute comm_size"), std::string::npos) << e;
  ChakraNodeOut strsize = coll(4, kAllReduce, 1);
  strsize.ints.pop_back();
  strsize.strings = {{"comm_size", "big"}};
  write_chakra_trace(f, {strsize});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("attribute comm_size must hold an integer"), std::string::npos) << e;
  write_chakra_trace(f, {coll(4, kAllReduce, 10, {}, "tp")});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("process group 'tp' is not defined"), std::string::npos) << e;
  write_chakra_trace(f, {comp(1, 1, {77})});
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find("node 1 ('comp1'): depends on node 77, which is not in the file"), std::string::npos) << e;
  // A missing file, a truncated stream, a file that is not a trace.
  e = error_of([&] { (void)read_chakra_trace({d.file("gone.0.et")}, {}, 1); });
  EXPECT_NE(e.find("gone.0.et: cannot open the Chakra trace file"), std::string::npos) << e;
  write_chakra_trace(f, {comp(1, 1), comp(2, 1, {1}), comp(3, 1, {2})});
  const auto size = fs::file_size(f);
  fs::resize_file(f, size - 3);
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_NE(e.find(f + ": truncated at byte"), std::string::npos) << e;
  EXPECT_NE(e.find("message 3 (after node 2)"), std::string::npos) << e;
  // A name that is not UTF-8 (found by rocesim_trace_fuzz): our error, and nothing of the library's on
  // stderr.
  ChakraNodeOut latin1 = comp(4, 1);
  latin1.name = "caf\xe9";
  write_chakra_trace(f, {comp(1, 1), latin1});
  ::testing::internal::CaptureStderr();
  e = error_of([&] { (void)read_chakra_trace({f}, {}, 1); });
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(e.find(f + ": corrupt at byte"), std::string::npos) << e;
  EXPECT_NE(e.find("message 2 (after node 1) is not a valid Chakra Node"), std::string::npos) << e;
  d.write("text.0.et", "\xff\xff\xff\xff\xff\xff");
  e = error_of([&] { (void)read_chakra_trace({d.file("text.0.et")}, {}, 1); });
  EXPECT_NE(e.find("text.0.et: truncated or corrupt at byte 0"), std::string::npos) << e;
}

TEST(ChakraTrace, MatchingErrorsNameBothRanks) {
  TraceDir d;
  // Rank 1 makes its all-reduce with another size; rank 0 sends a message nobody receives.
  write_trace(d, {{coll(1, kAllReduce, 1000)}, {coll(1, kAllReduce, 2000)}});
  TrainingOptions o;
  o.hosts = {0, 1};
  std::string e =
      error_of([&] { (void)compile_training(read_chakra_trace(chakra_trace_files(d.path), {}, 1), o); });
  EXPECT_NE(
      e.find("t.1.et: node 1 ('coll1'): is collective 0 of its group on rank 1, a allreduce of 2000 bytes"),
      std::string::npos)
      << e;
  write_trace(d, {{p2p(1, true, 1, 100, 0)}, {comp(1, 1)}});
  e = error_of([&] { (void)compile_training(read_chakra_trace(chakra_trace_files(d.path), {}, 1), o); });
  EXPECT_NE(e.find("t.0.et: node 1 ('send'): send (rank 0 to rank 1, tag 0) has no matching recv"),
            std::string::npos)
      << e;
  write_trace(d, {{coll(1, kAllReduce, 1000)}, {comp(1, 1)}});
  e = error_of([&] { (void)compile_training(read_chakra_trace(chakra_trace_files(d.path), {}, 1), o); });
  EXPECT_NE(e.find("rank 1 ("), std::string::npos) << e;
  EXPECT_NE(e.find("makes fewer collectives on process group 0"), std::string::npos) << e;
}

// --- on the fabric ---

TEST(ChakraRun, ComputeDelaysTheCollectiveUntilItsLastRank) {
  TraceDir d;
  // Every rank computes, then all-reduces 32 MB, then computes 50 us; rank 2 computes longest (300 us).
  std::vector<std::vector<ChakraNodeOut>> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back({comp(1, r == 2 ? 300 : 100), coll(2, kAllReduce, 32000000, {1}), comp(3, 50, {2})});
  write_trace(d, ranks);
  const TrainingRun x =
      run(star(4, "pattern = \"chakra\"\nfiles = \"" + d.path.string() + "\"\njob = \"llm\"\n"));
  const auto* c = x.row("2:coll2");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)[0], "llm");
  EXPECT_EQ((*c)[1], "ring_allreduce");
  EXPECT_EQ((*c)[2], "4");
  EXPECT_EQ((*c)[4], "32000000");
  // The collective starts when its last rank is ready: at 300 us exactly (released in advance).
  EXPECT_EQ(num((*c)[5]), 300.0);
  // It takes the ring's closed form (within 3 %), then the 50 us compute ends the iteration.
  const double ring = 2.0 * 3 / 4 * 32e6 * 8 / 100e3;
  EXPECT_NEAR(num((*c)[7]) / ring, 1.0, 0.03) << (*c)[7];
  EXPECT_FALSE((*c)[9].empty());  // busbw
  const auto& job = x.job_row(0);
  EXPECT_EQ(job[1], "chakra");
  EXPECT_EQ(num(job[5]), 0.0);
  EXPECT_NEAR(num(job[6]), num((*c)[6]) + 50, 1e-6);
  EXPECT_EQ(x.r.flows.size(), 2u * 3 * 4);
  // The compute nodes are compute: [0, 300] and the 50 us after the all-reduce; its flows are the
  // communication, none of it overlapped.
  EXPECT_NEAR(num(job[12]), num((*c)[7]), 1e-6);  // comm_us
  EXPECT_NEAR(num(job[13]), 350.0, 1e-6);         // compute_us
  EXPECT_NEAR(num(job[14]), num(job[12]), 1e-6);  // exposed_comm_us
  EXPECT_EQ((*c)[12] + (*c)[13] + (*c)[14], "");  // not on the collective's row
}

TEST(ChakraRun, ComputeBesideTheCollectiveHidesPartOfItsCommunication) {
  TraceDir d;
  // Every rank all-reduces 32 MB (about 3.8 ms) and meanwhile computes 1000 us, independent of it.
  std::vector<std::vector<ChakraNodeOut>> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back({coll(1, kAllReduce, 32000000), comp(2, 1000)});
  write_trace(d, ranks);
  const TrainingRun x =
      run(star(4, "pattern = \"chakra\"\nfiles = \"" + d.path.string() + "\"\njob = \"llm\"\n"));
  const auto* c = x.row("1:coll1");
  ASSERT_NE(c, nullptr);
  const auto& job = x.job_row(0);
  EXPECT_EQ(num((*c)[5]), 0.0);
  EXPECT_NEAR(num(job[12]), num((*c)[7]), 1e-6);           // comm: the collective, from 0
  EXPECT_NEAR(num(job[13]), 1000.0, 1e-6);                 // compute
  EXPECT_NEAR(num(job[14]), num(job[12]) - 1000.0, 1e-6);  // exposed: what the compute did not cover
  // The timeline shows each rank's compute on its host, and its communication.
  const std::string zero = format_time_us(Time::zero());
  const std::string busy = ",compute," + zero + "," + format_time_us(Time::from_us(1000)) + "\n";
  size_t compute = 0, comm = 0;
  std::istringstream in(x.timeline);
  for (std::string line; std::getline(in, line);) {
    compute += (line + "\n").find(busy) != std::string::npos;
    comm += line.find(",comm," + zero + ",") != std::string::npos;
  }
  EXPECT_EQ(compute, 4u) << x.timeline;
  EXPECT_EQ(comm, 4u) << x.timeline;
}

TEST(ChakraRun, ItsJobNameMustDifferFromTheOtherJobs) {
  TraceDir d;
  write_trace(d, {{coll(1, kAllReduce, 1000)}, {coll(1, kAllReduce, 1000)}});
  const std::string chakra = "pattern = \"chakra\"\nfiles = \"" + d.path.string() + "\"\njob = \"llm\"\n";
  const std::string e = error_of([&] {
    (void)load_scenario_text(star(4, chakra + "[[traffic]]\npattern = \"collective\"\ncollective = "
                                              "\"allgather\"\nbytes = 4000\njob = \"llm\"\n"),
                             "train.toml");
  });
  EXPECT_NE(e.find("job 'llm' is also the job of traffic[0].job"), std::string::npos) << e;
}

TEST(ChakraRun, SendRecvIsOneFlowOfItsSizeAfterBothSidesAreReady) {
  TraceDir d;
  write_trace(
      d, {{comp(1, 20), p2p(2, true, 1, 123456, 7, {1})}, {comp(1, 80), p2p(2, false, 0, 123456, 7, {1})}});
  const TrainingRun x = run(star(2, "pattern = \"chakra\"\nfiles = \"" + d.path.string() + "\"\n"));
  ASSERT_EQ(x.r.flows.size(), 1u);
  const FlowRecord& f = x.r.flows[0];
  EXPECT_EQ(f.size_bytes, 123456);
  EXPECT_EQ(f.src, lookup_node(x.s.topo, "h0"));
  EXPECT_EQ(f.dst, lookup_node(x.s.topo, "h1"));
  EXPECT_EQ(f.start, Time::from_us(80));
  const auto* row = x.row("2:send");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ((*row)[1], "sendrecv");
  EXPECT_EQ((*row)[4], "123456");
}

TEST(ChakraRun, ProcessGroupAndRankMapAreHonoured) {
  TraceDir d;
  // Ranks 1 and 3 all-gather in group "pair"; ranks 0 and 2 only compute. Rank r runs on host h(3-r).
  std::vector<std::vector<ChakraNodeOut>> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back(r % 2 ? std::vector<ChakraNodeOut>{coll(1, kAllGather, 200000, {}, "pair")}
                          : std::vector<ChakraNodeOut>{comp(1, 5)});
  write_trace(d, ranks);
  const TrainingRun x = run(star(4, "pattern = \"chakra\"\nfiles = \"" + d.file("t.*.et") +
                                        "\"\nranks = [\"h3\", \"h2\", \"h1\", \"h0\"]\n"
                                        "groups = [{ name = \"pair\", ranks = [3, 1] }]\n"));
  ASSERT_EQ(x.r.flows.size(), 2u);
  const int h0 = lookup_node(x.s.topo, "h0"), h2 = lookup_node(x.s.topo, "h2");
  for (const FlowRecord& f : x.r.flows) {
    EXPECT_TRUE((f.src == h0 && f.dst == h2) || (f.src == h2 && f.dst == h0)) << f.src << "->" << f.dst;
    EXPECT_EQ(f.size_bytes, 100000);  // half the gathered 200 KB
  }
  const auto* row = x.row("1:coll1");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ((*row)[2], "2");
}

TEST(ChakraRun, IterationsRepeatTheGraph) {
  TraceDir d;
  std::vector<std::vector<ChakraNodeOut>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back({comp(1, 10), coll(2, kAllReduce, 400000, {1})});
  write_trace(d, ranks);
  const TrainingRun x = run(star(2, "pattern = \"chakra\"\nfiles = \"" + d.path.string() +
                                        "\"\niterations = 3\ncompute_scale = 2\ntimeline_iteration = 2\n"));
  EXPECT_EQ(x.r.summary["jobs"][0]["iterations_finished"].get<int>(), 3);
  EXPECT_EQ(x.r.summary["jobs"][0]["collectives_per_iteration"].get<int>(), 1);
  EXPECT_EQ(x.r.flows.size(), 3u * 2 * 2);
  for (size_t i = 0; i < 3; ++i) {
    const auto* c = x.row("2:coll2", i);
    ASSERT_NE(c, nullptr) << i;
    const auto& job = x.job_row(i);
    // Iteration i + 1 starts when iteration i ends; its collective 20 us (10 x compute_scale) later.
    if (i > 0) {
      EXPECT_EQ(job[5], x.job_row(i - 1)[6]);
    }
    EXPECT_NEAR(num((*c)[5]), num(job[5]) + 20, 1e-6);
    EXPECT_EQ((*c)[6], job[6]);
  }
  // The timeline is of iteration 2 (timeline_iteration): each host computes its first 20 us.
  const auto& third = x.job_row(2);
  std::istringstream in(x.timeline);
  std::string line;
  std::getline(in, line);
  size_t compute = 0, rows = 0;
  for (; std::getline(in, line); ++rows) {
    EXPECT_EQ(line.rfind("job0,2,", 0), 0u) << line;
    compute += line.find(",compute," + third[5] + ",") != std::string::npos;
  }
  EXPECT_EQ(compute, 2u) << x.timeline;
  EXPECT_EQ(rows, 4u) << x.timeline;
  // An iteration the job does not run is refused.
  const std::string e = error_of([&] {
    (void)load_scenario_text(star(2, "pattern = \"chakra\"\nfiles = \"" + d.path.string() +
                                         "\"\niterations = 3\ntimeline_iteration = 3\n"),
                             "x.toml");
  });
  EXPECT_NE(e.find("the job runs 3 iterations, numbered from 0: timeline_iteration must be at most 2"),
            std::string::npos)
      << e;
}

TEST(ChakraConfig, ScenarioErrorsNameTheKeyAndTheFile) {
  TraceDir d;
  write_trace(d, {{comp(1, 1)}, {comp(1, 1)}, {comp(1, 1)}});
  std::string e = error_of([&] {
    (void)load_scenario_text(star(2, "pattern = \"chakra\"\nfiles = \"" + d.path.string() + "\"\n"),
                             "x.toml");
  });
  EXPECT_NE(e.find("the trace has 3 ranks but the topology only 2 hosts"), std::string::npos) << e;
  e = error_of([&] { (void)load_scenario_text(star(2, "pattern = \"chakra\"\n"), "x.toml"); });
  EXPECT_NE(e.find("needs files"), std::string::npos) << e;
  e = error_of([&] {
    (void)load_scenario_text(star(4, "pattern = \"chakra\"\nfiles = \"" + d.file("missing.et") + "\"\n"),
                             "x.toml");
  });
  EXPECT_NE(e.find("missing.et: no such Chakra trace file or folder"), std::string::npos) << e;
}

// --- SimAI ---

const char* const kSimai =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 4 "
    "checkpoints: 0 checkpoint_initiates: 0\n"
    "2\n"
    "embedding_layer -1 100000 ALLREDUCE 800000 1 NONE 0 1 NONE 0 100\n"
    "attention -1 50000 NONE 0 20000 ALLGATHER 400000 30000 ALLREDUCE 2000000 100\n";

TEST(Simai, ReadsLayersGroupsAndTheSchedule) {
  TraceDir d;
  const SimaiWorkload w = read_simai_workload(d.write("w.txt", kSimai), 1.0);
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.all_gpus, 4);
  ASSERT_EQ(w.graph.ranks.size(), 4u);
  // Rank 1: fwd(emb) 100 us, TP all-reduce; fwd(att) 50 us; ig(att) 20 us, TP all-gather; wg(att) 30 us,
  // DP all-reduce (overlapping); ig(emb), wg(emb).
  const auto& ops = w.graph.ranks[1];
  ASSERT_EQ(ops.size(), 9u);
  EXPECT_EQ(ops[0].name, "embedding_layer.fwd");
  EXPECT_EQ(ops[0].duration, Time::from_us(100));
  EXPECT_EQ(ops[1].collective, "allreduce");
  EXPECT_EQ(w.graph.groups[ops[1].group], (std::vector<int>{0, 1}));  // TP: consecutive ranks
  EXPECT_EQ(ops[4].collective, "allgather");
  EXPECT_EQ(ops[4].name, "attention.ig_comm");
  EXPECT_EQ(ops[6].collective, "allreduce");
  EXPECT_EQ(w.graph.groups[ops[6].group], (std::vector<int>{1, 3}));  // DP: same position in each TP block
  EXPECT_EQ(ops[7].name, "embedding_layer.ig");
  EXPECT_EQ(ops[7].after, std::vector<uint32_t>{5});  // after wg compute, not its comm
}

TEST(Simai, GroupSuffixesMapToEpAndDpEp) {
  TraceDir d;
  const std::string f =
      d.write("w.txt",
              "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 1 all_gpus: 8\n"
              "1\nmoe -1 1 ALLTOALL_EP 1000 1 NONE 0 1 ALLREDUCE_DP_EP 1000 1\n");
  const SimaiWorkload w = read_simai_workload(f, 1.0);
  const auto& ops = w.graph.ranks[5];                                 // TP block 2, position 1
  EXPECT_EQ(w.graph.groups[ops[1].group], (std::vector<int>{5, 7}));  // EP: blocks 2, 3
  EXPECT_EQ(w.graph.groups[ops[4].group], (std::vector<int>{1, 5}));  // DP_EP: blocks 0, 2
}

// ALLREDUCEALLTOALL (SimAI's ComType::All_Reduce_All_to_All) is read as SimAI's parser reads it: an
// all-reduce of the layer's bytes (its ALLREDUCE prefix test comes first), over the group its suffix names
// (none: the phase's default).
TEST(Simai, AllReduceAllToAllIsAnAllReduceOverItsSuffixGroup) {
  TraceDir d;
  // 8 GPUs: TP 2, DP 4, EP 2. Rank 5 is position 1 of TP block 2.
  const std::string head =
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 1 all_gpus: 8\n2\n";
  const std::string body =
      "moe -1 1 ALLREDUCEALLTOALL 1000 1 ALLREDUCEALLTOALL_EP 2000 1 ALLREDUCEALLTOALL_DP_EP 3000 1\n"
      "dense -1 1 ALLREDUCEALLTOALL_TP 4000 1 ALLREDUCEALLTOALL_DP 5000 1 ALLREDUCEALLTOALL 6000 1\n";
  const SimaiWorkload w = read_simai_workload(d.write("w.txt", head + body), 1.0);
  struct Want {
    const char* name;
    Bytes bytes;
    std::vector<int> group;
  };
  const std::vector<Want> want{{"moe.fwd_comm", 1000, {4, 5}},          // no suffix, forward: TP
                               {"moe.ig_comm", 2000, {5, 7}},           // _EP: TP blocks 2, 3
                               {"moe.wg_comm", 3000, {1, 5}},           // _DP_EP: blocks 0, 2
                               {"dense.fwd_comm", 4000, {4, 5}},        // _TP
                               {"dense.ig_comm", 5000, {1, 3, 5, 7}},   // _DP
                               {"dense.wg_comm", 6000, {1, 3, 5, 7}}};  // no suffix, weight gradient: DP
  const auto& ops = w.graph.ranks[5];
  for (const Want& x : want) {
    const TrainingOp* op = nullptr;
    for (const TrainingOp& o : ops)
      if (o.name == x.name) op = &o;
    ASSERT_NE(op, nullptr) << x.name;
    EXPECT_EQ(op->kind, TrainingOp::Kind::kCollective) << x.name;
    EXPECT_EQ(op->collective, "allreduce") << x.name;
    EXPECT_EQ(op->bytes, x.bytes) << x.name;
    EXPECT_EQ(w.graph.groups[op->group], x.group) << x.name;
  }
  // The same graph as ALLREDUCE with the same suffixes, on every rank.
  std::string plain = body;
  for (size_t at; (at = plain.find("ALLREDUCEALLTOALL")) != std::string::npos;)
    plain.replace(at, 17, "ALLREDUCE");
  const SimaiWorkload v = read_simai_workload(d.write("v.txt", head + plain), 1.0);
  ASSERT_EQ(v.graph.ranks.size(), w.graph.ranks.size());
  for (size_t r = 0; r < w.graph.ranks.size(); ++r) {
    ASSERT_EQ(v.graph.ranks[r].size(), w.graph.ranks[r].size());
    for (size_t i = 0; i < w.graph.ranks[r].size(); ++i) {
      const TrainingOp &a = w.graph.ranks[r][i], &b = v.graph.ranks[r][i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.collective, b.collective);
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.after, b.after);
      if (a.kind == TrainingOp::Kind::kCollective) {
        EXPECT_EQ(w.graph.groups[a.group], v.graph.groups[b.group]);
      }
    }
  }
  // A suffix SimAI does not know is still refused.
  std::string bad = head + body;
  bad.replace(bad.find("ALLREDUCEALLTOALL_EP"), 20, "ALLREDUCEALLTOALL_PP");
  const std::string e = error_of([&] { (void)read_simai_workload(d.write("b.txt", bad), 1.0); });
  EXPECT_NE(e.find("b.txt:3: input-gradient comm type: unknown comm type 'ALLREDUCEALLTOALL_PP'"),
            std::string::npos)
      << e;
}

TEST(Simai, ErrorsNameTheLineAndWhatIsExpected) {
  TraceDir d;
  std::string bad = kSimai;
  bad.replace(bad.find("ALLGATHER"), 9, "ALLSHUFFLE");
  const std::string f = d.write("w.txt", bad);
  std::string e = error_of([&] { (void)read_simai_workload(f, 1); });
  EXPECT_NE(
      e.find(f + ":4: input-gradient comm type: unknown comm type 'ALLSHUFFLE'; expected NONE or ALLREDUCE, "
                 "ALLGATHER, REDUCESCATTER, ALLTOALL or ALLREDUCEALLTOALL, optionally with _TP, _DP, _EP "
                 "or _DP_EP"),
      std::string::npos)
      << e;
  e = error_of(
      [&] { (void)read_simai_workload(d.write("s.txt", "HYBRID_TRANSFORMER all_gpus: 4\n1\n"), 1); });
  EXPECT_NE(e.find("s.txt:1: the header needs 'model_parallel_NPU_group: <number>'"), std::string::npos) << e;
  e = error_of([&] {
    (void)read_simai_workload(d.write("t.txt",
                                      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 2\n2\n"
                                      "a -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
                              1);
  });
  EXPECT_NE(e.find("t.txt:4: the file ends after 1 of its 2 layers"), std::string::npos) << e;
  e = error_of([&] {
    (void)read_simai_workload(d.write("u.txt",
                                      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 2\n1\n"
                                      "a -1 x NONE 0 1 NONE 0 1 NONE 0 1\n"),
                              1);
  });
  EXPECT_NE(e.find("u.txt:3: forward compute time (ns): expected a whole number >= 0, got 'x'"),
            std::string::npos)
      << e;
  // A comm size of 2^63 - 1 bytes (found by rocesim_trace_fuzz: it overflowed the decomposition's
  // arithmetic under UBSan).
  e = error_of([&] {
    (void)read_simai_workload(d.write("v.txt",
                                      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 2\n1\n"
                                      "a -1 1 ALLREDUCE 9223372036854775807 1 NONE 0 1 NONE 0 1\n"),
                              1);
  });
  EXPECT_NE(e.find("v.txt:3: forward comm bytes = 9223372036854775807 is more than 2^50"), std::string::npos)
      << e;
  e = error_of([&] { (void)read_simai_workload(d.file("none.txt"), 1); });
  EXPECT_NE(e.find("none.txt: cannot open"), std::string::npos) << e;
}

TEST(SimaiRun, PhasesRunInOrderOverTheirGroups) {
  TraceDir d;
  const TrainingRun x =
      run(star(4, "pattern = \"simai\"\nfile = \"" + d.write("w.txt", kSimai) + "\"\njob = \"gpt\"\n"));
  // The embedding's forward all-reduce starts after its 100 us of compute, over the TP pairs (two
  // collectives, one per TP group, both rows).
  const auto* fwd = x.row("0:embedding_layer.fwd_comm");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(num((*fwd)[5]), 100.0);
  EXPECT_EQ((*fwd)[2], "2");
  // The attention's input-gradient all-gather starts 50 + 20 us after the forward all-reduce ends.
  const auto* ig = x.row("1:attention.ig_comm");
  ASSERT_NE(ig, nullptr);
  EXPECT_NEAR(num((*ig)[5]), num((*fwd)[6]) + 70, 1e-6);
  // The DP all-reduce runs after the weight-gradient compute, over ranks {0, 2} and {1, 3}.
  const auto* wg = x.row("1:attention.wg_comm");
  ASSERT_NE(wg, nullptr);
  EXPECT_NEAR(num((*wg)[5]), num((*ig)[6]) + 30, 1e-6);
  EXPECT_EQ(x.job_row(0)[1], "simai");
  size_t per_pair = 0;
  for (const auto& row : x.rows) per_pair += row.size() == 16 && row[15] == "1:attention.wg_comm";
  EXPECT_EQ(per_pair, 2u);
}

// ALLREDUCEALLTOALL runs the all-reduce's flows: on 4 hosts (TP 2, DP 2) the forward comm of 800 KB is a
// 2-rank ring all-reduce per TP pair (2 steps, each rank sends S/2 = 400 KB to its partner in each), the
// weight-gradient comm of 2 MB the same per DP pair (1 MB per flow); the input-gradient all-gather of
// 400 KB sends S/2 = 200 KB once per rank. 8 + 8 + 4 = 20 flows, the same as with ALLREDUCE.
TEST(SimaiRun, AllReduceAllToAllRunsTheAllReducesFlows) {
  TraceDir d;
  std::string text = kSimai;
  for (size_t at = 0; (at = text.find("ALLREDUCE ", at)) != std::string::npos; at += 18)
    text.replace(at, 10, "ALLREDUCEALLTOALL ");
  ASSERT_EQ(text.find("ALLREDUCE "), std::string::npos);
  const TrainingRun x =
      run(star(4, "pattern = \"simai\"\nfile = \"" + d.write("w.txt", text) + "\"\njob = \"gpt\"\n"));
  const TrainingRun y =
      run(star(4, "pattern = \"simai\"\nfile = \"" + d.write("v.txt", kSimai) + "\"\njob = \"gpt\"\n"));
  EXPECT_EQ(x.r.summary["flows"]["unfinished"].get<uint64_t>(), 0u);
  ASSERT_EQ(x.r.flows.size(), 20u);
  std::map<std::pair<Bytes, std::pair<int, int>>, int> by_size_pair;
  const auto h = [&](int i) { return lookup_node(x.s.topo, "h" + std::to_string(i)); };
  for (const FlowRecord& f : x.r.flows) ++by_size_pair[{f.size_bytes, {f.src, f.dst}}];
  for (const auto& [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}, {2, 3}, {3, 2}}) {
    EXPECT_EQ((by_size_pair[{400000, {h(a), h(b)}}]), 2) << a << "->" << b;  // TP all-reduce
    EXPECT_EQ((by_size_pair[{200000, {h(a), h(b)}}]), 1) << a << "->" << b;  // TP all-gather
  }
  for (const auto& [a, b] : std::vector<std::pair<int, int>>{{0, 2}, {2, 0}, {1, 3}, {3, 1}})
    EXPECT_EQ((by_size_pair[{1000000, {h(a), h(b)}}]), 2) << a << "->" << b;  // DP all-reduce
  ASSERT_EQ(y.r.flows.size(), x.r.flows.size());
  for (size_t i = 0; i < x.r.flows.size(); ++i) {
    const FlowRecord &a = x.r.flows[i], &b = y.r.flows[i];
    EXPECT_EQ(std::tie(a.src, a.dst, a.size_bytes, a.start, a.finish),
              std::tie(b.src, b.dst, b.size_bytes, b.start, b.finish))
        << i;
  }
  EXPECT_EQ(x.rows, y.rows);
}

TEST(Simai, PipelineStagesGroupsAndOneFOneBOrder) {
  TraceDir d;
  // 8 GPUs: TP 2 x DP 2 x PP 2 (stage 0: ranks 0-3, stage 1: ranks 4-7), 2 micro-batches (ga), 1 layer.
  const std::string f =
      d.write("pp.txt",
              "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 1 ga: 2 "
              "all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 4096.0\n"
              "1\nblock -1 1000 ALLREDUCE 100 1000 NONE 0 1000 ALLREDUCE 200 1\n");
  const SimaiWorkload w = read_simai_workload(f, 1.0);
  EXPECT_EQ(w.pp, 2);
  EXPECT_EQ(w.ga, 2);
  EXPECT_EQ(w.micro_batches, 2);
  EXPECT_EQ(w.pp_comm, 4096);
  using K = TrainingOp::Kind;
  // Rank 5: stage 1, block 2, position 1. TP {4, 5}; DP within its stage {5, 7}.
  const auto& r5 = w.graph.ranks[5];
  ASSERT_EQ(r5[0].kind, K::kRecv);  // the activation of micro-batch 0, before its forward
  ASSERT_EQ(r5[2].name, "block.fwd_comm.mb0");
  EXPECT_EQ(w.graph.groups[r5[2].group], (std::vector<int>{4, 5}));
  std::vector<std::string> order;
  for (const TrainingOp& x : r5) {
    if (x.kind == K::kCollective && x.name == "block.wg_comm.mb1") {
      EXPECT_EQ(w.graph.groups[x.group], (std::vector<int>{5, 7}));
    }
    if (x.kind == K::kSend || x.kind == K::kRecv) {
      EXPECT_EQ(x.bytes, 4096);
      order.push_back((x.kind == K::kSend ? "send " : "recv ") + x.name + " " + std::to_string(x.peer));
    }
  }
  // The last stage: forward (after the activation from rank 1), backward, its gradient back; twice.
  EXPECT_EQ(order, (std::vector<std::string>{"recv pp_fwd.mb0 1", "send pp_bwd.mb0 1", "recv pp_fwd.mb1 1",
                                             "send pp_bwd.mb1 1"}));
  // The first stage (1F1B warm-up of one forward): F0 F1 B0 B1. Only the last micro-batch all-reduces the
  // weight gradients.
  order.clear();
  size_t wg = 0;
  for (const TrainingOp& x : w.graph.ranks[1]) {
    if (x.kind == K::kSend || x.kind == K::kRecv)
      order.push_back((x.kind == K::kSend ? "send " : "recv ") + x.name + " " + std::to_string(x.peer));
    wg += x.kind == K::kCollective && x.name.find("wg_comm") != std::string::npos;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"send pp_fwd.mb0 5", "send pp_fwd.mb1 5", "recv pp_bwd.mb0 5",
                                             "recv pp_bwd.mb1 5"}));
  EXPECT_EQ(wg, 1u);
  // micro_batches overrides ga; a pipeline needs pp_comm; all_gpus must be a multiple of TP x PP.
  EXPECT_EQ(read_simai_workload(f, 1.0, 3).micro_batches, 3);
  std::string e = error_of([&] {
    (void)read_simai_workload(d.write("x.txt",
                                      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 pp: 2 all_gpus: 2\n1\n"
                                      "a -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
                              1);
  });
  EXPECT_NE(e.find("x.txt:1: pp = 2 needs 'pp_comm: <bytes>'"), std::string::npos) << e;
  e = error_of([&] {
    (void)read_simai_workload(
        d.write("y.txt",
                "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 2 all_gpus: 6 pp_comm: 8\n1\n"
                "a -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
        1);
  });
  EXPECT_NE(e.find("y.txt:1: all_gpus = 6 is not a multiple of model_parallel_NPU_group x pp = 2 x 2"),
            std::string::npos)
      << e;
}

TEST(SimaiRun, TwoStagePipelineSendsActivationsAndGradientsInOrder) {
  TraceDir d;
  // 2 GPUs, one per stage; 2 micro-batches; per micro-batch 100 us forward, 50 + 30 us backward, no
  // collectives; 1 MB between the stages each way.
  const std::string f = d.write(
      "pp.txt",
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 2 "
      "checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1000000\n"
      "1\nblock -1 100000 NONE 0 50000 NONE 0 30000 NONE 0 1\n");
  const TrainingRun x = run(star(2, "pattern = \"simai\"\nfile = \"" + f + "\"\njob = \"pp\"\n"));
  const int h0 = lookup_node(x.s.topo, "h0"), h1 = lookup_node(x.s.topo, "h1");
  ASSERT_EQ(x.r.flows.size(), 4u);
  std::vector<FlowRecord> flows = x.r.flows;
  std::sort(flows.begin(), flows.end(),
            [](const FlowRecord& a, const FlowRecord& b) { return a.start < b.start; });
  for (const FlowRecord& fl : flows) EXPECT_EQ(fl.size_bytes, 1000000);
  // Stage 0: F0 [0, 100], F1 [100, 200]: the activations leave at 100 and 200 us. Stage 1: F0 from the first
  // one's arrival a, B0 [a + 100, a + 180]: its gradient leaves at a + 180; F1, B1 end at a + 360: the second
  // gradient leaves then; stage 0's B1 starts when it arrives and ends 80 us later.
  EXPECT_EQ(flows[0].src, h0);
  EXPECT_EQ(flows[0].start, Time::from_us(100));
  EXPECT_EQ(flows[1].src, h0);
  EXPECT_EQ(flows[1].start, Time::from_us(200));
  const Time a = flows[0].finish;
  EXPECT_EQ(flows[2].src, h1);
  EXPECT_EQ(flows[2].dst, h0);
  EXPECT_EQ(flows[2].start, a + Time::from_us(180));
  EXPECT_EQ(flows[3].src, h1);
  EXPECT_EQ(flows[3].start, a + Time::from_us(360));
  const Time fct_fwd = flows[0].finish - flows[0].start, fct_bwd = flows[3].finish - flows[3].start;
  // By hand: stage 0's B1 starts when the second gradient arrives (a + 360 + its transfer) and ends 80 us
  // later: the iteration is 100 + 360 + 80 = 540 us of compute plus the first activation's and the last
  // gradient's transfers.
  const auto& job = x.job_row(0);
  EXPECT_NEAR(num(job[6]) - num(job[5]), 540.0 + fct_fwd.us() + fct_bwd.us(), 1e-3);
  // Each transfer takes its ideal FCT (alone on the fabric): 1 MB at 100 Gb/s (80 us) plus the headers, a
  // packet's store-and-forward and the last ACK's round trip over 2 x 1 us links, 85.6 us; so the iteration
  // is 540 + 2 x 85.6 us by hand (the transfers come out within 1 % of it).
  const double ideal = flows[0].ideal_fct.us();
  EXPECT_NEAR(ideal, 85.6, 0.1);
  EXPECT_NEAR(fct_fwd.us(), ideal, 0.01 * ideal);
  EXPECT_NEAR(fct_bwd.us(), ideal, 0.01 * ideal);
  EXPECT_NEAR(num(job[6]) - num(job[5]), 540.0 + 2 * 85.6, 2.0);
  // collectives.csv names them by sending stage and micro-batch.
  EXPECT_NE(x.row("0:pp_fwd.mb1"), nullptr);
  EXPECT_NE(x.row("1:pp_bwd.mb0"), nullptr);
  EXPECT_EQ((*x.row("1:pp_bwd.mb0"))[1], "sendrecv");
}

// The examples of docs/user-guide.md ("Bring your training job") run to their end.
TEST(TrainingExamples, ChakraAndSimaiScenariosRun) {
  for (const char* name : {"chakra_step", "simai_gpt", "simai_gpt_pp2"}) {
    SCOPED_TRACE(name);
    const Scenario s =
        load_scenario((fs::path(ROCESIM_SCENARIO_DIR) / "ai" / (std::string(name) + ".toml")).string());
    RunOptions o;
    const RunResult r = run_scenario(s, o);
    const auto& job = r.summary["jobs"][0];
    EXPECT_EQ(job["iterations_finished"].get<int>(), 2);
    EXPECT_EQ(job["ranks"].get<int>(), 8);
    // chakra_step: per iteration 4 x 2 x 2 tensor-parallel all-reduces (4 groups, 2 layers, fwd + bwd), 2 x 2
    // data-parallel ones and 4 send/recv pairs; simai_gpt: 4 x 5 tensor-parallel (embedding fwd, attention
    // and mlp fwd + ig) and 2 x 4 data-parallel (grad_norm, attention, mlp, final_norm's all-gather);
    // simai_gpt_pp2: 4 micro-batches x 4 x 5 tensor-parallel, 4 x 4 data-parallel (the last micro-batch's,
    // within each stage) and 4 micro-batches x 2 directions x 4 stage-to-stage transfers.
    const std::map<std::string, int> collectives{
        {"chakra_step", 24}, {"simai_gpt", 28}, {"simai_gpt_pp2", 128}};
    EXPECT_EQ(job["collectives_per_iteration"].get<int>(), collectives.at(name));
    EXPECT_TRUE(r.summary["complete"].get<bool>());
    // The estimate counts the flows only (not the compute timers): chakra_step has per iteration 4 x 4 x 4
    // tensor-parallel, 2 x 2 x 24 data-parallel and 4 point-to-point flows.
    const uint64_t flows = r.summary["flows"]["finished"].get<uint64_t>();
    EXPECT_EQ(estimate_work(s).flows, flows);
    if (std::string(name) == "chakra_step") {
      EXPECT_EQ(flows, 2u * (64 + 96 + 4));
    }
  }
}

// A SimAI job on GPU servers with the hierarchical all-reduce: 2 servers x 2 GPUs, TP pairs inside a server
// (over NVLink), DP pairs across the servers on one rail. Each group's all-reduce follows its servers, and
// its ideal is at the NIC's rate across servers and at the NVLink's inside one (not the NVLink's for all).
TEST(SimaiRun, HierarchicalAllReduceOnGpuServers) {
  TraceDir d;
  const std::string text =
      "duration_ms = 1000\n[topology]\nkind = \"rail_optimized\"\nservers = 2\ngpus_per_server = 2\n"
      "[nic]\nmtu_bytes = 4000\nack_interval = 4\n[cc]\nscheme = \"none\"\n[[traffic]]\npattern = \"simai\"\n"
      "file = \"" +
      d.write("w.txt", kSimai) + "\"\njob = \"gpt\"\nallreduce = \"hierarchical_ring_allreduce\"\n";
  const TrainingRun x = run(text);
  EXPECT_EQ(x.r.summary["flows"]["unfinished"].get<uint64_t>(), 0u);
  const auto* tp = x.row("0:embedding_layer.fwd_comm");
  const auto* dp = x.row("1:attention.wg_comm");
  ASSERT_NE(tp, nullptr);
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ((*dp)[1], "hierarchical_ring_allreduce");
  // TP: G = 2, M = 1: 2 (G-1) S/G / B_nv = 800,000 B at 3,600 Gb/s = 1.778 us.
  EXPECT_NEAR(num((*tp)[10]), 2 * 400000 * 8 / 3600e3, 1e-3);
  // DP: G = 1, M = 2: 2 (M-1) S/(G M) / B = 2,000,000 B at 400 Gb/s = 40 us.
  EXPECT_NEAR(num((*dp)[10]), 2 * 1000000 * 8 / 400e3, 1e-3);
  EXPECT_GE(num((*dp)[7]), num((*dp)[10]));

  // Without GPU servers the hierarchical all-reduce is refused, naming the key.
  try {
    load_scenario_text(star(4, "pattern = \"simai\"\nfile = \"" + d.write("v.txt", kSimai) +
                                   "\"\nallreduce = \"tree_allreduce\"\n"),
                       "train.toml");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("allreduce"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GPU servers"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rocesim
