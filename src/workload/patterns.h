// Streaming generators for the traffic patterns of [[traffic]] (config/traffic.cc reads the keys):
// Poisson senders with a destination rule (groups, permutation, hot-spot, set-to-set), incast rounds
// and burst trains. Every generator
//   * hands out flows in non-decreasing start order (FlowSource), lazily, with no allocation after
//     construction;
//   * is deterministic: its random numbers come from Rng::stream(seed, stream, index) only, with index =
//     the sender's node id for per-sender streams, so the same parameters give the same flows;
//   * validates its parameters in the constructor and throws InputError("", 0, "<pattern>: ...").
// Long-lived flows (an explicit list, or one flow per permutation pair) are fixed lists: InlineFlows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/time.h"
#include "workload/cdf.h"
#include "workload/flow.h"

namespace rocesim {

// What every generated flow carries besides src, dst and start.
struct FlowShape {
  const SizeCdf* sizes = nullptr;  // sizes are sampled from this CDF (not owned; must outlive the source)
  Bytes fixed_size = 0;            // > 0: every flow has this size and `sizes` is not used
  int priority = 3;                // FlowSpec::priority
  uint16_t dport = 100;            // FlowSpec::dport
  uint16_t class_id = 0;           // FlowSpec::class_id
  double mean_bytes() const;       // fixed_size, or the CDF's mean
};

// What every generator's parameters share: the flows' shape, the time window, a cap, and the random stream.
struct PatternCommon {
  FlowShape flow;
  Time start = Time::zero();  // the first flow (arrival, round, train) starts at or after this instant
  Time stop = Time::max();    // none starts at or after this instant
  uint64_t max_flows = 0;     // stop after this many flows in total (0 = no limit)
  uint64_t seed = 1;          // master seed
  std::string stream;         // Rng::stream(seed, stream, index); each pattern says which index
};

// ---------------------------------------------------------------------------------------------------
// Poisson senders

// Arrivals begin after `start` (the first gap counts from there); sender i draws from
// Rng::stream(seed, stream, senders[i]).
struct PoissonParams : PatternCommon {
  PoissonParams() { stream = "workload"; }
  std::vector<int> senders;   // node ids of the senders (distinct, >= 1)
  std::vector<Rate> offered;  // offered rate of each sender (same size as senders, each > 0)
};

// Every sender is an independent Poisson process with mean gap = mean_size x 8 / offered rate, as in
// PoissonAllToAll; the processes are merged by a heap on (time, sender position). Per flow a sender draws,
// from its own stream, the destination (route()), the size (if sampled) and its next gap, in that order,
// so with one group GroupsPoisson reproduces PoissonAllToAll flow for flow.
class PoissonSenders : public FlowSource {
 public:
  bool next(FlowSpec& out) final;
  double mean_gap_ps(size_t sender) const { return mean_gap_ps_[sender]; }
  uint64_t generated() const { return generated_; }
  const PoissonParams& params() const { return p_; }

 protected:
  PoissonSenders(PoissonParams p, const std::string& pattern);  // throws InputError
  // Sets out.dst (and may change out.class_id) for a flow of sender `idx`, drawing from `rng`.
  virtual void route(uint32_t idx, Rng& rng, FlowSpec& out) = 0;
  [[noreturn]] void bad(const std::string& what) const;
  // Position of each sender in `set` (node ids), or -1 when it is not in it.
  std::vector<int> positions_in(const std::vector<int>& set) const;

  PoissonParams p_;

 private:
  struct Entry {
    int64_t t;
    uint32_t idx;
  };
  static bool later(const Entry& a, const Entry& b) { return a.t != b.t ? a.t > b.t : a.idx > b.idx; }
  void schedule(uint32_t idx, int64_t t_ps);

  std::string pattern_;
  std::vector<double> mean_gap_ps_;
  std::vector<Rng> rng_;
  std::vector<Entry> heap_;
  uint64_t generated_ = 0;
};

// Poisson all-to-all within groups: each flow goes to a uniformly drawn other member of the sender's
// group. group_of[i] is the group of senders[i] (any non-negative labels); every group needs >= 2 members.
class GroupsPoisson : public PoissonSenders {
 public:
  GroupsPoisson(PoissonParams p, const std::vector<int>& group_of);
  int num_groups() const { return static_cast<int>(group_begin_.size()); }

 private:
  void route(uint32_t idx, Rng& rng, FlowSpec& out) override;
  std::vector<int> members_;  // node ids, grouped (groups in order of first appearance)
  std::vector<uint32_t> group_begin_, group_size_;
  std::vector<uint32_t> group_, pos_;  // per sender: its group and its position inside the group
};

// Each sender always sends to the same partner (partner[i] != senders[i]).
class PermutationPoisson : public PoissonSenders {
 public:
  PermutationPoisson(PoissonParams p, std::vector<int> partner);

