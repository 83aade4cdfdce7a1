// The simulated fabric: nodes built from a TopoSpec, routing, QPs, the scheme, and run statistics.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/pool.h"
#include "core/rank_comm.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/flow_record.h"
#include "net/link_events.h"
#include "net/node.h"
#include "net/qp.h"
#include "net/routes.h"
#include "net/settings.h"
#include "topo/topology.h"
#include "workload/flow.h"

namespace rocesim {

class Host;
class Switch;

struct NetStats {
  uint64_t data_drops = 0;         // data packets dropped by a switch buffer (must be 0 with PFC)
  uint64_t ctrl_drops = 0;         // control packets dropped
  uint64_t wire_drops = 0;         // lost to a link's error rate
  uint64_t unroutable = 0;         // no route to the destination
  uint64_t stale_packets = 0;      // packets of already-finished flows (ignored)
  uint64_t packet_hops = 0;        // packets that crossed one link
  uint64_t data_packets_sent = 0;  // by hosts (including retransmissions)
  uint64_t retransmitted_packets = 0;
  uint64_t nacks_sent = 0;
  uint64_t timeouts = 0;
  uint64_t cnps_sent = 0;  // by receivers
  // Of cnps_sent: CNPs that report an undetermined queue (UE-marked data), not congestion (CE).
  uint64_t ue_cnps_sent = 0;
  uint64_t cnps_from_switches = 0;
  uint64_t acks_sent = 0;
  uint64_t flows_started = 0;
  uint64_t flows_finished = 0;
  Bytes bytes_delivered = 0;    // in-order payload accepted by receivers
  Bytes max_ingress_bytes = 0;  // peak of any switch (ingress port, priority) counter incl. headroom
  Bytes max_switch_buffer_bytes = 0;
  // Data packets that reached their receiver ahead of the next expected byte.
  uint64_t out_of_order_packets = 0;
  uint64_t switch_messages = 0;   // switch-to-switch control messages sent
  Bytes retransmitted_bytes = 0;  // payload of retransmitted data packets
  uint64_t sacks_sent = 0;        // selective repeat: ACKs carrying a SACK (also counted in acks_sent)
  // Data packets that reached their receiver again (a retransmission whose original had arrived).
  uint64_t spurious_retransmissions = 0;
  // Retransmissions sent after a timeout, of packets sent before it (the rest were deemed lost by a NACK,
  // a SACK or the reorder window).
  uint64_t timeout_retransmissions = 0;
  uint64_t link_down_drops = 0;  // packets (and PFC frames) lost on failed links (net/link_events.h)
  uint64_t route_updates = 0;    // route recomputations after link failures and recoveries
};

// Adds `o` into `into`: counts add up, peaks take the larger.
void merge_stats(NetStats& into, const NetStats& o);

// Optional observers, off unless set; the hot path pays one branch when unset. They are called between
// simulation windows (core/simulator.h), in the order of the events that caused them, with the clock at
// the time of that event; they must not change the network.
struct NetObservers {
  std::function<void(const Node&, int port, int prio, bool pause, Time)> on_pfc_rx;  // frame received
  std::function<void(const FlowRecord&)> on_flow_finished;
  std::function<void(const Qp&, bool from_switch)> on_cnp_received;  // a CNP reached a live flow's sender
  std::function<void(const Qp&, Bytes payload)> on_data_delivered;   // in-order payload reached the receiver
  // A link failed (down) or came back: once per end (`port` of `node`), at the event's time
  // (net/link_events.h; called between windows, before the pauses of a failed link are cleared).
  std::function<void(const Node&, int port, bool down, Time)> on_link_change;
};

// What the nodes of one partition write during a window (core/simulator.h): packets, counters, and the
// observer calls and finished flows the coordinator takes up between windows.
struct NetPartition {
  struct Call {
    enum Type : uint8_t { kPfc, kDelivered, kCnp, kFinished } type = kPfc;
    bool flag = false;  // PFC: pause; CNP: from a switch
    int node = 0, port = 0, prio = 0;
    uint32_t slot = 0;
    Bytes payload = 0;
    Time t;
    unsigned __int128 key = 0;  // the event during which it happened (replay order)
    FlowRecord record;          // kFinished
  };
  struct Done {
    unsigned __int128 key = 0;
    uint32_t slot = 0;
    uint64_t flow_id = 0;
    Time finish;
  };
  // Across ranks (Network::set_ranks): what the other ranks need of a flow this partition started.
  struct Started {
    uint32_t slot = 0;
    uint16_t sport = 0;
    Time start, base_rtt, ideal_fct;
    Rate line_rate;
  };
  // Across ranks: a receiver has every byte; its per-flow counts go to the sender's rank (FlowRecord).
  struct Received {
    uint32_t slot = 0;
    uint32_t out_of_order = 0;
    uint32_t spurious = 0;
  };
  PacketPool pool;
  NetStats counters;
  std::vector<Call> calls;
  std::vector<Done> done;
  std::vector<Started> started;
  std::vector<Received> received;
};

class Network : private Coordinator, private DependentFlows::Releaser, private EventCodec {
 public:
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
  void run(Time until, bool stop_when_done = true, const std::function<void(Time)>& progress = nullptr);

