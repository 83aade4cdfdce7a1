// One run of a scenario with every invariant the combination test (tests/app/combination_test.cc), the
// scenario fuzzer (fuzz/scenario_fuzz.cc) and the replay of its corpus (fuzz/scenarios/, replayed by
// tests/app/scenario_corpus_test.cc) assert:
//  - the run is refused with an InputError (reported as such: the caller judges the message), or
//  - it runs with `--check`'s invariants on (net/checks.h) and no check stops it (a PFC deadlock is
//    accepted only where link failures changed the routes under PFC: a real fabric can deadlock then);
//  - every flow finishes (summary flows.unfinished == 0);
//  - a lossless run (PFC or credits, no lossy or failing link) drops nothing (every summary drops.* is 0);
//  - selective repeat sends again no more packets than were lost plus its timeout retransmissions
//    (transport.retransmitted_packets <= drops.data_buffer + wire + link_failure + unroutable +
//    transport.timeout_retransmissions; wire and link_failure also count lost ACKs, which only loosens
//    the bound; a counter summary.json does not have yet counts as 0);
//  - no congestion notification is received more often than sent (summary cnp.received_from_receivers <=
//    sent_by_receivers, received_from_switches <= sent_by_switches, received_on_acks <= sent_on_acks), and
//    the ECN marks add up (ecn.marked = marked_to_hosts + marked_to_switches);
//  - no flow beats its ideal FCT, less what that formula counts which a flow alone need not wait for:
//    net/ideal_fct.h's ideal (the ns-3 simulator's) adds one payload's serialization per hop to the
//    transfer at the bottleneck, which double-counts a packet (store-and-forward of the first packet
//    overlaps the transfer), so a flow alone on its path finishes about one packet-time under it (a
//    2000-byte flow across one 25 Gb/s switch: 9.06 us against an ideal of 9.31 us). The bound asserted is
//    ideal - the largest sum over the hops of a shortest path of P x 8 / rate, i.e. about 2 x propagation +
//    every wire byte at the bottleneck. The ideal is taken along the ECMP path at the rates of the flow's
//    start, so a scenario with rate events is not judged on it (a flow routed around a slowed link beats
//    it);
//  - no port sends more than its link's rate: sampled every `link_sample` of simulated time (a BarrierTask,
//    between windows), the bytes a port put on the wire since the previous sample stay within rate x
//    interval + one packet (the largest rate the link has during the run, with rate events).
// Header-only so that the test binary and the fuzzer share it.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/run.h"
#include "config/scenario.h"
#include "core/error.h"
#include "core/simulator.h"
#include "net/checks.h"
#include "net/network.h"
#include "topo/topology.h"

