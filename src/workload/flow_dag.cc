#include "workload/flow_dag.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace rocesim {

uint32_t FlowDag::add(int src, int dst, Bytes bytes, uint32_t step, Time delay, Time not_before) {
  if (flows_.size() >= UINT32_MAX) throw std::length_error("FlowDag: too many flows");
  Flow f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.step = step;
  f.delay = delay;
  f.not_before = not_before;
  flows_.push_back(f);
  return static_cast<uint32_t>(flows_.size() - 1);
}

int64_t FlowDag::seal(bool steps_from_depth) {
  std::sort(edges_.begin(), edges_.end());
  edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  for (Flow& f : flows_) f.waits = 0;
  std::vector<uint32_t> count(flows_.size() + 1, 0);
  for (auto [on, flow] : edges_) {
    ++count[on];
    ++flows_[flow].waits;
  }
  uint32_t at = 0;
  for (size_t i = 0; i < flows_.size(); ++i) {
    flows_[i].first_child = at;
    at += count[i];
  }
  children_.resize(edges_.size());
  for (size_t i = 0; i < edges_.size(); ++i) children_[i] = edges_[i].second;  // sorted by `on`
  edges_.clear();
  edges_.shrink_to_fit();
  // Kahn's algorithm: every flow is reached exactly when the graph has no cycle.
  std::vector<uint32_t> left(flows_.size()), order, depth(flows_.size(), 0);
  order.reserve(flows_.size());
  for (size_t i = 0; i < flows_.size(); ++i) {
    left[i] = flows_[i].waits;
    if (left[i] == 0) order.push_back(static_cast<uint32_t>(i));
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    auto [b, e] = children(i);
    for (const uint32_t* c = b; c != e; ++c) {
      depth[*c] = std::max(depth[*c], depth[i] + 1);
      if (--left[*c] == 0) order.push_back(*c);
    }
  }
  if (order.size() != flows_.size()) {
    // A flow left over waits (directly or not) for a cycle; walk back along unfinished waits to one on it.
    std::vector<uint32_t> parent(flows_.size(), UINT32_MAX);
    for (uint32_t i = 0; i < flows_.size(); ++i) {
      auto [b, e] = children(i);
      for (const uint32_t* c = b; c != e; ++c)
        if (left[i] > 0 && left[*c] > 0) parent[*c] = i;
    }
    uint32_t x = 0;
    while (left[x] == 0) ++x;
    for (size_t n = 0; n < flows_.size(); ++n) x = parent[x];  // n steps back: surely on the cycle
    return x;
  }
  steps_ = 0;
  total_bytes_ = 0;
  for (size_t i = 0; i < flows_.size(); ++i) {
    if (steps_from_depth) flows_[i].step = depth[i];
    steps_ = std::max(steps_, flows_[i].step + 1);
    total_bytes_ += flows_[i].bytes;
  }
  return -1;
}

size_t DagRunner::add(DagJob job) {
  Job j;
  j.waits_left.resize(job.dag.size());
  if (job.dag.has_timers()) j.ready.resize(job.dag.size());
  unreleased_ += static_cast<uint64_t>(job.dag.size()) * job.iterations;
  if (job.dag.named()) {
    if (job.dag.size() >= UINT32_MAX - names_) throw std::length_error("DagRunner: too many named flows");
    j.name_base = names_;
    names_ += static_cast<uint32_t>(job.dag.size());
  }
  j.spec = std::move(job);
  jobs_.push_back(std::move(j));
  return jobs_.size() - 1;
}

const std::string& DagRunner::flow_name(uint32_t id) const {
  static const std::string kNone;
  if (id == 0) return kNone;
  for (const Job& j : jobs_)
    if (j.spec.dag.named() && id > j.name_base && id - j.name_base <= j.spec.dag.size())
      return j.spec.dag.name(id - j.name_base - 1);
  return kNone;
}

void DagRunner::begin(Releaser& r) {
  for (uint32_t j = 0; j < jobs_.size(); ++j)
    if (jobs_[j].spec.iterations > 0 && jobs_[j].spec.dag.size() > 0)
      begin_iteration(j, jobs_[j].spec.start, r);
  run_timers(r);
}

void DagRunner::push_edge(Job& job, Time t, int32_t comm, int32_t compute) {
  job.edges.push_back({t, comm, compute});
  std::push_heap(job.edges.begin(), job.edges.end(), std::greater<>());
}

void DagRunner::advance(Job& job, Time t) {
  IterationTimes& it = job.iters.back();
  const auto account = [&](Time to) {
    if (to <= job.accounted) return;
    const Time dt = to - job.accounted;
    if (job.comm_active > 0) it.comm += dt;
    if (job.compute_active > 0) it.compute += dt;
    if (job.comm_active > 0 && job.compute_active == 0) it.exposed_comm += dt;
    job.accounted = to;
  };
  while (!job.edges.empty() && job.edges.front().t <= t) {
    const Job::Edge e = job.edges.front();
    std::pop_heap(job.edges.begin(), job.edges.end(), std::greater<>());
    job.edges.pop_back();
    account(e.t);
    job.comm_active += e.comm;
    job.compute_active += e.compute;
  }
  account(t);
}

