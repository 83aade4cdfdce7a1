// The simulated fabric: nodes built from a TopoSpec, routing, QPs, the scheme, and run statistics.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pool.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/node.h"
#include "net/qp.h"
#include "net/routes.h"
#include "net/settings.h"
#include "net/flow_record.h"
#include "topo/topology.h"
#include "workload/flow.h"

namespace rocesim {

class Host;
class Switch;

struct NetStats {
  uint64_t data_drops = 0;          // data packets dropped by a switch buffer (must be 0 with PFC)
  uint64_t ctrl_drops = 0;          // control packets dropped
  uint64_t wire_drops = 0;          // lost to a link's error rate
  uint64_t unroutable = 0;          // no route to the destination
  uint64_t stale_packets = 0;       // packets of already-finished flows (ignored)
  uint64_t packet_hops = 0;         // packets that crossed one link
  uint64_t data_packets_sent = 0;   // by hosts (including retransmissions)
  uint64_t retransmitted_packets = 0;
  uint64_t nacks_sent = 0;
  uint64_t timeouts = 0;
  uint64_t cnps_sent = 0;           // by receivers
  uint64_t cnps_from_switches = 0;
  uint64_t acks_sent = 0;
  uint64_t flows_started = 0;
  uint64_t flows_finished = 0;
  Bytes bytes_delivered = 0;        // in-order payload accepted by receivers
  Bytes max_ingress_bytes = 0;      // peak of any switch (ingress port, priority) counter incl. headroom
  Bytes max_switch_buffer_bytes = 0;
  uint64_t out_of_order_packets = 0;  // data packets that reached their receiver ahead of the next expected byte
  uint64_t switch_messages = 0;       // switch-to-switch control messages sent
};

// Optional observers, off unless set; the hot path pays one branch when unset.
struct NetObservers {
  std::function<void(const Node&, int port, int prio, bool pause, Time)> on_pfc_rx;   // frame received
  std::function<void(const FlowRecord&)> on_flow_finished;
  std::function<void(const Qp&, bool from_switch)> on_cnp_received;  // a CNP reached a live flow's sender
  std::function<void(const Qp&, Bytes payload)> on_data_delivered;   // in-order payload reached the receiver
};

class Network : public EventHandler, private DependentFlows::Releaser {
 public:
  enum EventKind : uint32_t { kFlowArrival = 0, kQpTimer = 1, kFlowRelease = 2 };

  // Reports set-up progress: a stage ("routes") and the fraction of it done (called every few hundred
  // destinations; building routes takes tens of seconds on networks of tens of thousands of nodes).
  using SetupProgress = std::function<void(const char* stage, double fraction)>;

  Network(const TopoSpec& topo, const SwitchSettings& sw, const NicSettings& nic, uint64_t seed,
          std::unique_ptr<CongestionControl> cc, const SetupProgress& setup_progress = {});

  // Memory the routing tables of `topo` take once built, peak while building included (owned by the
  // routing code: update it with the tables).
  static int64_t estimate_route_table_bytes(const TopoSpec& topo);
  // Memory a network of `topo` takes before its first event: routing tables, nodes, ports and their
  // per-priority state (input queues of every (ingress, priority, egress) under VOQ).
  static int64_t estimate_memory_bytes(const TopoSpec& topo, const SwitchSettings& sw);
  ~Network() override;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Flows are pulled lazily from `src` (non-decreasing start times); ids are assigned in order.
  void set_flow_source(FlowSource* src) { source_ = src; }
  // Flows released when others finish (workload/flow.h); told about every finished flow. Not owned.
  void set_dependent_flows(DependentFlows* d) { dependent_ = d; }
  // Flows released but not started yet (their start is later than now).
  size_t released_waiting() const { return released_.size(); }
  // Runs until `until`, or until every flow of the source has finished (when stop_when_done).
  // May be called again with a later `until` to continue.
  void run(Time until, bool stop_when_done = true,
           const std::function<void(Time)>& progress = nullptr);

  Simulator& sim() { return sim_; }
  Time now() const { return sim_.now(); }
  PacketPool& pool() { return pool_; }
  const TopoSpec& topo() const { return topo_; }
  const SwitchSettings& switch_settings() const { return sw_; }
  const NicSettings& nic_settings() const { return nic_; }
  CongestionControl& cc() { return *cc_; }
  const CcNeeds& cc_needs() const { return needs_; }
  uint64_t seed() const { return seed_; }
  NetStats& stats() { return stats_; }
  const NetStats& stats() const { return stats_; }
  NetObservers& observers() { return obs_; }

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Node& node(int id) { return *nodes_[id]; }
  bool is_host(int id) const { return !topo_.is_switch[id]; }
  Host& host(int id);
  Switch& sw(int id);