  // Splits the run over `threads` threads (0: every core), before the first run(); the threads share the
  // partitions (set_partitions). Results do not depend on it (docs/parallel.md). Throws
  // std::invalid_argument when the fabric cannot be split (no delay between switches).
  void set_threads(int threads);
  int threads() const { return threads_; }
  // How many partitions the fabric is cut into: 0 (the default) lets the network choose, at least one per
  // thread and rank and more on a large fabric, for the cache (partition_fabric); n > 0 asks for n, which
  // must be at least the threads times the ranks. Results do not depend on it (docs/parallel.md). Before the
  // first run(); throws std::invalid_argument as set_threads does.
  void set_partitions(int partitions);
  // Both at once, cutting the fabric once (set_threads then set_partitions would cut it twice).
  void set_parallel(int threads, int partitions);
  // Atom weight (ports + nodes) per partition when the network chooses: cut a large fabric into
  // partitions of about this size even on one thread (docs/parallel.md, "Partitions for the cache").
  static constexpr int64_t kCacheBlockWeight = 2000;
  // The partition of every node (switch with its single-homed hosts, grouped), and the lookahead.
  const std::vector<uint32_t>& partition_of_node() const { return part_of_node_; }
  // Splits the run over the ranks of `comm` (processes, e.g. of mpirun), `threads` threads each, before
  // the first run() (docs/cluster.md). Every rank builds the whole network and runs the same coordinator;
  // each simulates only its partitions. Results are those of one process: stats(), finished flows and the
  // observers are the whole network's on every rank; a node's state (ports, agents) only on its rank,
  // except what gather_node_results() brings to rank 0 at the end.
  void set_ranks(RankComm* comm, int threads, int partitions = 0);
  RankComm* ranks() const { return comm_; }
  // Whether node `id` is simulated in this process.
  bool is_local_node(int id) const { return sim_.is_local(part_of_node_.empty() ? 0 : part_of_node_[id]); }
  // Across ranks, after the run: rank 0 receives the PFC statistics of every port (Port::stats, paused,
  // paused_since) and the switch agents' port counters of the nodes other ranks simulated. Collective.
  void gather_node_results();
  // The scheme's counters of switch `sw`'s port (SwitchAgent::port_counters), wherever it was simulated
  // (after gather_node_results on rank 0).
  void scheme_port_counters(int sw, int port, std::vector<std::pair<const char*, double>>& out) const;

  Simulator& sim() { return sim_; }
  Time now() const { return sim_.now(); }
  // The running partition's packet pool and counters (partition 0 between windows).
  PacketPool& pool() { return part().pool; }
  NetStats& counters() { return part().counters; }
  // Packets taken from the pools and not returned, over all partitions.
  int64_t packets_live() const;
  const TopoSpec& topo() const { return topo_; }
  const SwitchSettings& switch_settings() const { return sw_; }
  const NicSettings& nic_settings() const { return nic_; }
  CongestionControl& cc() { return *cc_; }
  const CcNeeds& cc_needs() const { return needs_; }
  uint64_t seed() const { return seed_; }
  // The counters of all partitions, summed.
  NetStats stats() const;
  NetObservers& observers() { return obs_; }
  // Observer calls (made by nodes during a window; see NetObservers).
  void notify_pfc(const Node& n, int port, int prio, bool pause);
  void notify_delivered(const Qp& qp, Bytes payload);
  void notify_cnp(const Qp& qp, bool from_switch);

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
  // A QP's slot is freed at the first window boundary on the lookahead grid after its sender finished
  // (docs/parallel.md), so its receiver sees it until then.
  Qp* qp_of(const Packet& p) {
    if (p.qp >= qps_.capacity()) return nullptr;
    Qp& q = qps_[p.qp];
    return (q.in_use && q.tag == p.qp_tag) ? &q : nullptr;
  }
  // The QP of a packet for its sender: nullptr once the sender has finished the flow.
  Qp* sender_qp_of(const Packet& p) {
    Qp* q = qp_of(p);
    return q && !q->sender_done ? q : nullptr;
  }
  // Selective repeat (NicSettings::LossRecovery::kSelective): packets tracked beyond the cumulative ACK
  // (0 under go-back-N), and the two ring bitmaps of a QP slot, indexed by packet number (seq / MTU)
  // modulo that window: the receiver's packets held out of order, the sender's packets SACKed.
  bool selective() const { return sack_window_ > 0; }
  int sack_window_packets() const { return sack_window_; }
  uint64_t* rx_sack_bits(uint32_t slot) { return &sack_bits_[size_t{slot} * 2 * sack_words_]; }
  uint64_t* tx_sack_bits(uint32_t slot) { return &sack_bits_[(size_t{slot} * 2 + 1) * sack_words_]; }
  // Per-QP state of a scheme (cc/per_qp.h) registers how to grow it: the network grows every such array
  // before a window in which a new QP slot is used, so that none grows while partitions run.
  void register_qp_state(std::function<void(size_t)> grow) const;

