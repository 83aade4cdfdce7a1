#include "net/checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "net/switch.h"

namespace rocesim {

const char* to_string(CheckFailure::Kind k) {
  switch (k) {
    case CheckFailure::Kind::kNone:
      return "none";
    case CheckFailure::Kind::kDeadlock:
      return "deadlock";
    case CheckFailure::Kind::kStall:
      return "stall";
    case CheckFailure::Kind::kInvariant:
      return "invariant";
  }
  return "?";
}

NetChecker::NetChecker(Network& net, const CheckOptions& opt) : net_(net), opt_(opt) {
  last_delivered_ = net_.stats().bytes_delivered;
  last_delivery_ = net_.now();
  saved_ = net_.observers();
  if (opt_.invariants) {
    NetObservers& obs = net_.observers();
    obs.on_data_delivered = [this, prev = saved_.on_data_delivered](const Qp& qp, Bytes payload) {
      if (prev) prev(qp, payload);
      Bytes& d = delivered_[qp.flow_id];
      d += payload;
      if (payload <= 0 || d > qp.size)
        fail(CheckFailure::Kind::kInvariant,
             fmt::format("flow {} ({} -> {}): {} payload bytes delivered in order, more than its size {} "
                         "(last packet {} bytes)",
                         qp.flow_id, name(qp.src), name(qp.dst), d, qp.size, payload));
    };
    obs.on_flow_finished = [this, prev = saved_.on_flow_finished](const FlowRecord& r) {
      if (prev) prev(r);
      auto it = delivered_.find(r.id);
      const Bytes d = it == delivered_.end() ? 0 : it->second;
      if (d != r.size_bytes && r.size_bytes > 0)
        fail(CheckFailure::Kind::kInvariant,
             fmt::format("flow {} ({} -> {}) finished with {} of {} bytes delivered in order", r.id,
                         name(r.src), name(r.dst), d, r.size_bytes));
      if (it != delivered_.end()) delivered_.erase(it);
    };
    next_check_ = net_.now() + opt_.invariant_interval;
    net_.sim().add_task(this);
  }
}

NetChecker::~NetChecker() {
  net_.sim().remove_task(this);
  if (opt_.invariants) {
    net_.observers().on_data_delivered = saved_.on_data_delivered;
    net_.observers().on_flow_finished = saved_.on_flow_finished;
  }
}

std::string NetChecker::name(int node) const {
  const auto& names = net_.topo().node_names;
  if (node >= 0 && static_cast<size_t>(node) < names.size() && !names[node].empty())
    return fmt::format("{} (node {})", names[node], node);
  return fmt::format("node {}", node);
}

void NetChecker::fail(CheckFailure::Kind k, std::string msg) {
  if (failed()) return;  // the first one counts
  failure_.kind = k;
  failure_.at = net_.now();
  failure_.message = fmt::format("t={:.3f} us: {}", net_.now().us(), msg);
  net_.sim().stop();
}

void NetChecker::on_barrier(Time now) {
  const Time walk = opt_.invariant_cost_per_packet * std::max<int64_t>(net_.packets_live(), 0);
  next_check_ = failed() ? Time::max() : now + std::max(opt_.invariant_interval, walk);
  if (failed()) return;
  ++invariant_checks_;
  std::string v = check_invariants();
  if (!v.empty()) fail(CheckFailure::Kind::kInvariant, std::move(v));
}

void NetChecker::on_progress(Time now) {
  if (failed()) return;
  const Bytes d = net_.stats().bytes_delivered;
  if (d != last_delivered_ || net_.live_qps() == 0) {
    last_delivered_ = d;
    last_delivery_ = now;
  }
  if (opt_.deadlock) {
    std::vector<DeadlockEdge> cycle = find_deadlock(opt_.deadlock_min_age);
    if (!cycle.empty()) {
      Time since;
      std::string edges;
      for (const DeadlockEdge& e : cycle) {
        since = std::max(since, e.since);
        edges +=
            fmt::format("\n  {} port {} -> {} port {}, priority {}: paused since {:.3f} us, {} bytes queued",
                        name(e.node), e.port, name(e.peer), e.peer_port, e.prio, e.since.us(), e.queued);
      }
      failure_.cycle = cycle;
      failure_.since = since;
      fail(CheckFailure::Kind::kDeadlock,
           fmt::format(
               "PFC deadlock: a cycle of {} paused egress queues, complete since {:.3f} us "
               "(each waits on the next switch's ingress, whose packets all wait on paused egresses):{}",
               cycle.size(), since.us(), edges));
      return;
    }
  }
  if (opt_.watchdog > Time::zero() && net_.live_qps() > 0 && now - last_delivery_ >= opt_.watchdog) {
    fail(CheckFailure::Kind::kStall,
         fmt::format("no progress: no payload reached any receiver for {:.3f} us (since {:.3f} us) while {} "
                     "flows were active ({} bytes delivered in total)",
                     (now - last_delivery_).us(), last_delivery_.us(), net_.live_qps(), d));
  }
}

void NetChecker::finish() {
  if (failed()) return;
  if (opt_.invariants) {
    ++invariant_checks_;
    std::string v = check_invariants();
    if (!v.empty()) {
      fail(CheckFailure::Kind::kInvariant, std::move(v));
      return;
    }
  }
  if (net_.all_flows_done()) return;
  // A drained queue (or the time limit) with unfinished flows: any cycle now is final.
  if (opt_.deadlock) {
    const CheckOptions keep = opt_;
    opt_.deadlock_min_age = Time::zero();
    opt_.watchdog = Time::zero();
    on_progress(net_.now());
    opt_ = keep;
  }
  // Nothing left to happen, yet flows are unfinished (a stall without events, e.g. a flow whose packets
  // are all sent and neither delivered nor lost).
  if (!failed() && opt_.watchdog > Time::zero() && net_.sim().events_pending() == 0 && net_.live_qps() > 0)
    fail(CheckFailure::Kind::kStall,
         fmt::format(
             "no progress: no event left to run, {} flows unfinished ({} payload bytes delivered in total)",
             net_.live_qps(), net_.stats().bytes_delivered));
  // The run reached its end with flows that delivered nothing for the watchdog's time (only their
  // retransmission timers left running: a destination they cannot reach, or every resend lost).
  if (!failed()) on_progress(net_.now());
}

namespace {
// A cycle of the directed graph `adj` as its vertices in order, or none (iterative DFS with colours).
std::vector<int> find_cycle(const std::vector<std::vector<int>>& adj) {
  std::vector<int> colour(adj.size(), 0), parent(adj.size(), -1);
  for (size_t root = 0; root < adj.size(); ++root) {
    if (colour[root]) continue;
    std::vector<std::pair<int, size_t>> stack{{static_cast<int>(root), 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < adj[v].size()) {
        const int w = adj[v][i++];
        if (colour[w] == 0) {
          colour[w] = 1;
          parent[w] = v;
          stack.push_back({w, 0});
        } else if (colour[w] == 1) {
          std::vector<int> cycle;
          for (int x = v; x != w; x = parent[x]) cycle.push_back(x);
          cycle.push_back(w);
          std::reverse(cycle.begin(), cycle.end());
          return cycle;
        }
      } else {
        colour[v] = 2;
        stack.pop_back();
      }
    }
  }
  return {};
}
}  // namespace

// Wait-for graph over (switch, egress port, priority) vertices that are paused and hold packets. The vertex
// (s, e, p) waits on the peer switch t's ingress (e', p) that paused it; that ingress is blocked when every
// packet it holds sits in an egress queue of t that is itself a vertex; then (s, e, p) -> each such vertex.
std::vector<DeadlockEdge> NetChecker::find_deadlock(Time min_age) const {
  const Time now = net_.now();
  const int n = net_.num_nodes();
  std::map<std::tuple<int, int, int>, int> index;  // (node, port, prio) -> vertex
  std::vector<DeadlockEdge> verts;
  for (int id = 0; id < n; ++id) {
    if (net_.is_host(id)) continue;
    Switch& s = net_.sw(id);
    if (s.paused_egresses() == 0) continue;  // no vertex here: its ports need not be read
    for (const Port& port : s.ports()) {
      if (!port.peer->is_switch()) continue;
      for (int prio = 1; prio < kNumPriorities; ++prio) {
        if (!port.paused[prio] || port.q[prio].empty()) continue;
        if (now - port.paused_since[prio] < min_age) continue;
        index[{id, port.index, prio}] = static_cast<int>(verts.size());
        verts.push_back({id, port.index, prio, port.peer->id(), port.peer_port, port.paused_since[prio],
                         port.q[prio].bytes});
      }
    }
  }
  if (verts.empty()) return {};
  std::vector<std::vector<int>> adj(verts.size());
  for (size_t v = 0; v < verts.size(); ++v) {
    const DeadlockEdge& e = verts[v];
    Switch& t = net_.sw(e.peer);
    const IngressCounters& c = t.ingress(e.peer_port, e.prio);
    if (!c.pause_sent) continue;
    // Where do the packets of ingress (peer_port, prio) wait?
    bool blocked = true, any = false;
    std::vector<int> next;
    if (t.input_output_queued()) {
      // Input-and-output queued: they wait in the input queue behind its head, which waits for its output
      // (virtual output queues: each non-empty queue's head waits for its own output).
      for (int k = 0; k < t.input_queues_per_input() && blocked; ++k)
        if (const Packet* p = t.input_queue(e.peer_port, e.prio, k).head) {
          any = true;
          auto it = index.find({e.peer, p->out_port, p->prio});
          if (it == index.end())
            blocked = false;
          else
            next.push_back(it->second);
        }
    }
    for (const Port& out : t.ports()) {
      if (t.input_output_queued()) break;
      for (int q = 1; q < kNumPriorities && blocked; ++q) {
        bool holds = false;
        for (const Packet* p = out.q[q].head; p; p = p->next)
          if (p->in_port == e.peer_port && p->acct_prio == e.prio) {
            holds = true;
            break;
          }
        if (!holds) continue;
        any = true;
        auto it = index.find({e.peer, out.index, q});
        if (it == index.end())
          blocked = false;
        else
          next.push_back(it->second);
      }
    }
    if (blocked && any) adj[v] = std::move(next);
  }
  std::vector<DeadlockEdge> cycle;
  for (int v : find_cycle(adj)) cycle.push_back(verts[static_cast<size_t>(v)]);
  return cycle;
}

std::string NetChecker::check_invariants() const {
  const NetStats& st = net_.stats();
  const SwitchSettings& cfg = net_.switch_settings();
  if ((cfg.pfc_enabled || cfg.credit_enabled) && st.data_drops + st.ctrl_drops > 0)
    return fmt::format(
        "lossless mode ({} on) dropped {} data packets and {} ACKs/NACKs/CNPs in switch buffers",
        cfg.pfc_enabled ? "PFC" : "credit flow control", st.data_drops, st.ctrl_drops);
  for (int id = 0; id < net_.num_nodes(); ++id) {
    std::string v = check_links(id);
    if (v.empty() && !net_.is_host(id)) v = check_switch(id);
    if (!v.empty()) return v;
  }
  return check_qps();
}

// Per port: queue byte counts match their packets; the pause state the peer will reach once the PFC frames
// in flight arrive equals what this switch's ingress counter says it sent.
std::string NetChecker::check_links(int id) const {
  Node& node = net_.node(id);
  for (const Port& port : node.ports()) {
    Bytes data = 0;
    for (int q = 0; q < kNumPriorities; ++q) {
      Bytes b = 0;
      uint32_t k = 0;
      for (const Packet* p = port.q[q].head; p; p = p->next) {
        b += p->size;
        ++k;
      }
      if (b != port.q[q].bytes || k != port.q[q].pkts || b < 0)
        return fmt::format(
            "{} port {} priority {}: egress queue counter {} bytes / {} packets, packets "
            "queued {} bytes / {}",
            name(id), port.index, q, port.q[q].bytes, port.q[q].pkts, b, k);
      if (q > 0) data += b;
    }
    if (node.is_switch() && data != port.data_bytes)
      return fmt::format("{} port {}: data_bytes counter {} but data queues hold {} bytes", name(id),
                         port.index, port.data_bytes, data);
    // A failed link has no PFC state (net/link_events.h: it was cleared when the link failed).
    if (!node.is_switch() || !net_.switch_settings().pfc_enabled || port.down) continue;
    const Switch& s = static_cast<const Switch&>(node);
    const Port& peer = port.peer->ports()[port.peer_port];
    for (int prio = 1; prio < kNumPriorities; ++prio) {
      // Frames on the wire (in this link's list, or events of another partition): the last one decides.
      bool expect = port.pfc_tx[prio] != peer.pfc_rx[prio] ? port.pfc_tx_last_pause[prio] : peer.paused[prio];
      for (const Packet* p = port.pfc_q.head; p; p = p->next)
        if (p->pfc_class == prio) expect = p->pfc_pause;
      if (expect != s.ingress(port.index, prio).pause_sent)
        return fmt::format(
            "PFC state mismatch on the link {} port {} -> {} port {}, priority {}: the ingress "
            "counter says pause_sent={}, but the peer's egress is (or will be, after frames in "
            "flight) paused={}",
            name(id), port.index, name(port.peer->id()), port.peer_port, prio,
            s.ingress(port.index, prio).pause_sent, expect);
    }
  }
  return {};
}

// Per switch: every ingress counter equals the bytes of the packets it admitted that are still queued, the
// shared and total counters add up, and nothing is negative or beyond its bound.
std::string NetChecker::check_switch(int id) const {
  return net_.sw(id).input_output_queued() ? check_ioq_switch(id) : check_shared_buffer_switch(id);
}

// Input-and-output queued model: each ingress counter is its input queue; both queues within limits.
std::string NetChecker::check_ioq_switch(int id) const {
  Switch& s = net_.sw(id);
  const SwitchSettings& cfg = net_.switch_settings();
  const int nports = static_cast<int>(s.ports().size());
  Bytes total = 0;
  for (int port = 0; port < nports; ++port) {
    const Port& out = s.ports()[port];
    if (out.data_bytes > cfg.output_queue_bytes)
      return fmt::format("{} port {}: output queue {} bytes beyond output_queue_bytes {}", name(id), port,
                         out.data_bytes, cfg.output_queue_bytes);
    total += out.data_bytes;
    for (int prio = 0; prio < kNumPriorities; ++prio) {
      const IngressCounters& c = s.ingress(port, prio);
      Bytes b = 0;
      Bytes qb = 0;
      uint32_t k = 0, qk = 0;
      // FIFO: one queue; virtual output queues: one per output, whose packets all leave by that output.
      const int nq = s.input_queues_per_input();
      for (int v = 0; v < nq; ++v) {
        const PacketQueue& q = s.input_queue(port, prio, v);
        qb += q.bytes;
        qk += q.pkts;
        for (const Packet* p = q.head; p; p = p->next) {
          b += p->size;
          ++k;
          if (p->out_port < 0 || p->out_port >= nports || (nq > 1 && p->out_port != v))
            return fmt::format("{} input queue {} priority {} (queue {}): a packet with a wrong output ({})",
                               name(id), port, prio, v, p->out_port);
        }
      }
      if (b != qb || k != qk || c.bytes != b || c.hdrm_bytes != 0 || b > cfg.input_queue_bytes)
        return fmt::format(
            "{} input queue {} priority {}: counter {} bytes / {} packets, ingress counter {} (+{} "
            "headroom), packets queued {} bytes / {}, limit {}",
            name(id), port, prio, qb, qk, c.bytes, c.hdrm_bytes, b, k, cfg.input_queue_bytes);
      total += b;
    }
  }
  if (s.buffer_used() != total)
    return fmt::format("{}: buffer counter {} bytes, input and output queues hold {} bytes", name(id),
                       s.buffer_used(), total);
  return {};
}

// Shared buffer: the counters add up to the packets queued, each within its PFC or credit bound.
std::string NetChecker::check_shared_buffer_switch(int id) const {
  Switch& s = net_.sw(id);
  const SwitchSettings& cfg = net_.switch_settings();
  const int nports = static_cast<int>(s.ports().size());
  std::vector<Bytes> held(static_cast<size_t>(nports) * kNumPriorities, 0);
  Bytes total = 0;
  for (const Port& port : s.ports())
    for (int q = 1; q < kNumPriorities; ++q)
      for (const Packet* p = port.q[q].head; p; p = p->next) {
        total += p->size;
        if (p->in_port >= 0) held[static_cast<size_t>(p->in_port) * kNumPriorities + p->acct_prio] += p->size;
      }
  if (s.buffer_used() != total || total > cfg.buffer_bytes)
    return fmt::format("{}: buffer counter {} bytes, packets queued {} bytes, buffer size {}", name(id),
                       s.buffer_used(), total, cfg.buffer_bytes);
  const Bytes reserve = cfg.reserve_bytes;
  // Credit mode accounts like static PFC (net/switch_mmu.cc): whole bytes per ingress, no shared pool.
  const bool dynamic = cfg.pfc_mode == PfcThresholdMode::kDynamic && !cfg.credit_enabled;
  Bytes shared = 0;
  for (int port = 0; port < nports; ++port) {
    for (int prio = 0; prio < kNumPriorities; ++prio) {
      const IngressCounters& c = s.ingress(port, prio);
      const Bytes want = held[static_cast<size_t>(port) * kNumPriorities + prio];
      const char* bad = nullptr;
      if (c.bytes < 0 || c.hdrm_bytes < 0)
        bad = "negative";
      else if (c.bytes + c.hdrm_bytes != want)
        bad = "does not match the packets it holds";
      else if (cfg.pfc_enabled && cfg.pfc_mode == PfcThresholdMode::kStatic &&
               c.bytes > s.xoff(port) + s.headroom(port))
        bad = "beyond Xoff + headroom";
      else if (cfg.pfc_enabled && dynamic && c.hdrm_bytes > s.headroom(port))
        bad = "beyond the port's headroom";
      else if (cfg.credit_enabled && c.bytes > cfg.credit_buffer_bytes)
        bad = "beyond the credits granted upstream";
      if (bad)
        return fmt::format(
            "{} ingress port {} priority {}: counter {}: bytes={} hdrm_bytes={}, packets held {} "
            "bytes (headroom {}, threshold {})",
            name(id), port, prio, bad, c.bytes, c.hdrm_bytes, want, s.headroom(port), s.pfc_threshold(port));
      if (dynamic) shared += c.bytes > reserve ? c.bytes - reserve : 0;
    }
  }
  if (dynamic && (s.shared_used() != shared || s.shared_used() < 0))
    return fmt::format("{}: shared_used counter {} bytes, ingress counters beyond reserve add up to {}",
                       name(id), s.shared_used(), shared);
  return {};
}

std::string NetChecker::check_qps() const {
  for (uint32_t slot = 0; slot < net_.qp_capacity(); ++slot) {
    const Qp& q = net_.qp(slot);
    if (!q.in_use || q.sender_done)
      continue;  // finished: checked when it finished, freed at the next boundary
    const bool ok = q.snd_una >= 0 && q.snd_una <= q.snd_nxt && q.snd_nxt <= q.size &&
                    q.snd_una_max_sent <= q.size && q.rcv_nxt >= q.snd_una && q.rcv_nxt <= q.snd_una_max_sent;
    if (!ok)
      return fmt::format(
          "flow {} ({} -> {}): byte counters out of order: acked {} sent {} highest sent {} "
          "received in order {} size {}",
          q.flow_id, name(q.src), name(q.dst), q.snd_una, q.snd_nxt, q.snd_una_max_sent, q.rcv_nxt, q.size);
    if (opt_.invariants) {
      auto it = delivered_.find(q.flow_id);
      const Bytes d = it == delivered_.end() ? 0 : it->second;
      if (d != q.rcv_nxt)
        return fmt::format(
            "flow {} ({} -> {}): receiver's in-order counter {} bytes, payload delivered {} bytes", q.flow_id,
            name(q.src), name(q.dst), q.rcv_nxt, d);
    }
  }
  return {};
}

}  // namespace rocesim
