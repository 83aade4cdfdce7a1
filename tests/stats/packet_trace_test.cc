// Packet timelines ([monitors] packet_trace, net/packet_trace.h): the rows tell what happened to each traced
// packet and agree with the rest of the run (pfc.csv's pauses give exactly each dequeue's paused_us, marks
// follow their dequeue, a dropped packet is retransmitted); every delivered packet goes hop by hop with
// enqueue <= dequeue; the trace changes no result, is the same bytes for any thread count, partitions and
// ranks, and stops at max_rows with a warning.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "core/error.h"
#include "file_util.h"
#include "mpi_util.h"

namespace fs = std::filesystem;
using namespace rocesim;

namespace packet_trace_test {

using rocesim::test::read_text_file;

// Two switches; hosts h0, h1 on s0 and h2..h4 on s1. Four flows into h4: s1's port to h4 is the
// bottleneck, and s1 pauses s0's egress towards it (flows 0 and 1 wait there). `extra`: more lines.
std::string incast(const std::string& scheme, const std::string& extra = "") {
  std::string t = fmt::format(
      "name = \"ptrace\"\nseed = 3\nduration_ms = 5\n"
      "[topology]\nkind = \"dumbbell\"\nsenders = 2\nreceivers = 3\n"
      "[cc]\nscheme = \"{}\"\n{}",
      scheme, extra);
  for (int i = 0; i < 4; ++i)
    t += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h4\"\nsize_bytes = 150000\nstart_us = {}\n", i, i);
  return t;
}

// DCQCN with RED thresholds these short flows' queues reach.
const std::string kLowEcn = "[switch]\nkmin_bytes = 20000\nkmax_bytes = 200000\n";

class TraceDir {
 public:
  TraceDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / fmt::format("rocesim_ptrace_{}_{}", getpid(), n++);
    fs::remove_all(path_);
  }
  ~TraceDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Row {
  int64_t t_ps = 0;
  uint64_t flow = 0;
  int64_t seq = 0;
  std::string node, port, peer, prio, event, detail, queue, paused;
  int64_t paused_ps() const { return us_to_ps(paused); }
  static int64_t us_to_ps(const std::string& s) {
    const auto dot = s.find('.');
    return std::stoll(s.substr(0, dot)) * 1'000'000 + std::stoll(s.substr(dot + 1));
  }
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream ls(line);
  while (std::getline(ls, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

std::vector<Row> parse(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "time_us,flow,seq,node,port,peer,prio,event,detail,queue_bytes,paused_us");
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    const auto c = split(line);
    EXPECT_EQ(c.size(), 11u) << line;
    if (c.size() != 11) continue;
    rows.push_back({Row::us_to_ps(c[0]), std::stoull(c[1]), std::stoll(c[2]), c[3], c[4], c[5], c[6], c[7],
                    c[8], c[9], c[10]});
  }
  return rows;
}

struct Result {
  nlohmann::json summary;
  std::string trace, flows, pfc;
};

Result run(const std::string& text, const std::vector<std::string>& overrides) {
  TraceDir d;
  RunOptions o;
  o.out_dir = d.path().string();
  const Scenario s = load_scenario_text(text, "test.toml", overrides);
  (void)run_scenario(s, o);
  Result r;
  r.summary = nlohmann::json::parse(read_text_file(d.path() / "summary.json"));
  r.trace = read_text_file(d.path() / "packet_trace.csv");
  r.flows = read_text_file(d.path() / "flows.csv");
  r.pfc = read_text_file(d.path() / "pfc.csv");
  return r;
}

// Every packet (flow, seq) sent once (no loss): its rows from send to receive go hop by hop: at each switch
// an enqueue then a dequeue no earlier (a mark, if any, right after the dequeue), each hop after the one
// before, and an in-order receive at the destination last. Flows 0 and 1 cross s0 and s1, flows 2 and 3 s1
// only. `delivered`: the packets checked.
void check_paths(const std::vector<Row>& rows, size_t& delivered) {
  std::map<std::pair<uint64_t, int64_t>, std::vector<const Row*>> by_packet;
  for (const Row& r : rows) by_packet[{r.flow, r.seq}].push_back(&r);
  delivered = 0;
  for (const auto& [key, evs] : by_packet) {
    SCOPED_TRACE(fmt::format("flow {} seq {}", key.first, key.second));
    ASSERT_EQ(evs.front()->event, "send");
    ASSERT_EQ(evs.back()->event, "receive");
    EXPECT_EQ(evs.back()->detail, "in_order");
    ++delivered;
    std::set<std::string> hops;
    int64_t t = evs.front()->t_ps;
    for (size_t i = 1; i + 1 < evs.size();) {
      const Row& enq = *evs[i];
      ASSERT_EQ(enq.event, "enqueue");
      ASSERT_LT(i + 1, evs.size() - 1);
      const Row& deq = *evs[i + 1];
      ASSERT_EQ(deq.event, "dequeue");
      EXPECT_EQ(deq.node, enq.node);
      EXPECT_EQ(deq.port, enq.port);
      EXPECT_TRUE(hops.insert(enq.node).second) << "a switch twice on the path: " << enq.node;
      EXPECT_GE(enq.t_ps, t);  // after the hop before (its wire and link delay)
      EXPECT_GE(deq.t_ps, enq.t_ps);
      EXPECT_LE(deq.paused_ps(), deq.t_ps - enq.t_ps);  // paused only while it waited
      t = deq.t_ps;
      i += 2;
      if (i < evs.size() && evs[i]->event == "mark") {
        EXPECT_EQ(evs[i]->t_ps, deq.t_ps);
        EXPECT_EQ(evs[i]->node, deq.node);
        ++i;
      }
    }
    EXPECT_GE(evs.back()->t_ps, t);
    EXPECT_EQ(hops.size(), key.first < 2 ? 2u : 1u);
  }
}

}  // namespace packet_trace_test