namespace rocesim::test {

struct InvariantOptions {
  bool lossless = false;        // nothing may be dropped
  bool allow_deadlock = false;  // a PFC deadlock is a correct outcome (routes changed by link failures)
  bool judge_ideal_fct = true;  // false with rate events (the ideal then depends on the path taken)
  Time link_sample = Time::from_us(5);
};

// What the scenario itself says about the invariants it must meet.
inline InvariantOptions invariant_options_for(const Scenario& s) {
  InvariantOptions o;
  bool lossy_link = false, failures = false, rate_change = false;
  for (const LinkSpec& l : s.topo.links)
    if (l.error_rate > 0) lossy_link = true;
  for (const LinkEvent& e : s.events) {
    if (e.action == LinkEvent::Action::kLoss && e.loss > 0) lossy_link = true;
    if (e.action == LinkEvent::Action::kDown) failures = true;
    // The ideal FCT is taken along the flow's ECMP path at the rates of its start: a flow that routing
    // moves around a slowed link beats it (found by the scenario fuzzer), so any rate event turns it off.
    if (e.action == LinkEvent::Action::kRate) rate_change = true;
  }
  o.lossless = (s.sw.pfc_enabled || s.sw.credit_enabled) && !lossy_link && !failures;
  o.allow_deadlock = s.sw.pfc_enabled && failures;
  o.judge_ideal_fct = !rate_change;
  return o;
}

// Samples every port's transmitted bytes between windows and records the first port that sent more than
// its link's rate allows over a sampling interval.
class LinkRateCheck : public BarrierTask {
 public:
  LinkRateCheck(Network& net, const Scenario& s, Time period) : net_(net), period_(period) {
    // The largest payload + headers + INT a packet can carry, with room to spare.
    slack_ = s.nic.mtu_bytes + s.nic.header_bytes + 512;
    std::map<std::pair<int, int>, Rate> event_rate;  // link (low id, high id) -> largest rate of its events
    for (const LinkEvent& e : s.events)
      if (e.action == LinkEvent::Action::kRate) {
        Rate& r = event_rate[{std::min(e.a, e.b), std::max(e.a, e.b)}];
        r = std::max(r, e.rate);
      }
    for (int id = 0; id < net.num_nodes(); ++id)
      for (const Port& p : net.node(id).ports()) {
        Rate r = p.rate;
        const int peer = p.peer->id();
        if (auto it = event_rate.find({std::min(id, peer), std::max(id, peer)}); it != event_rate.end())
          r = std::max(r, it->second);
        ports_.push_back({id, p.index, r, p.tx_bytes});
      }
    last_ = net.now();
    next_ = last_ + period_;
    net.sim().add_task(this);
  }
  ~LinkRateCheck() override { net_.sim().remove_task(this); }
  LinkRateCheck(const LinkRateCheck&) = delete;
  LinkRateCheck& operator=(const LinkRateCheck&) = delete;

  Time next_barrier() const override { return next_; }
  void on_barrier(Time now) override {
    sample(now);
    next_ = now + period_;
  }
  // The last interval, up to the end of the run.
  void finish() { sample(net_.now()); }
  const std::string& violation() const { return violation_; }
  uint64_t samples() const { return samples_; }

 private:
  struct Sampled {
    int node, port;
    Rate max_rate;
    Bytes tx_bytes;
  };
  void sample(Time now) {
    if (now <= last_) return;
    ++samples_;
    for (Sampled& s : ports_) {
      const Bytes tx = net_.node(s.node).ports()[static_cast<size_t>(s.port)].tx_bytes;
      const Bytes allowed = bytes_in(s.max_rate, now - last_) + slack_;
      if (tx - s.tx_bytes > allowed && violation_.empty()) {
        const auto& names = net_.topo().node_names;
        const int peer = net_.node(s.node).ports()[static_cast<size_t>(s.port)].peer->id();
        auto name = [&](int id) {
          return static_cast<size_t>(id) < names.size() ? names[static_cast<size_t>(id)] : std::to_string(id);
        };
        violation_ = fmt::format(
            "link rate exceeded: {} port {} (to {}) sent {} bytes in [{:.3f}, {:.3f}] us, more than {:.1f} "
            "Gb/s allows ({} bytes, one packet included)",
            name(s.node), s.port, name(peer), tx - s.tx_bytes, last_.us(), now.us(), s.max_rate.gbps(),
            allowed);
      }
      s.tx_bytes = tx;
    }
    last_ = now;
  }
  Network& net_;
  Time period_, last_, next_;
  Bytes slack_ = 0;
  std::vector<Sampled> ports_;
  std::string violation_;
  uint64_t samples_ = 0;
};

// For every destination, the largest sum over the hops of a shortest (fewest hops) path from `src` of one
// payload's serialization, P x 8 / rate: what the ideal FCT counts that a flow alone need not wait for.
inline std::vector<Time> payload_serialization_slack(const TopoSpec& topo, int src, Bytes payload) {
  const size_t n = static_cast<size_t>(topo.num_nodes);
  std::vector<std::vector<std::pair<int, Rate>>> adj(n);
  for (const LinkSpec& l : topo.links) {
    adj[static_cast<size_t>(l.a)].push_back({l.b, l.rate});
    adj[static_cast<size_t>(l.b)].push_back({l.a, l.rate});
  }
  std::vector<int> hops(n, -1);
  std::vector<Time> slack(n, Time::zero());
  std::vector<int> frontier{src};
  hops[static_cast<size_t>(src)] = 0;
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int v : frontier) {
      // Hosts forward nothing: a path goes through switches only (and the source host).
      if (v != src && !topo.is_switch[static_cast<size_t>(v)]) continue;
      for (const auto& [w, rate] : adj[static_cast<size_t>(v)]) {
        const size_t wi = static_cast<size_t>(w);
        const Time via = slack[static_cast<size_t>(v)] + tx_time(payload, rate);
        if (hops[wi] < 0) {
          hops[wi] = hops[static_cast<size_t>(v)] + 1;
          slack[wi] = via;
          next.push_back(w);
        } else if (hops[wi] == hops[static_cast<size_t>(v)] + 1) {
          slack[wi] = std::max(slack[wi], via);
        }
      }
    }
    frontier = std::move(next);
  }
  return slack;
}

