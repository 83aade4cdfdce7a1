#include "net/flows.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "net/fabric.h"
#include "net/host.h"

namespace rocesim {

namespace {
bool released_later(const FlowSpec& a, const FlowSpec& b) {
  return a.start != b.start ? a.start > b.start : a.id > b.id;
}
constexpr uint64_t kFlowStartSeq = uint64_t{1} << 38;
constexpr uint16_t kFirstSourcePort = 10000;
}  // namespace

void FlowTable::prepare() {
  const int n = fabric_.num_nodes();
  next_sport_.assign(n, kFirstSourcePort);
  if (nic_.source_ports == NicSettings::SourcePorts::kPerPair) pair_sport_.resize(n);
  if (nic_.loss_recovery != NicSettings::LossRecovery::kSelective) return;
  int window = nic_.sack_window_packets;
  if (window <= 0) {  // the BDP of the longest path at the fastest host, in MTU-sized packets
    double rate_bps = 0;
    for (int h : fabric_.topo().hosts()) {
      double host_bps = 0;  // all its ports together: a flow may spray over them (NicSettings::port_spread)
      for (const Port& p : fabric_.node(h).ports()) host_bps += p.rate.bps;
      rate_bps = std::max(rate_bps, host_bps);
    }
    const double bdp_bytes = rate_bps / 8.0 * static_cast<double>(fabric_.max_base_rtt().ps) * 1e-12;
    window = static_cast<int>(std::ceil(bdp_bytes / static_cast<double>(nic_.mtu_bytes)));
  }
  sack_window_ = std::max(window, 1);
  sack_words_ = (static_cast<size_t>(sack_window_) + 63) / 64;
}

Qp* FlowTable::find_flow(uint64_t flow_id) {
  for (uint32_t i = 0; i < qps_.capacity(); ++i)
    if (qps_[i].in_use && qps_[i].started && !qps_[i].sender_done && qps_[i].flow_id == flow_id)
      return &qps_[i];
  return nullptr;
}

void FlowTable::register_qp_state(std::function<void(size_t)> grow) const {
  std::lock_guard<std::mutex> lock(qp_state_mutex_);
  grow(qps_.capacity());
  qp_state_.push_back(std::move(grow));
}

void FlowTable::begin() {
  source_done_ = source_ == nullptr;
  if (source_) pull_next_flow();
  if (dependent_) dependent_->begin(*this);
}

void FlowTable::pull_next_flow() {
  FlowSpec f;
  if (source_ && source_->next(f)) {
    f.id = next_flow_id_++;
    next_flow_ = f;
    have_next_ = true;
  } else {
    have_next_ = false;
    source_done_ = true;
  }
}

Time FlowTable::next_start(Time now) const {
  Time t = Time::max();
  if (have_next_) t = std::min(t, std::max(now, next_flow_.start));
  if (!released_.empty()) t = std::min(t, released_.front().start);
  return t;
}

// Flows starting before `end` get their QP now and an event at their start, at their source host, with
// the key (start, 0, flow id): the same whatever the windows. The source's and the released flows are
// taken in id order.
void FlowTable::post_starts_before(Time end) {
  const size_t capacity = qps_.capacity();
  for (;;) {
    const bool source = have_next_ && next_flow_.start < end;
    const bool released = !released_.empty() && released_.front().start < end;
    if (!source && !released) break;
    if (source && (!released || next_flow_.id < released_.front().id)) {
      post_start(next_flow_);
      pull_next_flow();
    } else {
      std::pop_heap(released_.begin(), released_.end(), released_later);
      const FlowSpec f = released_.back();
      released_.pop_back();
      post_start(f);
    }
  }
  if (qps_.capacity() != capacity) {
    std::lock_guard<std::mutex> lock(qp_state_mutex_);
    for (auto& grow : qp_state_) grow(qps_.capacity());
  }
}

void FlowTable::post_start(const FlowSpec& f) {
  const uint32_t slot = qps_.acquire();
  Qp& qp = qps_[slot];
  qp.in_use = true;
  qp.slot = slot;
  qp.flow_id = f.id;
  qp.tag = static_cast<uint32_t>(f.id);
  qp.src = f.src;
  qp.dst = f.dst;
  qp.dport = f.dport;
  qp.fwd_route = qp.rev_route = Packet::kNoRoute;  // set at its start (on the source's rank)
  qp.prio = static_cast<uint8_t>(f.priority);
  qp.class_id = f.class_id;
  qp.name_id = f.name_id;
  qp.size = f.size_bytes;
  if (cc_trace_) qp.cc_traced = cc_trace_(qp);
  qp.traced = trace_ && trace_->trace_flow(f.id, f.class_id);
  cc_.on_flow_allocated(qp);
  if (selective()) {
    if (sack_bits_.size() < qps_.capacity() * 2 * sack_words_)
      sack_bits_.resize(qps_.capacity() * 2 * sack_words_);  // between windows: no partition runs
    std::fill_n(rx_sack_bits(slot), 2 * sack_words_, uint64_t{0});
  }
  const Time at = std::max(f.start, sim_.now());
  const Host& src = static_cast<const Host&>(fabric_.node(f.src));
  sim_.at_keyed(at, 0, kFlowStartSeq + f.id, src.handler(), Host::kFlowStart, slot);
}

// The next source port of a flow from `src` to `dst`: one counter per host, or per host and destination
// (NicSettings::SourcePorts), from 10000 on and back to it after 65535. Only the source's partition
// touches them.
uint16_t FlowTable::next_source_port(int src, int dst) {
  uint16_t& next = nic_.source_ports == NicSettings::SourcePorts::kPerPair
                       ? pair_sport_[src].try_emplace(dst, kFirstSourcePort).first->second
                       : next_sport_[src];
  const uint16_t port = next++;
  if (next == 0) next = kFirstSourcePort;
  return port;
}

void FlowTable::start(uint32_t slot, NetPartition& part, bool across_ranks) {
  Qp& qp = qps_[slot];
  const int src = qp.src;
  qp.started = true;
  qp.sport = next_source_port(src, qp.dst);
  qp.start = sim_.now();
  qp.last_progress = sim_.now();
  set_ports(qp);
  const int spread = std::popcount(qp.tx_ports);
  qp.base_rtt = fabric_.base_rtt(src, qp.dst, qp.sport, qp.dport);
  qp.ideal_fct = fabric_.ideal_fct(qp.size, src, qp.dst, qp.sport, qp.dport, spread);
  // A flow sprayed over several ports takes its packets' paths from each switch's routes.
  qp.fwd_route = spread > 1 ? Packet::kNoRoute : fabric_.cached_route(src, qp.dst, qp.sport, qp.dport);
  qp.rev_route = fabric_.cached_route(qp.dst, src, qp.dport, qp.sport, qp.ack_port);
  qp.rate = qp.line_rate;
  qp.next_avail = sim_.now();
  qp.reo_mult = static_cast<uint8_t>(nic_.reorder_window_srtts);
  ++part.counters.flows_started;
  if (across_ranks)
    part.started.push_back({slot, qp.sport, qp.start, qp.base_rtt, qp.ideal_fct, qp.line_rate});
  cc_.on_flow_start(qp);
  static_cast<Host&>(fabric_.node(src)).activate(slot);
}

// The hosts' ports of a flow whose source port is set (NicSettings::port_spread) and its line rate: the sum
// of its source ports' rates (ports_rate).
void FlowTable::set_ports(Qp& qp) const {
  const uint8_t towards = fabric_.host_ports_towards(qp.src, qp.dst);
  const bool spray = nic_.port_spread == NicSettings::PortSpread::kSpray && std::popcount(towards) > 1;
  qp.tx_ports =
      spray ? towards : static_cast<uint8_t>(1u << fabric_.host_port(qp.src, qp.dst, qp.sport, qp.dport));
  qp.ack_port = static_cast<uint8_t>(fabric_.host_port(qp.dst, qp.src, qp.dport, qp.sport));
  qp.line_rate = ports_rate(qp);
}

// The line rate of a flow through a host's port `p`: the port's rate, and when it leads to a NIC that GPUs
// share (NodeKind::kNic, docs/models.md A14) no more than the NIC's ports the flow leaves by: all of those
// towards its destination when the NIC sprays (NicSettings::port_spread), else the one its 5-tuple hash
// picks there (as Switch::route does).
Rate FlowTable::ports_rate(const Qp& qp) const {
  const std::vector<Port>& ports = fabric_.node(qp.src).ports();
  double bps = 0;
  for (unsigned m = qp.tx_ports; m; m &= m - 1) {
    const Port& p = ports[static_cast<size_t>(std::countr_zero(m))];
    const int nic = p.peer->id();
    const auto [out, n] = fabric_.topo().kind_of(nic) == NodeKind::kNic
                              ? fabric_.routes(nic, qp.dst)
                              : std::pair<const uint16_t*, int>{nullptr, 0};
    if (n == 0) {
      bps += p.rate.bps;
      continue;
    }
    const std::vector<Port>& nic_ports = fabric_.node(nic).ports();
    double up = 0;
    if (nic_.port_spread == NicSettings::PortSpread::kSpray) {
      for (int i = 0; i < n; ++i) up += nic_ports[out[i]].rate.bps;
    } else {
      Packet probe;
      probe.src = qp.src;
      probe.dst = qp.dst;
      probe.sport = qp.sport;
      probe.dport = qp.dport;
      up = nic_ports[out[fabric_.flow_hash(probe, nic) % static_cast<uint64_t>(n)]].rate.bps;
    }
    bps += std::min(p.rate.bps, up);
  }
  return Rate{bps};
}

// What only the sender's host touches happens now; the record, the observers, the QP's slot and the flows
// that wait for this one are the coordinator's, between windows.
void FlowTable::complete(Qp& qp, NetPartition& part) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kFinished;
  FlowRecord& r = c.record;
  r.id = qp.flow_id;
  r.src = qp.src;
  r.dst = qp.dst;
  r.sport = qp.sport;
  r.dport = qp.dport;
  r.priority = qp.prio;
  r.size_bytes = qp.size;
  r.start = qp.start;
  r.finish = sim_.now();
  r.ideal_fct = qp.ideal_fct;
  r.class_id = qp.class_id;
  r.name_id = qp.name_id;
  r.retransmitted_packets = qp.retransmitted_packets;
  r.retransmitted_bytes = qp.retransmitted_bytes;
  // Written by the receiver's partition in an earlier window: the last ACK came after its last arrival
  // ahead of rcv_nxt, and took at least a lookahead to get here when the two partitions differ.
  r.out_of_order_packets = qp.rx_out_of_order;
  r.spurious_retransmissions = qp.rx_spurious;
  c.t = r.finish;
  c.key = sim_.current_key();
  part.calls.push_back(c);
  part.done.push_back({c.key, qp.slot, qp.flow_id, r.finish});
  ++part.counters.flows_finished;
  cc_.on_flow_end(qp);
  static_cast<Host&>(fabric_.node(qp.src)).deactivate(qp.slot);
  qp.sender_done = true;
}