namespace pt = packet_trace_test;

TEST(PacketTrace, PfcIncastShowsQueuesAndPauseWaitsThatPfcCsvConfirms) {
  // A low static Xoff: s1 pauses s0 (and its own hosts) while the queue towards h4 drains.
  const pt::Result r =
      pt::run(pt::incast("none", "[switch]\npfc_mode = \"static\"\nxoff_bytes = 40000\nxon_bytes = 38000\n"),
              {"monitors.packet_trace.flows=[0]", "monitors.pfc=true"});
  ASSERT_GT(r.summary["pfc"]["pauses_sent"].get<int>(), 5);
  const std::vector<pt::Row> rows = pt::parse(r.trace);
  ASSERT_FALSE(rows.empty());
  // Flow 0 (150,000 B, 1,000 B packets): every packet sent once and delivered, along h0 -> s0 -> s1 -> h4.
  size_t delivered = 0;
  pt::check_paths(rows, delivered);
  EXPECT_EQ(delivered, 150u);
  EXPECT_EQ(r.summary["monitors"]["packet_trace"]["flows_traced"], 1);
  EXPECT_EQ(r.summary["monitors"]["packet_trace"]["rows"], rows.size());
  EXPECT_EQ(r.summary["monitors"]["packet_trace"]["truncated"], false);
  for (const pt::Row& x : rows) EXPECT_EQ(x.flow, 0u);

  // pfc.csv's paused intervals of each (node, port, prio).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::pair<int64_t, int64_t>>>
      paused;
  {
    std::istringstream in(r.pfc);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      const auto c = pt::split(line);
      if (c[5] != "resume" && c[5] != "end") continue;
      const int64_t end = pt::Row::us_to_ps(c[0]);
      paused[{c[1], c[2], c[4]}].emplace_back(end - pt::Row::us_to_ps(c[6]), end);
    }
  }
  // Each dequeue's paused_us is exactly the overlap of those intervals with its wait since its enqueue.
  std::map<std::pair<int64_t, std::string>, int64_t> enqueued;  // (seq, node) -> time
  int queued = 0, waited_paused = 0;
  for (const pt::Row& x : rows) {
    if (x.event == "enqueue") {
      enqueued[{x.seq, x.node}] = x.t_ps;
      queued += std::stoll(x.queue) > 0;
    }
    if (x.event != "dequeue") continue;
    const int64_t from = enqueued.at({x.seq, x.node});
    int64_t overlap = 0;
    for (auto [a, b] : paused[{x.node, x.port, x.prio}])
      overlap += std::max<int64_t>(0, std::min(b, x.t_ps) - std::max(a, from));
    EXPECT_EQ(x.paused_ps(), overlap) << x.node << " seq " << x.seq;
    waited_paused += x.paused_ps() > 0;
  }
  // Its packets queued behind others, and at s0 (towards s1) some waited while s1 paused that egress.
  EXPECT_GT(queued, 50);
  EXPECT_GT(waited_paused, 5);
  bool paused_at_s0 = false;
  for (const pt::Row& x : rows)
    paused_at_s0 = paused_at_s0 || (x.event == "dequeue" && x.node == "s0" && x.paused_ps() > 0);
  EXPECT_TRUE(paused_at_s0);
}

