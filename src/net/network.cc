#include "net/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <thread>

#include "net/ecmp_hash.h"
#include "net/host.h"
#include "net/ideal_fct.h"
#include "net/switch.h"

namespace rocesim {

Network::Network(const TopoSpec& topo, const SwitchSettings& sw, const NicSettings& nic, uint64_t seed,
                 std::unique_ptr<CongestionControl> cc, const SetupProgress& setup_progress)
    : topo_(topo), sw_(sw), nic_(nic), seed_(seed), cc_(std::move(cc)) {
  needs_ = cc_->needs();
  hpcc_sim_hash_ = sw_.ecmp_hash == EcmpHash::kHpccSim;
  if (nic_.ack_priority != NicSettings::AckPriority::kScheme)
    needs_.ack_high_priority = nic_.ack_priority == NicSettings::AckPriority::kHigh;
  if (needs_.int_stamping) sw_.int_enabled = true;
  if (!needs_.ecn_marking) sw_.ecn_enabled = false;
  parts_.push_back(std::make_unique<NetPartition>());
  sim_.set_tie_salt(seed_);
  build_nodes();
  build_routes(setup_progress);
  compute_max_base_rtt();
  if (nic_.loss_recovery == NicSettings::LossRecovery::kSelective) {
    int window = nic_.sack_window_packets;
    if (window <= 0) {  // the BDP of the longest path at the fastest host link, in MTU-sized packets
      double rate_bps = 0;
      for (int h : topo_.hosts())
        if (!nodes_[h]->ports_.empty()) rate_bps = std::max(rate_bps, nodes_[h]->ports_[0].rate.bps);
      const double bdp_bytes = rate_bps / 8.0 * static_cast<double>(max_base_rtt_.ps) * 1e-12;
      window = static_cast<int>(std::ceil(bdp_bytes / static_cast<double>(nic_.mtu_bytes)));
    }
    sack_window_ = std::max(window, 1);
    sack_words_ = (static_cast<size_t>(sack_window_) + 63) / 64;
  }
  cc_->attach(*this);
  for (auto& n : nodes_)
    if (n->is_switch()) static_cast<Switch&>(*n).set_agent(cc_->make_switch_agent(static_cast<Switch&>(*n)));
}

Network::~Network() = default;

namespace {
// ps per byte when rate divides 8e12 bit-ps exactly (then tx_time is that times the size), else 0.
int64_t exact_ps_per_byte(Rate r) {
  constexpr uint64_t kBitPs = 8'000'000'000'000ULL;
  const auto ib = static_cast<uint64_t>(r.bps);
  if (ib == 0 || static_cast<double>(ib) != r.bps || kBitPs % ib != 0) return 0;
  return static_cast<int64_t>(kBitPs / ib);
}
}  // namespace

Host& Network::host(int id) { return static_cast<Host&>(*nodes_[id]); }
Switch& Network::sw(int id) { return static_cast<Switch&>(*nodes_[id]); }

void Network::build_nodes() {
  const int n = topo_.num_nodes;
  nodes_.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (topo_.is_switch[i])
      nodes_.push_back(std::make_unique<Switch>(*this, i));
    else
      nodes_.push_back(std::make_unique<Host>(*this, i));
    nodes_.back()->set_handler(sim_.add_handler(nodes_.back().get()));
  }
  for (const LinkSpec& l : topo_.links) {
    Node& a = *nodes_[l.a];
    Node& b = *nodes_[l.b];
    const int pa = static_cast<int>(a.ports_.size());
    const int pb = static_cast<int>(b.ports_.size());
    a.ports_.emplace_back();
    b.ports_.emplace_back();
    // One end of the link: `node`'s port `index`, facing `peer`'s port `peer_port`.
    auto wire = [&](Port& x, Node& node, int index, Node& peer, int peer_port) {
      x.node = &node;
      x.index = index;
      x.peer = &peer;
      x.peer_port = peer_port;
      x.peer_handler = peer.handler();
      x.peer_arrive_kind = Node::arrive_kind(peer_port) | (peer.is_switch() ? 0 : Simulator::kArgTwoLines);
      x.rate = l.rate;
      x.delay = l.delay;
      x.error_rate = l.error_rate;
      x.loss_rng = Rng::stream(seed_, "link_loss",
                               (static_cast<uint64_t>(node.id()) << 16) | static_cast<uint64_t>(index));
      x.long_haul = l.long_haul;
      x.ps_per_byte = exact_ps_per_byte(l.rate);
    };
    wire(a.ports_.back(), a, pa, b, pb);
    wire(b.ports_.back(), b, pb, a, pa);
  }
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
  if (nic_.source_ports == NicSettings::SourcePorts::kPerPair) pair_sport_.resize(n);
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
  Rng salt = Rng::stream(sw_.ecmp_seed >= 0 ? static_cast<uint64_t>(sw_.ecmp_seed) : seed_, "ecmp");
  for (int i = 0; i < n; ++i) ecmp_salt_[i] = salt.next_u64();
  if (hpcc_sim_hash_) {
    // The simulator's table lists a switch's next hops in the order its breadth-first search from the
    // destination reaches them, each node's neighbours visited in the order of a std::map keyed by node
    // pointer, i.e. by address. Hosts are heap objects, in node order; each switch object holds a 2 MB
    // array, so glibc maps it on its own, each mapping below the previous one: switches in decreasing id.
    // Only the switches' order matters (the search never goes through a host). The reference cases'
    // per-flow FCTs bear it out for their aggregation switches (docs/coming-from-hpcc-sim.md).
    std::vector<uint32_t> rank(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) rank[i] = static_cast<uint32_t>(topo_.is_switch[i] ? 2 * n - i : i);
    routes_.set_visit_rank(std::move(rank));
  }
  std::vector<Node*> nodes;
  nodes.reserve(nodes_.size());
  for (auto& node : nodes_) nodes.push_back(node.get());
  routes_.build(nodes, topo_, [&](double f) {
    if (progress) progress("routes", f);
  });
}

