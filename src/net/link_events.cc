#include "net/link_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <deque>
#include <stdexcept>
#include <string>

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

const char* to_string(LinkEvent::Action a) {
  switch (a) {
    case LinkEvent::Action::kDown:
      return "down";
    case LinkEvent::Action::kUp:
      return "up";
    case LinkEvent::Action::kRate:
      return "rate";
    case LinkEvent::Action::kLoss:
      return "loss";
  }
  return "?";
}

// Applies the events at their times and recomputes the routes failure_detection after a down or up, between
// windows (the loop runs a barrier task after every event before its time and before any at it).
class LinkEventTask : public BarrierTask {
 public:
  LinkEventTask(Network& net, std::vector<LinkEvent> events) : net_(net), events_(std::move(events)) {}
  Time next_barrier() const override {
    Time t = next_ < events_.size() ? events_[next_].at : Time::max();
    if (!route_updates_.empty()) t = std::min(t, route_updates_.front());
    return t;
  }
  void on_barrier(Time now) override {
    while (next_ < events_.size() && events_[next_].at <= now) {
      const LinkEvent& e = events_[next_++];
      net_.apply_link_event(e);
      if (e.action == LinkEvent::Action::kDown || e.action == LinkEvent::Action::kUp) {
        const Time at = e.at + net_.switch_settings().failure_detection;
        // Kept sorted: the detection delay is the same for every event.
        if (route_updates_.empty() || route_updates_.back() < at) route_updates_.push_back(at);
      }
    }
    bool recompute = false;
    while (!route_updates_.empty() && route_updates_.front() <= now) {
      route_updates_.pop_front();
      recompute = true;
    }
    if (recompute) net_.recompute_routes();
  }

 private:
  Network& net_;
  std::vector<LinkEvent> events_;  // by time
  size_t next_ = 0;
  std::deque<Time> route_updates_;
};

void Network::set_link_events(std::vector<LinkEvent> events) {
  if (run_.started()) throw std::logic_error("Network::set_link_events after the run started");
  if (link_task_) {
    sim_.remove_task(link_task_.get());
    link_task_.reset();
  }
  if (events.empty()) return;
  bool lossy = false;
  for (const LinkEvent& e : events) {
    if (e.a < 0 || e.b < 0 || e.a >= num_nodes() || e.b >= num_nodes())
      throw std::invalid_argument("link event: node id out of range");
    bool linked = false;
    for (const Port& p : node(e.a).ports()) linked = linked || p.peer->id() == e.b;
    if (!linked)
      throw std::invalid_argument("link event: nodes " + std::to_string(e.a) + " and " + std::to_string(e.b) +
                                  " are not linked");
    lossy =
        lossy || e.action == LinkEvent::Action::kDown || (e.action == LinkEvent::Action::kLoss && e.loss > 0);
  }
  if (lossy && nic_.rto <= Time::zero()) nic_.rto = Time::from_ms(1);
  std::stable_sort(events.begin(), events.end(),
                   [](const LinkEvent& x, const LinkEvent& y) { return x.at < y.at; });
  link_task_ = std::make_unique<LinkEventTask>(*this, std::move(events));
  sim_.add_task(link_task_.get());
}

// One end of a failing link: whatever is on the wire or sent from now on is lost; the pauses of the link are
// void (this end's egress is no longer paused by the peer, and this end's ingress no longer pauses it); the
// PFC frames in flight will never arrive (counted as received, so that both ends agree: net/checks.cc).
void Network::fail_port(Port& x, const Port& peer) {
  const Time now = sim_.now();
  x.down = true;
  x.cut = true;
  x.cut_at = now;
  // What is on the wire started before now: lost when it arrives (the arrival checks `cut` and cut_at at
  // the receiving end, Node::lost_to_failure).
  x.node->any_cut_ = true;
  // Across ranks (set_ranks) every rank sees the link go down (routes, monitors); only the node's own
  // rank clears its PFC state.
  if (!is_local_node(x.node->id())) return;
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    x.pfc_rx[prio] = peer.pfc_tx[prio];
    if (x.paused[prio]) {
      x.end_pause(prio, now);
      x.node->on_pfc_change(x.index, prio, false);
    }
  }
  if (x.node->is_switch()) static_cast<Switch*>(x.node)->clear_link_pause(x.index);
}

namespace {
std::string node_label(const TopoSpec& t, int id) {
  return id < static_cast<int>(t.node_names.size()) && !t.node_names[id].empty() ? t.node_names[id]
                                                                                 : std::to_string(id);
}
}  // namespace

