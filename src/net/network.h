// The simulated network, as nodes, schemes, the app and the tests see it: the facade over its parts, each
// with one job (docs/architecture.md, "The network's parts"):
// - Fabric (net/fabric.h): the topology, the nodes and their wired ports, routing, the paths of flows;
// - FlowTable (net/flows.h): where flows come from, their QP slots, their start and completion;
// - PartitionedRun (net/partitioned_run.h): partitions and windows, what happens between windows, ranks;
// - RunResults (net/run_results.h): the finished flows' records, the class labels, the observers.
// Network owns them and the scheme, forwards to them (inline where a packet pays for it), and offers the link
// events (net/link_events.cc). Its base CcServices (net/cc_services.h) is what schemes see of it: the
// services they call (set_rate, make_cnp, ...), and the Simulator, the QP slots and the settings that the
// inline ones read.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/rank_comm.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/cc_services.h"
#include "net/fabric.h"
#include "net/flow_record.h"
#include "net/flows.h"
#include "net/link_events.h"
#include "net/net_partition.h"
#include "net/node.h"
#include "net/partitioned_run.h"
#include "net/qp.h"
#include "net/routes.h"
#include "net/run_results.h"
#include "net/settings.h"
#include "topo/topology.h"
#include "workload/flow.h"

namespace rocesim {

class Host;
class Switch;

class Network : public CcServices {
 public:
  using SetupProgress = Fabric::SetupProgress;

  Network(const TopoSpec& topo, const SwitchSettings& sw, const NicSettings& nic, uint64_t seed,
          std::unique_ptr<CongestionControl> cc, const SetupProgress& setup_progress = {});

  // Memory estimates before a network of `topo` is built (Fabric::estimate_route_table_bytes,
  // estimate_memory_bytes).
  static int64_t estimate_route_table_bytes(const TopoSpec& topo) {
    return Fabric::estimate_route_table_bytes(topo);
  }
  static int64_t estimate_memory_bytes(const TopoSpec& topo, const SwitchSettings& sw) {
    return Fabric::estimate_memory_bytes(topo, sw);
  }
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Flows are pulled lazily from `src` (non-decreasing start times); ids are assigned in order.
  void set_flow_source(FlowSource* src) { flows_.set_source(src); }
  // Flows released when others finish (workload/flow.h); told about every finished flow. Not owned.
  void set_dependent_flows(DependentFlows* d) { flows_.set_dependent(d); }
  // Flows released but not started yet (their start is later than now).
  size_t released_waiting() const { return flows_.released_waiting(); }
  // Runs until `until`, or until every flow of the source has finished (when stop_when_done).
  // May be called again with a later `until` to continue. `progress` is called between windows, at least
  // every `progress_every` events (core/simulator.h).
  void run(Time until, bool stop_when_done = true, const std::function<void(Time)>& progress = nullptr,
           uint64_t progress_every = 1u << 20);

