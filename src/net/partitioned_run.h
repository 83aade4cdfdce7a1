// How a Network's run advances: the fabric cut into partitions (partition_fabric: atoms, the lookahead, how
// many) and the Simulator's windows over them (docs/parallel.md). As the Simulator's Coordinator it does
// what happens between windows: before one, the flows starting in it are posted (FlowTable); after one, the
// observer calls the partitions logged (and the traced flows' state rows) are replayed in the order of their
// events (to RunResults' observers), and at a boundary of the lookahead grid the finished flows are retired
// and the run stops when every flow is done. Across ranks (set_ranks) it also carries packets (as the
// Simulator's EventCodec) and that bookkeeping between the processes: net/network_ranks.cc.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/rank_comm.h"
#include "core/simulator.h"
#include "net/cc_api.h"
#include "net/net_partition.h"
#include "net/run_results.h"

namespace rocesim {

class Fabric;
class FlowTable;

class PartitionedRun final : private Coordinator, private EventCodec {
 public:
  // Atom weight (ports + nodes) per partition when the run chooses: cut a large fabric into partitions of
  // about this size even on one thread (docs/parallel.md, "Partitions for the cache").
  static constexpr int64_t kCacheBlockWeight = 2000;
  // A run whose threads are left out (threads = kThreadsAuto) takes every core when its fabric has at least
  // this many ports and nodes and can be split (two atoms or more, a lookahead above zero), else one thread
  // (docs/parallel.md, "Threads by default").
  static constexpr int kThreadsAuto = -1;
  static constexpr int64_t kThreadsAutoWeight = 1000;
  // Partitions per thread when the run chooses and several threads share a fabric: the threads take
  // partitions as they come, so smaller ones balance the windows (16 threads on a k = 24 fat-tree: 16
  // partitions 5.48x one thread, 64 8.0x, 128 the same, 256 less; the 320-host fat-tree on 2 threads of
  // the project's 2-core machine: 8 partitions 12-25 % faster than 2 in three pairs; docs/parallel.md).
  static constexpr int kPartitionsPerThread = 4;
  // The partitions a run chooses when they are left to it (partition_fabric, and the memory estimate before
  // any network exists): one per kCacheBlockWeight of `weight` (ports and nodes), at least
  // kPartitionsPerThread per thread when several threads share the fabric, a multiple of threads x ranks.
  // partition_fabric caps it at the fabric's atoms.
  // A fabric's size for these rules: its nodes and ports (each link has two ends).
  static int64_t fabric_weight(const TopoSpec& topo) {
    return topo.num_nodes + 2 * static_cast<int64_t>(topo.links.size());
  }
  static int64_t chosen_partitions(int64_t weight, int64_t threads, int64_t ranks) {
    const int64_t minimum = threads * ranks;
    const int64_t blocks = (weight + kCacheBlockWeight / 2) / kCacheBlockWeight;
    const int64_t least = threads > 1 ? minimum * kPartitionsPerThread : minimum;
    return std::max(least, (blocks + minimum - 1) / minimum * minimum);  // a multiple: balanced threads
  }

  PartitionedRun(Simulator& sim, Fabric& fabric, FlowTable& flows, RunResults& results, CongestionControl& cc)
      : sim_(sim), fabric_(fabric), flows_(flows), results_(results), cc_(cc) {
    parts_.push_back(std::make_unique<NetPartition>());
  }
  PartitionedRun(const PartitionedRun&) = delete;
  PartitionedRun& operator=(const PartitionedRun&) = delete;

  // Partition 0: the running partition between windows (Network::part).
  NetPartition& first() { return *parts_[0]; }
  // `threads` threads (0: every core; kThreadsAuto: by the fabric's size) sharing `partitions` partitions
  // (0: chosen); cuts the fabric. The first two change one and keep the other.
  void set_threads(int threads) { set_parallel(threads, partitions_); }
  void set_partitions(int partitions) { set_parallel(threads_, partitions); }
  void set_parallel(int threads, int partitions);
  // Over the ranks of `comm` too (docs/cluster.md).
  void set_ranks(RankComm* comm, int threads, int partitions);
  int threads() const { return threads_; }
  // What kThreadsAuto means for this fabric on `cores` cores: every core or one thread.
  int auto_threads(int cores) const;
  RankComm* ranks() const { return comm_; }
  const std::vector<uint32_t>& partition_of_node() const { return part_of_node_; }
  uint32_t partition_of(int node) const { return part_of_node_.empty() ? 0 : part_of_node_[node]; }

  bool started() const { return started_; }
  // The run starts: the fabric is cut now unless set_parallel did.
  void start();
  // Runs the windows until `until`, or until every flow has finished (when stop_when_done).
  void run(Time until, bool stop_when_done, const std::function<void(Time)>& progress,
           uint64_t progress_every);

  // The counters of all partitions (and, after run(), the other ranks'), summed.
  NetStats stats() const;
  // Packets taken from the pools and not returned, over all partitions.
  int64_t packets_live() const;

 private:
  void partition_fabric();
  bool is_node_handler(uint32_t h) const;
  // A handler without a home node (it can only run in a single partition).
  bool has_homeless_handler() const;
  // Coordinator (core/simulator.h)
  Time next_input(Time now) override;
  bool pending_work() const override;
  // Unfinished flows keep the NICs' retransmission timers (background events, so that a finished flow's
  // timer does not prolong the run) running.
  bool awaits_timers() const override;
  void before_window(Time now, Time end) override;
  void after_window(Time end, bool grid) override;
  void replay_calls();
  void replay(const NetPartition::Call& c);
  void replay_cc_rows();
  void finish_flows();
  // Ranks (net/network_ranks.cc)
  void encode(const Event& e, uint32_t from_partition, std::vector<char>& out) override;
  Event decode(const char*& in, uint32_t dest_partition) override;
  void share_between_ranks();
  void gather_rank_stats();

  Simulator& sim_;
  Fabric& fabric_;
  FlowTable& flows_;
  RunResults& results_;
  CongestionControl& cc_;
  std::vector<std::unique_ptr<NetPartition>> parts_;
  std::vector<uint32_t> part_of_node_;
  int threads_ = 1;
  int partitions_ = 0;  // set_parallel (0: chosen by partition_fabric)
  bool partitioned_ = false;
  bool started_ = false;
  bool stop_when_done_ = true;
  std::vector<NetPartition::Call> replay_;
  std::vector<CcStateRow> cc_rows_;  // replay_cc_rows' merge
  std::vector<NetPartition::Done> finishing_;

  RankComm* comm_ = nullptr;
  NetStats other_ranks_stats_;                   // the other ranks' counters, as of the end of the last run()
  std::vector<NetPartition::Call> ranks_calls_;  // every rank's, since the last replay (rank order)
  std::vector<NetPartition::Done> ranks_done_;   // every rank's, since the last grid boundary
  std::vector<CcStateRow> ranks_cc_rows_;        // every rank's, since the last replay (rank order)
};

}  // namespace rocesim