void Network::apply_link_event(const LinkEvent& e) {
  std::string what =
      fmt::format("{} {}-{}", to_string(e.action), node_label(topo(), e.a), node_label(topo(), e.b));
  if (e.action == LinkEvent::Action::kRate) what += fmt::format(" {} Gb/s", e.rate.gbps());
  if (e.action == LinkEvent::Action::kLoss) what += fmt::format(" {}", e.loss);
  link_log_.push_back({sim_.now(), what});
  Node& a = node(e.a);
  for (Port& x : a.ports_) {
    if (x.peer->id() != e.b) continue;
    Port& y = x.peer->ports_[x.peer_port];
    switch (e.action) {
      case LinkEvent::Action::kDown:
        if (x.down) break;
        if (observers().on_link_change) {
          observers().on_link_change(*x.node, x.index, true, sim_.now());
          observers().on_link_change(*y.node, y.index, true, sim_.now());
        }
        fail_port(x, y);
        fail_port(y, x);
        // Their queues drain into the void (until the routes avoid the link, packets still come).
        wake_port(x);
        wake_port(y);
        break;
      case LinkEvent::Action::kUp:
        if (!x.down) break;
        x.down = y.down = false;
        if (observers().on_link_change) {
          observers().on_link_change(*x.node, x.index, false, sim_.now());
          observers().on_link_change(*y.node, y.index, false, sim_.now());
        }
        wake_port(x);
        wake_port(y);
        break;
      case LinkEvent::Action::kRate:
        x.rate = y.rate = e.rate;
        x.ps_per_byte = y.ps_per_byte = 0;
        {
          constexpr uint64_t kBitPs = 8'000'000'000'000ULL;
          const auto ib = static_cast<uint64_t>(e.rate.bps);
          if (ib != 0 && static_cast<double>(ib) == e.rate.bps && kBitPs % ib == 0)
            x.ps_per_byte = y.ps_per_byte = static_cast<int64_t>(kBitPs / ib);
        }
        break;
      case LinkEvent::Action::kLoss:
        x.error_rate = y.error_rate = e.loss;
        break;
    }
  }
  if (e.action == LinkEvent::Action::kRate) follow_host_rate(e);
}

// A rate event on a host's link changes its NIC's line rate (docs/models.md A3b). A flow that starts later
// reads the new rates at its start (line rate, base RTT and ideal FCT along its path: start_flow_event).
// A flow of that host already sending takes the new line rate now, the summed rate of the ports it sends
// by (Qp::tx_ports, as FlowTable::set_ports gave it at its start), whichever of the host's ports the event
// changed: a flow on another port keeps its line rate. A NIC that GPUs share (NodeKind::kNic) is their
// NIC: an event on its link to a leaf moves the flows of its GPUs that leave by that link
// (FlowTable::ports_rate). At (or above) the old one a flow was not held back and goes on at the new one;
// below it, it keeps its rate, capped at the new line rate. The scheme moves its own state alike
// (CongestionControl::on_line_rate_change). Its base RTT and ideal FCT stay those of its start.
void Network::follow_host_rate(const LinkEvent& e) {
  auto follow = [this](int h) {
    if (!is_local_node(h) || node(h).ports().empty()) return;
    const std::vector<Port>& ports = node(h).ports();
    unsigned faster = 0;  // the ports of flows that may send sooner
    for (uint32_t i = 0; i < flows_.capacity(); ++i) {
      Qp& qp = flows_.qp(i);
      if (!qp.in_use || !qp.started || qp.sender_done || qp.src != h) continue;
      const Rate line = flows_.ports_rate(qp);
      if (qp.line_rate == line) continue;
      const Rate old = qp.line_rate;
      qp.line_rate = line;
      const Rate r = CongestionControl::follow_line_rate(qp.rate, old, line);
      if (r != qp.rate) {
        if (r > qp.rate) faster |= qp.tx_ports;
        qp.rate = r;
        // Re-time the next packet from the last one, as set_rate does; a later one needs no wake.
        if (qp.last_tx_size > 0) qp.next_avail = qp.last_tx + tx_time(qp.last_tx_size, r);
      }
      cc_->on_line_rate_change(qp, old);
    }
    // An earlier packet: a transmit attempt now (keyed, as a link's wake-up) on each port concerned.
    for (unsigned m = faster; m; m &= m - 1) wake_port(ports[static_cast<size_t>(std::countr_zero(m))]);
  };
  for (const int x : {e.a, e.b}) {
    if (is_host(x)) {
      follow(x);
    } else if (topo().kind_of(x) == NodeKind::kNic) {
      for (const Port& p : node(x).ports())
        if (is_host(p.peer->id())) follow(p.peer->id());
    }
  }
}

// A transmit attempt of the port now, as an event of its node keyed by the node and the port: the same
// whatever the partitions and ranks (a direct kick between windows would take the coordinator's sequence).
void Network::wake_port(const Port& x) {
  constexpr uint64_t kLinkEventSeq = Simulator::kDeliverySeq + (uint64_t{1} << 20);
  const uint32_t h = x.node->handler();
  sim_.at_keyed(sim_.now(), h, kLinkEventSeq + static_cast<uint64_t>(x.index), h, Node::tx_attempt_kind(),
                reinterpret_cast<uint64_t>(&x));
}

void Network::recompute_routes() {
  fabric_.rebuild_routes();
  ++counters().route_updates;
  link_log_.push_back({sim_.now(), "routes recomputed"});
}

}  // namespace rocesim