uint64_t Network::hpcc_sim_flow_hash(const Packet& p, int sw) const {
  return hpcc_sim_ecmp_hash(static_cast<uint32_t>(p.src), static_cast<uint32_t>(p.dst), p.sport, p.dport,
                            static_cast<uint32_t>(sw));
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

uint64_t Network::cached_route(int src, int dst, uint16_t sport, uint16_t dport) const {
  if (!route_cache_) return Packet::kNoRoute;
  uint64_t route = Packet::kNoRoute;
  int hop = 0;
  const bool ok = walk_path(src, dst, sport, dport, [&](int node, const Port& p) {
    if (!topo_.is_switch[node] || hop == 8) return;  // a ninth switch on: routed there
    route &= ~(uint64_t{0xFF} << (8 * hop));
    route |= static_cast<uint64_t>(p.index) << (8 * hop);
    ++hop;
  });
  return ok ? route : Packet::kNoRoute;
}

Time Network::base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const {
  Time rtt;
  const bool ok = walk_path(src, dst, sport, dport, [&](int, const Port& p) {
    rtt += p.delay * 2 + tx_time(nic_.mtu_bytes, p.rate);
  });
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
  // At the receiver when its code runs now (a receiver-side timer), else at the sender.
  Host& receiver = host(qp.dst);
  const bool at_receiver = sim_.running_handler() == receiver.handler();
  const Host& h = at_receiver ? receiver : host(qp.src);
  sim_.at(at, h.handler(), Host::kQpTimer + (kind << 8), (static_cast<uint64_t>(qp.slot) << 32) | qp.tag);
}

void Network::on_qp_timer(Host& at, uint32_t kind, uint64_t arg) {
  const uint32_t slot = static_cast<uint32_t>(arg >> 32);
  if (slot >= qps_.capacity()) return;
  Qp& qp = qps_[slot];
  if (!qp.in_use || qp.tag != static_cast<uint32_t>(arg)) return;
  if (at.id() == qp.src && qp.sender_done) return;
  cc_->on_timer(qp, kind);
}

Packet* Network::make_cnp(const Qp& qp, int from_node) {
  Packet* c = pool().get();
  c->type = PktType::kCnp;
  c->prio = 0;
  c->src = from_node;
  c->dst = qp.src;
  c->sport = qp.dport;
  c->dport = qp.sport;
  c->qp = qp.slot;
  c->qp_tag = qp.tag;
  if (from_node == qp.dst) c->route = qp.rev_route;  // the ACKs' path
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
    if (!partitioned_) partition_fabric();
    route_cache_ = route_cache_allowed_ && !has_link_events();
    for (int i = 0; i < topo_.num_nodes; ++i)
      if (topo_.is_switch[i] && (!sw(i).routes_by_flow_hash() || sw(i).ports_.size() >= 0xFF))
        route_cache_ = false;
    source_done_ = source_ == nullptr;
    if (source_) pull_next_flow();
    if (dependent_) dependent_->begin(*this);
  }
  stop_when_done_ = stop_when_done;
  if (stop_when_done && all_flows_done()) return;
  sim_.run(until, this, progress);
  if (comm_) gather_rank_stats();
}