TEST(PacketTrace, DcqcnMarksFollowTheirDequeue) {
  const pt::Result r = pt::run(pt::incast("dcqcn", pt::kLowEcn), {"monitors.packet_trace.flows=[0, 2]"});
  const std::vector<pt::Row> rows = pt::parse(r.trace);
  size_t delivered = 0;
  pt::check_paths(rows, delivered);
  EXPECT_EQ(delivered, 300u);
  // Marked where queues build: s0 towards s1 (h0 and h1 share it), s1 towards h4 (all four); every mark in
  // summary.json's count of marks to s1 and h4.
  std::map<std::string, int> marks;
  for (const pt::Row& x : rows) {
    EXPECT_TRUE(x.flow == 0 || x.flow == 2) << x.flow;
    if (x.event == "mark") ++marks[x.node + ">" + x.peer];
  }
  EXPECT_GT(marks["s1>h4"], 10);
  EXPECT_GT(marks["s0>s1"], 3);
  EXPECT_EQ(marks.size(), 2u);
  EXPECT_LE(marks["s1>h4"] + marks["s0>s1"], r.summary["ecn"]["marked"].get<int>());
}

TEST(PacketTrace, LossyRunDropsAndRetransmitsTheSameSequence) {
  const pt::Result r =
      pt::run(pt::incast("none", "[switch]\nflow_control = \"none\"\nbuffer_bytes = 120000\n"),
              {"monitors.packet_trace.flows=[0, 1, 2, 3]"});
  ASSERT_GT(r.summary["drops"]["data_buffer"].get<int>(), 0);
  const std::vector<pt::Row> rows = pt::parse(r.trace);
  // Every packet dropped (at its first drop) is retransmitted after it and then received in order.
  using Packet = std::pair<uint64_t, int64_t>;  // (flow, seq)
  std::map<Packet, int64_t> dropped;
  std::set<Packet> resent, received;
  int drops = 0;
  for (const pt::Row& x : rows) {
    if (x.event == "drop") {
      EXPECT_EQ(x.detail, "buffer");
      EXPECT_TRUE((x.node == "s0" && x.peer == "s1") || (x.node == "s1" && x.peer == "h4")) << x.node;
      ++drops;
      dropped.try_emplace({x.flow, x.seq}, x.t_ps);
    }
    const auto it = dropped.find({x.flow, x.seq});
    if (it == dropped.end() || x.t_ps <= it->second) continue;
    if (x.event == "retransmit") resent.insert(it->first);
    if (x.event == "receive" && x.detail == "in_order" && resent.count(it->first)) received.insert(it->first);
  }
  EXPECT_EQ(static_cast<uint64_t>(drops), r.summary["drops"]["data_buffer"].get<uint64_t>());  // all traced
  EXPECT_GT(dropped.size(), 20u);
  EXPECT_EQ(resent.size(), dropped.size());
  EXPECT_EQ(received.size(), dropped.size());
  int retransmits = 0;
  for (const pt::Row& x : rows) retransmits += x.event == "retransmit";
  EXPECT_EQ(static_cast<uint64_t>(retransmits),
            r.summary["transport"]["retransmitted_packets"].get<uint64_t>());
}

