#include "net/network.h"

#include <algorithm>
#include <deque>

#include "net/host.h"
#include "net/switch.h"
#include "net/ideal_fct.h"

namespace rocesim {

Network::Network(const TopoSpec& topo, const SwitchSettings& sw, const NicSettings& nic, uint64_t seed,
                 std::unique_ptr<CongestionControl> cc, const SetupProgress& setup_progress)
    : topo_(topo), sw_(sw), nic_(nic), seed_(seed), cc_(std::move(cc)) {
  needs_ = cc_->needs();
  if (nic_.ack_priority != NicSettings::AckPriority::kScheme)
    needs_.ack_high_priority = nic_.ack_priority == NicSettings::AckPriority::kHigh;
  if (needs_.int_stamping) sw_.int_enabled = true;
  if (!needs_.ecn_marking) sw_.ecn_enabled = false;
  loss_rng_ = Rng::stream(seed_, "link_loss");
  handler_ = sim_.add_handler(this);
  build_nodes();
  build_routes(setup_progress);
  compute_max_base_rtt();
  cc_->attach(*this);
  for (auto& n : nodes_)
    if (n->is_switch()) static_cast<Switch&>(*n).set_agent(cc_->make_switch_agent(static_cast<Switch&>(*n)));
}

Network::~Network() = default;

Host& Network::host(int id) { return static_cast<Host&>(*nodes_[id]); }
Switch& Network::sw(int id) { return static_cast<Switch&>(*nodes_[id]); }

void Network::build_nodes() {
  const int n = topo_.num_nodes;
  nodes_.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (topo_.is_switch[i]) nodes_.push_back(std::make_unique<Switch>(*this, i));
    else nodes_.push_back(std::make_unique<Host>(*this, i));
    nodes_.back()->set_handler(sim_.add_handler(nodes_.back().get()));
  }
  for (const LinkSpec& l : topo_.links) {
    Node& a = *nodes_[l.a];
    Node& b = *nodes_[l.b];
    const int pa = static_cast<int>(a.ports_.size());
    const int pb = static_cast<int>(b.ports_.size());
    a.ports_.emplace_back();
    b.ports_.emplace_back();
    Port& x = a.ports_.back();
    Port& y = b.ports_.back();
    x.node = &a; x.index = pa; x.peer = &b; x.peer_port = pb; x.rate = l.rate; x.delay = l.delay;
    x.error_rate = l.error_rate;
    y.node = &b; y.index = pb; y.peer = &a; y.peer_port = pa; y.rate = l.rate; y.delay = l.delay;
    y.error_rate = l.error_rate;
    x.long_haul = y.long_haul = l.long_haul;
  }
  // A delivery event names its port in its kind: the loop prefetches that port with the packet.
  for (auto& node : nodes_)
    if (!node->ports_.empty()) sim_.set_record_table(node->handler(), node->ports_.data(), sizeof(Port));
  // Host speed for per-speed switch settings: the fastest host link.
  Rate host_rate = sw_.host_rate;
  Rate fastest{0};
  for (auto& node : nodes_)
    if (!node->is_switch() && !node->ports_.empty()) fastest = std::max(fastest, node->ports_[0].rate);
  if (fastest.bps > 0) host_rate = fastest;
  sw_.host_rate = host_rate;
  for (auto& node : nodes_)
    if (node->is_switch()) static_cast<Switch&>(*node).configure(sw_, host_rate);
  next_sport_.assign(n, 10000);
}

// The route tables' size before they are built (net/routes.h).
int64_t Network::estimate_route_table_bytes(const TopoSpec& topo) {
  return static_cast<int64_t>(RouteTable::estimate_bytes(topo)) +
         int64_t{topo.num_nodes} * (8 + 4);  // ecmp_salt_, the search's distances
}

