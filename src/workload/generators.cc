#include "workload/generators.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.h"

namespace rocesim {

PoissonAllToAll::PoissonAllToAll(PoissonAllToAllParams p) : p_(std::move(p)) {
  auto bad = [](const std::string& what) {
    throw InputError("", 0, "poisson all-to-all generator: " + what);
  };
  if (p_.hosts.size() < 2) bad("needs at least 2 hosts, got " + std::to_string(p_.hosts.size()));
  if (p_.sizes == nullptr) bad("no flow-size distribution");
  if (!(p_.host_rate.bps > 0)) bad("host rate must be > 0");
  if (!(p_.load > 0 && p_.load <= 1)) bad("load must be in (0, 1], got " + std::to_string(p_.load));
  if (!(p_.sizes->mean_bytes() > 0)) bad("flow-size distribution '" + p_.sizes->name() + "' has mean 0");
  if (p_.priority < 0 || p_.priority > 7) bad("priority must be in 0..7");
  if (p_.start < Time::zero()) bad("start time must be >= 0");
  if (p_.stop < p_.start) bad("stop time is before start time");
  std::vector<int> ids = p_.hosts;
  std::sort(ids.begin(), ids.end());
  if (ids.front() < 0) bad("negative host id " + std::to_string(ids.front()));
  if (auto d = std::adjacent_find(ids.begin(), ids.end()); d != ids.end()) {
    bad("host " + std::to_string(*d) + " listed twice");
  }
  // traffic_gen.py: avg_inter_arrival = 1 / (bandwidth * load / 8 / avg) seconds, per host.
  mean_gap_ps_ = p_.sizes->mean_bytes() / (p_.host_rate.bps * p_.load / 8.0) * 1e12;
  rng_.reserve(p_.hosts.size());
  heap_.reserve(p_.hosts.size());
  for (size_t i = 0; i < p_.hosts.size(); ++i) {
    rng_.push_back(Rng::stream(p_.seed, p_.stream, static_cast<uint64_t>(p_.hosts[i])));
  }
  for (size_t i = 0; i < p_.hosts.size(); ++i) schedule(static_cast<uint32_t>(i), p_.start.ps);
}

void PoissonAllToAll::schedule(uint32_t idx, int64_t t_ps) {
  const double gap = std::round(rng_[idx].exponential(mean_gap_ps_));
  if (gap >= static_cast<double>(p_.stop.ps - t_ps)) return;  // at or after stop: host is done
  heap_.push_back(Entry{t_ps + static_cast<int64_t>(gap), idx});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool PoissonAllToAll::next(FlowSpec& out) {
  if (heap_.empty() || (p_.max_flows != 0 && generated_ >= p_.max_flows)) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry e = heap_.back();
  heap_.pop_back();
  Rng& rng = rng_[e.idx];
  const size_t n = p_.hosts.size();
  size_t d = static_cast<size_t>(rng.below(n - 1));  // uniform among the other n-1 hosts
  if (d >= e.idx) ++d;
  out.src = p_.hosts[e.idx];
  out.dst = p_.hosts[d];
  out.priority = p_.priority;
  out.dport = p_.dport;
  out.size_bytes = p_.sizes->sample(rng);
  out.start = Time::from_ps(e.t);
  out.class_id = p_.class_id;
  ++generated_;
  schedule(e.idx, e.t);
  return true;
}

void MergedSource::add(FlowSource* source) {
  if (source == nullptr) throw std::invalid_argument("MergedSource::add: null source");
  inputs_.push_back(Input{source, FlowSpec{}});
  unprimed_ = true;
}

void MergedSource::add(std::unique_ptr<FlowSource> source) {
  add(source.get());
  owned_.push_back(std::move(source));
}

void MergedSource::pull(uint32_t idx) {
  Input& in = inputs_[idx];
  const bool had = in.primed;
  const Time prev = in.head.start;
  in.primed = true;
  if (!in.src->next(in.head)) return;
  if (had && in.head.start < prev) {
    throw std::logic_error("MergedSource: source " + std::to_string(idx) + " is not sorted by start time");
  }
  heap_.push_back(Entry{in.head.start.ps, idx});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool MergedSource::next(FlowSpec& out) {
  if (unprimed_) {
    for (uint32_t i = 0; i < inputs_.size(); ++i) {
      if (!inputs_[i].primed) pull(i);
    }
    unprimed_ = false;
  }
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const uint32_t idx = heap_.back().idx;
  heap_.pop_back();
  out = inputs_[idx].head;
  out.id = emitted_++;
  pull(idx);
  return true;
}

}  // namespace rocesim
