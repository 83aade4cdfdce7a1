// Monitors: optional time series and event logs of a run ([monitors], stats/monitor_spec.h), written as tidy
// CSVs with the units in the column names. They only read network state, so they never change results:
//  - periodic samples are a barrier task of the simulator (core/simulator.h): at each due sample time, after
//    every event before it and before any at it, it reads queues and counters. It schedules no event, so
//    the network runs the same with or without it. Sampling stops when nothing else is pending (the network
//    has gone idle).
//  - per-flow goodput, CNPs and PFC transitions come from NetObservers hooks (chained with any observer
//    already installed, restored on destruction).
// Files (only those enabled), times in us with 6 decimals (exact to the ps), rates with 6 decimals:
//   queues.csv  time_us,node,port,peer,queue_bytes,prio1_bytes,...,prio7_bytes[,link_up]   data bytes queued
//   at the
//               egress port: queue_bytes over the data priorities 1..7, then each priority's own queue
//               (priority 0, the control class, is not counted: docs/user-guide.md, "How a port schedules");
//               link_up (1, or 0 while the port's link is failed) only when the run has link events
//   input_queues.csv  time_us,node,port,peer,queue_bytes   data bytes held in the input queue(s) of the
//               switch's ingress port from peer (all priorities; every virtual output queue under "voq"),
//               Switch::input_bytes; sampled at the queues.csv times (input_output_queued switches only)
//   rates.csv   time_us,kind,id,gbps                 kind=flow: in-order payload accepted by the receiver;
//               kind=port: bytes put on the wire by the egress port (id "NODE:PEER"). time_us is the
//               start of a bin of rate_bin_us, bins aligned to t = 0; gbps = bits in the bin / bin width,
//               so a partial bin (a flow's last, or the one the run ended in) reads low. Flow rows cover
//               the bins from the flow's first to its last delivered byte, zero bins included.
//   pfc.csv     time_us,node,port,peer,prio,event,duration_us   event = pause (egress paused by the peer;
//               duration empty), resume (duration = time paused), end (still paused when the run ended;
//               duration so far). One pause/resume pair per paused interval (repeated PAUSE frames while
//               paused are not events), so the resume durations of a port sum to its PortStats::paused_time.
//               Under credits (switch.flow_control = "credit") pause/resume are the egress running out of
//               credits (credit-starved) and the credit frame that refills it. With link events
//               (net/link_events.h): link_down and link_up rows (prio and duration empty) for each end of
//               the link, and a link_down row per priority still paused then, with the time it was paused
//               (a failure clears the pause; these durations count in PortStats::paused_time too).
//   cnps.csv    flow_id,src,dst,cnps_received,cnps_from_switches   every flow started (src/dst node ids as
//               in flows.csv); CNPs counted when they reach the sender of a live flow. (Kept in memory
//               until written: 16 bytes per finished flow, plus a tally per flow that got CNPs.)
//   buffer.csv  switch,buffer_bytes,cdf              per switch, the empirical CDF of its sampled shared
//               buffer occupancy: one row per distinct value, cdf = fraction of samples <= value.
//   cc_state.csv  time_us,flow,rate_gbps,window_bytes,<the scheme's variables>,ecn_marks,cnps_received
//               the sender state of the traced flows (cc_state: flows by id or "all", classes by label):
//               its rate and window, the variables its scheme declares (CongestionControl::state_variables,
//               read_state), the ACKs with ECN-Echo and the congestion notifications (CNPs, ACKs carrying
//               one) it has received so far. period_us > 0:
//               a row per live traced flow every period (a barrier task, as the queue samples); 0: a row
//               each time the scheme reacts at the sender (Network::set_cc_trace), recorded in the
//               partition and replayed between windows in event order. Rows sorted by time, then flow, then
//               event; at most max_rows are kept (the first ones, a warning says how many were dropped).
//   packet_trace.csv  time_us,flow,seq,node,port,peer,prio,event,detail,queue_bytes,paused_us   the events
//               of the traced flows' data packets, hop by hop, in time order (net/packet_trace.h: the events,
//               what queue_bytes and paused_us mean); at most packet_trace.max_rows rows (the first).
// Node names are topo.node_names (ids when unnamed).
//
// A Monitors must outlive every Network::run after its construction (its event stays queued).
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/simulator.h"
#include "net/network.h"
#include "stats/monitor_spec.h"

