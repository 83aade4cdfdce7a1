// summary.json's ECN and CNP counters (app/run.cc ecn_summary, "cnp"): the marks the switches made, in all,
// by where the marking port leads and per switch (the 16 that marked most, the rest summed), and the
// congestion notifications as sent and as received, CNP packets and DCQCN's flags on ACKs (the hpcc-sim
// profile) apart. Checked against the network's own port counters, against each other where a run
// determines them exactly (no loss, every flow finished), and over several threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "net/network.h"

namespace rocesim {
namespace {

struct CountedRun {
  std::unique_ptr<Network> net;
  nlohmann::json summary;
};

CountedRun run_counted(const Scenario& s, int threads = 1) {
  CountedRun r;
  r.net = std::make_unique<Network>(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
  if (threads > 1) r.net->set_parallel(threads, 0);
  r.summary = run_network(s, *r.net, RunOptions{}).summary;
  return r;
}

uint64_t count_of(const nlohmann::json& j, const char* a, const char* b) {
  return j.at(a).at(b).get<uint64_t>();
}

// The marks of each switch that marked, from its ports' counters.
std::map<int, uint64_t> marks_per_switch(Network& net) {
  std::map<int, uint64_t> m;
  for (int id = 0; id < net.num_nodes(); ++id) {
    if (!net.node(id).is_switch()) continue;
    uint64_t n = 0;
    for (const Port& p : net.node(id).ports()) n += p.stats.ecn_marked;
    if (n > 0) m[id] = n;
  }
  return m;
}

// What every run's "ecn" must say of the network it ran: the total, the split by the marking port's peer,
// the list (most first, at most 16, each switch's own count) and the sum of the switches left out.
void expect_ecn_matches_ports(const CountedRun& r) {
  const nlohmann::json& e = r.summary.at("ecn");
  const std::map<int, uint64_t> want = marks_per_switch(*r.net);
  uint64_t total = 0, to_hosts = 0;
  for (int id = 0; id < r.net->num_nodes(); ++id)
    if (r.net->node(id).is_switch())
      for (const Port& p : r.net->node(id).ports()) {
        total += p.stats.ecn_marked;
        if (!p.peer->is_switch()) to_hosts += p.stats.ecn_marked;
      }
  EXPECT_EQ(e.at("marked").get<uint64_t>(), total);
  EXPECT_EQ(e.at("marked_to_hosts").get<uint64_t>(), to_hosts);
  EXPECT_EQ(e.at("marked_to_hosts").get<uint64_t>() + e.at("marked_to_switches").get<uint64_t>(), total);
  EXPECT_EQ(e.at("switches_marking").get<size_t>(), want.size());
  const nlohmann::json& top = e.at("top_switches");
  ASSERT_EQ(top.size(), std::min<size_t>(want.size(), 16));
  uint64_t listed = 0, last = UINT64_MAX;
  std::map<int, uint64_t> left = want;
  for (const auto& t : top) {
    const int id = t.at("node").get<int>();
    const uint64_t m = t.at("marked").get<uint64_t>();
    ASSERT_TRUE(want.count(id)) << "switch " << id << " listed without marks";
    EXPECT_EQ(m, want.at(id)) << "switch " << id;
    EXPECT_EQ(t.at("node_name").get<std::string>(), r.net->topo().node_names.at(static_cast<size_t>(id)));
    EXPECT_LE(m, last) << "most marks first";
    last = m;
    listed += m;
    left.erase(id);
  }
  for (const auto& [id, m] : left) EXPECT_LE(m, last) << "switch " << id << " marked more than one listed";
  EXPECT_EQ(listed + e.at("other_switches_marked").get<uint64_t>(), total);
}

// A dumbbell incast, lossless and short: six senders behind s0 into h6 (s0's port to s1 congests), and h7
// beside h6 on s1 (s1's port to h6 too). Every flow finishes, nothing is lost or sent twice.
std::string dumbbell_incast() {
  std::string t =
      "name = \"counters\"\nseed = 3\nduration_ms = 20\nstop_when_done = true\n"
      "[topology]\nkind = \"dumbbell\"\nsenders = 6\nreceivers = 2\n[cc]\nscheme = \"dcqcn\"\n";
  for (int i = 0; i < 6; ++i)
    t += fmt::format("[[flows]]\nsrc = \"h{}\"\ndst = \"h6\"\nsize_bytes = {}\nstart_us = {}\n", i,
                     400'000 + 50'000 * i, 2 * i);
  t += "[[flows]]\nsrc = \"h7\"\ndst = \"h6\"\nsize_bytes = 1000000\n";
  return t;
}

void expect_lossless_and_complete(const nlohmann::json& j) {
  ASSERT_TRUE(j.at("complete").get<bool>());
  for (const auto& [kind, n] : j.at("drops").items()) ASSERT_EQ(n.get<uint64_t>(), 0u) << kind;
  ASSERT_EQ(count_of(j, "transport", "retransmitted_packets"), 0u);
}

TEST(Counters, DcqcnCnpPacketsAreAllReceivedAndMarksAddUp) {
  const CountedRun r = run_counted(load_scenario_text(dumbbell_incast(), "test.toml"));
  const nlohmann::json& j = r.summary;
  expect_lossless_and_complete(j);
  expect_ecn_matches_ports(r);
  // Both switches marked: s0 towards s1, s1 towards h6.
  EXPECT_EQ(count_of(j, "ecn", "switches_marking"), 2u);
  EXPECT_GT(count_of(j, "ecn", "marked_to_switches"), 0u);
  EXPECT_GT(count_of(j, "ecn", "marked_to_hosts"), 0u);
  // A CNP at most per CE packet, and fewer (one per flow per 50 us); each reached its sender, which was still
  // sending (the flow's last ACK follows its CNPs on the same path).
  const nlohmann::json& c = j.at("cnp");
  EXPECT_GT(count_of(j, "cnp", "sent_by_receivers"), 0u);
  EXPECT_LT(count_of(j, "cnp", "sent_by_receivers"), count_of(j, "ecn", "marked"));
  EXPECT_EQ(count_of(j, "cnp", "received_from_receivers"), count_of(j, "cnp", "sent_by_receivers"));
  EXPECT_EQ(count_of(j, "cnp", "sent_on_acks"), 0u);
  EXPECT_EQ(count_of(j, "cnp", "received_on_acks"), 0u);
  EXPECT_EQ(count_of(j, "cnp", "sent_by_switches") + count_of(j, "cnp", "received_from_switches"), 0u);
  EXPECT_EQ(count_of(j, "cnp", "sent"), count_of(j, "cnp", "sent_by_receivers"));
  EXPECT_EQ(count_of(j, "cnp", "received"), count_of(j, "cnp", "sent"));
  EXPECT_FALSE(c.contains("ue_cnps_sent"));
  // One ACK per data packet (ack_interval 1): every CE packet's ACK echoes it.
  EXPECT_EQ(count_of(j, "ecn", "echo_acks_sent"), count_of(j, "ecn", "marked"));
}

TEST(Counters, HpccSimProfileCountsTheNotificationsOnAcks) {
  // The same incast under the hpcc-sim profile: the receiver flags the ACK of every CE packet instead of
  // sending CNPs. With nothing lost, every marked packet reaches its receiver once and in order, so marks,
  // flagged ACKs sent and flagged ACKs received are the same number.
  const CountedRun r = run_counted(load_scenario_text(dumbbell_incast(), "test.toml", {"profile=hpcc-sim"}));
  const nlohmann::json& j = r.summary;
  expect_lossless_and_complete(j);
  expect_ecn_matches_ports(r);
  const uint64_t marked = count_of(j, "ecn", "marked");
  EXPECT_GT(marked, 100u);
  EXPECT_EQ(count_of(j, "cnp", "sent_on_acks"), marked);
  EXPECT_EQ(count_of(j, "cnp", "received_on_acks"), marked);
  EXPECT_EQ(count_of(j, "cnp", "sent_by_receivers"), 0u);
  EXPECT_EQ(count_of(j, "cnp", "received_from_receivers"), 0u);
  EXPECT_EQ(count_of(j, "cnp", "sent"), marked);
  EXPECT_EQ(count_of(j, "cnp", "received"), marked);
  EXPECT_EQ(count_of(j, "ecn", "echo_acks_sent"), marked);
}

TEST(Counters, NoMarksWithoutEcnAndNoCnpsUnderDctcp) {
  const CountedRun off =
      run_counted(load_scenario_text(dumbbell_incast(), "test.toml", {"cc.scheme=none", "switch.ecn=false"}));
  expect_lossless_and_complete(off.summary);
  const nlohmann::json& e = off.summary.at("ecn");
  EXPECT_EQ(e.at("marked").get<uint64_t>(), 0u);
  EXPECT_EQ(e.at("switches_marking").get<uint64_t>(), 0u);
  EXPECT_TRUE(e.at("top_switches").empty());
  EXPECT_EQ(e.at("echo_acks_sent").get<uint64_t>(), 0u);
  EXPECT_EQ(count_of(off.summary, "cnp", "sent"), 0u);
  EXPECT_EQ(count_of(off.summary, "cnp", "received"), 0u);
  expect_ecn_matches_ports(off);
  // DCTCP's RED marks, and nobody sends CNPs: its notification is the ECN echo on ACKs.
  const CountedRun dctcp =
      run_counted(load_scenario_text(dumbbell_incast(), "test.toml", {"cc.scheme=dctcp"}));
  expect_lossless_and_complete(dctcp.summary);
  expect_ecn_matches_ports(dctcp);
  EXPECT_GT(count_of(dctcp.summary, "ecn", "marked"), 100u);
  EXPECT_GT(count_of(dctcp.summary, "ecn", "echo_acks_sent"), 0u);
  EXPECT_LE(count_of(dctcp.summary, "ecn", "echo_acks_sent"), count_of(dctcp.summary, "ecn", "marked"));
  EXPECT_EQ(count_of(dctcp.summary, "cnp", "sent"), 0u);
}

// PCN's switch agent replaces RED (NP-ECN): its marks are counted. On this fat-tree more switches mark than
// the list holds; the list and the sum of the others stay exact, and the same over three threads.
TEST(Counters, AgentMarksAreCountedAndTheListIsBoundedOverThreads) {
  const Scenario s = load_scenario(std::string(ROCESIM_SCENARIO_DIR) + "/baselines/pcn.toml",
                                   {"duration_ms=0.5", "traffic[0].stop_us=150"});
  ASSERT_FALSE(s.sw.ecn_enabled);  // no RED: every mark is the agent's
  const CountedRun one = run_counted(s);
  expect_ecn_matches_ports(one);
  EXPECT_GT(count_of(one.summary, "ecn", "switches_marking"), 16u);
  EXPECT_EQ(one.summary.at("ecn").at("top_switches").size(), 16u);
  EXPECT_GT(count_of(one.summary, "ecn", "other_switches_marked"), 0u);
  EXPECT_GT(count_of(one.summary, "cnp", "sent_by_receivers"), 0u);
  EXPECT_LE(count_of(one.summary, "cnp", "received_from_receivers"),
            count_of(one.summary, "cnp", "sent_by_receivers"));
  const CountedRun three = run_counted(s, 3);
  expect_ecn_matches_ports(three);
  EXPECT_EQ(three.summary.at("ecn"), one.summary.at("ecn"));
  EXPECT_EQ(three.summary.at("cnp"), one.summary.at("cnp"));
}

// TCD's agent marks CE itself and counts its marks per port (scheme_counters): the two counts agree.
TEST(Counters, TcdCeMarksAreTheSchemesOwnCount) {
  const Scenario s = load_scenario(std::string(ROCESIM_SCENARIO_DIR) + "/tcd/victim_40g.toml",
                                   {"duration_ms=0.6", "traffic[1].start_us=200", "traffic[1].stop_us=400"});
  const CountedRun r = run_counted(s);
  expect_ecn_matches_ports(r);
  const uint64_t marked = count_of(r.summary, "ecn", "marked");
  EXPECT_GT(marked, 0u);
  EXPECT_EQ(r.summary.at("scheme_counters").at("totals").at("ce_marks").get<double>(),
            static_cast<double>(marked));
  EXPECT_LE(count_of(r.summary, "cnp", "received_from_receivers"),
            count_of(r.summary, "cnp", "sent_by_receivers"));
}

// Buffer drops are counted as what they drop. Without flow control and with a small buffer, two incasts
// in opposite directions across one spine fill the same queues with data and, with nic.ack_priority =
// "data", with the other direction's ACKs: drops.control_buffer counts the ACKs (it once counted nothing,
// and they were added to data_buffer). In the control class ACKs are never dropped.
TEST(Counters, BufferDropsOfAcksInADataClassAreControlDrops) {
  const std::string text = R"(
name = "ack_drops"
seed = 1
duration_ms = 20
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 4
link_delay_us = 1
[switch]
flow_control = "none"
buffer_bytes = 150000
[nic]
loss_recovery = "selective"
[cc]
scheme = "none"
[[traffic]]
pattern = "incast"
senders = "h0..h3"
dst = "h4"
size_bytes = 500000
[[traffic]]
pattern = "incast"
senders = "h4..h7"
dst = "h0"
size_bytes = 500000
)";
  const CountedRun in_data = run_counted(load_scenario_text(text, "test.toml", {"nic.ack_priority=data"}));
  const CountedRun in_control = run_counted(load_scenario_text(text, "test.toml", {"nic.ack_priority=high"}));
  for (const CountedRun* r : {&in_data, &in_control}) {
    EXPECT_EQ(count_of(r->summary, "flows", "unfinished"), 0u);
    EXPECT_GT(count_of(r->summary, "drops", "data_buffer"), 0u);
    // Every data packet dropped was sent again (selective repeat resends only what it deems lost).
    EXPECT_GE(count_of(r->summary, "transport", "retransmitted_packets"),
              count_of(r->summary, "drops", "data_buffer"));
  }
  EXPECT_GT(count_of(in_data.summary, "drops", "control_buffer"), 0u);  // 53 at the time of writing
  EXPECT_EQ(count_of(in_control.summary, "drops", "control_buffer"), 0u);
}

}  // namespace
}  // namespace rocesim