// --- partitions ------------------------------------------------------------------------------------
// An atom is a switch with the hosts whose first link goes to it; a host without a switch is one alone.
// The lookahead is the smallest delay of a link between two atoms: the grid of window boundaries, the
// same for every thread count. Partitions are runs of consecutive atoms, balanced by ports: in switch id
// order, or pod by pod when the topology names pods (each pod's switches together, the switches above the
// pods dealt out among them), so that most packets stay in their partition.
//
// How many: one per thread and rank at least. A large fabric gets more, about one per kCacheBlockWeight
// (ports + nodes), even on one thread: each window then runs the partitions one after another, and what an
// event leaves for the next events of its partition (a port's queue, a packet, a QP) is still in the cache
// more often, because only that partition's work came in between. On one thread a fat-tree of 3,456 hosts
// took 7 and 31 % less time with its 12 partitions than with 1, one of 8,192 hosts about half less with 29
// (docs/parallel.md, "Partitions for the cache").
void Network::partition_fabric() {
  partitioned_ = true;
  const int n = num_nodes();
  std::vector<int> atom(n, -1);
  for (int i = 0; i < n; ++i)
    if (topo_.is_switch[i]) atom[i] = i;
  for (int i = 0; i < n; ++i) {
    if (topo_.is_switch[i]) continue;
    const auto& ports = nodes_[i]->ports_;
    atom[i] = !ports.empty() && ports[0].peer->is_switch() ? ports[0].peer->id() : i;
  }
  Time lookahead = Time::max();
  for (const LinkSpec& l : topo_.links)
    if (atom[l.a] != atom[l.b]) lookahead = std::min(lookahead, l.delay);
  const bool zero_delay = lookahead <= Time::zero();
  const bool splittable = !zero_delay && lookahead < Time::max();  // two atoms or more
  if (lookahead == Time::max()) lookahead = Time::from_us(1);      // one atom: any grid will do
  if (zero_delay) {
    if (threads_ > 1 || comm_ || partitions_ > 1)
      throw std::invalid_argument(
          "cannot run on several threads, ranks or partitions: a link between two switches has no delay, "
          "which leaves the partitions no lookahead (give it a delay, or run with threads = 1 and one "
          "partition in one process)");
    lookahead = Time::from_us(1);
  }
  // Atoms in id order (or pod by pod), weighed by their ports (a proxy for their events).
  std::vector<int> atoms;
  std::vector<int64_t> weight(n, 0);
  for (int i = 0; i < n; ++i) {
    weight[atom[i]] += static_cast<int64_t>(nodes_[i]->ports_.size()) + 1;
    if (atom[i] == i) atoms.push_back(i);
  }
  if (!topo_.pod.empty()) {
    int pods = 0, above = 0;
    for (int a : atoms) {
      pods = std::max(pods, topo_.pod[a] + 1);
      above += topo_.pod[a] < 0;
    }
    // A pod's place is its number; the k-th switch above the pods goes in the middle of pod k x pods / above.
    std::vector<int64_t> place(n, 0);
    int64_t k = 0;
    for (int a : atoms)
      place[a] = topo_.pod[a] >= 0 ? int64_t{2} * above * topo_.pod[a] + above : (2 * k++ + 1) * pods;
    std::stable_sort(atoms.begin(), atoms.end(), [&](int x, int y) { return place[x] < place[y]; });
  }
  int64_t total = 0;
  for (int a : atoms) total += weight[a];
  bool homeless = false;  // a handler without a home node can only run in a single partition
  for (uint32_t h = 1; h < sim_.num_handlers(); ++h)
    homeless = homeless || (sim_.home_of(h) == 0 && !is_node_handler(h));
  const size_t ranks = comm_ ? static_cast<size_t>(comm_->size()) : 1;
  const size_t minimum = static_cast<size_t>(threads_) * ranks;
  size_t wanted = static_cast<size_t>(partitions_);
  if (wanted == 0) {
    wanted = minimum;
    if (!homeless && splittable) {
      const auto blocks = static_cast<size_t>((total + kCacheBlockWeight / 2) / kCacheBlockWeight);
      wanted = std::max(minimum, (blocks + minimum - 1) / minimum * minimum);  // a multiple: balanced threads
    }
  } else if (wanted < minimum) {
    throw std::invalid_argument(fmt::format(
        "{} is fewer than the threads x ranks ({} x {}): give at least {}, or 0 to let rocesim choose",
        wanted, threads_, ranks, minimum));
  }
  const uint32_t parts = static_cast<uint32_t>(std::max<size_t>(1, std::min(wanted, atoms.size())));
  std::vector<uint32_t> part_of_atom(n, 0);
  int64_t acc = 0;
  for (int a : atoms) {
    part_of_atom[a] =
        static_cast<uint32_t>(std::min<int64_t>(parts - 1, acc * parts / std::max<int64_t>(1, total)));
    acc += weight[a];
  }
  part_of_node_.assign(n, 0);
  std::vector<uint32_t> part_of_handler(sim_.num_handlers(), 0);
  for (int i = 0; i < n; ++i) {
    part_of_node_[i] = part_of_atom[atom[i]];
    part_of_handler[nodes_[i]->handler()] = part_of_node_[i];
  }
  if (parts > 1 && homeless)
    throw std::logic_error("a handler without a home node in a run over several partitions");
  // Exactly `parts` of them: a second cut into fewer must not leave partitions the simulator no longer has
  // (the loops over parts_ ask it which are local).
  while (parts_.size() < parts) parts_.push_back(std::make_unique<NetPartition>());
  parts_.resize(parts);
  sim_.partition(part_of_handler, parts, lookahead, threads_);
  for (uint32_t i = 0; i < parts; ++i) sim_.set_partition_user(i, parts_[i].get());
}