namespace rocesim {

class Monitors : public BarrierTask {
 public:
  enum class PfcEventKind { kPause, kResume, kEnd, kLinkDown, kLinkUp };
  struct PfcEvent {
    Time t;
    int node = 0, port = 0, peer = 0, prio = 0;
    PfcEventKind kind = PfcEventKind::kPause;
    Time duration;  // resume, end, and link_down of a paused priority only
  };
  struct CnpCount {
    uint64_t flow_id = 0;
    int src = 0, dst = 0;
    uint64_t received = 0;
    uint64_t from_switches = 0;
  };

  // Attaches to `net` (installs observers, schedules the first sample at the current time).
  Monitors(Network& net, const MonitorSpec& spec);
  ~Monitors() override;
  Monitors(const Monitors&) = delete;
  Monitors& operator=(const Monitors&) = delete;

  // Closes the data at the network's current time: the last (partial) rate bin and pauses still open
  // ("end" events). Called once by write()/summary() when not called before; later calls do nothing.
  void finish();

  // A run over several ranks (Network::set_ranks): every rank samples on the same schedule, but only the
  // nodes it simulates read true; this gives rank 0 each sampled port's and switch's series from the rank
  // that simulated it. Closes the data (finish) first. Collective; does nothing in one process.
  void gather_ranks();

  // Writes the enabled files into `dir`; returns their names.
  std::vector<std::string> write(const std::filesystem::path& dir);
  // Small overview for summary.json: totals, and the (at most 16) ports / switches with the largest peaks.
  nlohmann::json summary();

  void write_queues_csv(std::ostream& out) const;
  void write_input_queues_csv(std::ostream& out) const;
  void write_rates_csv(std::ostream& out) const;
  void write_pfc_csv(std::ostream& out) const;
  void write_cnps_csv(std::ostream& out);
  void write_buffer_csv(std::ostream& out) const;
  void write_cc_state_csv(std::ostream& out);
  void write_packet_trace_csv(std::ostream& out) const;
  // Warnings for summary.json and stderr, after finish(): cc_state rows dropped beyond its max_rows,
  // packet_trace.csv cut at its max_rows.
  std::vector<std::string> warnings();

  // Raw data, for tests.
  const MonitorSpec& spec() const { return spec_; }
  const std::vector<Time>& queue_times() const { return queue_times_; }
  // queue_bytes()[sample][i] is the queue of spec().queue_ports[i] at queue_times()[sample].
  const std::vector<std::vector<Bytes>>& queue_bytes() const { return queue_bytes_; }
  // queue_prio_bytes()[sample][i][p - 1]: the same port's priority p queue (p = 1..7).
  using PrioBytes = std::array<Bytes, kNumPriorities - 1>;
  const std::vector<std::vector<PrioBytes>>& queue_prio_bytes() const { return queue_prio_bytes_; }
  // input_bytes()[sample][i] is the input queue of spec().input_queue_ports[i] at queue_times()[sample].
  const std::vector<std::vector<Bytes>>& input_bytes() const { return input_bytes_; }
  const std::vector<PfcEvent>& pfc_events() const { return pfc_; }
  // Every started flow with its CNP counts, sorted by flow id.
  std::vector<CnpCount> cnp_counts();
  // Goodput bins of a flow: (bin start, bytes); empty when the flow delivered nothing or is not monitored.
  std::vector<std::pair<Time, Bytes>> flow_bins(uint64_t flow_id) const;
  // Wire bytes per bin of spec().port_throughput[i]: (bin start, bytes).
  std::vector<std::pair<Time, Bytes>> port_bins(size_t i) const;
  // Buffer samples of a switch (node id), in time order.
  const std::vector<Bytes>& buffer_samples(int sw) const;
  // cc_state rows in the order of cc_state.csv (after finish()): the scheme's variables of row i are
  // cc_vars(i), one per cc_variables() entry.
  struct CcRow {
    Time t;
    unsigned __int128 key = 0;
    uint64_t flow_id = 0;
    Rate rate;
    Bytes window = 0;
    uint32_t ecn_marks = 0, cnps_received = 0;
  };
  const std::vector<CcRow>& cc_rows();
  std::span<const double> cc_vars(size_t i) const { return {cc_vars_.data() + i * cc_nvars_, cc_nvars_}; }
  std::span<const CcVariable> cc_variables() const { return net_.cc().state_variables(); }
  uint64_t cc_rows_dropped() const { return cc_dropped_; }
  // True once sampling stopped because nothing else was pending (the network went idle).
  bool sampling_stopped() const { return chain_stopped_; }

