#include "net/partitioned_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "net/fabric.h"
#include "net/flows.h"

namespace rocesim {

void PartitionedRun::set_parallel(int threads, int partitions) {
  if (started_) throw std::logic_error("Network::set_threads or set_partitions after the run started");
  if (partitions < 0) throw std::invalid_argument("a negative number of partitions");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads == kThreadsAuto) threads = auto_threads(cores);
  if (threads <= 0) threads = cores;
  threads_ = threads;
  partitions_ = partitions;
  partition_fabric();
}

void PartitionedRun::start() {
  started_ = true;
  if (!partitioned_) partition_fabric();
}

void PartitionedRun::run(Time until, bool stop_when_done, const std::function<void(Time)>& progress,
                         uint64_t progress_every) {
  stop_when_done_ = stop_when_done;
  if (stop_when_done && flows_.all_done()) return;
  sim_.run(until, this, progress, progress_every);
  if (PacketTrace* t = results_.packet_trace()) t->absorb(parts_);
  if (comm_) gather_rank_stats();
}

NetStats PartitionedRun::stats() const {
  NetStats s = other_ranks_stats_;
  for (uint32_t i = 0; i < parts_.size(); ++i)
    if (sim_.is_local(i)) merge_stats(s, parts_[i]->counters);
  return s;
}

int64_t PartitionedRun::packets_live() const {
  int64_t n = 0;
  for (const auto& p : parts_) n += p->pool.live();
  return n;
}

// --- partitions ------------------------------------------------------------------------------------
// An atom is a switch with the hosts whose first link goes to it (a host with several links: its shortest
// link, the first of equal ones, so that a GPU goes with its NVSwitch and the NVLinks, shorter than the
// NIC's, never cross atoms); a host without a switch is one alone. The lookahead is the smallest delay of a
// link between two atoms: the grid of window boundaries, the same for every thread count. Partitions are runs
// of consecutive atoms, balanced by ports: in switch id order, or pod by pod when the topology names pods
// (each pod's switches together, the switches above the pods dealt out among them), so that most packets stay
// in their partition.
//
// How many: one per thread and rank at least, and kPartitionsPerThread per thread when there are several
// threads (at most one per atom), so that the threads, taking partitions as they come, even out each window.
// A large fabric gets more, about one per kCacheBlockWeight
// (ports + nodes), even on one thread: each window then runs the partitions one after another, and what an
// event leaves for the next events of its partition (a port's queue, a packet, a QP) is still in the cache
// more often, because only that partition's work came in between. On one thread a fat-tree of 3,456 hosts
// took 7 and 31 % less time with its 12 partitions than with 1, one of 8,192 hosts about half less with 29
// (docs/parallel.md, "Partitions for the cache").
namespace {

// The smallest delay of a link between two atoms: the lookahead; Time::max() with a single atom.
Time cross_atom_delay(const TopoSpec& topo, const std::vector<int>& atom) {
  Time d = Time::max();
  for (const LinkSpec& l : topo.links)
    if (atom[l.a] != atom[l.b]) d = std::min(d, l.delay);
  return d;
}

// The atom of every node: its own id for a switch, its shortest link's switch for a host (else its own).
std::vector<int> atom_of_nodes(Fabric& fabric) {
  const TopoSpec& topo = fabric.topo();
  const int n = fabric.num_nodes();
  std::vector<int> atom(n, -1);
  for (int i = 0; i < n; ++i)
    if (topo.is_switch[i]) atom[i] = i;
  for (int i = 0; i < n; ++i) {
    if (topo.is_switch[i]) continue;
    const auto& ports = fabric.node(i).ports();
    size_t k = 0;
    for (size_t j = 1; j < ports.size(); ++j)
      if (ports[j].delay < ports[k].delay) k = j;
    atom[i] = !ports.empty() && ports[k].peer->is_switch() ? ports[k].peer->id() : i;
  }
  return atom;
}

// The atoms in id order (or pod by pod), and the weight of each (its nodes' ports + nodes: a proxy for its
// events), indexed by atom id.
std::vector<int> ordered_atoms(Fabric& fabric, const std::vector<int>& atom, std::vector<int64_t>& weight) {
  const TopoSpec& topo = fabric.topo();
  const int n = fabric.num_nodes();
  std::vector<int> atoms;
  weight.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    weight[atom[i]] += static_cast<int64_t>(fabric.node(i).ports().size()) + 1;
    if (atom[i] == i) atoms.push_back(i);
  }
  if (topo.pod.empty()) return atoms;
  int pods = 0, above = 0;
  for (int a : atoms) {
    pods = std::max(pods, topo.pod[a] + 1);
    above += topo.pod[a] < 0;
  }
  // A pod's place is its number; the k-th switch above the pods goes in the middle of pod k x pods / above.
  std::vector<int64_t> place(n, 0);
  int64_t k = 0;
  for (int a : atoms)
    place[a] = topo.pod[a] >= 0 ? int64_t{2} * above * topo.pod[a] + above : (2 * k++ + 1) * pods;
  std::stable_sort(atoms.begin(), atoms.end(), [&](int x, int y) { return place[x] < place[y]; });
  return atoms;
}

}  // namespace

