// One run over several processes (Network::set_ranks; docs/cluster.md): the rank side of PartitionedRun
// (net/partitioned_run.h) and Network::gather_node_results. Every rank builds the whole network and runs the
// same coordinator (flow arrivals, QP slots, dependent flows) from the same inputs; each simulates only its
// partitions. What crosses ranks:
//  - after every window, the packets a partition sent to another rank's partition (Simulator, with this
//    file's encode/decode: the packet, its INT records and what the scheme keeps beside it);
//  - after every window, the coordinator's inputs: the observer calls (the traced flows' state rows too)
//    and finished flows of every rank (replayed and freed by every rank in key order, as one process does),
//    and the fields of each flow its sender's rank set at its start (source port, start, base RTT, ideal FCT,
//    line rate), which the receiver and the switches on the path read;
//  - after run(), the counters (stats()), and on request (gather_node_results) the per-port PFC statistics
//    and scheme counters rank 0 writes into summary.json.
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "net/network.h"
#include "net/node.h"
#include "net/switch.h"

namespace rocesim {

namespace {
template <typename T>
void put_vector(std::vector<char>& out, const std::vector<T>& v) {
  put_raw(out, static_cast<uint64_t>(v.size()));
  for (const T& x : v) put_raw(out, x);
}
template <typename T>
void take_vector(const char*& in, std::vector<T>& into) {
  const auto n = take_raw<uint64_t>(in);
  for (uint64_t i = 0; i < n; ++i) into.push_back(take_raw<T>(in));
}
}  // namespace

void PartitionedRun::set_ranks(RankComm* comm, int threads, int partitions) {
  if (started_) throw std::logic_error("Network::set_ranks after the run started");
  comm_ = comm;
  sim_.set_ranks(comm, this);
  // Ranks are usually one per core already: threads left out are one per rank.
  set_parallel(threads == kThreadsAuto ? 1 : threads, partitions);
}

// A packet on its way to another rank: the event's key, target and kind, the packet (its pointers are
// rebuilt on arrival), its INT records when it has any, and the scheme's data beside it. The packet is
// freed here.
void PartitionedRun::encode(const Event& e, uint32_t from_partition, std::vector<char>& out) {
  if ((e.kind & 0xff) != Node::kArrive)
    throw std::logic_error("Network: an event other than a packet arrival crosses ranks");
  Packet* p = reinterpret_cast<Packet*>(e.arg);
  put_raw(out, e.key);
  put_raw(out, e.target);
  put_raw(out, e.kind);
  put_raw(out, *p);
  if (p->hops) {
    IntHop hops[kMaxIntHops];
    std::copy(p->hops, p->hops + kMaxIntHops, hops);
    put_raw(out, hops);
  }
  cc_.pack_beside(*p, out);
  parts_[from_partition]->pool.put(p);
}

Event PartitionedRun::decode(const char*& in, uint32_t dest_partition) {
  Event e{};
  e.key = take_raw<unsigned __int128>(in);
  e.target = take_raw<uint32_t>(in);
  e.kind = take_raw<uint32_t>(in);
  PacketPool& pool = parts_[dest_partition]->pool;
  Packet* p = pool.get();
  *p = take_raw<Packet>(in);
  p->next = nullptr;
  if (p->hops) {
    p->hops = nullptr;
    pool.attach_int(p);
    const auto hops = take_raw<std::array<IntHop, kMaxIntHops>>(in);
    std::copy(hops.begin(), hops.end(), p->hops);
  }
  cc_.unpack_beside(*p, in);
  e.arg = reinterpret_cast<uint64_t>(p);
  return e;
}

// After every window: every rank's observer calls, finished flows and started flows, to every rank. The
// calls and finished flows are kept in rank order (that is partition order) for replay_calls and
// finish_flows, which take them as they take a single process's partitions' lists.
void PartitionedRun::share_between_ranks() {
  std::vector<char> mine;
  std::vector<NetPartition::Call> calls;
  std::vector<NetPartition::Done> done;
  std::vector<NetPartition::Started> started;
  std::vector<NetPartition::Received> received;
  std::vector<CcStateRow> cc_rows;
  for (uint32_t i = 0; i < parts_.size(); ++i) {
    if (!sim_.is_local(i)) continue;
    NetPartition& p = *parts_[i];
    calls.insert(calls.end(), p.calls.begin(), p.calls.end());
    done.insert(done.end(), p.done.begin(), p.done.end());
    started.insert(started.end(), p.started.begin(), p.started.end());
    received.insert(received.end(), p.received.begin(), p.received.end());
    cc_rows.insert(cc_rows.end(), p.cc_rows.begin(), p.cc_rows.end());
    p.calls.clear();
    p.done.clear();
    p.started.clear();
    p.received.clear();
    p.cc_rows.clear();
  }
  put_vector(mine, calls);
  put_vector(mine, done);
  put_vector(mine, started);
  put_vector(mine, received);
  put_vector(mine, cc_rows);
  std::vector<std::vector<char>> all;
  comm_->all_gather(mine, all);
  started.clear();
  received.clear();
  for (const std::vector<char>& blob : all) {
    const char* c = blob.data();
    take_vector(c, ranks_calls_);
    take_vector(c, ranks_done_);
    take_vector(c, started);
    take_vector(c, received);
    take_vector(c, ranks_cc_rows_);
  }
  for (const NetPartition::Received& r : received) flows_.received_elsewhere(r);
  for (const NetPartition::Started& s : started) flows_.started_elsewhere(s);
}

// After run(): the other ranks' counters, summed as stats() sums partitions.
void PartitionedRun::gather_rank_stats() {
  NetStats local;
  for (uint32_t i = 0; i < parts_.size(); ++i)
    if (sim_.is_local(i)) merge_stats(local, parts_[i]->counters);
  std::vector<char> mine;
  put_raw(mine, local);
  std::vector<std::vector<char>> all;
  comm_->all_gather(mine, all);
  other_ranks_stats_ = NetStats{};
  for (int r = 0; r < comm_->size(); ++r) {
    if (r == comm_->rank()) continue;
    const char* c = all[r].data();
    merge_stats(other_ranks_stats_, take_raw<NetStats>(c));
  }
}

namespace {
struct PortPfc {
  int32_t node = 0, port = 0;
  PortStats stats;
  uint64_t tx_packets = 0;
  Bytes max_queue_bytes = 0;
  bool paused[kNumPriorities] = {};
  Time paused_since[kNumPriorities];
};
}  // namespace

void Network::gather_node_results() {
  RankComm* comm = run_.ranks();
  if (!comm) return;
  std::vector<char> mine;
  std::vector<PortPfc> ports;
  std::vector<std::pair<const char*, double>> c;
  std::vector<char> counters;
  for (int id = 0; id < num_nodes(); ++id) {
    if (!is_local_node(id)) continue;
    Node& n = fabric_.node(id);
    const SwitchAgent* agent = n.is_switch() ? static_cast<Switch&>(n).agent() : nullptr;
    for (const Port& p : n.ports()) {
      PortPfc e;
      e.node = id;
      e.port = p.index;
      e.stats = p.stats;
      e.tx_packets = p.tx_packets;
      e.max_queue_bytes = p.max_queue_bytes;
      std::copy(std::begin(p.paused), std::end(p.paused), e.paused);
      std::copy(std::begin(p.paused_since), std::end(p.paused_since), e.paused_since);
      ports.push_back(e);
      if (!agent) continue;
      c.clear();
      agent->port_counters(p.index, c);
      if (c.empty()) continue;
      put_raw(counters, static_cast<int32_t>(id));
      put_raw(counters, static_cast<int32_t>(p.index));
      put_raw(counters, static_cast<uint32_t>(c.size()));
      for (const auto& [name, value] : c) {
        const std::string_view s(name);
        put_raw(counters, static_cast<uint32_t>(s.size()));
        counters.insert(counters.end(), s.begin(), s.end());
        put_raw(counters, value);
      }
    }
  }
  put_vector(mine, ports);
  put_raw(mine, static_cast<uint64_t>(counters.size()));
  mine.insert(mine.end(), counters.begin(), counters.end());
  std::vector<std::vector<char>> all;
  comm->all_gather(mine, all);
  for (int r = 0; r < comm->size(); ++r) {
    if (r == comm->rank()) continue;
    const char* in = all[r].data();
    ports.clear();
    take_vector(in, ports);
    for (const PortPfc& e : ports) {
      Port& p = fabric_.node(e.node).ports()[e.port];
      p.stats = e.stats;
      p.tx_packets = e.tx_packets;
      p.max_queue_bytes = e.max_queue_bytes;
      std::copy(std::begin(e.paused), std::end(e.paused), p.paused);
      std::copy(std::begin(e.paused_since), std::end(e.paused_since), p.paused_since);
    }
    const auto counter_bytes = take_raw<uint64_t>(in);
    const char* end = in + counter_bytes;
    while (in < end) {
      const auto node = take_raw<int32_t>(in);
      const auto port = take_raw<int32_t>(in);
      const auto n = take_raw<uint32_t>(in);
      RunResults::PortCounters& list = results_.remote_counters(node, port);
      for (uint32_t k = 0; k < n; ++k) {
        const auto len = take_raw<uint32_t>(in);
        const std::string name(in, len);
        in += len;
        const double value = take_raw<double>(in);
        results_.add_remote_counter(list, name, value);
      }
    }
  }
}

void Network::scheme_port_counters(int sw_id, int port,
                                   std::vector<std::pair<const char*, double>>& out) const {
  if (is_local_node(sw_id)) {
    const SwitchAgent* a = static_cast<const Switch&>(fabric_.node(sw_id)).agent();
    if (a) a->port_counters(port, out);
    return;
  }
  if (const RunResults::PortCounters* c = results_.find_remote_counters(sw_id, port))
    out.insert(out.end(), c->begin(), c->end());
}

}  // namespace rocesim