  Time next_barrier() const override;
  void on_barrier(Time now) override;

 private:
  struct FlowBins {
    int64_t first_bin = 0;
    std::vector<Bytes> bytes;
  };
  struct CnpTally {
    int src = 0, dst = 0;
    uint64_t received = 0, from_switches = 0;
  };

  void sample_queues();
  // queues.csv / input_queues.csv: `samples`[sample][i] of `ports`[i] at queue_times_.
  // `per_prio`: also one column per data priority (queues.csv).
  void write_port_samples(std::ostream& out, const std::vector<PortRef>& ports,
                          const std::vector<std::vector<Bytes>>& samples,
                          const std::vector<std::vector<PrioBytes>>* per_prio = nullptr) const;
  // The summary.json entry of queues / input_queues; `true_peak`(i) adds max_queue_bytes when set.
  nlohmann::json queue_summary(const std::vector<PortRef>& ports,
                               const std::vector<std::vector<Bytes>>& samples,
                               const std::function<Bytes(size_t)>& true_peak) const;
  void sample_rates();
  void sample_buffers();
  void sample_cc_state();
  void add_cc_row(const CcStateRow& r);  // keeps it unless max_rows are kept already
  void sort_cc_rows();
  void gather_cc_samples(RankComm& comm);
  void on_pfc(const Node& n, int port, int prio, bool pause, Time t);
  void on_delivered(const Qp& qp, Bytes payload);
  void on_cnp(const Qp& qp, bool from_switch);
  std::string node_name(int id) const { return monitor_node_name(net_.topo(), id); }
  std::string port_name(const PortRef& p) const { return node_name(p.node) + ":" + node_name(p.peer); }
  // rates.csv's id of port_throughput[i]: "NODE:PEER", or "NODE:PEER:PORT" (its index on NODE) when
  // several monitored ports of NODE lead to PEER (parallel links), so that each is a series of its own.
  std::string rate_port_name(size_t i) const;

  Network& net_;
  MonitorSpec spec_;
  bool finished_ = false;
  bool chain_stopped_ = false;

  Time next_queue_ = Time::max();
  Time next_rate_ = Time::max();
  Time next_buffer_ = Time::max();

  std::vector<Time> queue_times_;
  std::vector<std::vector<Bytes>> queue_bytes_;
  std::vector<std::vector<PrioBytes>> queue_prio_bytes_;  // [sample][queue_ports entry][priority - 1]
  std::vector<std::vector<uint8_t>> queue_link_up_;       // [sample][queue_ports entry]: with link events
  void on_link(const Node& n, int port, bool down, Time t);
  std::vector<std::vector<Bytes>> input_bytes_;  // [sample][input_queue_ports entry]

  std::unordered_map<uint64_t, FlowBins> flow_bins_;
  Time rate_origin_;                           // start of the first port bin
  std::vector<Bytes> port_prev_tx_;            // per port_throughput entry, tx_bytes at the last boundary
  std::vector<std::vector<Bytes>> port_bins_;  // [port][bin]

  std::vector<PfcEvent> pfc_;
  std::unordered_map<uint64_t, Time> open_pauses_;  // key (node, port, prio) -> paused since

  std::unordered_map<uint64_t, CnpTally> cnps_;
  // cnps.csv lists every flow: the finished ones are noted here (the network may not keep its records).
  struct FlowEnds {
    uint64_t id = 0;
    int src = 0, dst = 0;
  };
  std::vector<FlowEnds> cnp_finished_;

  Time next_cc_ = Time::max();
  size_t cc_nvars_ = 0;
  std::vector<CcRow> cc_rows_;
  std::vector<double> cc_vars_;  // cc_nvars_ per row of cc_rows_
  uint64_t cc_dropped_ = 0;      // rows beyond max_rows
  bool cc_sorted_ = false;
  std::vector<CcStateRow> cc_scratch_;  // one periodic sample

  std::vector<int> switches_;
  std::vector<std::vector<Bytes>> buffer_;  // per switches_ entry

  NetObservers saved_;  // observers installed before us (chained, restored on destruction)

  // packet_trace (net/packet_trace.h: the network records, we write)
  void start_packet_trace();
  nlohmann::json packet_trace_summary() const;
};

}  // namespace rocesim