void PartitionedRun::partition_fabric() {
  partitioned_ = true;
  const int n = fabric_.num_nodes();
  const std::vector<int> atom = atom_of_nodes(fabric_);
  Time lookahead = cross_atom_delay(fabric_.topo(), atom);
  const bool zero_delay = lookahead <= Time::zero();
  const bool splittable = !zero_delay && lookahead < Time::max();  // two atoms or more
  if (lookahead == Time::max()) lookahead = Time::from_us(1);      // one atom: any grid will do
  if (zero_delay) {
    if (threads_ > 1 || comm_ || partitions_ > 1)
      throw std::invalid_argument(
          "cannot run on several threads, ranks or partitions: a link between two switches has no delay, "
          "which leaves the partitions no lookahead (give it a delay, or run with threads = 1 and one "
          "partition in one process)");
    lookahead = Time::from_us(1);
  }
  std::vector<int64_t> weight;
  const std::vector<int> atoms = ordered_atoms(fabric_, atom, weight);
  int64_t total = 0;
  for (int a : atoms) total += weight[a];
  const bool homeless = has_homeless_handler();  // it can only run in a single partition
  const size_t ranks = comm_ ? static_cast<size_t>(comm_->size()) : 1;
  const size_t minimum = static_cast<size_t>(threads_) * ranks;
  size_t wanted = static_cast<size_t>(partitions_);
  if (wanted == 0) {
    wanted = minimum;
    if (!homeless && splittable)
      wanted = static_cast<size_t>(chosen_partitions(total, threads_, static_cast<int64_t>(ranks)));
  } else if (wanted < minimum) {
    throw std::invalid_argument(fmt::format(
        "{} is fewer than the threads x ranks ({} x {}): give at least {}, or 0 to let rocesim choose",
        wanted, threads_, ranks, minimum));
  }
  const uint32_t parts = static_cast<uint32_t>(std::max<size_t>(1, std::min(wanted, atoms.size())));
  std::vector<uint32_t> part_of_atom(n, 0);
  int64_t acc = 0;
  for (int a : atoms) {
    part_of_atom[a] =
        static_cast<uint32_t>(std::min<int64_t>(parts - 1, acc * parts / std::max<int64_t>(1, total)));
    acc += weight[a];
  }
  part_of_node_.assign(n, 0);
  std::vector<uint32_t> part_of_handler(sim_.num_handlers(), 0);
  for (int i = 0; i < n; ++i) {
    part_of_node_[i] = part_of_atom[atom[i]];
    part_of_handler[fabric_.node(i).handler()] = part_of_node_[i];
  }
  if (parts > 1 && homeless)
    throw std::logic_error("a handler without a home node in a run over several partitions");
  // Exactly `parts` of them: a second cut into fewer must not leave partitions the simulator no longer has
  // (the loops over parts_ ask it which are local).
  while (parts_.size() < parts) parts_.push_back(std::make_unique<NetPartition>());
  parts_.resize(parts);
  sim_.partition(part_of_handler, parts, lookahead, threads_);
  for (uint32_t i = 0; i < parts; ++i) sim_.set_partition_user(i, parts_[i].get());
}

int PartitionedRun::auto_threads(int cores) const {
  const TopoSpec& topo = fabric_.topo();
  const Time lookahead = cross_atom_delay(topo, atom_of_nodes(fabric_));
  const bool splittable = lookahead > Time::zero() && lookahead < Time::max();  // as partition_fabric's
  return fabric_weight(topo) >= kThreadsAutoWeight && splittable && !has_homeless_handler() ? cores : 1;
}