// A summary.json counter, 0 when absent (counters being added land later).
inline uint64_t counter(const nlohmann::json& j, const char* a, const char* b) {
  if (!j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_number()) return 0;
  return j[a][b].get<uint64_t>();
}

struct CheckedRun {
  bool refused = false;  // the scenario (or its network) was refused with an InputError
  std::string error;     // that message
  nlohmann::json summary;
  CheckFailure stopped;
  std::vector<std::string> violations;  // empty: every invariant held
  uint64_t flows_checked = 0;
  double wall_seconds = 0;
  bool ok() const { return !refused && violations.empty(); }
  // Every violation, one per line.
  std::string report() const {
    std::string r;
    for (const std::string& v : violations) r += (r.empty() ? "" : "\n") + v;
    return r;
  }
};

// Builds the network as run_scenario does (app/run.cc), with the link-rate sampler attached, and runs it
// with invariant mode on. Only an InputError is caught (reported as a refusal); anything else propagates.
inline CheckedRun run_checked(const Scenario& s, const InvariantOptions& o) {
  CheckedRun out;
  RunOptions opt;
  opt.checks.invariants = true;
  opt.keep_flows = true;
  RunResult res;
  std::string rate_violation;
  uint64_t rate_samples = 0;
  try {
    check_run_memory(s);
    Network net(s.topo, s.sw, s.nic, s.seed, s.make_scheme());
    net.set_link_events(s.events);
    if (s.threads != 1 || s.partitions != 0) {
      try {
        net.set_parallel(s.threads, s.partitions);
      } catch (const std::invalid_argument& e) {
        throw InputError(s.file, 0, fmt::format("threads = {}: {}", s.threads, e.what()));
      }
    }
    LinkRateCheck rates(net, s, o.link_sample);
    res = run_network(s, net, opt);
    rates.finish();
    rate_violation = rates.violation();
    rate_samples = rates.samples();
  } catch (const InputError& e) {
    out.refused = true;
    out.error = e.what();
    return out;
  }
  out.summary = res.summary;
  out.stopped = res.stopped;
  out.wall_seconds = res.wall_seconds;
  const nlohmann::json& j = res.summary;
  auto fail = [&](std::string v) { out.violations.push_back(std::move(v)); };

  if (res.stopped.kind != CheckFailure::Kind::kNone &&
      !(o.allow_deadlock && res.stopped.kind == CheckFailure::Kind::kDeadlock))
    fail(fmt::format("stopped by a check ({}): {}", to_string(res.stopped.kind), res.stopped.message));
  const uint64_t unfinished = counter(j, "flows", "unfinished");
  if (unfinished > 0 && res.stopped.kind == CheckFailure::Kind::kNone)
    fail(fmt::format("{} of {} flows unfinished at {:.3f} ms (duration_ms {:.3f})", unfinished,
                     counter(j, "flows", "started"), j.value("simulated_time_ms", 0.0), s.duration.ms()));
  if (o.lossless) {
    std::string drops;
    if (j.contains("drops"))
      for (const auto& [k, v] : j["drops"].items())
        if (v.is_number() && v.get<uint64_t>() > 0) drops += fmt::format(" {}={}", k, v.get<uint64_t>());
    if (!drops.empty()) fail("lossless run dropped packets:" + drops);
  }
  if (s.nic.loss_recovery == NicSettings::LossRecovery::kSelective) {
    const uint64_t retx = counter(j, "transport", "retransmitted_packets");
    const uint64_t lost = counter(j, "drops", "data_buffer") + counter(j, "drops", "wire") +
                          counter(j, "drops", "link_failure") + counter(j, "drops", "unroutable");
    const uint64_t timeouts = counter(j, "transport", "timeout_retransmissions");
    if (retx > lost + timeouts)
      fail(fmt::format(
          "selective repeat retransmitted {} packets, more than the {} lost + {} timeout retransmissions "
          "(spurious_retransmissions {}, out_of_order_packets {})",
          retx, lost, timeouts, counter(j, "transport", "spurious_retransmissions"),
          counter(j, "transport", "out_of_order_packets")));
  }
  for (const auto& [sent, received] : {std::pair{"sent_by_receivers", "received_from_receivers"},
                                       std::pair{"sent_by_switches", "received_from_switches"},
                                       std::pair{"sent_on_acks", "received_on_acks"}})
    if (counter(j, "cnp", received) > counter(j, "cnp", sent))
      fail(fmt::format("cnp.{} = {} exceeds cnp.{} = {}", received, counter(j, "cnp", received), sent,
                       counter(j, "cnp", sent)));
  if (counter(j, "ecn", "marked") !=
      counter(j, "ecn", "marked_to_hosts") + counter(j, "ecn", "marked_to_switches"))
    fail(fmt::format("ecn.marked = {} is not marked_to_hosts {} + marked_to_switches {}",
                     counter(j, "ecn", "marked"), counter(j, "ecn", "marked_to_hosts"),
                     counter(j, "ecn", "marked_to_switches")));
  if (o.judge_ideal_fct) {
    int beaten = 0;
    std::string first;
    std::map<int, std::vector<Time>> slack;  // per source host
    for (const FlowRecord& r : res.flows) {
      ++out.flows_checked;
      auto it = slack.find(r.src);
      if (it == slack.end())
        it = slack.emplace(r.src, payload_serialization_slack(s.topo, r.src, s.nic.mtu_bytes)).first;
      const Time bound = r.ideal_fct - it->second[static_cast<size_t>(r.dst)];
      if (r.fct() < bound && beaten++ == 0)
        first = fmt::format(
            "flow {} ({} -> {}, {} bytes): fct {:.3f} us < ideal {:.3f} us less {:.3f} us of per-hop payload "
            "serialization",
            r.id, r.src, r.dst, r.size_bytes, r.fct().us(), r.ideal_fct.us(), (r.ideal_fct - bound).us());
    }
    if (beaten > 0) fail(fmt::format("{} flows beat their ideal FCT; first: {}", beaten, first));
  }
  if (!rate_violation.empty()) fail(rate_violation);
  if (rate_samples == 0 && counter(j, "flows", "started") > 0) fail("link rate check took no sample");
  return out;
}

// The scenario TEXT (named NAME in messages), read and run as run_checked does: a scenario the reader
// refuses is reported as a refusal too.
inline CheckedRun run_text_checked(const std::string& text, const std::string& name) {
  Scenario s;
  try {
    s = load_scenario_text(text, name);
  } catch (const InputError& e) {
    CheckedRun out;
    out.refused = true;
    out.error = e.what();
    return out;
  }
  return run_checked(s, invariant_options_for(s));
}

}  // namespace rocesim::test
