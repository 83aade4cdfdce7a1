#include "workload/patterns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace rocesim {

namespace {

[[noreturn]] void fail(const std::string& pattern, const std::string& what) {
  throw InputError("", 0, pattern + ": " + what);
}

void check_shape(const std::string& pattern, const FlowShape& f) {
  if (f.fixed_size < 0) fail(pattern, "flow size must be > 0");
  if (f.fixed_size == 0) {
    if (f.sizes == nullptr) fail(pattern, "no flow size and no flow-size distribution");
    if (!(f.sizes->mean_bytes() > 0))
      fail(pattern, "flow-size distribution '" + f.sizes->name() + "' has mean 0");
  }
  if (f.priority < 0 || f.priority > 7) fail(pattern, "priority must be in 0..7");
}

void check_window(const std::string& pattern, Time start, Time stop) {
  if (start < Time::zero()) fail(pattern, "start time must be >= 0");
  if (stop < start) fail(pattern, "stop time is before start time");
}

void check_hosts(const std::string& pattern, const std::string& what, const std::vector<int>& ids) {
  std::vector<int> s = ids;
  std::sort(s.begin(), s.end());
  if (!s.empty() && s.front() < 0) fail(pattern, fmt::format("negative node id {} in {}", s.front(), what));
  if (auto d = std::adjacent_find(s.begin(), s.end()); d != s.end())
    fail(pattern, fmt::format("node {} listed twice in {}", *d, what));
}

Bytes draw_size(const FlowShape& f, Rng& rng) {
  return f.fixed_size > 0 ? f.fixed_size : f.sizes->sample(rng);
}

}  // namespace

double FlowShape::mean_bytes() const {
  return fixed_size > 0 ? static_cast<double>(fixed_size) : sizes != nullptr ? sizes->mean_bytes() : 0.0;
}

// ---------------------------------------------------------------------------------------------------
// PoissonSenders

PoissonSenders::PoissonSenders(PoissonParams p, const std::string& pattern)
    : p_(std::move(p)), pattern_(pattern) {
  if (p_.senders.empty()) bad("needs at least one sender");
  if (p_.offered.size() != p_.senders.size())
    bad(fmt::format("{} offered rates for {} senders", p_.offered.size(), p_.senders.size()));
  for (const Rate& r : p_.offered)
    if (!(r.bps > 0) || !std::isfinite(r.bps)) bad("every sender's offered rate must be > 0");
  check_shape(pattern_, p_.flow);
  check_window(pattern_, p_.start, p_.stop);
  check_hosts(pattern_, "the senders", p_.senders);
  const double mean = p_.flow.mean_bytes();
  mean_gap_ps_.reserve(p_.senders.size());
  rng_.reserve(p_.senders.size());
  heap_.reserve(p_.senders.size());
  for (size_t i = 0; i < p_.senders.size(); ++i) {
    mean_gap_ps_.push_back(mean * 8.0 / p_.offered[i].bps * 1e12);
    rng_.push_back(Rng::stream(p_.seed, p_.stream, static_cast<uint64_t>(p_.senders[i])));
  }
  for (size_t i = 0; i < p_.senders.size(); ++i) schedule(static_cast<uint32_t>(i), p_.start.ps);
}

void PoissonSenders::bad(const std::string& what) const { fail(pattern_, what); }

std::vector<int> PoissonSenders::positions_in(const std::vector<int>& set) const {
  std::vector<int> pos(p_.senders.size(), -1);
  for (size_t i = 0; i < p_.senders.size(); ++i) {
    const auto it = std::find(set.begin(), set.end(), p_.senders[i]);
    if (it != set.end()) pos[i] = static_cast<int>(it - set.begin());
  }
  return pos;
}