bool Network::is_node_handler(uint32_t h) const {
  const EventHandler* e = sim_.handler(h);
  return e != nullptr && dynamic_cast<const Node*>(e) != nullptr;
}

void Network::set_partitions(int partitions) { set_parallel(threads_, partitions); }

void Network::set_threads(int threads) { set_parallel(threads, partitions_); }

void Network::set_parallel(int threads, int partitions) {
  if (started_) throw std::logic_error("Network::set_threads or set_partitions after the run started");
  if (partitions < 0) throw std::invalid_argument("a negative number of partitions");
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = threads;
  partitions_ = partitions;
  partition_fabric();
}

NetStats Network::stats() const {
  NetStats s = other_ranks_stats_;
  for (uint32_t i = 0; i < parts_.size(); ++i)
    if (sim_.is_local(i)) merge_stats(s, parts_[i]->counters);
  return s;
}

int64_t Network::packets_live() const {
  int64_t n = 0;
  for (const auto& p : parts_) n += p->pool.live();
  return n;
}

void merge_stats(NetStats& into, const NetStats& o) {
  into.data_drops += o.data_drops;
  into.ctrl_drops += o.ctrl_drops;
  into.wire_drops += o.wire_drops;
  into.unroutable += o.unroutable;
  into.stale_packets += o.stale_packets;
  into.packet_hops += o.packet_hops;
  into.data_packets_sent += o.data_packets_sent;
  into.retransmitted_packets += o.retransmitted_packets;
  into.nacks_sent += o.nacks_sent;
  into.timeouts += o.timeouts;
  into.cnps_sent += o.cnps_sent;
  into.ue_cnps_sent += o.ue_cnps_sent;
  into.cnps_from_switches += o.cnps_from_switches;
  into.acks_sent += o.acks_sent;
  into.flows_started += o.flows_started;
  into.flows_finished += o.flows_finished;
  into.bytes_delivered += o.bytes_delivered;
  into.max_ingress_bytes = std::max(into.max_ingress_bytes, o.max_ingress_bytes);
  into.max_switch_buffer_bytes = std::max(into.max_switch_buffer_bytes, o.max_switch_buffer_bytes);
  into.out_of_order_packets += o.out_of_order_packets;
  into.switch_messages += o.switch_messages;
  into.link_down_drops += o.link_down_drops;
  into.route_updates += o.route_updates;
  into.retransmitted_bytes += o.retransmitted_bytes;
  into.sacks_sent += o.sacks_sent;
  into.spurious_retransmissions += o.spurious_retransmissions;
  into.timeout_retransmissions += o.timeout_retransmissions;
}