int64_t Network::estimate_memory_bytes(const TopoSpec& topo, const SwitchSettings& sw) {
  const auto n = static_cast<int64_t>(topo.num_nodes);
  int64_t switches = 0;
  for (int i = 0; i < topo.num_nodes; ++i) switches += topo.is_switch[i] ? 1 : 0;
  std::vector<int64_t> ports_of(static_cast<size_t>(n), 0);
  for (const LinkSpec& l : topo.links) {
    ++ports_of[l.a];
    ++ports_of[l.b];
  }
  int64_t b = estimate_route_table_bytes(topo);
  b += static_cast<int64_t>(topo.links.size()) * static_cast<int64_t>(sizeof(LinkSpec));  // the topology copy
  b += (n - switches) * static_cast<int64_t>(sizeof(Host)) + switches * static_cast<int64_t>(sizeof(Switch));
  b += n * 64;  // node vectors, handlers, names
  for (int i = 0; i < topo.num_nodes; ++i) {
    const int64_t p = ports_of[i];
    b += p * static_cast<int64_t>(sizeof(Port));
    if (!topo.is_switch[i]) continue;
    b += p * kNumPriorities * 32;  // ingress counters and thresholds per (port, priority)
    if (sw.model == SwitchModel::kInputOutputQueued)
      b += p * kNumPriorities * (sw.input_queueing == InputQueueing::kVoq ? p : 1) *
           static_cast<int64_t>(sizeof(PacketQueue));
  }
  return b;
}

// Shortest-path routes from every switch to every node (net/routes.h); all equal-cost next hops are kept
// for ECMP. Hosts never forward, so paths only cross switches.
void Network::build_routes(const SetupProgress& progress) {
  const int n = num_nodes();
  ecmp_salt_.resize(n);
  Rng salt = Rng::stream(seed_, "ecmp");
  for (int i = 0; i < n; ++i) ecmp_salt_[i] = salt.next_u64();
  std::vector<Node*> nodes;
  nodes.reserve(nodes_.size());
  for (auto& node : nodes_) nodes.push_back(node.get());
  routes_.build(nodes, topo_, [&](double f) {
    if (progress) progress("routes", f);
  });
}

uint64_t Network::flow_hash(const Packet& p, int sw) const {
  uint64_t x = ecmp_salt_[sw] ^ (static_cast<uint64_t>(static_cast<uint32_t>(p.src)) << 32 |
                                 static_cast<uint32_t>(p.dst));
  uint64_t h = splitmix64(x);
  x = h ^ (static_cast<uint64_t>(p.sport) << 16 | p.dport);
  return splitmix64(x);
}

template <typename Hop>
bool Network::walk_path(int src, int dst, uint16_t sport, uint16_t dport, Hop&& hop) const {
  Packet probe;
  probe.src = src;
  probe.dst = dst;
  probe.sport = sport;
  probe.dport = dport;
  int at = src;
  int port = 0;
  for (int guard = 0; guard < num_nodes(); ++guard) {
    if (nodes_[at]->ports_.empty()) return false;
    if (!topo_.is_switch[at]) {
      if (at != src) return false;
      port = 0;
    } else {
      auto [ports, cnt] = routes(at, dst);
      if (cnt == 0) return false;
      port = cnt == 1 ? ports[0] : ports[flow_hash(probe, at) % static_cast<uint64_t>(cnt)];
    }
    const Port& p = nodes_[at]->ports_[port];
    hop(at, p);
    at = p.peer->id();
    if (at == dst) return true;
  }
  return false;
}

std::vector<std::pair<int, int>> Network::path_of(int src, int dst, uint16_t sport, uint16_t dport) const {
  std::vector<std::pair<int, int>> hops;
  if (!walk_path(src, dst, sport, dport, [&](int node, const Port& p) { hops.emplace_back(node, p.index); }))
    return {};
  return hops;
}

Time Network::base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const {
  Time rtt;
  const bool ok = walk_path(src, dst, sport, dport,
                            [&](int, const Port& p) { rtt += p.delay * 2 + tx_time(nic_.mtu_bytes, p.rate); });
  return ok ? rtt : Time::zero();
}