  // --- services for schemes ---
  void set_rate(Qp& qp, Rate r);  // re-times pacing and wakes the sender
  void set_window(Qp& qp, Bytes w);
  // A timer of the QP at the host running now (its sender, or its receiver for a receiver-side timer);
  // CongestionControl::on_timer is called there.
  void schedule_qp_timer(Qp& qp, Time at, uint32_t kind);
  // Sends a CNP for `qp` to its source from node `from` (a receiver host or a switch).
  Packet* make_cnp(const Qp& qp, int from_node);
  // Hands a control packet created at `from` to that node's forwarding (switch) or NIC (host).
  void inject(int from_node, Packet* p);

  // --- link events (net/link_events.h) ---
  // The run's link failures, recoveries, rate and loss changes, applied at their times; before the first
  // run(). Each event's nodes must be linked (std::invalid_argument otherwise). When some event fails a link
  // or sets a loss and no retransmission timeout is set (NicSettings::rto = 0), it becomes 1 ms: a lossless
  // fabric's flows otherwise wait forever for their lost tail.
  void set_link_events(std::vector<LinkEvent> events);
  // The events applied and the route recomputations so far, in time order.
  const std::vector<LinkLogEntry>& link_log() const { return link_log_; }
  bool has_link_events() const { return link_task_ != nullptr; }

  // --- routing ---
  // Equal-cost egress ports of switch `sw` towards node `dst` (empty: unreachable).
  std::pair<const uint16_t*, int> routes(int sw, int dst) const { return routes_.lookup(sw, dst); }
  const RouteTable& route_table() const { return routes_; }
  // Inline: every switch hop with a choice of ports computes one.
  uint64_t flow_hash(const Packet& p, int sw) const {
    if (hpcc_sim_hash_) return hpcc_sim_flow_hash(p, sw);
    uint64_t x = ecmp_salt_[sw] ^
                 (static_cast<uint64_t>(static_cast<uint32_t>(p.src)) << 32 | static_cast<uint32_t>(p.dst));
    const uint64_t h = splitmix64(x);
    x = h ^ (static_cast<uint64_t>(p.sport) << 16 | p.dport);
    return splitmix64(x);
  }
  // The switches' egress ports of the path of packets from `src` to `dst` with these ports, as Packet::route
  // holds them, when every switch routes by the flow hash alone (ECMP, no scheme choosing ports, no link
  // events: the path is the same for every packet of a flow), else Packet::kNoRoute.
  uint64_t cached_route(int src, int dst, uint16_t sport, uint16_t dport) const;
  // Tests: off, every switch routes every packet (the results are the same bytes).
  void set_route_cache(bool allowed) { route_cache_allowed_ = allowed; }
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
    return qps_.live() + (source_done_ ? 0 : 1) + released_.size() +
           (dependent_ ? dependent_->unreleased() : 0);
  }
  // The next flow of the source, pulled but not started yet (its start is later than now), or nullptr.
  const FlowSpec* pending_flow() const { return have_next_ ? &next_flow_ : nullptr; }

  // Called by hosts.
  void on_flow_complete(Qp& qp);
  // The receiver has every byte of the flow (rcv_nxt reached its size). Across ranks, what the sender's
  // record takes from the receiver's side travels to the sender's rank at the next window.
  void on_flow_received(const Qp& qp) {
    if (comm_) part().received.push_back({qp.slot, qp.rx_out_of_order, qp.rx_spurious});
  }
  void start_flow_event(uint32_t slot);  // the flow allocated on `slot` starts now at its source
  void on_qp_timer(Host& at, uint32_t kind, uint64_t arg);