  // --- threads, partitions, ranks (PartitionedRun) ---
  // Splits the run over `threads` threads (0: every core), before the first run(); the threads share the
  // partitions (set_partitions). Results do not depend on it (docs/parallel.md). Throws
  // std::invalid_argument when the fabric cannot be split (no delay between switches).
  void set_threads(int threads) { run_.set_threads(threads); }
  int threads() const { return run_.threads(); }
  // What kThreadsAuto means for this fabric on `cores` cores (docs/parallel.md, "Threads by default").
  int auto_threads(int cores) const { return run_.auto_threads(cores); }
  // How many partitions the fabric is cut into: 0 (the default) lets the network choose, at least one per
  // thread and rank and more on a large fabric, for the cache; n > 0 asks for n, which must be at least the
  // threads times the ranks. Results do not depend on it (docs/parallel.md). Before the first run(); throws
  // std::invalid_argument as set_threads does.
  void set_partitions(int partitions) { run_.set_partitions(partitions); }
  // Both at once, cutting the fabric once (set_threads then set_partitions would cut it twice).
  void set_parallel(int threads, int partitions) { run_.set_parallel(threads, partitions); }
  static constexpr int64_t kCacheBlockWeight = PartitionedRun::kCacheBlockWeight;
  static constexpr int kThreadsAuto = PartitionedRun::kThreadsAuto;
  static constexpr int64_t kThreadsAutoWeight = PartitionedRun::kThreadsAutoWeight;
  static constexpr int kPartitionsPerThread = PartitionedRun::kPartitionsPerThread;
  static int64_t fabric_weight(const TopoSpec& topo) { return PartitionedRun::fabric_weight(topo); }
  static int64_t chosen_partitions(int64_t weight, int64_t threads, int64_t ranks) {
    return PartitionedRun::chosen_partitions(weight, threads, ranks);
  }
  // The partition of every node (switch with its single-homed hosts, grouped), and the lookahead.
  const std::vector<uint32_t>& partition_of_node() const { return run_.partition_of_node(); }
  // Splits the run over the ranks of `comm` (processes, e.g. of mpirun), `threads` threads each, before
  // the first run() (docs/cluster.md). Every rank builds the whole network and runs the same coordinator;
  // each simulates only its partitions. Results are those of one process: stats(), finished flows and the
  // observers are the whole network's on every rank; a node's state (ports, agents) only on its rank,
  // except what gather_node_results() brings to rank 0 at the end.
  void set_ranks(RankComm* comm, int threads, int partitions = 0) {
    run_.set_ranks(comm, threads, partitions);
  }
  RankComm* ranks() const { return run_.ranks(); }
  // Whether node `id` is simulated in this process.
  bool is_local_node(int id) const { return sim_.is_local(run_.partition_of(id)); }
  // Across ranks, after the run: rank 0 receives the PFC statistics of every port (Port::stats, paused,
  // paused_since) and the switch agents' port counters of the nodes other ranks simulated. Collective.
  void gather_node_results();
  // The scheme's counters of switch `sw`'s port (SwitchAgent::port_counters), wherever it was simulated
  // (after gather_node_results on rank 0).
  void scheme_port_counters(int sw, int port, std::vector<std::pair<const char*, double>>& out) const;

  // The clock (now), the packet pool and counters, the settings, the topology: CcServices.
  Simulator& sim() { return sim_; }
  // Packets taken from the pools and not returned, over all partitions.
  int64_t packets_live() const { return run_.packets_live(); }
  CongestionControl& cc() { return *cc_; }
  const CcNeeds& cc_needs() const { return needs_; }
  // The counters of all partitions, summed.
  NetStats stats() const { return run_.stats(); }
  NetObservers& observers() { return results_.observers(); }
  // Observer calls (made by nodes during a window; see NetObservers): logged in the running partition,
  // replayed between windows (PartitionedRun).
  void notify_pfc(const Node& n, int port, int prio, bool pause);
  void notify_delivered(const Qp& qp, Bytes payload);
  void notify_cnp(const Qp& qp, bool from_switch);

