#include "net/fabric.h"

#include <algorithm>
#include <bit>

#include "net/ecmp_hash.h"
#include "net/host.h"
#include "net/ideal_fct.h"
#include "net/switch.h"

namespace rocesim {

namespace {
// ps per byte when rate divides 8e12 bit-ps exactly (then tx_time is that times the size), else 0.
int64_t exact_ps_per_byte(Rate r) {
  constexpr uint64_t kBitPs = 8'000'000'000'000ULL;
  const auto ib = static_cast<uint64_t>(r.bps);
  if (ib == 0 || static_cast<double>(ib) != r.bps || kBitPs % ib != 0) return 0;
  return static_cast<int64_t>(kBitPs / ib);
}
}  // namespace

void Fabric::build(Network& net, Simulator& sim, SwitchSettings& sw, uint64_t seed,
                   const SetupProgress& progress) {
  hpcc_sim_hash_ = sw.ecmp_hash == EcmpHash::kHpccSim;
  build_nodes(net, sim, seed);
  configure_switches(sw);
  build_routes(sw, seed, progress);
  compute_max_base_rtt();
}

void Fabric::build_nodes(Network& net, Simulator& sim, uint64_t seed) {
  const int n = topo_.num_nodes;
  nodes_.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (topo_.is_switch[i])
      nodes_.push_back(std::make_unique<Switch>(net, i));
    else
      nodes_.push_back(std::make_unique<Host>(net, i));
    nodes_.back()->set_handler(sim.add_handler(nodes_.back().get()));
  }
  // Each node's ports in one block of their exact size (a vector grown port by port would hold up to
  // twice that, at a kilobyte a port).
  std::vector<int> degree(static_cast<size_t>(n), 0);
  for (const LinkSpec& l : topo_.links) {
    ++degree[l.a];
    ++degree[l.b];
  }
  for (int i = 0; i < n; ++i) nodes_[i]->ports().reserve(static_cast<size_t>(degree[i]));
  for (const LinkSpec& l : topo_.links) {
    Node& a = *nodes_[l.a];
    Node& b = *nodes_[l.b];
    const int pa = static_cast<int>(a.ports().size());
    const int pb = static_cast<int>(b.ports().size());
    a.ports().emplace_back();
    b.ports().emplace_back();
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
      x.loss_rng = Rng::stream(seed, "link_loss",
                               (static_cast<uint64_t>(node.id()) << 16) | static_cast<uint64_t>(index));
      x.long_haul = l.long_haul;
      x.ps_per_byte = exact_ps_per_byte(l.rate);
    };
    wire(a.ports().back(), a, pa, b, pb);
    wire(b.ports().back(), b, pb, a, pa);
  }
  for (auto& node : nodes_) node->size_credits();
}

// Host speed for per-speed switch settings: the fastest host link.
void Fabric::configure_switches(SwitchSettings& sw) {
  Rate fastest{0};
  for (auto& node : nodes_)
    if (!node->is_switch() && !node->ports().empty()) fastest = std::max(fastest, node->ports()[0].rate);
  if (fastest.bps > 0) sw.host_rate = fastest;
  for (auto& node : nodes_)
    if (node->is_switch()) static_cast<Switch&>(*node).configure(sw, sw.host_rate);
}

void Fabric::attach_agents(CongestionControl& cc) {
  for (auto& n : nodes_)
    if (n->is_switch()) static_cast<Switch&>(*n).set_agent(cc.make_switch_agent(static_cast<Switch&>(*n)));
}

// The route tables' size before they are built (net/routes.h).
int64_t Fabric::estimate_route_table_bytes(const TopoSpec& topo) {
  return static_cast<int64_t>(RouteTable::estimate_bytes(topo)) +
         int64_t{topo.num_nodes} * (8 + 4);  // ecmp_salt_, the search's distances
}