  Qp& qp(uint32_t slot) { return qps_[slot]; }
  // The live QP of a flow (linear scan: for tests and monitors), or nullptr when finished.
  Qp* find_flow(uint64_t flow_id);
  size_t qp_capacity() const { return qps_.capacity(); }
  size_t live_qps() const { return qps_.live(); }
  // The QP a packet belongs to, or nullptr when that flow has finished (stale packet).
  Qp* qp_of(const Packet& p) {
    if (p.qp >= qps_.capacity()) return nullptr;
    Qp& q = qps_[p.qp];
    return (q.in_use && q.tag == p.qp_tag) ? &q : nullptr;
  }

  // --- services for schemes ---
  void set_rate(Qp& qp, Rate r);          // re-times pacing and wakes the sender
  void set_window(Qp& qp, Bytes w);
  void schedule_qp_timer(Qp& qp, Time at, uint32_t kind);
  // Sends a CNP for `qp` to its source from node `from` (a receiver host or a switch).
  Packet* make_cnp(const Qp& qp, int from_node);
  // Hands a control packet created at `from` to that node's forwarding (switch) or NIC (host).
  void inject(int from_node, Packet* p);

  // --- routing ---
  // Equal-cost egress ports of switch `sw` towards node `dst` (empty: unreachable).
  std::pair<const uint16_t*, int> routes(int sw, int dst) const { return routes_.lookup(sw, dst); }
  const RouteTable& route_table() const { return routes_; }
  uint64_t flow_hash(const Packet& p, int sw) const;
  // Draws whether a packet is lost on a lossy wire (ns-3 topology files carry an error rate).
  bool link_loss(double error_rate) { return loss_rng_.uniform() < error_rate; }
  // The hop-by-hop path a flow's packets take (ECMP-resolved), as (node, egress port) pairs.
  std::vector<std::pair<int, int>> path_of(int src, int dst, uint16_t sport, uint16_t dport) const;
  Time base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const;
  Time max_base_rtt() const { return max_base_rtt_; }
  Time ideal_fct(Bytes size, int src, int dst, uint16_t sport, uint16_t dport) const;

  // --- results ---
  const std::vector<FlowRecord>& finished() const { return finished_; }
  // Whether finished() keeps every record (default). Off, records only reach observers
  // (on_flow_finished), so memory does not grow with the number of flows (app/run.cc streams them).
  void set_keep_finished(bool keep) { keep_finished_ = keep; }
  const std::vector<std::string>& class_labels() const { return class_labels_; }
  void set_class_labels(std::vector<std::string> l) { class_labels_ = std::move(l); }
  bool all_flows_done() const {
    return source_done_ && qps_.live() == 0 && released_.empty() &&
           (dependent_ == nullptr || dependent_->unreleased() == 0);
  }
  uint64_t flows_pending_or_active() const {
    return qps_.live() + (source_done_ ? 0 : 1) + released_.size() + (dependent_ ? dependent_->unreleased() : 0);
  }
  // The next flow of the source, pulled but not started yet (its start is later than now), or nullptr.
  const FlowSpec* pending_flow() const { return have_next_ ? &next_flow_ : nullptr; }

  // Called by hosts.
  void on_flow_complete(Qp& qp);
  void on_event(uint32_t kind, uint64_t arg) override;

 private:
  void build_nodes();
  void build_routes(const SetupProgress& progress);
  void compute_max_base_rtt();
  // Follows the ECMP path of a 5-tuple from `src`, calling hop(node, egress port) at each node; false
  // (after some hops, maybe) when `dst` cannot be reached.
  template <typename Hop>
  bool walk_path(int src, int dst, uint16_t sport, uint16_t dport, Hop&& hop) const;
  void pull_next_flow();
  void pull_next_flow_inline();
  void start_flow(const FlowSpec& f);
  uint64_t release(const FlowSpec& f) override;  // DependentFlows::Releaser
  void start_released();

  TopoSpec topo_;
  SwitchSettings sw_;
  NicSettings nic_;
  uint64_t seed_;
  std::unique_ptr<CongestionControl> cc_;
  CcNeeds needs_;
  Simulator sim_;
  uint32_t handler_ = 0;
  PacketPool pool_;
  std::vector<std::unique_ptr<Node>> nodes_;
  StablePool<Qp, 1024> qps_;
  NetStats stats_;
  NetObservers obs_;

  RouteTable routes_;
  std::vector<uint64_t> ecmp_salt_;
  Rng loss_rng_;
  Time max_base_rtt_;

  FlowSource* source_ = nullptr;
  bool source_done_ = true;
  bool stop_when_done_ = true;
  bool started_ = false;
  bool have_next_ = false;
  FlowSpec next_flow_;
  DependentFlows* dependent_ = nullptr;
  std::vector<FlowSpec> released_;  // min-heap on (start, id): released flows waiting for their start
  uint64_t next_flow_id_ = 0;
  std::vector<uint16_t> next_sport_;         // per host, as the ns-3 simulator numbers source ports
  std::vector<FlowRecord> finished_;
  std::vector<std::string> class_labels_{"default"};
  bool keep_finished_ = true;
};

}  // namespace rocesim