  // --- a flow's scheme state over time ([monitors] cc_state; net/cc_state.h) ---
  // Traces the flows `wants` picks, asked as each flow gets its QP slot (between windows; empty: none):
  // their senders count the ACKs with ECN-Echo and with a congestion notification (Qp::ecn_echoes,
  // cnp_acks), and with `rows` record a CcStateRow, in
  // the running partition, each time the scheme reacts at the sender, replayed to NetObservers::on_cc_state:
  // after on_flow_start, on_ack, on_nack, on_cnp and a sender-side on_timer, and after an on_data_sent that
  // changed the rate or the window. Between windows (flows that have their slot keep their tracing); the
  // scheme declares at most kMaxCcVariables (std::logic_error otherwise).
  void set_cc_trace(std::function<bool(const Qp&)> wants, bool rows);
  // Between windows: no more rows (their monitor has all it keeps); the counts go on.
  void stop_cc_rows() { cc_rows_ = false; }
  // The state of a QP's sender now: its time, flow, rate, window, counts and the scheme's variables (key 0).
  void read_cc_state(const Qp& qp, CcStateRow& row) const;
  // Called by hosts for a traced QP (Qp::cc_traced), at its sender, just after the scheme reacted (to an ACK
  // with `ack_flags`: ECN-Echo and congestion notifications are counted).
  void cc_reacted(Qp& qp, uint8_t ack_flags = 0) {
    qp.ecn_echoes += (ack_flags & Packet::kFlagEcnEcho) ? 1 : 0;
    qp.cnp_acks += (ack_flags & Packet::kFlagCongestion) ? 1 : 0;
    if (cc_rows_) record_cc_state(qp);
  }
  void cc_data_sent(Qp& qp, Packet& p);  // the scheme's on_data_sent, then a row if it moved rate or window
  // --- packet timelines ([monitors] packet_trace, net/packet_trace.h) ---
  // Traces the data packets of the flows `s` chooses, among those allocated from now on.
  void enable_packet_trace(PacketTraceSettings s);
  // The rows so far (in time order), or nullptr when nothing is traced.
  const PacketTrace* packet_trace() const { return results_.packet_trace(); }
  PacketTrace* packet_trace() { return results_.packet_trace(); }
  // A node saw an event of a traced packet (Packet::traced()): a row in the running partition.
  void trace(const Packet& p, int node, int port, TraceEvent e, TraceDetail d = TraceDetail::kNone,
             Bytes queue_bytes = -1, Time paused = Time{-1});

  // --- nodes (Fabric) ---
  int num_nodes() const { return fabric_.num_nodes(); }
  Node& node(int id) { return fabric_.node(id); }
  Host& host(int id);
  Switch& sw(int id);

  // --- QPs (FlowTable; qp, qp_of, qp_capacity: CcServices) ---
  // The live QP of a flow (linear scan: for tests and monitors), or nullptr when finished.
  Qp* find_flow(uint64_t flow_id) { return flows_.find_flow(flow_id); }
  size_t live_qps() const { return flows_.live(); }
  // The QP of a packet for its sender: nullptr once the sender has finished the flow. (Its receiver finds
  // it with qp_of until its slot is freed, at the first window boundary on the lookahead grid after that:
  // docs/parallel.md.)
  Qp* sender_qp_of(const Packet& p) {
    Qp* q = qp_of(p);
    return q && !q->sender_done ? q : nullptr;
  }
  // Selective repeat (NicSettings::LossRecovery::kSelective): packets tracked beyond the cumulative ACK
  // (0 under go-back-N), and the two ring bitmaps of a QP slot, indexed by packet number (seq / MTU)
  // modulo that window: the receiver's packets held out of order, the sender's packets SACKed.
  bool selective() const { return flows_.selective(); }
  int sack_window_packets() const { return flows_.sack_window_packets(); }
  uint64_t* rx_sack_bits(uint32_t slot) { return flows_.rx_sack_bits(slot); }
  uint64_t* tx_sack_bits(uint32_t slot) { return flows_.tx_sack_bits(slot); }
  // The services for schemes (set_rate, set_window, schedule_qp_timer, make_cnp, inject, register_qp_state,
  // ...) are CcServices'.

  // --- link events (net/link_events.h) ---
  // The run's link failures, recoveries, rate and loss changes, applied at their times; before the first
  // run(). Each event's nodes must be linked (std::invalid_argument otherwise). When some event fails a link
  // or sets a loss and no retransmission timeout is set (NicSettings::rto = 0), it becomes 1 ms: a lossless
  // fabric's flows otherwise wait forever for their lost tail.
  void set_link_events(std::vector<LinkEvent> events);
  // The events applied and the route recomputations so far, in time order.
  const std::vector<LinkLogEntry>& link_log() const { return link_log_; }
  bool has_link_events() const { return link_task_ != nullptr; }