void DagRunner::begin_iteration(uint32_t j, Time t, Releaser& r) {
  Job& job = jobs_[j];
  const FlowDag& dag = job.spec.dag;
  job.accounted = t;
  if (job.iters.size() == job.spec.timeline_iteration && dag.size() <= kTimelineMaxFlows)
    job.first.resize(dag.size());
  IterationTimes it;
  it.start = t;
  it.steps.resize(dag.steps());
  it.collectives.resize(dag.collectives());
  job.iters.push_back(std::move(it));
  job.finished = 0;
  job.last_finish = t;
  for (uint32_t f = 0; f < dag.size(); ++f) job.waits_left[f] = dag.flow(f).waits;
  std::fill(job.ready.begin(), job.ready.end(), t);
  for (uint32_t f = 0; f < dag.size(); ++f)
    if (dag.flow(f).waits == 0) release(j, f, t + (dag.is_timer(f) ? Time::zero() : dag.flow(f).delay), r);
}

void DagRunner::release(uint32_t j, uint32_t f, Time at, Releaser& r) {
  Job& job = jobs_[j];
  const FlowDag::Flow& d = job.spec.dag.flow(f);
  IterationTimes& it = job.iters.back();
  --unreleased_;
  if (d.src == FlowDag::kTimer) {  // ready at `at`: finishes `delay` later, without the network
    // Its duration is compute (IterationTimes::compute), on its host when it has one (FlowDag::add_timer).
    const Time ready = std::max(at, it.start + d.not_before), done = ready + d.delay;
    if (d.delay > Time::zero()) {
      push_edge(job, ready, 0, 1);
      push_edge(job, done, 0, -1);
    }
    if (job.iteration == job.spec.timeline_iteration && !job.first.empty())
      job.first[f] = {ready, done, done, done};
    timers_.emplace_back(static_cast<uint64_t>(j) << 32 | f, done);
    return;
  }
  FlowSpec s;
  s.src = d.src;
  s.dst = d.dst;
  s.size_bytes = d.bytes;
  s.priority = job.spec.priority;
  s.class_id = job.spec.class_id;
  if (job.spec.dag.named()) s.name_id = job.name_base + f + 1;
  s.start = std::max(at, it.start + d.not_before);
  // A delay that is compute runs on the source from the moment the flow was ready until `at`, and the flow
  // communicates from its start; any other delay (a step latency) is part of its communication.
  const bool compute = job.spec.dag.delays_compute() && d.delay > Time::zero();
  if (compute) {
    push_edge(job, at - d.delay, 0, 1);
    push_edge(job, at, 0, -1);
  }
  const Time comm_from =
      compute ? s.start : std::min(s.start, std::max(at - d.delay, it.start + d.not_before));
  push_edge(job, comm_from, 1, 0);
  if (job.iteration == job.spec.timeline_iteration && !job.first.empty())
    job.first[f] = {compute ? at - d.delay : comm_from, compute ? at : comm_from, comm_from, Time::zero()};
  StepTimes& st = it.steps[d.step];
  st.start = std::min(st.start, s.start);
  ++st.flows;
  st.bytes += d.bytes;
  if (const uint32_t c = job.spec.dag.collective_of(f); c != FlowDag::kNoCollective) {
    StepTimes& ct = it.collectives[c];
    ct.start = std::min(ct.start, s.start);
    ++ct.flows;
    ct.bytes += d.bytes;
  }
  const uint64_t id = r.release(s);
  live_.get_or_insert(id) = static_cast<uint64_t>(j) << 32 | f;
}

void DagRunner::on_flow_finished(uint64_t id, Time now, Releaser& r) {
  const uint64_t* v = live_.find(id);
  if (v == nullptr) return;  // not one of ours
  const auto j = static_cast<uint32_t>(*v >> 32);
  const auto f = static_cast<uint32_t>(*v);
  live_.erase(id);
  Job& job = jobs_[j];
  advance(job, now);
  --job.comm_active;
  if (job.iteration == job.spec.timeline_iteration && !job.first.empty()) job.first[f].finish = now;
  IterationTimes& it = job.iters.back();
  const FlowDag& dag = job.spec.dag;
  StepTimes& st = it.steps[dag.flow(f).step];
  st.finish = std::max(st.finish, now);
  if (const uint32_t c = dag.collective_of(f); c != FlowDag::kNoCollective)
    it.collectives[c].finish = std::max(it.collectives[c].finish, now);
  finished(j, f, now, r);
  run_timers(r);
}

void DagRunner::run_timers(Releaser& r) {
  while (!timers_.empty()) {
    const auto [key, at] = timers_.back();
    timers_.pop_back();
    finished(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), at, r);
  }
}

void DagRunner::finished(uint32_t j, uint32_t f, Time now, Releaser& r) {
  Job& job = jobs_[j];
  const FlowDag& dag = job.spec.dag;
  IterationTimes& it = job.iters.back();
  const bool timers = dag.has_timers();
  auto [b, e] = dag.children(f);
  for (const uint32_t* c = b; c != e; ++c) {
    if (timers) job.ready[*c] = std::max(job.ready[*c], now);
    if (--job.waits_left[*c] == 0) {
      const Time ready = timers ? job.ready[*c] : now;
      release(j, *c, ready + (dag.is_timer(*c) ? Time::zero() : dag.flow(*c).delay), r);
    }
  }
  job.last_finish = std::max(job.last_finish, now);
  if (++job.finished < dag.size()) return;
  it.finish = job.last_finish;
  advance(job, it.finish);  // a timer may end the iteration after the network's now
  it.done = true;
  if (++job.iteration < job.spec.iterations) begin_iteration(j, it.finish + job.spec.gap, r);
}

}  // namespace rocesim