TEST(PacketTrace, ChangesNoResultAndIsSameForAnyThreadCountAndPartitions) {
  const std::string text = pt::incast("dcqcn", pt::kLowEcn);
  const pt::Result plain = pt::run(text, {});
  const pt::Result one = pt::run(text, {"monitors.packet_trace.flows=[0, 1, 2, 3]"});
  const pt::Result two = pt::run(text, {"monitors.packet_trace.flows=[0, 1, 2, 3]", "threads=2"});
  const pt::Result parts = pt::run(text, {"monitors.packet_trace.flows=[0, 1, 2, 3]", "partitions=2"});
  ASSERT_GT(one.trace.size(), 100'000u);
  EXPECT_EQ(one.trace, two.trace);
  EXPECT_EQ(one.trace, parts.trace);
  EXPECT_EQ(plain.flows, one.flows);
  nlohmann::json a = plain.summary, b = one.summary;
  EXPECT_EQ(a["performance"]["events"], b["performance"]["events"]);
  for (auto* j : {&a, &b}) {
    j->erase("performance");
    j->erase("monitors");
  }
  EXPECT_EQ(a.dump(2), b.dump(2));
}

TEST(PacketTrace, StopsAtMaxRowsWithAWarning) {
  const std::string text = pt::incast("dcqcn", pt::kLowEcn);
  const pt::Result all = pt::run(text, {"monitors.packet_trace.flows=[1]"});
  const pt::Result capped =
      pt::run(text, {"monitors.packet_trace.flows=[1]", "monitors.packet_trace.max_rows=100", "threads=2"});
  // The first 100 rows of the whole trace, exactly.
  size_t at = 0;
  for (int i = 0; i < 101; ++i) at = all.trace.find('\n', at) + 1;
  EXPECT_EQ(capped.trace, all.trace.substr(0, at));
  EXPECT_EQ(capped.summary["monitors"]["packet_trace"]["rows"], 100);
  EXPECT_EQ(capped.summary["monitors"]["packet_trace"]["truncated"], true);
  EXPECT_EQ(all.summary["monitors"]["packet_trace"]["truncated"], false);
  EXPECT_FALSE(all.summary.contains("warnings"));
  ASSERT_TRUE(capped.summary.contains("warnings"));
  const std::string w = capped.summary["warnings"].dump();
  EXPECT_NE(w.find("max_rows = 100"), std::string::npos) << w;
  EXPECT_NE(w.find("packet_trace"), std::string::npos) << w;
}

TEST(PacketTrace, ClassesAndBadKeys) {
  // Classes: every flow of class "victim" (flows 1 and 3).
  std::string text = pt::incast("none");
  for (const char* f : {"[[flows]]\nsrc = \"h1\"", "[[flows]]\nsrc = \"h3\""}) {
    const auto at = text.find(f);
    ASSERT_NE(at, std::string::npos);
    text.insert(at + std::string(f).size(), "\nclass = \"victim\"");
  }
  const pt::Result r =
      pt::run(text, {"monitors.packet_trace.classes=[\"victim\"]", "monitors.packet_trace.max_rows=300"});
  std::set<uint64_t> flows;
  for (const pt::Row& x : pt::parse(r.trace)) flows.insert(x.flow);
  EXPECT_EQ(flows, (std::set<uint64_t>{1, 3}));
  EXPECT_EQ(r.summary["monitors"]["packet_trace"]["flows_traced"], 2);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"monitors.packet_trace=true", "expected a table naming the flows to trace"},
      {"monitors.packet_trace.max_rows=10", "expected a table naming the flows to trace"},
      {"monitors.packet_trace.flows=[1.5]", "flow ids are integers"},
      {"monitors.packet_trace.classes=[\"nope\"]", "no traffic class 'nope'"},
      {"monitors.packet_trace.flow=[1]", "expected a table naming the flows to trace"},
  };
  // A misspelt key beside a valid one: named, with the valid one suggested.
  try {
    (void)load_scenario_text(pt::incast("none"), "bad.toml",
                             {"monitors.packet_trace.flows=[1]", "monitors.packet_trace.max_row=9"});
    ADD_FAILURE() << "accepted max_row";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'monitors.packet_trace.max_row'"), std::string::npos)
        << e.what();
  }
  for (const auto& [set, message] : bad) {
    try {
      (void)load_scenario_text(pt::incast("none"), "bad.toml", {set, "monitors.pfc=true"});
      ADD_FAILURE() << "accepted: " << set;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << set << ": " << e.what();
    }
  }
}

// `rocesim run --mpi` over 2 ranks (one switch each) writes the bytes of one process.
TEST(PacketTrace, SameBytesOverRanks) {
  if (const std::string why = rocesim::test::mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  pt::TraceDir d;
  fs::create_directories(d.path());
  const fs::path scenario = d.path() / "incast.toml";
  {
    std::ofstream f(scenario);
    f << pt::incast("dcqcn") << "[monitors]\npacket_trace = { flows = [0, 3], max_rows = 1400 }\n";
  }
  const std::string bin = ROCESIM_BINARY;
  const fs::path one = d.path() / "one", ranks = d.path() / "ranks";
  ASSERT_EQ(std::system(fmt::format("{} run {} -q -o {}", bin, scenario.string(), one.string()).c_str()), 0);
  ASSERT_EQ(std::system(fmt::format("{} {} run {} --mpi -q -o {} </dev/null",
                                    rocesim::test::mpirun_command(2), bin, scenario.string(), ranks.string())
                            .c_str()),
            0);
  const std::string a = pt::read_text_file(one / "packet_trace.csv");
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 1401);  // cut at max_rows: on each rank, then merged
  EXPECT_EQ(a, pt::read_text_file(ranks / "packet_trace.csv"));
  const auto j = nlohmann::json::parse(pt::read_text_file(ranks / "summary.json"));
  EXPECT_EQ(j["monitors"]["packet_trace"]["truncated"], true);
}