void Network::compute_max_base_rtt() {
  // The longest base RTT between any two hosts (HPCC's T), over the ECMP-independent shortest paths.
  Time best;
  const std::vector<int> hosts = topo_.hosts();
  for (int s : hosts) {
    // BFS-free: follow routes of a fixed 5-tuple; all shortest paths of our topologies have equal delay.
    for (int d : hosts) {
      if (s == d) continue;
      best = std::max(best, base_rtt(s, d, 0, 0));
    }
    if (hosts.size() > 2000) break;  // very large fabrics: one source is representative enough
  }
  max_base_rtt_ = best;
}

Time Network::ideal_fct(Bytes size, int src, int dst, uint16_t sport, uint16_t dport) const {
  PathInfo info;
  const bool ok = walk_path(src, dst, sport, dport, [&](int, const Port& p) {
    info.hop_rates.push_back(p.rate);
    info.hop_delays.push_back(p.delay);
  });
  if (!ok || info.hop_rates.empty()) return Time::zero();
  // The simulator's integer ns, so fct.txt matches it to the ns; it counts 48 B of headers per packet
  // (kHpccHeaderBytes) whatever its packets carry on the wire.
  if (nic_.ideal_fct_hpcc_ns)
    return Time::from_ps(1000 * ideal_fct_ns_hpcc(size, info, nic_.mtu_bytes, kHpccHeaderBytes));
  return rocesim::ideal_fct(size, info, nic_.mtu_bytes, nic_.header_bytes);
}

void Network::set_rate(Qp& qp, Rate r) {
  if (r == qp.rate) return;
  qp.rate = r;
  // Re-time the next packet from the last one at the new rate.
  if (qp.last_tx_size > 0) qp.next_avail = qp.last_tx + tx_time(qp.last_tx_size, r);
  if (qp.active) host(qp.src).kick(0);
}

void Network::set_window(Qp& qp, Bytes w) {
  const bool grew = (w == 0 && qp.window != 0) || w > qp.window;
  qp.window = w;
  if (grew && qp.active) host(qp.src).kick(0);
}

void Network::schedule_qp_timer(Qp& qp, Time at, uint32_t kind) {
  sim_.at(at, handler_, kQpTimer + (kind << 8), (static_cast<uint64_t>(qp.slot) << 32) | qp.tag);
}

Packet* Network::make_cnp(const Qp& qp, int from_node) {
  Packet* c = pool_.get();
  c->type = PktType::kCnp;
  c->prio = 0;
  c->src = from_node;
  c->dst = qp.src;
  c->sport = qp.dport;
  c->dport = qp.sport;
  c->qp = qp.slot;
  c->qp_tag = qp.tag;
  c->size = static_cast<uint32_t>(nic_.cnp_bytes);
  if (topo_.is_switch[from_node]) c->flags |= Packet::kFlagFromSwitch;
  return c;
}

void Network::inject(int from_node, Packet* p) {
  if (topo_.is_switch[from_node]) {
    p->in_port = -1;
    sw(from_node).forward(p);
  } else {
    host(from_node).send_control(p);
  }
}

void Network::run(Time until, bool stop_when_done, const std::function<void(Time)>& progress) {
  if (!started_) {
    started_ = true;
    source_done_ = source_ == nullptr;
    if (source_) pull_next_flow();
    if (dependent_) dependent_->begin(*this);
  }
  stop_when_done_ = stop_when_done;
  if (stop_when_done && all_flows_done()) return;
  if (progress) sim_.run(until, progress);
  else sim_.run(until);
}

void Network::pull_next_flow() {
  FlowSpec f;
  if (source_ && source_->next(f)) {
    f.id = next_flow_id_++;
    next_flow_ = f;
    have_next_ = true;
    sim_.at(std::max(f.start, sim_.now()), handler_, kFlowArrival, 0);
  } else {
    have_next_ = false;
    source_done_ = true;
  }
}

