#include "core/simulator.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>

namespace rocesim {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

void Simulator::partition(const std::vector<uint32_t>& part_of_handler, uint32_t num_parts, Time lookahead,
                          int threads) {
  if (num_parts == 0) throw std::invalid_argument("Simulator::partition: no partition");
  if (lookahead <= Time::zero())
    throw std::invalid_argument("Simulator::partition: lookahead must be positive");
  // Events scheduled during set-up wait in the single queue: take them out and place them again.
  std::vector<Event> pending;
  for (auto& p : parts_) {
    while (!p->q.empty()) pending.push_back(p->q.pop());
    for (auto& par : p->outbox)
      for (auto& box : par) pending.insert(pending.end(), box.begin(), box.end());
  }
  part_of_.assign(handlers_.size(), 0);
  for (uint32_t h = 1; h < handlers_.size(); ++h) {
    uint32_t root = h;
    for (int guard = 0; home_[root] != 0 && guard < 64; ++guard) root = home_[root];
    part_of_[h] = root < part_of_handler.size() ? part_of_handler[root] : 0;
    if (part_of_[h] >= num_parts) throw std::invalid_argument("Simulator::partition: partition out of range");
  }
  if (num_parts == 1) part_of_.clear();  // every event is local: routing an event need not look it up
  parts_.clear();
  for (uint32_t i = 0; i < num_parts; ++i) {
    parts_.push_back(std::make_unique<Partition>());
    parts_.back()->id = i;
    parts_.back()->now = now_;
    for (auto& par : parts_.back()->outbox) par.resize(num_parts);
    for (auto& from : parts_.back()->mail_from) from.assign(num_parts, 0);
  }
  // Ranks take runs of consecutive partitions; the partitions of other ranks stay as empty stand-ins,
  // whose mailboxes receive what those ranks send this one.
  const int ranks = comm_ ? comm_->size() : 1;
  rank_of_part_.assign(num_parts, 0);
  local_parts_.clear();
  for (uint32_t i = 0; i < num_parts; ++i) {
    rank_of_part_[i] = static_cast<int>(uint64_t{i} * static_cast<uint64_t>(ranks) / num_parts);
    if (is_local(i)) local_parts_.push_back(i);
  }
  for (const Event& e : pending) post(e);
  lookahead_ = lookahead;
  threads_ = std::max(1, std::min<int>(threads, static_cast<int>(local_parts_.size())));
}

void Simulator::add_single_partition() {
  parts_.push_back(std::make_unique<Partition>());
  for (auto& par : parts_.back()->outbox) par.resize(1);
  for (auto& from : parts_.back()->mail_from) from.assign(1, 0);
  local_parts_ = {0};
}

std::vector<Simulator::PartitionStats> Simulator::partition_stats() const {
  std::vector<PartitionStats> s;
  for (const auto& p : parts_) s.push_back(p->stats);
  return s;
}

uint64_t Simulator::events_executed() const {
  uint64_t n = 0;
  for (const auto& p : parts_) n += p->stats.events;
  return n;
}

size_t Simulator::events_pending() const {
  size_t n = 0;
  const int par = static_cast<int>((windows_ + 1) & 1);  // boxes written by the last window
  for (const auto& p : parts_) {
    n += p->q.size();
    for (const auto& box : p->outbox[par]) n += box.size();
  }
  return n;
}

size_t Simulator::foreground_pending() const { return comm_ ? agreed_foreground_ : local_foreground(); }

Time Simulator::next_event_time() const { return comm_ ? agreed_next_ : local_next_event_time(); }

size_t Simulator::local_foreground() const {
  size_t n = 0;
  const int par = static_cast<int>((windows_ + 1) & 1);
  for (const auto& p : parts_) n += p->q.size() - p->background + p->out_foreground[par];
  return n;
}

Time Simulator::local_next_event_time() const {
  Time t = Time::max();
  const int par = static_cast<int>((windows_ + 1) & 1);
  for (const auto& p : parts_) {
    if (!p->q.empty()) t = std::min(t, Time{p->q.top().t_ps()});
    t = std::min(t, p->out_min[par]);
  }
  return t;
}

// Window number w writes outbox[w & 1] and reads what window w - 1 wrote to outbox[(w + 1) & 1].
void Simulator::run_partition(Partition& p, Time end) {
  const auto t0 = std::chrono::steady_clock::now();
  Exec exec{this, &p, p.user};
  tl_exec_ = &exec;
  const int write = static_cast<int>(windows_ & 1), read = write ^ 1;
  std::vector<uint8_t>& from = p.mail_from[read];
  for (size_t s = 0; s < from.size(); ++s) {
    if (!from[s]) continue;
    from[s] = 0;
    std::vector<Event>& box = parts_[s]->outbox[read][p.id];
    for (const Event& e : box) push_local(p, e);
    box.clear();
  }
  p.out_min[write] = Time::max();
  p.out_foreground[write] = 0;
  p.window = write;
  try {
    EventQueue& q = p.q;
    while (!q.empty() && q.top().t_ps() < end.ps) {
      const Event e = q.pop();
      if (!q.empty() && (q.top().kind & kArgIsAddress)) {
        const Event& next = q.top();
        Event::prefetch_arg(next.kind, next.arg);
        __builtin_prefetch(handlers_[next.target]);
      }
      if (e.kind & kBackground) --p.background;
      p.now = Time{e.t_ps()};
      p.cur_key = e.key;
      EventHandler* h = handlers_[e.target];
      p.ctx = h;
      ++p.stats.events;
      h->on_event(e.kind & ~(kBackground | kArgTwoLines), e.arg);
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
    stop();
  }
  tl_exec_ = nullptr;
  p.window_seconds = seconds_since(t0);
  p.stats.busy_seconds += p.window_seconds;
}

// Longest first, by the last window's time: a window's partitions are list-scheduled on the threads, and
// taking the heaviest first leaves the small ones to fill in at the end (LPT). Work moves slowly from window
// to window, so the last window's time foretells the next one's; the order changes nothing but the time.
// Measured by the schedule model (account_schedule) on a k = 24 fat-tree with 64 partitions, one thread:
// 16 threads' windows 4.5 % shorter than in partition order.
void Simulator::order_partitions() {
  order_ = local_parts_;
  std::stable_sort(order_.begin(), order_.end(), [this](uint32_t a, uint32_t b) {
    return parts_[a]->window_seconds > parts_[b]->window_seconds;
  });
}

double Simulator::list_schedule(const std::vector<double>& seconds, int threads) {
  std::array<double, kScheduleThreads[kScheduleCounts - 1]> finish{};
  const auto n = static_cast<ptrdiff_t>(std::clamp<int>(threads, 1, static_cast<int>(finish.size())));
  const auto later = std::greater<double>();  // a min-heap of the threads' finish times (all 0: a heap)
  double makespan = 0;
  for (double t : seconds) {
    std::pop_heap(finish.begin(), finish.begin() + n, later);
    finish[n - 1] += t;
    makespan = std::max(makespan, finish[n - 1]);
    std::push_heap(finish.begin(), finish.begin() + n, later);
  }
  return makespan;
}

// The window's partitions in the order the threads take them (order_), list-scheduled on each thread count.
void Simulator::account_schedule() {
  window_times_.clear();
  for (uint32_t i : order_) window_times_.push_back(parts_[i]->window_seconds);
  for (size_t k = 0; k < kScheduleCounts; ++k)
    schedule_seconds_[k] += list_schedule(window_times_, kScheduleThreads[k]);
}

std::vector<Simulator::ScheduleBound> Simulator::schedule_bound() const {
  std::vector<ScheduleBound> out;
  if (local_parts_.size() < 2) return out;
  for (size_t k = 0; k < kScheduleCounts; ++k) out.push_back({kScheduleThreads[k], schedule_seconds_[k]});
  return out;
}

void Simulator::run_window(Time end) {
  if (threads_ <= 1 || local_parts_.size() == 1) {
    for (uint32_t i : local_parts_) run_partition(*parts_[i], end);
    return;
  }
  if (workers_.empty()) start_workers();
  const auto t0 = std::chrono::steady_clock::now();
  double busy0 = 0;
  for (const auto& p : parts_) busy0 += p->stats.busy_seconds;
  window_end_ = end;
  next_part_.store(0, std::memory_order_relaxed);
  start_barrier_->arrive_and_wait();
  for (uint32_t i; (i = next_part_.fetch_add(1, std::memory_order_relaxed)) < order_.size();)
    run_partition(*parts_[order_[i]], end);
  end_barrier_->arrive_and_wait();
  double busy1 = 0;
  for (const auto& p : parts_) busy1 += p->stats.busy_seconds;
  wait_seconds_ += std::max(0.0, seconds_since(t0) * threads_ - (busy1 - busy0));
}

std::chrono::nanoseconds Simulator::barrier_spin(int threads) {
  if (const char* env = std::getenv("ROCESIM_BARRIER_SPIN_US")) {
    char* end = nullptr;
    errno = 0;
    const long long us = std::strtoll(env, &end, 10);
    if (end == env || *end != '\0' || errno != 0 || us < 0 || us > 1'000'000)
      throw std::invalid_argument("$ROCESIM_BARRIER_SPIN_US is '" + std::string(env) +
                                  "': expected whole microseconds from 0 to 1000000 (how long a thread spins "
                                  "at a window's barrier before it sleeps; docs/parallel.md)");
    return std::chrono::microseconds(us);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 || static_cast<unsigned>(threads) <= cores ? kBarrierSpin : std::chrono::nanoseconds(0);
}

void Simulator::start_workers() {
  const std::chrono::nanoseconds spin = barrier_spin(threads_);
  start_barrier_ = std::make_unique<WindowBarrier>(threads_, spin);
  end_barrier_ = std::make_unique<WindowBarrier>(threads_, spin);
  quit_ = false;
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

void Simulator::stop_workers() {
  if (workers_.empty()) return;
  quit_ = true;
  start_barrier_->arrive_and_wait();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

void Simulator::worker_loop() {
  for (;;) {
    start_barrier_->arrive_and_wait();
    if (quit_) return;
    const Time end = window_end_;
    for (uint32_t i; (i = next_part_.fetch_add(1, std::memory_order_relaxed)) < order_.size();)
      run_partition(*parts_[order_[i]], end);
    end_barrier_->arrive_and_wait();
  }
}

void Simulator::run(Time until, Coordinator* coord, const std::function<void(Time)>& progress,
                    uint64_t progress_every) {
  if (parts_.empty()) add_single_partition();
  const int64_t w = lookahead_.ps;
  uint64_t next_progress = events_executed() + progress_every;
  std::vector<BarrierTask*> due;
  for (;;) {
    const auto c0 = std::chrono::steady_clock::now();
    if (comm_) sync_ranks();
    if (stopped()) break;
    // Idle (background events only, no flow to come, nothing waiting for a timer): done, unless the
    // coordinator still has bookkeeping for the next grid boundary (it may release flows). The tasks due
    // now would only observe an idle network, so they do not run.
    const Time input = coord ? coord->next_input(now_) : Time::max();
    const bool idle = foreground_pending() == 0 && input == Time::max() && !(coord && coord->awaits_timers());
    const bool pending = coord && coord->pending_work();
    if (idle && !pending) break;
    if (!idle) {
      due.clear();
      for (BarrierTask* t : tasks_)
        if (t->next_barrier() <= now_) due.push_back(t);
      for (BarrierTask* t : due) t->on_barrier(now_);
      if (stopped() && !comm_) break;  // across ranks: at the next agreement
    }
    const Time next = pending ? now_ : std::min(next_event_time(), input);
    if (next >= until) break;
    const Time from = std::max(now_, next);
    Time end = Time::from_ps((from.ps / w + 1) * w);
    if (!idle)
      for (BarrierTask* t : tasks_) {
        const Time b = t->next_barrier();
        if (b > now_ && b < end) end = b;
      }
    end = std::min(end, until);
    if (coord) coord->before_window(now_, end);
    if (local_parts_.size() > 1) order_partitions();
    coord_seconds_ += seconds_since(c0);
    run_window(end);
    if (local_parts_.size() > 1)
      account_schedule();  // an instrument: counted as neither work nor coordinator
    const auto c1 = std::chrono::steady_clock::now();
    if (comm_) exchange_ranks();
    ++windows_;
    now_ = end;
    if (error_ && !comm_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
    if (coord) coord->after_window(end, end.ps % w == 0);
    if (progress && events_executed() >= next_progress) {
      next_progress = events_executed() + progress_every;
      progress(now_);
    }
    coord_seconds_ += seconds_since(c1);
  }
  // The clock stays at the last event run, as a single queue leaves it.
  Time last;
  for (uint32_t i : local_parts_) last = std::max(last, parts_[i]->now);
  if (comm_) {
    int64_t v = -last.ps;
    comm_->all_min(&v, 1);
    last = Time{-v};
    finish_ranks();
  }
  now_ = std::min(now_, last);
}

// --- ranks ---------------------------------------------------------------------------------------------
namespace {
struct BoxHeader {
  uint32_t from = 0, to = 0, count = 0;
};
}  // namespace

// After a window: what local partitions wrote for partitions of other ranks goes to those ranks, and what
// they wrote for ours lands in the mailboxes of their stand-ins here, read by our partitions next window.
void Simulator::exchange_ranks() {
  const auto t0 = std::chrono::steady_clock::now();
  const int write = static_cast<int>(windows_ & 1);
  const int ranks = comm_->size();
  rank_out_.resize(ranks);
  for (auto& o : rank_out_) o.clear();
  for (uint32_t i : local_parts_) {
    Partition& p = *parts_[i];
    for (uint32_t d = 0; d < parts_.size(); ++d) {
      std::vector<Event>& box = p.outbox[write][d];
      if (box.empty() || is_local(d)) continue;
      std::vector<char>& out = rank_out_[rank_of_part_[d]];
      put_raw(out, BoxHeader{i, d, static_cast<uint32_t>(box.size())});
      for (const Event& e : box) codec_->encode(e, i, out);
      box.clear();
      parts_[d]->mail_from[write][i] = 0;  // a stand-in's: its mail went to its rank
    }
  }
  comm_->exchange(rank_out_, rank_in_);
  for (const std::vector<char>& in : rank_in_) {
    const char* c = in.data();
    const char* end = c + in.size();
    while (c < end) {
      const auto h = take_raw<BoxHeader>(c);
      if (h.from >= parts_.size() || h.to >= parts_.size() || !is_local(h.to))
        throw std::logic_error("Simulator: events from another rank for a partition not here");
      std::vector<Event>& box = parts_[h.from]->outbox[write][h.to];
      if (h.count > 0) parts_[h.to]->mail_from[write][h.from] = 1;
      for (uint32_t k = 0; k < h.count; ++k) box.push_back(codec_->decode(c, h.to));
    }
  }
  exchange_seconds_ += seconds_since(t0);
}

// Before a window: every rank agrees on the next event, whether any events are pending, a stop and an
// error (a rank whose event threw rethrows it; the others stop with a message naming it).
void Simulator::sync_ranks() {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t v[4] = {local_next_event_time().ps, -static_cast<int64_t>(local_foreground()), stopped() ? -1 : 0,
                  error_ ? -1 - comm_->rank() : 0};
  comm_->all_min(v, 4);
  exchange_seconds_ += seconds_since(t0);
  agreed_next_ = Time{v[0]};
  agreed_foreground_ = static_cast<size_t>(-v[1]);
  if (v[2] < 0) stop();
  if (v[3] < 0) {
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
    throw std::runtime_error("rank " + std::to_string(-1 - v[3]) +
                             " of this run failed (its message says why)");
  }
}

// After run(): every partition's statistics, on every rank (the stand-ins take their rank's).
void Simulator::finish_ranks() {
  std::vector<char> mine;
  put_raw(mine, RankStats{comm_->bytes_sent(), exchange_seconds_});
  for (uint32_t i : local_parts_) {
    put_raw(mine, i);
    put_raw(mine, parts_[i]->stats);
  }
  std::vector<std::vector<char>> all;
  comm_->all_gather(mine, all);
  rank_stats_.assign(comm_->size(), RankStats{});
  for (int r = 0; r < comm_->size(); ++r) {
    const char* c = all[r].data();
    const char* end = c + all[r].size();
    rank_stats_[r] = take_raw<RankStats>(c);
    if (r == comm_->rank()) continue;
    while (c < end) {
      const auto i = take_raw<uint32_t>(c);
      parts_.at(i)->stats = take_raw<PartitionStats>(c);
    }
  }
}

}  // namespace rocesim