int64_t Fabric::estimate_memory_bytes(const TopoSpec& topo, const SwitchSettings& sw) {
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
    if (sw.credit_enabled) b += p * static_cast<int64_t>(sizeof(PortCredit));
    if (!topo.is_switch[i]) continue;
    // Per port: ingress counters and thresholds (SwitchMmu), RED thresholds (EgressScheduler), a flag.
    b += p * static_cast<int64_t>(sizeof(IngressPort) + sizeof(EgressEcn) + 1);
    // Flowlet routing: each switch's table (PathSelector::configure).
    if (sw.routing == Routing::kFlowlet || (sw.routing == Routing::kAdaptive && sw.adaptive_per_flowlet))
      b += 16 * static_cast<int64_t>(sw.flowlet_table_size);
    if (sw.model == SwitchModel::kInputOutputQueued)
      b += p * kNumPriorities * (sw.input_queueing == InputQueueing::kVoq ? p : 1) *
           static_cast<int64_t>(sizeof(PacketQueue));
  }
  return b;
}

// Shortest-path routes from every switch to every node (net/routes.h); all equal-cost next hops are kept
// for ECMP. Hosts never forward, so paths only cross switches.
void Fabric::build_routes(const SwitchSettings& sw, uint64_t seed, const SetupProgress& progress) {
  const int n = num_nodes();
  ecmp_salt_.resize(n);
  Rng salt = Rng::stream(sw.ecmp_seed >= 0 ? static_cast<uint64_t>(sw.ecmp_seed) : seed, "ecmp");
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

void Fabric::rebuild_routes() {
  std::vector<Node*> nodes;
  nodes.reserve(nodes_.size());
  for (auto& node : nodes_) nodes.push_back(node.get());
  routes_.build(nodes, topo_);
}

uint64_t Fabric::hpcc_sim_flow_hash(const Packet& p, int sw) const {
  return hpcc_sim_ecmp_hash(static_cast<uint32_t>(p.src), static_cast<uint32_t>(p.dst), p.sport, p.dport,
                            static_cast<uint32_t>(sw));
}

int Fabric::hops_to(int sw, int dst) const {
  int at = sw;
  for (int hops = 1; hops <= num_nodes(); ++hops) {
    auto [ports, cnt] = routes(at, dst);
    if (cnt == 0) return -1;
    at = nodes_[at]->ports()[ports[0]].peer->id();
    if (at == dst) return hops;
    if (!topo_.is_switch[at]) return -1;
  }
  return -1;
}

uint8_t Fabric::host_ports_towards(int h, int dst) const {
  const std::vector<Port>& ports = nodes_[h]->ports();
  if (ports.size() <= 1) return 1;
  uint8_t best_mask = 0;
  int best = -1;
  double best_bps = 0;
  const int n = std::min<int>(static_cast<int>(ports.size()), 8);
  for (int i = 0; i < n; ++i) {
    const int peer = ports[i].peer->id();
    const int hops = peer == dst ? 0 : topo_.is_switch[peer] ? hops_to(peer, dst) : -1;
    if (hops < 0 || ports[i].down) continue;
    const double bps = ports[i].rate.bps;
    if (best < 0 || hops < best || (hops == best && bps > best_bps)) {
      best = hops;
      best_bps = bps;
      best_mask = 0;
    }
    if (hops == best && bps == best_bps) best_mask |= static_cast<uint8_t>(1u << i);
  }
  return best_mask ? best_mask : 1;
}

int Fabric::host_port(int h, int dst, uint16_t sport, uint16_t dport) const {
  if (nodes_[h]->ports().size() <= 1) return 0;
  const uint8_t mask = host_ports_towards(h, dst);
  const int n = std::popcount(mask);
  if (n == 1) return std::countr_zero(mask);
  Packet probe;
  probe.src = h;
  probe.dst = dst;
  probe.sport = sport;
  probe.dport = dport;
  int pick = static_cast<int>(flow_hash(probe, h) % static_cast<uint64_t>(n));
  uint8_t m = mask;
  while (pick-- > 0) m &= static_cast<uint8_t>(m - 1);
  return std::countr_zero(m);
}

template <typename Hop>
bool Fabric::walk_path(int src, int dst, uint16_t sport, uint16_t dport, Hop&& hop, int first_port) const {
  Packet probe;
  probe.src = src;
  probe.dst = dst;
  probe.sport = sport;
  probe.dport = dport;
  int at = src;
  int port = 0;
  for (int guard = 0; guard < num_nodes(); ++guard) {
    if (nodes_[at]->ports().empty()) return false;
    if (!topo_.is_switch[at]) {
      if (at != src) return false;
      port = first_port >= 0 ? first_port : host_port(src, dst, sport, dport);
    } else {
      auto [ports, cnt] = routes(at, dst);
      if (cnt == 0) return false;
      port = cnt == 1 ? ports[0] : ports[flow_hash(probe, at) % static_cast<uint64_t>(cnt)];
    }
    const Port& p = nodes_[at]->ports()[port];
    hop(at, p);
    at = p.peer->id();
    if (at == dst) return true;
  }
  return false;
}

std::vector<std::pair<int, int>> Fabric::path_of(int src, int dst, uint16_t sport, uint16_t dport) const {
  std::vector<std::pair<int, int>> hops;
  if (!walk_path(src, dst, sport, dport, [&](int node, const Port& p) { hops.emplace_back(node, p.index); }))
    return {};
  return hops;
}

void Fabric::settle_route_cache(bool link_events) {
  route_cache_ = route_cache_allowed_ && !link_events;
  for (int i = 0; i < topo_.num_nodes; ++i) {
    if (!topo_.is_switch[i]) continue;
    const Switch& s = static_cast<const Switch&>(*nodes_[i]);
    if (!s.routes_by_flow_hash() || nodes_[i]->ports().size() >= 0xFF) route_cache_ = false;
  }
}

uint64_t Fabric::cached_route(int src, int dst, uint16_t sport, uint16_t dport, int first_port) const {
  if (!route_cache_) return Packet::kNoRoute;
  uint64_t route = Packet::kNoRoute;
  int hop = 0;
  const bool ok = walk_path(
      src, dst, sport, dport,
      [&](int node, const Port& p) {
        if (!topo_.is_switch[node] || hop == 8) return;  // a ninth switch on: routed there
        route &= ~(uint64_t{0xFF} << (8 * hop));
        route |= static_cast<uint64_t>(p.index) << (8 * hop);
        ++hop;
      },
      first_port);
  return ok ? route : Packet::kNoRoute;
}

Time Fabric::base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const {
  Time rtt;
  const bool ok = walk_path(src, dst, sport, dport, [&](int, const Port& p) {
    rtt += p.delay * 2 + tx_time(nic_.mtu_bytes, p.rate);
  });
  return ok ? rtt : Time::zero();
}

void Fabric::compute_max_base_rtt() {
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

Time Fabric::ideal_fct(Bytes size, int src, int dst, uint16_t sport, uint16_t dport, int ports) const {
  PathInfo info;
  // A NIC shared by GPUs (NodeKind::kNic) spreads a flow as a host's ports do: sprayed, over its ports
  // towards `dst` (parallel planes from there on; one at the receiving NIC), else by one.
  const bool nic_spray = nic_.port_spread == NicSettings::PortSpread::kSpray;
  int width = ports;
  const bool ok = walk_path(src, dst, sport, dport, [&](int node, const Port& p) {
    if (topo_.kind_of(node) == NodeKind::kNic) width = nic_spray ? routes(node, dst).second : 1;
    info.hop_rates.push_back(Rate{p.rate.bps * width});
    info.hop_delays.push_back(p.delay);
  });
  if (!ok || info.hop_rates.empty()) return Time::zero();
  // The simulator's integer ns, so fct.txt matches it to the ns; it counts 48 B of headers per packet
  // (kHpccHeaderBytes) whatever its packets carry on the wire.
  if (nic_.ideal_fct_hpcc_ns)
    return Time::from_ps(1000 * ideal_fct_ns_hpcc(size, info, nic_.mtu_bytes, kHpccHeaderBytes));
  return rocesim::ideal_fct(size, info, nic_.mtu_bytes, nic_.header_bytes);
}

}  // namespace rocesim