void PoissonSenders::schedule(uint32_t idx, int64_t t_ps) {
  const double gap = std::round(rng_[idx].exponential(mean_gap_ps_[idx]));
  if (gap >= static_cast<double>(p_.stop.ps - t_ps)) return;  // at or after stop: this sender is done
  heap_.push_back(Entry{t_ps + static_cast<int64_t>(gap), idx});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool PoissonSenders::next(FlowSpec& out) {
  if (heap_.empty() || (p_.max_flows != 0 && generated_ >= p_.max_flows)) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry e = heap_.back();
  heap_.pop_back();
  Rng& rng = rng_[e.idx];
  out.src = p_.senders[e.idx];
  out.priority = p_.flow.priority;
  out.dport = p_.flow.dport;
  out.class_id = p_.flow.class_id;
  route(e.idx, rng, out);
  out.size_bytes = draw_size(p_.flow, rng);
  out.start = Time::from_ps(e.t);
  ++generated_;
  schedule(e.idx, e.t);
  return true;
}

// ---------------------------------------------------------------------------------------------------
// GroupsPoisson

GroupsPoisson::GroupsPoisson(PoissonParams p, const std::vector<int>& group_of)
    : PoissonSenders(std::move(p), "groups") {
  const size_t n = p_.senders.size();
  if (group_of.size() != n) bad(fmt::format("{} group labels for {} senders", group_of.size(), n));
  std::vector<int> label_to_group;  // labels in order of first appearance
  group_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (group_of[i] < 0) bad("negative group label");
    auto it = std::find(label_to_group.begin(), label_to_group.end(), group_of[i]);
    if (it == label_to_group.end()) {
      label_to_group.push_back(group_of[i]);
      it = label_to_group.end() - 1;
    }
    group_[i] = static_cast<uint32_t>(it - label_to_group.begin());
  }
  group_size_.assign(label_to_group.size(), 0);
  for (size_t i = 0; i < n; ++i) ++group_size_[group_[i]];
  group_begin_.assign(label_to_group.size(), 0);
  for (size_t g = 1; g < group_size_.size(); ++g) group_begin_[g] = group_begin_[g - 1] + group_size_[g - 1];
  for (size_t g = 0; g < group_size_.size(); ++g)
    if (group_size_[g] < 2)
      bad(fmt::format("group {} (label {}) has {} member; every group needs at least 2", g, label_to_group[g],
                      group_size_[g]));
  members_.resize(n);
  pos_.resize(n);
  std::vector<uint32_t> fill(group_size_.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t g = group_[i];
    pos_[i] = fill[g]++;
    members_[group_begin_[g] + pos_[i]] = p_.senders[i];
  }
}

void GroupsPoisson::route(uint32_t idx, Rng& rng, FlowSpec& out) {
  const uint32_t g = group_[idx];
  uint64_t d = rng.below(group_size_[g] - 1);  // uniform among the other members
  if (d >= pos_[idx]) ++d;
  out.dst = members_[group_begin_[g] + d];
}

// ---------------------------------------------------------------------------------------------------
// PermutationPoisson

PermutationPoisson::PermutationPoisson(PoissonParams p, std::vector<int> partner)
    : PoissonSenders(std::move(p), "permutation"), partner_(std::move(partner)) {
  if (partner_.size() != p_.senders.size())
    bad(fmt::format("{} partners for {} senders", partner_.size(), p_.senders.size()));
  for (size_t i = 0; i < partner_.size(); ++i) {
    if (partner_[i] < 0) bad("negative partner id");
    if (partner_[i] == p_.senders[i]) bad(fmt::format("host {} is its own partner", partner_[i]));
  }
}

void PermutationPoisson::route(uint32_t idx, Rng&, FlowSpec& out) { out.dst = partner_[idx]; }

// ---------------------------------------------------------------------------------------------------
// HotspotPoisson

HotspotPoisson::HotspotPoisson(PoissonParams p, std::vector<int> hot, double hot_fraction,
                               uint16_t hot_class_id, bool background_to_all)
    : PoissonSenders(std::move(p), "hotspot"),
      hot_(std::move(hot)),
      hot_fraction_(hot_fraction),
      hot_class_id_(hot_class_id),
      background_to_all_(background_to_all) {
  if (!(hot_fraction_ >= 0 && hot_fraction_ <= 1)) bad("hot fraction must be in [0, 1]");
  if (hot_.empty()) bad("the hot set is empty");
  check_hosts("hotspot", "the hot set", hot_);
  for (int h : hot_)
    if (std::find(p_.senders.begin(), p_.senders.end(), h) == p_.senders.end())
      bad(fmt::format("hot host {} is not one of the participating hosts", h));
  for (int s : p_.senders)
    if (std::find(hot_.begin(), hot_.end(), s) == hot_.end()) cold_.push_back(s);
  if (cold_.size() < 2)
    bad(fmt::format("{} of {} hosts are hot; at least 2 must stay non-hot", hot_.size(), p_.senders.size()));
  hot_pos_ = positions_in(hot_);
  cold_pos_ = positions_in(cold_);
}