 private:
  void route(uint32_t idx, Rng& rng, FlowSpec& out) override;
  std::vector<int> partner_;
};

// Hot-spot: the senders are also the receivers. A flow is "hot" with probability hot_fraction (one
// uniform() per flow, always drawn) and goes to a uniformly drawn hot host other than the sender, with
// class hot_class_id; otherwise it goes to a uniformly drawn non-hot host other than the sender, with
// flow.class_id. So hot_fraction is exactly the expected share of flows (and bytes) to the hot set.
// With background_to_all the background flow goes instead to a uniformly drawn host of all the senders
// (hot ones included) other than the sender, as in the RCM paper's hot-spot experiment (seed 001 sec. 4);
// then the hot set receives more than hot_fraction of the flows. The draws per flow are the same in
// number either way (one uniform(), one below()).
// `hot` must be a subset of senders with >= 1 host, leaving >= 2 non-hot hosts. A hot flow drawn by the
// only hot host (hot set = {sender}) becomes a background flow.
class HotspotPoisson : public PoissonSenders {
 public:
  HotspotPoisson(PoissonParams p, std::vector<int> hot, double hot_fraction, uint16_t hot_class_id,
                 bool background_to_all = false);
  const std::vector<int>& hot() const { return hot_; }

 private:
  void route(uint32_t idx, Rng& rng, FlowSpec& out) override;
  std::vector<int> hot_, cold_;
  std::vector<int> hot_pos_, cold_pos_;  // per sender: position in hot_ / cold_, or -1
  double hot_fraction_;
  uint16_t hot_class_id_;
  bool background_to_all_;
};

// From a set of senders to a set of receivers: each flow to a uniformly drawn receiver other than the
// sender (the sets may overlap, but every sender needs a receiver other than itself).
class SetPoisson : public PoissonSenders {
 public:
  SetPoisson(PoissonParams p, std::vector<int> receivers);

 private:
  void route(uint32_t idx, Rng& rng, FlowSpec& out) override;
  std::vector<int> receivers_;
  std::vector<int> self_pos_;  // per sender: its position in receivers_, or -1
};

// ---------------------------------------------------------------------------------------------------
// Incast rounds

// The first round starts at `start`; flows jittered past `stop` are dropped; one stream:
// Rng::stream(seed, stream, 0).
struct IncastParams : PatternCommon {
  IncastParams() { stream = "incast"; }
  std::vector<int> senders;    // candidate senders (node ids, distinct)
  int fan_in = 0;              // senders per round, distinct, never the round's receiver
  int dst = -1;                // the receiver of every round, or -1: a random one per round
  std::vector<int> receivers;  // candidates for the random receiver (dst = -1)
  Time period = Time::zero();  // between round starts; zero = a single round
  uint64_t rounds = 0;         // number of rounds; 0 = until stop (needs period > 0)
  Time jitter = Time::zero();  // each flow starts uniformly in [round, round + jitter); <= period
};

// Round r starts at start + r x period. Per round: the receiver (dst, or receivers[below(n)]), then
// fan_in distinct senders from `senders` minus the receiver (partial Fisher-Yates), then per sender its
// size (if sampled) and jitter offset. A round's flows come out by (start, src).
class IncastRounds : public FlowSource {
 public:
  explicit IncastRounds(IncastParams p);  // throws InputError
  bool next(FlowSpec& out) override;
  uint64_t rounds_started() const { return round_; }
  uint64_t generated() const { return generated_; }

 private:
  bool fill_round();  // false when no round is left
  IncastParams p_;
  Rng rng_;
  std::vector<int> pool_;      // permuted copy of senders
  std::vector<FlowSpec> buf_;  // the current round, sorted
  size_t pos_ = 0;
  uint64_t round_ = 0;
  uint64_t generated_ = 0;
  bool done_ = false;
};

// ---------------------------------------------------------------------------------------------------
// Burst trains

// Every sender's first flow starts at `start`; sender i samples sizes from Rng::stream(seed, stream,
// senders[i]).
struct BurstParams : PatternCommon {
  BurstParams() { stream = "burst"; }
  std::vector<int> senders;  // node ids (distinct, none equal to dst)
  std::vector<Time> gap;     // per sender: between its flow starts (same size as senders)
  int dst = -1;              // the receiver of every flow
  uint64_t count = 1;        // flows per sender; 0 = until stop (then every gap must be > 0)
};

// Sender i's k-th flow (k = 0 .. count-1) starts at start + k x gap[i]; trains are merged by
// (time, sender position).
class BurstTrains : public FlowSource {
 public:
  explicit BurstTrains(BurstParams p);  // throws InputError
  bool next(FlowSpec& out) override;
  uint64_t generated() const { return generated_; }

 private:
  struct Entry {
    int64_t t;
    uint32_t idx;
  };
  static bool later(const Entry& a, const Entry& b) { return a.t != b.t ? a.t > b.t : a.idx > b.idx; }
  BurstParams p_;
  std::vector<Rng> rng_;
  std::vector<uint64_t> sent_;  // per sender
  std::vector<Entry> heap_;
  uint64_t generated_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// Helpers

// A uniformly random derangement of 0..n-1 (p[i] != i for every i; n >= 2): Fisher-Yates shuffles drawn
// until one has no fixed point (e expected tries).
std::vector<int> random_derangement(size_t n, Rng& rng);
// `k` distinct elements of `from`, uniformly at random, in the order drawn (partial Fisher-Yates).
std::vector<int> random_subset(std::vector<int> from, size_t k, Rng& rng);

}  // namespace rocesim
