// Topology builders for the shapes the seed papers' experiments use (docs/scenarios.md) and for the
// ns-3 HPCC simulator's standard 320-host fat-tree (docs/hpcc-sim-compat.md).
//
// Conventions shared by every builder:
//  - Hosts get the lowest node ids, switches follow (as in the ns-3 fat.txt).
//  - Generic builders name the i-th host (in id order) "h<i>" and the j-th switch "s<j>"; with hosts
//    first, "h<i>" is node i. read_hpcc_topology() names nodes the same way, so a builder's output
//    survives write_hpcc_topology() -> read_hpcc_topology() with its names intact.
//  - host_group is the index of the host's edge switch (ToR / leaf / switch A or B, numbered from 0),
//    -1 for switches. mercury_victim() groups by attached switch (S1 = 0 ... S4 = 3).
//  - Links are listed host links first, then the fabric from the bottom layer up.
//  - Bad parameters (non-positive counts or rates, negative delays, odd k, more than 10 million nodes or
//    links) throw std::invalid_argument: they are programming errors, not user-file errors.
//
// Params are aggregates, so C++20 designated initializers work: dumbbell({.senders = 4}).
#pragma once
#include <string_view>

#include "core/time.h"
#include "topo/topology.h"

namespace rocesim {

// Two switches A and B joined by one bottleneck link; senders on A, receivers on B.
// Defaults: 100 Gb/s and 1 us links, the host-link parameters of the hpcc-sim fat.txt
// (docs/hpcc-sim-compat.md). The ICC topology (scenarios.md "ICC") is
// {.senders = 63, .receivers = 3, .host_delay = 5us, .bottleneck_delay = 5us} at 100 Gb/s.
// Ids: senders 0..senders-1, receivers next, then A ("s0"), B ("s1"). host_group: 0 senders, 1 receivers.
struct DumbbellParams {
  int senders = 2;
  int receivers = 2;
  Rate host_rate = Rate::from_gbps(100);
  Rate bottleneck_rate = Rate::from_gbps(100);
  Time host_delay = Time::from_us(1);
  Time bottleneck_delay = Time::from_us(1);
};
TopoSpec dumbbell(const DumbbellParams& p = {});

// `hosts` hosts on one switch (an N:1 incast star when N-1 of them send to the last).
// Defaults: one ToR of the hpcc-sim fat.txt: 16 hosts, 100 Gb/s, 1 us (docs/hpcc-sim-compat.md).
// Ids: hosts 0..hosts-1, the switch "s0" last. host_group: 0.
struct StarParams {
  int hosts = 16;
  Rate rate = Rate::from_gbps(100);
  Time delay = Time::from_us(1);
};
TopoSpec star(const StarParams& p = {});

// Two-layer Clos: every leaf links every spine once.
// Defaults: the fan-out and rates of one hpcc-sim fat.txt pod (16 x 100 Gb/s hosts per leaf,
// 4 x 400 Gb/s uplinks, 1 us links: no oversubscription; docs/hpcc-sim-compat.md).
// Ids: hosts (leaf-major), then leaves "s0".."s<leaves-1>", then spines. host_group: leaf index.
struct LeafSpineParams {
  int leaves = 4;
  int spines = 4;
  int hosts_per_leaf = 16;
  Rate host_rate = Rate::from_gbps(100);
  Rate fabric_rate = Rate::from_gbps(400);
  Time delay = Time::from_us(1);
};
TopoSpec leaf_spine(const LeafSpineParams& p = {});

// k-ary three-layer fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge + k/2 aggregation
// switches, (k/2)^2 cores, k/2 hosts per edge switch: k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links.
// Edge switch e of a pod links every aggregation switch of its pod; aggregation switch j of every pod
// links cores j*k/2 .. j*k/2 + k/2 - 1.
// Defaults: rcm/fattree of docs/scenarios.md: k = 12 (432 hosts), 100 Gb/s everywhere (the RCM paper's
// links); 1 us per link as in the hpcc-sim fat.txt.
// Ids: hosts (edge-major), then edges pod-major (switch index p*k/2 + e), aggregations likewise, then
// cores. host_group: global edge (ToR) index; the pod of a host is host_group / (k/2). pod: each edge and
// aggregation switch's and host's pod, -1 for cores.
struct FatTreeParams {
  int k = 12;
  Rate host_rate = Rate::from_gbps(100);
  Rate fabric_rate = Rate::from_gbps(100);
  Time delay = Time::from_us(1);
};
TopoSpec fat_tree(const FatTreeParams& p = {});

// The ns-3 HPCC simulator's standard benchmark topology (its simulation/mix/fat.txt; defaults below are
// that file's; docs/hpcc-sim-compat.md): `pods` pods, each `tors_per_pod` ToRs x `aggs_per_pod`
// aggregation switches fully meshed, `cores` cores; aggregation switch j of each pod links cores
// j*c .. j*c + c - 1 with c = cores / aggs_per_pod (so cores must be a multiple of aggs_per_pod).
// Node ids and link order are exactly fat.txt's: hosts 0..319, ToRs 320..339, aggregations 340..359
// (pod-major), cores 360..375; write_hpcc_topology(fat_tree_3tier()) reproduces fat.txt line for line.
// Names: hosts "h<i>", switches "s<j>" (ToRs s0..s19, aggs s20..s39, cores s40..s55 by default).
// host_group: global ToR index. pod: the pod of each ToR, aggregation switch and host, -1 for cores.
struct FatTree3TierParams {
  int pods = 5;
  int tors_per_pod = 4;
  int aggs_per_pod = 4;
  int hosts_per_tor = 16;
  int cores = 16;
  Rate host_rate = Rate::from_gbps(100);
  Rate fabric_rate = Rate::from_gbps(400);
  Time delay = Time::from_us(1);
};
TopoSpec fat_tree_3tier(const FatTree3TierParams& p = {});

// The victim topology of mercury/victim (docs/scenarios.md; also tcd/victim and mercury/small-hadoop):
// chain S1 - S2 - S3; H1, H2 on S1 at host_rate_h12; R1, R2 on S3; burst senders B1..Bn each on their
// own S3 port (or, with bursts_via_switch, behind a fourth switch S4 with one link to S3). Every link other
// than H1/H2's runs at `rate`. Switch-to-switch links (S1-S2, S2-S3, S4-S3) have switch_delay, host
// links host_delay. S4 and the B nodes are left out when burst_senders = 0.
// Defaults: the Mercury paper's Fig. 2 setting (20 Gb/s H1/H2, 40 Gb/s elsewhere, 4 us / 1 us, 8 bursts).
// For mercury/small-hadoop use {.host_rate_h12 = 40G}; for tcd/victim at 100 Gb/s set both rates to 100G.
// Ids: H1 0, H2 1, R1 2, R2 3, B1..Bn 4..n+3, then S1, S2, S3, S4. host_group: index of the attached
// switch (H* 0, R* 2, B* 3). S4 exists only with bursts_via_switch.
struct MercuryVictimParams {
  Rate host_rate_h12 = Rate::from_gbps(20);
  Rate rate = Rate::from_gbps(40);
  Time switch_delay = Time::from_us(4);
  Time host_delay = Time::from_us(1);
  int burst_senders = 8;
  bool bursts_via_switch = false;
};
TopoSpec mercury_victim(const MercuryVictimParams& p = {});

// Two datacenters joined by a long-haul link (docs/scenarios.md "LSCC"; LSCC paper Fig. 1): each is a k-ary
// fat-tree (as fat_tree() above, but with hosts_per_edge hosts on each edge switch) whose core switches all
// link one egress switch; the two egress switches are joined by one long-haul link (LinkSpec::long_haul).
// Defaults: the LSCC paper's ns-3 setting: k = 4 (16 hosts per DC, 2 per ToR), 40 Gb/s host links, 100 Gb/s
// elsewhere inside a DC, 1 us per in-DC link, long-haul 200 Gb/s and 1 ms (200 km).
// Ids: DC A hosts (edge-major) "a0".., DC B hosts "b0".., then DC A's edges, aggregations and cores, DC B's,
// then the egress switches "egress_a", "egress_b". host_group: global edge index (DC A's edges first), so
// the DC of a host is host_group / (k * k / 2 / 2) = host_group / edges_per_dc. pod: dc * k + the pod
// inside the DC for edges, aggregations and hosts, -1 for cores and egress switches.
struct CrossDcParams {
  int k = 4;
  int hosts_per_edge = 0;  // 0 = k / 2
  Rate host_rate = Rate::from_gbps(40);
  Rate fabric_rate = Rate::from_gbps(100);  // edge-agg, agg-core, core-egress
  Time delay = Time::from_us(1);            // every in-DC link
  Rate long_haul_rate = Rate::from_gbps(200);
  Time long_haul_delay = Time::from_ms(1);
};
TopoSpec cross_dc(const CrossDcParams& p = {});

// GPU clusters (docs/models.md A14): servers of `gpus_per_server` GPUs, each GPU a host (a rank) whose NIC
// is its rail NIC (GPU g of every server is on rail g), and one NVSwitch per server linked to each of its
// GPUs at nvlink_rate (the NVLink domain, a switch). The NIC has `planes` ports of nic_rate / planes each,
// port p in plane p; each plane is its own fabric (multi_plane: planes >= 2, a NIC dual-ported to two ToRs).
// In a plane, each pod of servers_per_pod servers has one rail switch (leaf) per rail, linking GPU g of each
// of the pod's servers. Above the leaves:
//  - two tiers (rail_optimized, multi_plane): `spines` spines per plane, each linking every leaf of the
//    plane once (across pods);
//  - three tiers (gpu_clos): `spines` aggregation switches per pod and plane, each linking every leaf of
//    its pod, and `cores` cores per plane; aggregation switch j of each pod links cores j*c .. j*c + c - 1,
//    c = cores / spines (as fat_tree_3tier).
// spines = 0: as many as keep a leaf's uplinks (spines x fabric_rate) at its downlinks (servers_per_pod x
// port rate) / oversubscription, rounded up; cores = 0: c = rails / oversubscription rounded up per
// aggregation switch (its uplinks at its downlinks / oversubscription).
// Defaults: an NVIDIA DGX H100 server [NVIDIA DGX H100 User Guide, "Hardware Overview": 8 H100 GPUs, 8
// single-port ConnectX-7 400 Gb/s compute NICs; H100 SXM datasheet: NVLink 4 at 900 GB/s per GPU
// bidirectional, i.e. 450 GB/s = 3,600 Gb/s each way], 1 us per NIC and fabric link as the other builders,
// 0.25 us per GPU-NVSwitch link [rocesim choice: NVIDIA publishes no per-hop NVLink latency; a GPU-to-GPU
// crossing is then ~0.5 us plus serialisation].
// Ids: GPUs first, server-major (GPU g of server s is host s * gpus_per_server + g, "h<id>"), then the
// NVSwitches (one per server, none when gpus_per_server = 1), then per plane its leaves (pod-major, rail
// within), then its spines (pod-major under three tiers), then its cores; switches "s<j>". Links: every
// GPU's NIC ports (plane order: a GPU's port p is its plane-p NIC port), then the NVLinks (a GPU's last
// port), then per plane leaf-spine (leaf-major) and spine-core. host_group: the GPU's plane-0 leaf (global
// index). kind: GPUs kGpu, NVSwitches kNvSwitch, the rest kSwitch.
// Shared NICs (nics_per_server N < gpus_per_server G, N dividing G): the rails are the N NICs, GPU g of a
// server on NIC g / (G / N) (a NIC with the GPUs behind its PCIe switch). Each NIC is then a node of its own,
// a switch of kind kNic in tier 0 (its server's), linked to each of its GPUs at nic_rate and nvlink_delay
// (the PCIe hop: a Gen5 x16 link carries a 400 Gb/s NIC's line rate) and, by its ports, to its plane leaves
// as a GPU's NIC is otherwise; the NIC's ports are the bottleneck its GPUs share. It is a switch like the
// others (PFC and all: PCIe's credit flow control is lossless too, so a NIC that pauses its GPUs stands for
// a PCIe switch that withholds credits) but marks no ECN and stamps no INT (net/switch_egress.cc). A GPU's
// traffic to its server's GPUs takes the NVLink (the faster of its equally near ports, net/fabric.h), the
// rest its NIC; the NIC picks its plane as a GPU's own NIC would, by NicSettings::port_spread (per flow by
// its hash, or per packet sprayed: net/switch.cc). Ids: the NICs come after the NVSwitches (server-major),
// before the leaves; links: the GPU-NIC links (GPU order: a GPU's port 0), then the NICs' ports (NIC-major,
// plane order), then the NVLinks and the fabric as above. N = G (or 0) is the network above, id for id.
struct GpuClusterParams {
  int servers = 4;
  int gpus_per_server = 8;
  int nics_per_server = 0;  // the rails; 0 = gpus_per_server (one NIC per GPU); must divide gpus_per_server
  int planes = 1;           // ports per NIC, each in its own plane
  int servers_per_pod = 0;  // servers under one leaf per rail; 0 = all of them (one pod)
  int spines = 0;  // per plane (two tiers) or per pod and plane (three tiers); 0 = from oversubscription
  int cores = 0;   // three tiers: per plane; 0 = from oversubscription
  bool three_tier = false;
  double oversubscription = 1.0;         // a leaf's (and an aggregation switch's) downlink : uplink capacity
  Rate nic_rate = Rate::from_gbps(400);  // per NIC, its ports together
  Rate nvlink_rate = Rate::from_gbps(3600);  // per GPU, each way
  Rate fabric_rate = Rate::from_gbps(400);   // leaf-spine, spine-core
  Time delay = Time::from_us(1);             // NIC and fabric links
  Time nvlink_delay = Time::from_ns(250);
};
TopoSpec gpu_cluster(const GpuClusterParams& p = {});
// The counts gpu_cluster() resolves: pods, spines (per plane, or per pod and plane under three tiers),
// cores per plane (0 under two tiers).
struct GpuClusterShape {
  int pods = 1, spines = 0, cores = 0;
};
GpuClusterShape gpu_cluster_shape(const GpuClusterParams& p);

// The GPU servers of a topology: per NVSwitch (in id order), the hosts linked to it in id order (a server's
// GPUs by local index: GPU g of server s is servers[s][g]). Empty when the topology has no NVSwitch. The
// builders number a server's GPUs so that GPU g is on rail g (gpu_cluster above), or with shared NICs on
// rail g / (G / N): GPUs of one rail are then neighbours in local index.
std::vector<std::vector<int>> gpu_servers(const TopoSpec& topo);

// GPUs per shared NIC (NodeKind::kNic): the most hosts linked to one; 1 without shared NICs. The builders'
// NICs each serve gpus_per_server / nics_per_server GPUs, consecutive in local index.
int gpus_per_nic(const TopoSpec& topo);

// The id of the node named `name` (exact, case-sensitive match on topo.node_names), or -1.
int lookup_node(const TopoSpec& topo, std::string_view name);

}  // namespace rocesim