void HotspotPoisson::route(uint32_t idx, Rng& rng, FlowSpec& out) {
  const double u = rng.uniform();
  const int hp = hot_pos_[idx];
  const uint64_t hot_others = hot_.size() - (hp >= 0 ? 1 : 0);
  if (u < hot_fraction_ && hot_others > 0) {
    uint64_t d = rng.below(hot_others);
    if (hp >= 0 && d >= static_cast<uint64_t>(hp)) ++d;
    out.dst = hot_[d];
    out.class_id = hot_class_id_;
    return;
  }
  if (background_to_all_) {  // any host but the sender (senders are distinct; idx is this one's position)
    uint64_t d = rng.below(p_.senders.size() - 1);
    if (d >= idx) ++d;
    out.dst = p_.senders[d];
    return;
  }
  const int cp = cold_pos_[idx];
  uint64_t d = rng.below(cold_.size() - (cp >= 0 ? 1 : 0));
  if (cp >= 0 && d >= static_cast<uint64_t>(cp)) ++d;
  out.dst = cold_[d];
}

// ---------------------------------------------------------------------------------------------------
// SetPoisson

SetPoisson::SetPoisson(PoissonParams p, std::vector<int> receivers)
    : PoissonSenders(std::move(p), "set_to_set"), receivers_(std::move(receivers)) {
  if (receivers_.empty()) bad("no receivers");
  check_hosts("set_to_set", "the receivers", receivers_);
  self_pos_ = positions_in(receivers_);
  for (size_t i = 0; i < self_pos_.size(); ++i)
    if (self_pos_[i] >= 0 && receivers_.size() == 1)
      bad(fmt::format("sender {} is the only receiver", p_.senders[i]));
}

void SetPoisson::route(uint32_t idx, Rng& rng, FlowSpec& out) {
  const int sp = self_pos_[idx];
  uint64_t d = rng.below(receivers_.size() - (sp >= 0 ? 1 : 0));
  if (sp >= 0 && d >= static_cast<uint64_t>(sp)) ++d;
  out.dst = receivers_[d];
}

// ---------------------------------------------------------------------------------------------------
// IncastRounds

IncastRounds::IncastRounds(IncastParams p) : p_(std::move(p)) {
  const std::string n = "incast";
  check_shape(n, p_.flow);
  check_window(n, p_.start, p_.stop);
  check_hosts(n, "the senders", p_.senders);
  if (p_.fan_in < 1) fail(n, "fan-in must be >= 1");
  auto available = [&](int receiver) {
    const bool in = std::find(p_.senders.begin(), p_.senders.end(), receiver) != p_.senders.end();
    return p_.senders.size() - (in ? 1 : 0);
  };
  if (p_.dst >= 0) {
    if (static_cast<size_t>(p_.fan_in) > available(p_.dst))
      fail(n, fmt::format("fan-in {} exceeds the {} senders other than the receiver", p_.fan_in,
                          available(p_.dst)));
  } else {
    if (p_.receivers.empty()) fail(n, "no receiver and no candidates for a random one");
    check_hosts(n, "the receivers", p_.receivers);
    for (int r : p_.receivers)
      if (static_cast<size_t>(p_.fan_in) > available(r))
        fail(n, fmt::format("fan-in {} exceeds the {} senders other than receiver {}", p_.fan_in,
                            available(r), r));
  }
  if (p_.period < Time::zero()) fail(n, "period must be >= 0");
  if (p_.period == Time::zero() && p_.rounds > 1) fail(n, "more than one round needs a period");
  if (p_.jitter < Time::zero()) fail(n, "jitter must be >= 0");
  if (p_.period > Time::zero() && p_.jitter > p_.period) fail(n, "jitter must not exceed the period");
  rng_ = Rng::stream(p_.seed, p_.stream, 0);
  pool_ = p_.senders;
  buf_.reserve(static_cast<size_t>(p_.fan_in));
}

