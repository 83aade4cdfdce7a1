// The services a congestion-control scheme may call: all that src/cc/ reaches of the network. A scheme holds
// a CcServices& (CongestionControl::net_, SwitchAgent constructors) and never sees Network, this class's one
// implementation (docs/architecture.md, "Where a scheme plugs in"; tests/layers_test.cc checks that no file
// of src/cc/ includes net/network.h).
//
// Why a base class and not an interface: packets call some of these (now, counters, pool, qp_of, set_rate),
// where a virtual call or one more pointer to follow costs. CcServices is Network's non-virtual base and
// holds by value the state its inline services read: the Simulator (the clock and the running partition),
// the QP slots and the settings; so a scheme's net_->now() is the code Network::now() was. The others are
// plain functions in net/network.cc, where they reach the rest of the network (only Network can make a
// CcServices, so every one is a Network).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/pool.h"
#include "core/simulator.h"
#include "core/time.h"
#include "net/net_partition.h"
#include "net/packet.h"
#include "net/qp.h"
#include "net/settings.h"

namespace rocesim {

class Network;
struct TopoSpec;

class CcServices {
 public:
  CcServices(const CcServices&) = delete;
  CcServices& operator=(const CcServices&) = delete;

  // --- the clock and timers ---
  Time now() const { return sim_.now(); }  // the running event's time (its partition's clock)
  // A timer of the QP at the host running now (its sender, or its receiver for a receiver-side timer):
  // CongestionControl::on_timer(qp, kind) runs there at `at`, unless the flow has ended.
  void schedule_qp_timer(Qp& qp, Time at, uint32_t kind);
  // A switch agent's own events: registers `h` in the partition of its switch (`home`: Switch::handler()),
  // then events for it at `t` or after `dt` (kind | Simulator::kBackground: one that keeps no run going).
  uint32_t add_handler(EventHandler* h, uint32_t home) { return sim_.add_handler(h, home); }
  void schedule_at(Time t, uint32_t h, uint32_t kind, uint64_t arg = 0) { sim_.at(t, h, kind, arg); }
  void schedule_after(Time dt, uint32_t h, uint32_t kind, uint64_t arg = 0) { sim_.after(dt, h, kind, arg); }

  // --- the rate and window of a QP ---
  void set_rate(Qp& qp, Rate r);     // re-times pacing and wakes the sender
  void set_window(Qp& qp, Bytes w);  // bytes in flight (0: no limit); wakes the sender when it grew

  // --- packets ---
  // The running partition's packet pool (get, attach_int; partition 0's between windows).
  PacketPool& pool() { return part().pool; }
  // A CNP for `qp` to its source, from node `from_node` (a receiver host or a switch); send it with inject.
  Packet* make_cnp(const Qp& qp, int from_node);
  // Hands a control packet made at `from_node` to that node's forwarding (switch) or NIC (host).
  void inject(int from_node, Packet* p);

  // --- QPs, by slot (Qp::slot) ---
  Qp& qp(uint32_t slot) { return qps_[slot]; }
  size_t qp_capacity() const { return qps_.capacity(); }  // every slot is below it
  // The QP a packet belongs to, or nullptr when that flow has finished (stale packet).
  Qp* qp_of(const Packet& p) {
    if (p.qp >= qps_.capacity()) return nullptr;
    Qp& q = qps_[p.qp];
    return (q.in_use && q.tag == p.qp_tag) ? &q : nullptr;
  }
  // A scheme's per-QP state (cc/per_qp.h): `grow(n)` is called now and whenever there come to be n slots,
  // between windows, so that no such array grows while partitions run.
  void register_qp_state(std::function<void(size_t)> grow) const;

  // --- the fabric, read-only ---
  const SwitchSettings& switch_settings() const { return sw_; }
  const NicSettings& nic_settings() const { return nic_; }
  uint64_t seed() const { return seed_; }  // the run's seed (a scheme's own Rng::stream)
  const TopoSpec& topo() const;
  bool is_host(int node) const;
  Rate port_rate(int node, int port) const;  // the line rate of a node's port
  // The smallest PFC threshold of any switch port with an empty buffer (switch_settings().xoff_bytes if
  // there is no switch port).
  Bytes min_pfc_threshold() const;
  // The hop-by-hop path of a flow with these ports (ECMP-resolved) as (node, egress port) pairs, its base
  // RTT, and the longest base RTT between two hosts of the topology.
  std::vector<std::pair<int, int>> path_of(int src, int dst, uint16_t sport, uint16_t dport) const;
  Time base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const;
  Time max_base_rtt() const;

  // --- counters ---
  // The running partition's (partition 0's between windows); summed over partitions for summary.json.
  NetStats& counters() { return part().counters; }

 private:
  friend class Network;
  CcServices(const SwitchSettings& sw, const NicSettings& nic, uint64_t seed)
      : sw_(sw), nic_(nic), seed_(seed) {}
  ~CcServices() = default;
  // The partition running now (its thread's), or partition 0 between windows.
  NetPartition& part() {
    void* p = sim_.current_user();
    return p ? *static_cast<NetPartition*>(p) : first_partition();
  }
  NetPartition& first_partition();
  Network& net();
  const Network& net() const;

  Simulator sim_;
  StablePool<Qp, 1024> qps_;  // the QP slots (FlowTable gives and frees them)
  SwitchSettings sw_;
  NicSettings nic_;
  uint64_t seed_;
};

}  // namespace rocesim