void Network::start_flow(const FlowSpec& f) {
  const uint32_t slot = qps_.acquire();
  Qp& qp = qps_[slot];
  qp.in_use = true;
  qp.slot = slot;
  qp.flow_id = f.id;
  qp.tag = static_cast<uint32_t>(f.id);
  qp.src = f.src;
  qp.dst = f.dst;
  qp.sport = next_sport_[f.src]++;
  if (next_sport_[f.src] == 0) next_sport_[f.src] = 10000;
  qp.dport = f.dport;
  qp.prio = static_cast<uint8_t>(f.priority);
  qp.class_id = f.class_id;
  qp.size = f.size_bytes;
  qp.start = sim_.now();
  qp.last_progress = sim_.now();
  Port& nic = nodes_[f.src]->ports_[0];
  qp.line_rate = nic.rate;
  qp.base_rtt = base_rtt(f.src, f.dst, qp.sport, qp.dport);
  qp.ideal_fct = ideal_fct(f.size_bytes, f.src, f.dst, qp.sport, qp.dport);
  qp.rate = nic.rate;
  qp.next_avail = sim_.now();
  ++stats_.flows_started;
  cc_->on_flow_start(qp);
  host(f.src).activate(slot);
}

Qp* Network::find_flow(uint64_t flow_id) {
  for (uint32_t i = 0; i < qps_.capacity(); ++i)
    if (qps_[i].in_use && qps_[i].flow_id == flow_id) return &qps_[i];
  return nullptr;
}

void Network::on_flow_complete(Qp& qp) {
  FlowRecord r;
  r.id = qp.flow_id;
  r.src = qp.src;
  r.dst = qp.dst;
  r.sport = qp.sport;
  r.dport = qp.dport;
  r.priority = qp.prio;
  r.size_bytes = qp.size;
  r.start = qp.start;
  r.finish = sim_.now();
  r.ideal_fct = qp.ideal_fct;
  r.class_id = qp.class_id;
  if (keep_finished_) finished_.push_back(r);
  ++stats_.flows_finished;
  if (obs_.on_flow_finished) obs_.on_flow_finished(r);
  cc_->on_flow_end(qp);
  host(qp.src).deactivate(qp.slot);
  qp.in_use = false;
  qps_.release(qp.slot);
  if (dependent_) dependent_->on_flow_finished(r.id, r.finish, *this);
  if (stop_when_done_ && all_flows_done()) sim_.stop();
}

void Network::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kFlowArrival) {
    // Start every flow due now, then schedule the next arrival.
    while (have_next_ && next_flow_.start <= sim_.now()) {
      start_flow(next_flow_);
      pull_next_flow_inline();
    }
    return;
  }
  if (kind == kFlowRelease) {
    start_released();
    return;
  }
  if ((kind & 0xff) == kQpTimer) {
    const uint32_t slot = static_cast<uint32_t>(arg >> 32);
    if (slot >= qps_.capacity()) return;
    Qp& qp = qps_[slot];
    if (!qp.in_use || qp.tag != static_cast<uint32_t>(arg)) return;
    cc_->on_timer(qp, kind >> 8);
  }
}

namespace {
bool released_later(const FlowSpec& a, const FlowSpec& b) {
  return a.start != b.start ? a.start > b.start : a.id > b.id;
}
}  // namespace

// A released flow never starts inside the call that released it (a host's ACK handling): it waits in
// released_ for an event at its start, so that flows released together start in id order.
uint64_t Network::release(const FlowSpec& f) {
  FlowSpec g = f;
  g.id = next_flow_id_++;
  if (g.start < sim_.now()) g.start = sim_.now();
  released_.push_back(g);
  std::push_heap(released_.begin(), released_.end(), released_later);
  sim_.at(g.start, handler_, kFlowRelease, 0);
  return g.id;
}

void Network::start_released() {
  while (!released_.empty() && released_.front().start <= sim_.now()) {
    std::pop_heap(released_.begin(), released_.end(), released_later);
    const FlowSpec f = released_.back();
    released_.pop_back();
    start_flow(f);
  }
}

void Network::pull_next_flow_inline() {
  FlowSpec f;
  if (source_ && source_->next(f)) {
    f.id = next_flow_id_++;
    next_flow_ = f;
    have_next_ = true;
    if (f.start > sim_.now()) sim_.at(f.start, handler_, kFlowArrival, 0);
  } else {
    have_next_ = false;
    source_done_ = true;
  }
}

}  // namespace rocesim