// --- observers ---------------------------------------------------------------------------------------
// A call made during the running event: logged with its time and key, replayed between windows.
void Network::log_call(NetPartition::Call c) {
  c.t = now();
  c.key = sim_.current_key();
  part().calls.push_back(std::move(c));
}

void Network::notify_pfc(const Node& n, int port, int prio, bool pause) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kPfc;
  c.node = n.id();
  c.port = port;
  c.prio = prio;
  c.flag = pause;
  log_call(std::move(c));
}

void Network::notify_delivered(const Qp& qp, Bytes payload) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kDelivered;
  c.slot = qp.slot;
  c.payload = payload;
  log_call(std::move(c));
}

void Network::notify_cnp(const Qp& qp, bool from_switch) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kCnp;
  c.slot = qp.slot;
  c.flag = from_switch;
  log_call(std::move(c));
}

// The calls of every partition in the order of their events (one event's calls are in one partition).
void Network::replay_calls() {
  replay_.clear();
  for (auto& p : parts_) {
    replay_.insert(replay_.end(), p->calls.begin(), p->calls.end());
    p->calls.clear();
  }
  replay_.insert(replay_.end(), ranks_calls_.begin(), ranks_calls_.end());
  ranks_calls_.clear();
  if (replay_.empty()) return;
  if (parts_.size() > 1)
    std::stable_sort(replay_.begin(), replay_.end(),
                     [](const NetPartition::Call& a, const NetPartition::Call& b) { return a.key < b.key; });
  const Time barrier = sim_.now();
  for (const NetPartition::Call& c : replay_) {
    sim_.set_barrier_clock(c.t);
    switch (c.type) {
      case NetPartition::Call::kPfc:
        if (obs_.on_pfc_rx) obs_.on_pfc_rx(*nodes_[c.node], c.port, c.prio, c.flag, c.t);
        break;
      case NetPartition::Call::kDelivered:
        if (obs_.on_data_delivered) obs_.on_data_delivered(qps_[c.slot], c.payload);
        break;
      case NetPartition::Call::kCnp:
        if (obs_.on_cnp_received) obs_.on_cnp_received(qps_[c.slot], c.flag);
        break;
      case NetPartition::Call::kFinished:
        if (keep_finished_) finished_.push_back(c.record);
        if (obs_.on_flow_finished) obs_.on_flow_finished(c.record);
        break;
    }
  }
  sim_.set_barrier_clock(barrier);
}

// --- flows -------------------------------------------------------------------------------------------
void Network::pull_next_flow() {
  FlowSpec f;
  if (source_ && source_->next(f)) {
    f.id = next_flow_id_++;
    next_flow_ = f;
    have_next_ = true;
  } else {
    have_next_ = false;
    source_done_ = true;
  }
}