bool IncastRounds::fill_round() {
  while (!done_) {
    const bool single = p_.period == Time::zero();
    if ((p_.rounds != 0 && round_ >= p_.rounds) || (single && round_ >= 1) ||
        (!single && round_ > static_cast<uint64_t>((p_.stop.ps - p_.start.ps) / p_.period.ps))) {
      done_ = true;
      break;
    }
    const Time t = p_.start + p_.period * static_cast<int64_t>(round_);
    if (t >= p_.stop) {
      done_ = true;
      break;
    }
    ++round_;
    const int receiver = p_.dst >= 0 ? p_.dst : p_.receivers[rng_.below(p_.receivers.size())];
    size_t m = pool_.size();
    if (auto it = std::find(pool_.begin(), pool_.end(), receiver); it != pool_.end()) {
      std::iter_swap(it, pool_.end() - 1);
      --m;
    }
    const size_t k = static_cast<size_t>(p_.fan_in);
    for (size_t i = 0; i < k; ++i) std::swap(pool_[i], pool_[i + rng_.below(m - i)]);
    buf_.clear();
    for (size_t i = 0; i < k; ++i) {
      FlowSpec f;
      f.src = pool_[i];
      f.dst = receiver;
      f.priority = p_.flow.priority;
      f.dport = p_.flow.dport;
      f.class_id = p_.flow.class_id;
      f.size_bytes = draw_size(p_.flow, rng_);
      const int64_t off = p_.jitter > Time::zero()
                              ? static_cast<int64_t>(rng_.uniform() * static_cast<double>(p_.jitter.ps))
                              : 0;
      f.start = t + Time::from_ps(off);
      if (f.start < p_.stop) buf_.push_back(f);
    }
    std::sort(buf_.begin(), buf_.end(), [](const FlowSpec& a, const FlowSpec& b) {
      return a.start != b.start ? a.start < b.start : a.src < b.src;
    });
    pos_ = 0;
    if (!buf_.empty()) return true;
  }
  return false;
}

bool IncastRounds::next(FlowSpec& out) {
  if (p_.max_flows != 0 && generated_ >= p_.max_flows) return false;
  if (pos_ >= buf_.size() && !fill_round()) return false;
  out = buf_[pos_++];
  ++generated_;
  return true;
}

// ---------------------------------------------------------------------------------------------------
// BurstTrains

BurstTrains::BurstTrains(BurstParams p) : p_(std::move(p)) {
  const std::string n = "burst";
  check_shape(n, p_.flow);
  check_window(n, p_.start, p_.stop);
  if (p_.senders.empty()) fail(n, "needs at least one sender");
  check_hosts(n, "the senders", p_.senders);
  if (p_.dst < 0) fail(n, "no receiver");
  if (std::find(p_.senders.begin(), p_.senders.end(), p_.dst) != p_.senders.end())
    fail(n, fmt::format("the receiver {} is also a sender", p_.dst));
  if (p_.gap.size() != p_.senders.size())
    fail(n, fmt::format("{} gaps for {} senders", p_.gap.size(), p_.senders.size()));
  for (Time g : p_.gap) {
    if (g < Time::zero()) fail(n, "gaps must be >= 0");
    if (p_.count == 0 && g == Time::zero()) fail(n, "an unbounded count needs gaps > 0");
  }
  rng_.reserve(p_.senders.size());
  for (int s : p_.senders) rng_.push_back(Rng::stream(p_.seed, p_.stream, static_cast<uint64_t>(s)));
  sent_.assign(p_.senders.size(), 0);
  heap_.reserve(p_.senders.size());
  if (p_.start < p_.stop)
    for (uint32_t i = 0; i < p_.senders.size(); ++i) heap_.push_back(Entry{p_.start.ps, i});
  std::make_heap(heap_.begin(), heap_.end(), later);
}

bool BurstTrains::next(FlowSpec& out) {
  if (heap_.empty() || (p_.max_flows != 0 && generated_ >= p_.max_flows)) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry e = heap_.back();
  heap_.pop_back();
  out.src = p_.senders[e.idx];
  out.dst = p_.dst;
  out.priority = p_.flow.priority;
  out.dport = p_.flow.dport;
  out.class_id = p_.flow.class_id;
  out.size_bytes = draw_size(p_.flow, rng_[e.idx]);
  out.start = Time::from_ps(e.t);
  ++generated_;
  const uint64_t sent = ++sent_[e.idx];
  const int64_t gap = p_.gap[e.idx].ps;
  if ((p_.count == 0 || sent < p_.count) && gap < p_.stop.ps - e.t) {
    heap_.push_back(Entry{e.t + gap, e.idx});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Helpers

std::vector<int> random_derangement(size_t n, Rng& rng) {
  if (n < 2) throw std::invalid_argument("random_derangement: needs n >= 2");
  std::vector<int> p(n);
  for (;;) {
    std::iota(p.begin(), p.end(), 0);
    for (size_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
    bool fixed = false;
    for (size_t i = 0; i < n && !fixed; ++i) fixed = p[i] == static_cast<int>(i);
    if (!fixed) return p;
  }
}

std::vector<int> random_subset(std::vector<int> from, size_t k, Rng& rng) {
  if (k > from.size()) throw std::invalid_argument("random_subset: k exceeds the set");
  for (size_t i = 0; i < k; ++i) std::swap(from[i], from[i + rng.below(from.size() - i)]);
  from.resize(k);
  return from;
}

}  // namespace rocesim