void FlowTable::retire(const std::vector<NetPartition::Done>& done, Time lookahead) {
  for (const NetPartition::Done& d : done) {
    qps_[d.slot].in_use = false;
    qps_.release(d.slot);
  }
  if (!dependent_) return;
  const Time barrier = sim_.now();
  for (const NetPartition::Done& d : done) {
    sim_.set_barrier_clock(d.finish);
    release_delay_ = lookahead;
    dependent_->on_flow_finished(d.flow_id, d.finish, *this);
    release_delay_ = Time::zero();
  }
  sim_.set_barrier_clock(barrier);
}

// A released flow starts at the earliest one lookahead after the flow it waited for finished (the clock
// reads that finish time here): the earliest time any partition can hear of it, whatever the partitions.
uint64_t FlowTable::release(const FlowSpec& f) {
  FlowSpec g = f;
  g.id = next_flow_id_++;
  const Time earliest = sim_.now() + release_delay_;
  if (g.start < earliest) g.start = earliest;
  released_.push_back(g);
  std::push_heap(released_.begin(), released_.end(), released_later);
  return g.id;
}

void FlowTable::started_elsewhere(const NetPartition::Started& s) {
  Qp& qp = qps_[s.slot];
  qp.started = true;
  qp.sport = s.sport;
  qp.start = s.start;
  qp.base_rtt = s.base_rtt;
  qp.ideal_fct = s.ideal_fct;
  set_ports(qp);
  qp.line_rate = s.line_rate;
}

void FlowTable::received_elsewhere(const NetPartition::Received& r) {
  qps_[r.slot].rx_out_of_order = r.out_of_order;
  qps_[r.slot].rx_spurious = r.spurious;
}

}  // namespace rocesim