  // --- routing (Fabric) ---
  // Equal-cost egress ports of switch `sw` towards node `dst` (empty: unreachable).
  std::pair<const uint16_t*, int> routes(int sw, int dst) const { return fabric_.routes(sw, dst); }
  const RouteTable& route_table() const { return fabric_.route_table(); }
  // Inline: every switch hop with a choice of ports computes one.
  uint64_t flow_hash(const Packet& p, int sw) const { return fabric_.flow_hash(p, sw); }
  // The switches' egress ports of the path from `src` to `dst` with these ports, as Packet::route holds
  // them, or Packet::kNoRoute (Fabric::cached_route).
  uint64_t cached_route(int src, int dst, uint16_t sport, uint16_t dport) const {
    return fabric_.cached_route(src, dst, sport, dport);
  }
  // Tests: off, every switch routes every packet (the results are the same bytes).
  void set_route_cache(bool allowed) { fabric_.set_route_cache(allowed); }
  // A flow's path, base RTT, the longest base RTT: CcServices (path_of, base_rtt, max_base_rtt).
  Time ideal_fct(Bytes size, int src, int dst, uint16_t sport, uint16_t dport) const {
    return fabric_.ideal_fct(size, src, dst, sport, dport);
  }

  // --- results (RunResults, FlowTable) ---
  const std::vector<FlowRecord>& finished() const { return results_.finished(); }
  // Whether finished() keeps every record (default). Off, records only reach observers
  // (on_flow_finished), so memory does not grow with the number of flows (app/run.cc streams them).
  void set_keep_finished(bool keep) { results_.set_keep_finished(keep); }
  const std::vector<std::string>& class_labels() const { return results_.class_labels(); }
  void set_class_labels(std::vector<std::string> l) { results_.set_class_labels(std::move(l)); }
  bool all_flows_done() const { return flows_.all_done(); }
  uint64_t flows_pending_or_active() const { return flows_.pending_or_active(); }
  // The next flow of the source, pulled but not started yet (its start is later than now), or nullptr.
  const FlowSpec* pending_flow() const { return flows_.pending_flow(); }

  // Called by hosts.
  // The sender has every byte acknowledged: the flow's record and slot go to the coordinator.
  void on_flow_complete(Qp& qp) { flows_.complete(qp, part()); }
  // The receiver has every byte of the flow (rcv_nxt reached its size). Across ranks, what the sender's
  // record takes from the receiver's side travels to the sender's rank at the next window.
  void on_flow_received(const Qp& qp) {
    if (run_.ranks()) part().received.push_back({qp.slot, qp.rx_out_of_order, qp.rx_spurious});
  }
  // The flow allocated on `slot` starts now at its source.
  void start_flow_event(uint32_t slot) {
    flows_.start(slot, part(), run_.ranks() != nullptr);
    if (Qp& q = qp(slot); q.cc_traced) [[unlikely]]
      cc_reacted(q);
  }
  void on_qp_timer(Host& at, uint32_t kind, uint64_t arg);

 private:
  friend class CcServices;  // its services, defined in network.cc
  friend class LinkEventTask;
  void apply_link_event(const LinkEvent& e);
  void wake_port(const Port& x);
  void fail_port(Port& x, const Port& peer);
  void follow_host_rate(const LinkEvent& e);  // a rate event on a host link: its flows' line rate
  void recompute_routes();
  void log_call(NetPartition::Call c);
  void record_cc_state(const Qp& qp);

  // The Simulator, the QP slots and the settings are CcServices'.
  std::unique_ptr<CongestionControl> cc_;
  CcNeeds needs_;
  Fabric fabric_;
  FlowTable flows_;
  RunResults results_;
  PartitionedRun run_;
  std::unique_ptr<BarrierTask> link_task_;
  std::vector<LinkLogEntry> link_log_;
  bool cc_rows_ = false;  // set_cc_trace with rows, until stop_cc_rows
};

}  // namespace rocesim
