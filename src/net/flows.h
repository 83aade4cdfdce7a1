// The flows of a run and their QP slots. Flows come from the source (FlowSource, pulled in start order) and
// from dependent flows (DependentFlows, which release a flow when those it waits for have finished; held in
// a heap until their start). Between windows, every flow starting in the next window gets a slot of the QP
// pool and an event at its source host; there it starts (source port, base RTT, ideal FCT and cached routes
// along its path, the scheme's on_flow_start) and, once the sender has every byte acknowledged, completes
// (its FlowRecord). Its slot is freed at the next grid boundary, when the dependent flows hear of it
// (retire). Also the per-slot state that grows with the pool: selective repeat's bitmaps and the schemes'
// per-QP arrays (register_qp_state).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/pool.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/net_partition.h"
#include "net/packet.h"
#include "net/qp.h"
#include "net/settings.h"
#include "workload/flow.h"

namespace rocesim {

class Fabric;

class FlowTable final : private DependentFlows::Releaser {
 public:
  // `qps` (the QP slots, which schemes read through CcServices) and `nic` are the network's, which outlive
  // this.
  FlowTable(Fabric& fabric, Simulator& sim, StablePool<Qp, 1024>& qps, CongestionControl& cc,
            const NicSettings& nic)
      : fabric_(fabric), sim_(sim), cc_(cc), nic_(nic), qps_(qps) {}
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;
  // Sizes the per-host source ports and selective repeat's window for the built fabric.
  void prepare();

  // --- QP slots ---
  // (The QP of a packet: CcServices::qp_of, Network::sender_qp_of.)
  Qp& qp(uint32_t slot) { return qps_[slot]; }
  // The live QP of a flow (linear scan: for tests and monitors), or nullptr when finished.
  Qp* find_flow(uint64_t flow_id);
  size_t capacity() const { return qps_.capacity(); }
  size_t live() const { return qps_.live(); }
  // Selective repeat: packets tracked beyond the cumulative ACK (0 under go-back-N), and the two ring
  // bitmaps of a slot (see Network::rx_sack_bits).
  bool selective() const { return sack_window_ > 0; }
  int sack_window_packets() const { return sack_window_; }
  uint64_t* rx_sack_bits(uint32_t slot) { return &sack_bits_[size_t{slot} * 2 * sack_words_]; }
  uint64_t* tx_sack_bits(uint32_t slot) { return &sack_bits_[(size_t{slot} * 2 + 1) * sack_words_]; }
  // A scheme's per-QP state: grown to the pool's capacity now and whenever the pool grows (between windows).
  void register_qp_state(std::function<void(size_t)> grow) const;

  // --- where flows come from ---
  void set_source(FlowSource* src) { source_ = src; }
  void set_dependent(DependentFlows* d) { dependent_ = d; }
  // [monitors] cc_state: a flow's QP is traced (Qp::cc_traced) when `wants` says so as it gets its slot.
  void set_cc_trace(std::function<bool(const Qp&)> wants) { cc_trace_ = std::move(wants); }
  // [monitors] packet_trace: the flows allocated from now on that it chooses are traced (Qp::traced).
  void set_packet_trace(PacketTrace* t) { trace_ = t; }
  size_t released_waiting() const { return released_.size(); }
  bool all_done() const {
    return source_done_ && qps_.live() == 0 && released_.empty() &&
           (dependent_ == nullptr || dependent_->unreleased() == 0);
  }
  uint64_t pending_or_active() const {
    return qps_.live() + (source_done_ ? 0 : 1) + released_.size() +
           (dependent_ ? dependent_->unreleased() : 0);
  }
  // The next flow of the source, pulled but not started yet, or nullptr.
  const FlowSpec* pending_flow() const { return have_next_ ? &next_flow_ : nullptr; }

  // --- the run (PartitionedRun, between windows; the hosts, during them) ---
  // As the run starts: the source's first flow, and the dependent flows that wait for none.
  void begin();
  // The earliest start of a flow not posted yet (no earlier than `now`), or Time::max().
  Time next_start(Time now) const;
  // Gives every flow starting before `end` its slot and an event at its start, and grows the per-slot
  // state when the pool grew.
  void post_starts_before(Time end);
  // The flow of `slot` starts now at its source host, which runs in partition `part`; `across_ranks`: what
  // the other ranks need of it goes into part.started.
  void start(uint32_t slot, NetPartition& part, bool across_ranks);
  // The sender has every byte of `qp` acknowledged: its record and slot go to `part` (calls, done).
  void complete(Qp& qp, NetPartition& part);
  // At a grid boundary: frees the slots of `done` (sorted by key) and tells the dependent flows, each at
  // its finish time, that a flow it releases starts `lookahead` later at the earliest.
  void retire(const std::vector<NetPartition::Done>& done, Time lookahead);
  // Across ranks: what another rank's partition wrote of a flow it started, or of a flow it received.
  void started_elsewhere(const NetPartition::Started& s);
  // Sets a started flow's host ports (Qp::tx_ports, ack_port) and line rate.
  void set_ports(Qp& qp) const;
  // The line rate of a flow whose host ports are set: the summed rate of the ports it sends by, now, each
  // capped behind a shared NIC (NodeKind::kNic) by the NIC port(s) the flow leaves by.
  Rate ports_rate(const Qp& qp) const;
  void received_elsewhere(const NetPartition::Received& r);

 private:
  void pull_next_flow();
  void post_start(const FlowSpec& f);
  uint16_t next_source_port(int src, int dst);
  uint64_t release(const FlowSpec& f) override;  // DependentFlows::Releaser

  Fabric& fabric_;
  Simulator& sim_;
  CongestionControl& cc_;
  const NicSettings& nic_;
  StablePool<Qp, 1024>& qps_;
  mutable std::mutex qp_state_mutex_;
  mutable std::vector<std::function<void(size_t)>> qp_state_;
  int sack_window_ = 0;
  size_t sack_words_ = 0;
  std::vector<uint64_t> sack_bits_;  // grown with the QP pool, between windows

  FlowSource* source_ = nullptr;
  bool source_done_ = true;
  bool have_next_ = false;
  FlowSpec next_flow_;
  DependentFlows* dependent_ = nullptr;
  std::function<bool(const Qp&)> cc_trace_;
  PacketTrace* trace_ = nullptr;
  Time release_delay_;              // while a finished flow releases others: the lookahead (release)
  std::vector<FlowSpec> released_;  // min-heap on (start, id): released flows waiting for their start
  uint64_t next_flow_id_ = 0;
  std::vector<uint16_t> next_sport_;  // per host (NicSettings::SourcePorts::kPerHost)
  std::vector<std::unordered_map<int, uint16_t>> pair_sport_;  // per host and destination (kPerPair)
};

}  // namespace rocesim