 private:
  void build_nodes();
  void build_routes(const SetupProgress& progress);
  friend class LinkEventTask;
  void apply_link_event(const LinkEvent& e);
  void wake_port(const Port& x);
  void fail_port(Port& x, const Port& peer);
  void follow_host_rate(const LinkEvent& e);  // a rate event on a host link: its flows' line rate
  void recompute_routes();
  void compute_max_base_rtt();
  // Follows the ECMP path of a 5-tuple from `src`, calling hop(node, egress port) at each node; false
  // (after some hops, maybe) when `dst` cannot be reached.
  template <typename Hop>
  bool walk_path(int src, int dst, uint16_t sport, uint16_t dport, Hop&& hop) const;
  NetPartition& part() {
    void* p = sim_.current_user();
    return p ? *static_cast<NetPartition*>(p) : *parts_[0];
  }
  void partition_fabric();
  bool is_node_handler(uint32_t h) const;
  void pull_next_flow();
  void post_flow_start(const FlowSpec& f);
  uint64_t release(const FlowSpec& f) override;  // DependentFlows::Releaser
  // Coordinator (core/simulator.h)
  Time next_input(Time now) override;
  bool pending_work() const override;
  // Unfinished flows keep the NICs' retransmission timers (background events, so that a finished flow's
  // timer does not prolong the run) running.
  bool awaits_timers() const override;
  void before_window(Time now, Time end) override;
  void after_window(Time end, bool grid) override;
  void log_call(NetPartition::Call c);
  void replay_calls();
  void finish_flows();
  // Ranks (net/network_ranks.cc)
  void encode(const Event& e, uint32_t from_partition, std::vector<char>& out) override;
  Event decode(const char*& in, uint32_t dest_partition) override;
  void share_between_ranks();
  void gather_rank_stats();

  TopoSpec topo_;
  SwitchSettings sw_;
  NicSettings nic_;
  uint64_t seed_;
  std::unique_ptr<CongestionControl> cc_;
  CcNeeds needs_;
  Simulator sim_;
  std::vector<std::unique_ptr<NetPartition>> parts_;
  std::vector<uint32_t> part_of_node_;
  int threads_ = 1;
  int partitions_ = 0;  // set_partitions (0: chosen by partition_fabric)
  bool partitioned_ = false;
  std::vector<std::unique_ptr<Node>> nodes_;
  StablePool<Qp, 1024> qps_;
  NetObservers obs_;
  std::vector<NetPartition::Call> replay_;
  std::vector<NetPartition::Done> finishing_;
  mutable std::mutex qp_state_mutex_;
  mutable std::vector<std::function<void(size_t)>> qp_state_;
  size_t qp_state_size_ = 0;
  int sack_window_ = 0;
  size_t sack_words_ = 0;
  std::vector<uint64_t> sack_bits_;  // grown with the QP pool, between windows

  RankComm* comm_ = nullptr;
  NetStats other_ranks_stats_;                   // the other ranks' counters, as of the end of the last run()
  std::vector<NetPartition::Call> ranks_calls_;  // every rank's, since the last replay (rank order)
  std::vector<NetPartition::Done> ranks_done_;   // every rank's, since the last grid boundary
  // Scheme counters of switches simulated elsewhere (gather_node_results): (node, port) -> (name, value).
  std::map<std::pair<int, int>, std::vector<std::pair<const char*, double>>> remote_scheme_counters_;
  std::set<std::string> counter_names_;  // owns the names of remote_scheme_counters_

  RouteTable routes_;
  std::unique_ptr<BarrierTask> link_task_;
  std::vector<LinkLogEntry> link_log_;
  uint64_t hpcc_sim_flow_hash(const Packet& p, int sw) const;  // flow_hash with sw_.ecmp_hash == kHpccSim
  std::vector<uint64_t> ecmp_salt_;
  bool hpcc_sim_hash_ = false;  // sw_.ecmp_hash == kHpccSim (net/ecmp_hash.h)
  bool route_cache_allowed_ = true;
  bool route_cache_ = false;  // cached_route gives paths: set as the run starts
  Time max_base_rtt_;

  FlowSource* source_ = nullptr;
  bool source_done_ = true;
  bool stop_when_done_ = true;
  bool started_ = false;
  bool have_next_ = false;
  FlowSpec next_flow_;
  DependentFlows* dependent_ = nullptr;
  Time release_delay_;              // while a finished flow releases others: the lookahead (Network::release)
  std::vector<FlowSpec> released_;  // min-heap on (start, id): released flows waiting for their start
  uint64_t next_flow_id_ = 0;
  std::vector<uint16_t> next_sport_;  // per host (NicSettings::SourcePorts::kPerHost)
  std::vector<std::unordered_map<int, uint16_t>> pair_sport_;  // per host and destination (kPerPair)
  std::vector<FlowRecord> finished_;
  std::vector<std::string> class_labels_{"default"};
  bool keep_finished_ = true;
};

}  // namespace rocesim