bool PartitionedRun::has_homeless_handler() const {
  for (uint32_t h = 1; h < sim_.num_handlers(); ++h)
    if (sim_.home_of(h) == 0 && !is_node_handler(h)) return true;
  return false;
}

bool PartitionedRun::is_node_handler(uint32_t h) const {
  const EventHandler* e = sim_.handler(h);
  return e != nullptr && dynamic_cast<const Node*>(e) != nullptr;
}

// --- between windows -------------------------------------------------------------------------------
Time PartitionedRun::next_input(Time now) { return flows_.next_start(now); }

bool PartitionedRun::pending_work() const {
  if (!ranks_done_.empty()) return true;
  for (const auto& p : parts_)
    if (!p->done.empty()) return true;  // finished flows wait for the next grid boundary
  return false;
}

// Between windows: a flow allocated and not finished (the finished ones wait in the done lists for the
// next grid boundary) has a timer that may be all that can move it on.
bool PartitionedRun::awaits_timers() const {
  size_t finished = ranks_done_.size() + finishing_.size();
  for (const auto& p : parts_) finished += p->done.size();
  return flows_.live() > finished;
}

void PartitionedRun::before_window(Time now, Time end) {
  (void)now;
  flows_.post_starts_before(end);
}

void PartitionedRun::after_window(Time end, bool grid) {
  (void)end;
  if (comm_) share_between_ranks();
  replay_calls();
  replay_cc_rows();
  if (PacketTrace* t = results_.packet_trace()) t->absorb(parts_);
  if (grid) finish_flows();
}

// The calls of every partition in the order of their events (one event's calls are in one partition).
void PartitionedRun::replay_calls() {
  gather_in_event_order(parts_, &NetPartition::calls, replay_, &ranks_calls_);
  if (replay_.empty()) return;
  const Time barrier = sim_.now();
  for (const NetPartition::Call& c : replay_) {
    sim_.set_barrier_clock(c.t);
    replay(c);
  }
  sim_.set_barrier_clock(barrier);
}

// The traced flows' state rows of every partition, in the order of their events, to on_cc_state.
void PartitionedRun::replay_cc_rows() {
  gather_in_event_order(parts_, &NetPartition::cc_rows, cc_rows_, &ranks_cc_rows_);
  if (cc_rows_.empty()) return;
  const auto& obs = results_.observers().on_cc_state;
  if (!obs) return;
  for (const CcStateRow& r : cc_rows_) obs(r);
}

// One call, to its observer (or, for a finished flow, to the results).
void PartitionedRun::replay(const NetPartition::Call& c) {
  NetObservers& obs = results_.observers();
  switch (c.type) {
    case NetPartition::Call::kPfc:
      if (obs.on_pfc_rx) obs.on_pfc_rx(fabric_.node(c.node), c.port, c.prio, c.flag, c.t);
      break;
    case NetPartition::Call::kDelivered:
      if (obs.on_data_delivered) obs.on_data_delivered(flows_.qp(c.slot), c.payload);
      break;
    case NetPartition::Call::kCnp:
      if (obs.on_cnp_received) obs.on_cnp_received(flows_.qp(c.slot), c.flag);
      break;
    case NetPartition::Call::kFinished:
      results_.flow_finished(c.record);
      break;
  }
}

// At a grid boundary: retire the flows finished since the last one (in the order they finished), and stop
// when everything is done.
void PartitionedRun::finish_flows() {
  for (auto& p : parts_) {
    finishing_.insert(finishing_.end(), p->done.begin(), p->done.end());
    p->done.clear();
  }
  finishing_.insert(finishing_.end(), ranks_done_.begin(), ranks_done_.end());
  ranks_done_.clear();
  if (finishing_.empty()) return;
  std::sort(finishing_.begin(), finishing_.end(),
            [](const NetPartition::Done& a, const NetPartition::Done& b) { return a.key < b.key; });
  flows_.retire(finishing_, sim_.lookahead());
  finishing_.clear();
  if (stop_when_done_ && flows_.all_done()) sim_.stop();
}

}  // namespace rocesim