namespace {
bool released_later(const FlowSpec& a, const FlowSpec& b) {
  return a.start != b.start ? a.start > b.start : a.id > b.id;
}
constexpr uint64_t kFlowStartSeq = uint64_t{1} << 38;
}  // namespace

bool Network::pending_work() const {
  if (!ranks_done_.empty()) return true;
  for (const auto& p : parts_)
    if (!p->done.empty()) return true;  // finished flows wait for the next grid boundary
  return false;
}

Time Network::next_input(Time now) {
  Time t = Time::max();
  if (have_next_) t = std::min(t, std::max(now, next_flow_.start));
  if (!released_.empty()) t = std::min(t, released_.front().start);
  return t;
}

// Flows starting before `end` get their QP now and an event at their start, at their source host, with
// the key (start, 0, flow id): the same whatever the windows.
void Network::before_window(Time now, Time end) {
  (void)now;
  const size_t capacity = qps_.capacity();
  for (;;) {
    const bool source = have_next_ && next_flow_.start < end;
    const bool released = !released_.empty() && released_.front().start < end;
    if (!source && !released) break;
    if (source && (!released || next_flow_.id < released_.front().id)) {
      post_flow_start(next_flow_);
      pull_next_flow();
    } else {
      std::pop_heap(released_.begin(), released_.end(), released_later);
      const FlowSpec f = released_.back();
      released_.pop_back();
      post_flow_start(f);
    }
  }
  if (qps_.capacity() != capacity) {
    std::lock_guard<std::mutex> lock(qp_state_mutex_);
    for (auto& grow : qp_state_) grow(qps_.capacity());
  }
}

void Network::post_flow_start(const FlowSpec& f) {
  const uint32_t slot = qps_.acquire();
  Qp& qp = qps_[slot];
  qp.in_use = true;
  qp.slot = slot;
  qp.flow_id = f.id;
  qp.tag = static_cast<uint32_t>(f.id);
  qp.src = f.src;
  qp.dst = f.dst;
  qp.dport = f.dport;
  qp.fwd_route = qp.rev_route = Packet::kNoRoute;  // set at its start (on the source's rank)
  qp.prio = static_cast<uint8_t>(f.priority);
  qp.class_id = f.class_id;
  qp.size = f.size_bytes;
  cc_->on_flow_allocated(qp);
  if (selective()) {
    if (sack_bits_.size() < qps_.capacity() * 2 * sack_words_)
      sack_bits_.resize(qps_.capacity() * 2 * sack_words_);  // between windows: no partition runs
    std::fill_n(rx_sack_bits(slot), 2 * sack_words_, uint64_t{0});
  }
  const Time at = std::max(f.start, sim_.now());
  sim_.at_keyed(at, 0, kFlowStartSeq + f.id, host(f.src).handler(), Host::kFlowStart, slot);
}

void Network::register_qp_state(std::function<void(size_t)> grow) const {
  std::lock_guard<std::mutex> lock(qp_state_mutex_);
  grow(qps_.capacity());
  qp_state_.push_back(std::move(grow));
}

void Network::start_flow_event(uint32_t slot) {
  Qp& qp = qps_[slot];
  const int src = qp.src;
  qp.started = true;
  if (nic_.source_ports == NicSettings::SourcePorts::kPerPair) {
    // One counter per destination of this host (touched by the source's partition only).
    const auto it = pair_sport_[src].try_emplace(qp.dst, uint16_t{10000}).first;
    qp.sport = it->second++;
    if (it->second == 0) it->second = 10000;
  } else {
    qp.sport = next_sport_[src]++;
    if (next_sport_[src] == 0) next_sport_[src] = 10000;
  }
  qp.start = sim_.now();
  qp.last_progress = sim_.now();
  Port& nic = nodes_[src]->ports_[0];
  qp.line_rate = nic.rate;
  qp.base_rtt = base_rtt(src, qp.dst, qp.sport, qp.dport);
  qp.ideal_fct = ideal_fct(qp.size, src, qp.dst, qp.sport, qp.dport);
  qp.fwd_route = cached_route(src, qp.dst, qp.sport, qp.dport);
  qp.rev_route = cached_route(qp.dst, src, qp.dport, qp.sport);
  qp.rate = nic.rate;
  qp.next_avail = sim_.now();
  qp.reo_mult = static_cast<uint8_t>(nic_.reorder_window_srtts);
  ++counters().flows_started;
  if (comm_) part().started.push_back({slot, qp.sport, qp.start, qp.base_rtt, qp.ideal_fct, qp.line_rate});
  cc_->on_flow_start(qp);
  host(src).activate(slot);
}

