// The fabric a Network simulates: its topology, its nodes (hosts and switches built from the TopoSpec, their
// ports wired link by link), the routing tables, and the paths packets take through them: the ECMP flow
// hash, the routes cached in packets, and the base RTT and ideal FCT along a flow's path. Built once by the
// Network; link events change its ports and rebuild its routes (net/link_events.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/node.h"
#include "net/packet.h"
#include "net/routes.h"
#include "net/settings.h"
#include "topo/topology.h"

namespace rocesim {

class Network;

class Fabric {
 public:
  // Reports set-up progress: a stage ("routes") and the fraction of it done (called every few hundred
  // destinations; building routes takes tens of seconds on networks of tens of thousands of nodes).
  using SetupProgress = std::function<void(const char* stage, double fraction)>;

  // `nic` (the network's, which outlives this) gives the packet sizes base_rtt and ideal_fct count.
  Fabric(const TopoSpec& topo, const NicSettings& nic) : topo_(topo), nic_(nic) {}
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Memory the routing tables of `topo` take once built, peak while building included (owned by the
  // routing code: update it with the tables).
  static int64_t estimate_route_table_bytes(const TopoSpec& topo);
  // Memory a network of `topo` takes before its first event: routing tables, nodes, ports and their
  // per-priority state (input queues of every (ingress, priority, egress) under VOQ).
  static int64_t estimate_memory_bytes(const TopoSpec& topo, const SwitchSettings& sw);

  // Builds the nodes of `net` (each an event handler of `sim`, in node order) and wires their ports; sets
  // sw.host_rate to the fastest host link's rate (when there is one) and configures the switches with `sw`;
  // builds the routes (ECMP salts from `seed` unless sw.ecmp_seed is set) and the longest base RTT.
  void build(Network& net, Simulator& sim, SwitchSettings& sw, uint64_t seed, const SetupProgress& progress);
  // Gives every switch its agent of the scheme (CongestionControl::make_switch_agent).
  void attach_agents(CongestionControl& cc);

  const TopoSpec& topo() const { return topo_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Node& node(int id) { return *nodes_[id]; }
  const Node& node(int id) const { return *nodes_[id]; }
  bool is_switch(int id) const { return topo_.is_switch[id]; }

  // --- routing ---
  // Equal-cost egress ports of switch `sw` towards node `dst` (empty: unreachable).
  std::pair<const uint16_t*, int> routes(int sw, int dst) const { return routes_.lookup(sw, dst); }
  const RouteTable& route_table() const { return routes_; }
  // Recomputes every route over the working links (after a link failed or came back).
  void rebuild_routes();
  // Inline: every switch hop with a choice of ports computes one.
  uint64_t flow_hash(const Packet& p, int sw) const {
    if (hpcc_sim_hash_) return hpcc_sim_flow_hash(p, sw);
    uint64_t x = ecmp_salt_[sw] ^
                 (static_cast<uint64_t>(static_cast<uint32_t>(p.src)) << 32 | static_cast<uint32_t>(p.dst));
    const uint64_t h = splitmix64(x);
    x = h ^ (static_cast<uint64_t>(p.sport) << 16 | p.dport);
    return splitmix64(x);
  }
  // As the run starts: whether cached_route gives paths (allowed by set_route_cache, no link events, every
  // switch routing by the flow hash alone on fewer than 255 ports).
  void settle_route_cache(bool link_events);
  // The switches' egress ports of the path of packets from `src` to `dst` with these ports, as Packet::route
  // holds them, when every switch routes by the flow hash alone (ECMP, no scheme choosing ports, no link
  // events: the path is the same for every packet of a flow), else Packet::kNoRoute.
  uint64_t cached_route(int src, int dst, uint16_t sport, uint16_t dport, int first_port = -1) const;
  // Tests: off, every switch routes every packet (the results are the same bytes).
  void set_route_cache(bool allowed) { route_cache_allowed_ = allowed; }

  // --- a host's ports (NicSettings::port_spread; docs/models.md A14) ---
  // The ports of host `h` by which `dst` is the fewest hops away, a bit per port (ports 0-7; a host with
  // one port: 1). A port facing `dst` itself is 0 hops away, one facing a switch as many as its routes
  // take; a port whose switch does not reach `dst` (a server's NVSwitch for another server) is left out.
  // Of equally near ports, only the fastest count (a GPU's NVLink, not its PCIe link to a NIC that it
  // shares with the destination GPU).
  uint8_t host_ports_towards(int h, int dst) const;
  // The one of them a flow with these ports leaves `h` by under per-flow hashing: its 5-tuple's hash.
  int host_port(int h, int dst, uint16_t sport, uint16_t dport) const;

  // --- paths ---
  // The hop-by-hop path a flow's packets take (ECMP-resolved), as (node, egress port) pairs.
  std::vector<std::pair<int, int>> path_of(int src, int dst, uint16_t sport, uint16_t dport) const;
  Time base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const;
  // The longest base RTT between any two hosts (HPCC's T).
  Time max_base_rtt() const { return max_base_rtt_; }
  // `ports`: the number of the source's ports the flow sprays over (each path's rates count that many
  // times: parallel paths alike, as a multi-plane fabric's are).
  Time ideal_fct(Bytes size, int src, int dst, uint16_t sport, uint16_t dport, int ports = 1) const;

 private:
  void build_nodes(Network& net, Simulator& sim, uint64_t seed);
  void configure_switches(SwitchSettings& sw);
  void build_routes(const SwitchSettings& sw, uint64_t seed, const SetupProgress& progress);
  void compute_max_base_rtt();
  uint64_t hpcc_sim_flow_hash(const Packet& p, int sw) const;  // flow_hash under EcmpHash::kHpccSim
  // Follows the ECMP path of a 5-tuple from `src`, calling hop(node, egress port) at each node; false
  // (after some hops, maybe) when `dst` cannot be reached.
  // The source host leaves by `first_port`, or (-1) by host_port().
  template <typename Hop>
  bool walk_path(int src, int dst, uint16_t sport, uint16_t dport, Hop&& hop, int first_port = -1) const;
  // Hops from switch `sw` to `dst` along its routes (their first ports), or -1 when it does not reach it.
  int hops_to(int sw, int dst) const;

  TopoSpec topo_;
  const NicSettings& nic_;
  std::vector<std::unique_ptr<Node>> nodes_;
  RouteTable routes_;
  std::vector<uint64_t> ecmp_salt_;  // per switch: mixed into its flow hash
  bool hpcc_sim_hash_ = false;       // SwitchSettings::ecmp_hash == kHpccSim (net/ecmp_hash.h)
  bool route_cache_allowed_ = true;
  bool route_cache_ = false;  // cached_route gives paths: set as the run starts
  Time max_base_rtt_;
};

}  // namespace rocesim