Qp* Network::find_flow(uint64_t flow_id) {
  for (uint32_t i = 0; i < qps_.capacity(); ++i)
    if (qps_[i].in_use && qps_[i].started && !qps_[i].sender_done && qps_[i].flow_id == flow_id)
      return &qps_[i];
  return nullptr;
}

// The sender has every byte acknowledged. What only the sender's host touches happens now; the record,
// the observers, the QP's slot and the flows that wait for this one are the coordinator's, between windows.
void Network::on_flow_complete(Qp& qp) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kFinished;
  FlowRecord& r = c.record;
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
  r.retransmitted_packets = qp.retransmitted_packets;
  r.retransmitted_bytes = qp.retransmitted_bytes;
  // Written by the receiver's partition in an earlier window: the last ACK came after its last arrival
  // ahead of rcv_nxt, and took at least a lookahead to get here when the two partitions differ.
  r.out_of_order_packets = qp.rx_out_of_order;
  r.spurious_retransmissions = qp.rx_spurious;
  c.t = r.finish;
  c.key = sim_.current_key();
  NetPartition& p = part();
  p.calls.push_back(c);
  p.done.push_back({c.key, qp.slot, qp.flow_id, r.finish});
  ++p.counters.flows_finished;
  cc_->on_flow_end(qp);
  host(qp.src).deactivate(qp.slot);
  qp.sender_done = true;
}

void Network::after_window(Time end, bool grid) {
  (void)end;
  if (comm_) share_between_ranks();
  replay_calls();
  if (grid) finish_flows();
}

// Between windows: a flow allocated and not finished (the finished ones wait in the done lists for the
// next grid boundary) has a timer that may be all that can move it on.
bool Network::awaits_timers() const {
  size_t finished = ranks_done_.size() + finishing_.size();
  for (const auto& p : parts_) finished += p->done.size();
  return qps_.live() > finished;
}

// At a grid boundary: free the slots of the flows finished since the last one, tell the dependent flows
// (in the order the flows finished), and stop when everything is done.
void Network::finish_flows() {
  for (auto& p : parts_) {
    finishing_.insert(finishing_.end(), p->done.begin(), p->done.end());
    p->done.clear();
  }
  finishing_.insert(finishing_.end(), ranks_done_.begin(), ranks_done_.end());
  ranks_done_.clear();
  if (finishing_.empty()) return;
  std::sort(finishing_.begin(), finishing_.end(),
            [](const NetPartition::Done& a, const NetPartition::Done& b) { return a.key < b.key; });
  for (const NetPartition::Done& d : finishing_) {
    qps_[d.slot].in_use = false;
    qps_.release(d.slot);
  }
  if (dependent_) {
    const Time barrier = sim_.now();
    for (const NetPartition::Done& d : finishing_) {
      sim_.set_barrier_clock(d.finish);
      release_delay_ = sim_.lookahead();
      dependent_->on_flow_finished(d.flow_id, d.finish, *this);
      release_delay_ = Time::zero();
    }
    sim_.set_barrier_clock(barrier);
  }
  finishing_.clear();
  if (stop_when_done_ && all_flows_done()) sim_.stop();
}

// A released flow starts at the earliest one lookahead after the flow it waited for finished (the clock
// reads that finish time here): the earliest time any partition can hear of it, whatever the partitions.
uint64_t Network::release(const FlowSpec& f) {
  FlowSpec g = f;
  g.id = next_flow_id_++;
  const Time earliest = sim_.now() + release_delay_;
  if (g.start < earliest) g.start = earliest;
  released_.push_back(g);
  std::push_heap(released_.begin(), released_.end(), released_later);
  return g.id;
}

}  // namespace rocesim
