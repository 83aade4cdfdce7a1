#include "cc/rcm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "cc/registry.h"
#include "net/switch.h"
#include "topo/topology.h"

namespace rocesim {

namespace {
// Order-free signature of a flow set (sum of mixed keys).
uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}
}  // namespace

void Rcm::attach(CcServices& net) {
  Dcqcn::attach(net);
  // SAR's flowlet gap: a flow may move only once the packets it sent before can have left the old path,
  // i.e. the longest base RTT plus a full input and output queue drained at every switch of the path
  // from the first host to its farthest one (the longest path of the built-in topologies) [interp: with one
  // base RTT (~13 us on the k = 12 fat-tree) PFC pauses made "gaps" while the old path still held packets;
  // rcm/victim without ECN then counted 19 k reordered packets and go-back-N left two incast flows at 3-4
  // Gb/s].
  flowlet_gap_ = rs_.sar_flowlet_gap;
  if (flowlet_gap_ == Time::zero()) {
    const std::vector<int> hosts = net.topo().hosts();
    int far = -1;
    Time rtt;
    for (int d : hosts) {
      if (d == hosts.front()) continue;
      const Time t = net.base_rtt(hosts.front(), d, 0, 0);
      if (t > rtt) {
        rtt = t;
        far = d;
      }
    }
    Time drain;
    const SwitchSettings& ss = net.switch_settings();
    const Bytes per_switch = ss.model == SwitchModel::kInputOutputQueued
                                 ? ss.input_queue_bytes + ss.output_queue_bytes
                                 : ss.output_queue_bytes;
    if (far >= 0)
      for (auto [node, port] : net.path_of(hosts.front(), far, 0, 0))
        if (!net.is_host(node)) drain += tx_time(per_switch, net.port_rate(node, port));
    flowlet_gap_ = net.max_base_rtt() + drain;
  }
}

// Control path only (one CN per sample of a congested input): the lock is rarely taken.
uint32_t Rcm::cn_alloc() {
  std::lock_guard<std::mutex> lock(cn_mutex_);
  if (cn_free_.empty()) {
    if (cn_size_ % kCnChunk == 0) cn_chunks_.push_back(std::make_unique<CnIds[]>(kCnChunk));
    return cn_size_++;
  }
  const uint32_t s = cn_free_.back();
  cn_free_.pop_back();
  return s;
}

Rcm::CnIds& Rcm::cn(uint32_t slot) {
  std::lock_guard<std::mutex> lock(cn_mutex_);
  return cn_chunks_[slot / kCnChunk][slot % kCnChunk];
}

void Rcm::cn_free(uint32_t slot) {
  std::lock_guard<std::mutex> lock(cn_mutex_);
  cn_free_.push_back(slot);
}

namespace {
bool carries_cn_ids(const Packet& p) {
  return p.type == PktType::kCtrl && (p.flags & Packet::kFlagSwitchMsg) &&
         p.cc_flags != std::numeric_limits<uint32_t>::max();
}
}  // namespace

void Rcm::pack_beside(const Packet& p, std::vector<char>& out) {
  if (!carries_cn_ids(p)) return;
  const CnIds ids = cn(p.cc_flags);
  const char* b = reinterpret_cast<const char*>(&ids);
  out.insert(out.end(), b, b + sizeof ids);
  cn_free(p.cc_flags);
}

void Rcm::unpack_beside(Packet& p, const char*& in) {
  if (!carries_cn_ids(p)) return;
  const uint32_t slot = cn_alloc();
  std::memcpy(&cn(slot), in, sizeof(CnIds));
  in += sizeof(CnIds);
  p.cc_flags = slot;
}

std::unique_ptr<SwitchAgent> Rcm::make_switch_agent(Switch& sw) {
  return std::make_unique<RcmAgent>(*net_, sw, *this);
}

RcmAgent::RcmAgent(CcServices& net, Switch& sw, Rcm& scheme)
    : net_(net), sw_(sw), scheme_(scheme), s_(scheme.rcm_settings()) {
  g_d_ = 0.5 / s_.fb_max;  // F_bmax x G_d = 1/2 [seed Eq. 4]
  gap_ = scheme.flowlet_gap();
  rng_ = Rng::stream(net.seed(), "rcm", static_cast<uint64_t>(sw.id()));
  handler_ = net.add_handler(this, sw.handler());
  const size_t n = sw.ports().size();
  in_q_.assign(n, {});
  out_q_.assign(n, {});
  const SwitchSettings& ss = net.switch_settings();
  const double qcn = s_.fb_max / ((1 + 2 * s_.w_q) * static_cast<double>(s_.q_eq_bytes));
  auto full = [&](Bytes cap) {  // F_bmax at a full queue (cc/rcm.h, fb_full_queue)
    return s_.fb_max / static_cast<double>(std::max<Bytes>(cap - s_.q_eq_bytes, s_.q_eq_bytes));
  };
  const bool by_queue = s_.fb_full_queue && ss.model == SwitchModel::kInputOutputQueued;
  for (auto& q : in_q_) {
    q.next = s_.sample_bytes;
    q.scale = by_queue ? full(ss.input_queue_bytes) : qcn;
  }
  for (auto& q : out_q_) {
    q.next = s_.sample_bytes;
    q.scale = by_queue ? full(ss.output_queue_bytes) : qcn;
  }
  ps_.assign(n, {});
  for (auto& p : ps_) {
    p.cam.assign(static_cast<size_t>(s_.cam_depth), ~uint64_t{0});
    p.harm.assign(static_cast<size_t>(s_.cam_depth), 0);
    p.remote_harm.assign(Rcm::kMaxIds, 0);
    p.cam_flows.assign(static_cast<size_t>(s_.cam_depth), 0);
    p.eff.assign(static_cast<size_t>(std::max(s_.cam_depth, Rcm::kMaxIds)), 0);
    p.cam_countdown = s_.cam_interval;
  }
  sar_.assign(static_cast<size_t>(s_.sar_table_size), {});
  scratch_keys_.assign(static_cast<size_t>(s_.cam_depth), 0);
  scratch_counts_.assign(static_cast<size_t>(s_.cam_depth), 0);
}

bool RcmAgent::local_flag(int port) const { return net_.now() < ps_[port].local_until; }
bool RcmAgent::remote_flag(int port) const { return net_.now() < ps_[port].remote_until; }

// Eq. 2 at an output: the regional congestion degree of the port, (1 - w) F_b + w F_br.
double RcmAgent::regional_fb(int port) const {
  const double local = local_flag(port) ? std::max(out_q_[port].fb, 0.0) : 0.0;
  if (!remote_flag(port)) return local;
  return (1 - s_.w_remote) * local + s_.w_remote * ps_[port].fb_remote;
}

// ---------------------------------------------------------------------------------------------- CRD
// QCN-style congestion point on one queue (seed Eq. 1): on the arrival that ends a sampling interval,
// Q_off = Q_len - Q_eq, Q_delta = Q_len - Q_len', F_b = Q_off + w_q Q_delta, quantised to +-F_bmax.
double RcmAgent::sample(QueueCrd& q, Bytes qlen, Bytes size) {
  q.counter += size;
  if (q.counter < q.next) return std::numeric_limits<double>::quiet_NaN();
  q.counter = 0;
  const double q_off = static_cast<double>(qlen - s_.q_eq_bytes);
  const double q_delta = static_cast<double>(qlen - q.q_old);
  q.q_old = qlen;
  const double fb = std::clamp((q_off + s_.w_q * q_delta) * q.scale, -static_cast<double>(s_.fb_max),
                               static_cast<double>(s_.fb_max));
  q.fb = std::round(fb);  // 6-bit quantisation
  // Sample faster when congested: S = S0 / (1 + 9 max(F_b, 0) / F_bmax) [QCN], randomised.
  const double base = static_cast<double>(s_.sample_bytes) / (1 + 9 * std::max(q.fb, 0.0) / s_.fb_max);
  const double jitter = 1 + s_.sample_jitter * (2 * rng_.uniform() - 1);
  q.next = std::max<Bytes>(1, static_cast<Bytes>(base * jitter));
  return q.fb;
}

// An input queue: F_b > 0 marks the output its packets wait for as locally congested (root) and sends
// the upstream switch a CN with F_b' (Eq. 2) and the harmful flows of that output [seed sec. 3.2].
void RcmAgent::on_input_enqueue(const Packet& p, int in_port) {
  if (!s_.crd) return;
  const double fb = sample(in_q_[in_port], sw_.input_bytes(in_port), p.size);
  if (!(fb > 0)) return;
  int out = p.out_port;
  if (sw_.input_output_queued()) {
    // The input feeds the outputs of the packets it holds: report the most congested one (regional F_b',
    // then the fuller output queue), not an output whose packet merely sits at the head or behind it
    // (head-of-line) [interp].
    double best = -1;
    Bytes best_q = -1;
    // (FIFO input queueing: one queue; virtual output queues: one per output, each visited.)
    for (int k = 0; k < sw_.input_queues_per_input(); ++k)
      for (const Packet* q = sw_.input_queue(in_port, p.prio, k).head; q; q = q->next) {
        const int o = q->out_port;
        if (o < 0 || o == out) continue;
        const double f = regional_fb(o);
        const Bytes ql = sw_.egress_data_bytes(o);
        if (f > best || (f == best && ql > best_q)) {
          out = o;
          best = f;
          best_q = ql;
        }
      }
  }
  if (out < 0) return;
  ps_[out].local_until = net_.now() + s_.flag_timeout;
  if (s_.rcc) rcc_trigger(out, fb);
  send_cn(in_port, out, fb, p.prio);
}

// The CN names the harmful flows of every congested output (local or remote flag) that the congested
// input feeds [algorithms.md 3.2: "CAM of the egress port(s) this input feeds"]: under head-of-line
// blocking one input holds flows bound to several congested outputs (rcm/victim: S1 and S2 leave SW_L1_5
// by two different core ports), and the upstream switch must learn all of them.
void RcmAgent::send_cn(int in_port, int out_port, double fb, int prio) {
  const Port& up = sw_.ports()[in_port];
  if (!up.peer->is_switch()) return;  // hosts keep end-to-end DCQCN only
  const PortState& o = ps_[out_port];
  const double fb_prime = remote_flag(out_port) ? (1 - s_.w_remote) * fb + s_.w_remote * o.fb_remote : fb;
  Packet* m = net_.pool().get();
  m->cc_value = fb_prime;
  m->cc_flags = std::numeric_limits<uint32_t>::max();
  int n = 0;
  if (s_.cfr) {
    const uint32_t slot = scheme_.cn_alloc();
    Rcm::CnIds& ids = scheme_.cn(slot);
    // At edge and inner points the IDs from downstream replace the local ones [seed sec. 3.2].
    auto add = [&](int o) {
      int k = 0;
      const uint64_t* set = harmful_set(o, k);
      for (int i = 0; i < k && n < Rcm::kMaxIds; ++i) {
        int j = 0;
        while (j < n && ids.id[static_cast<size_t>(j)] != set[i]) ++j;
        if (j == n) ids.id[static_cast<size_t>(n++)] = set[i];
      }
    };
    add(out_port);
    if (sw_.input_output_queued()) {
      constexpr int kMaxOuts = 16;  // distinct outputs looked at (control path, bounded)
      int outs[kMaxOuts];
      int n_outs = 0;
      outs[n_outs++] = out_port;
      for (int k = 0; k < sw_.input_queues_per_input(); ++k)
        for (const Packet* q = sw_.input_queue(in_port, prio, k).head; q && n_outs < kMaxOuts; q = q->next) {
          const int o = q->out_port;
          if (o < 0 || std::find(outs, outs + n_outs, o) != outs + n_outs) continue;
          outs[n_outs++] = o;
          // Congested at least half as much as the worst output: a port whose queue merely grows for a
          // moment (a burst released from head-of-line blocking) is not a cause [interp].
          if ((local_flag(o) || remote_flag(o)) && regional_fb(o) > 0 &&
              regional_fb(o) >= 0.5 * regional_fb(out_port))
            add(o);
        }
    }
    ids.n = n;
    m->cc_flags = slot;
  }
  m->size = static_cast<uint32_t>(net_.nic_settings().cnp_bytes + 8 * n);  // 8 bytes per flow ID [interp]
  if (sw_.send_to_neighbour(in_port, m)) ++cnt_.cn_sent;
}

void RcmAgent::on_switch_message(const Packet& p, int in_port) {
  ++cnt_.cn_received;
  PortState& s = ps_[in_port];
  const Time now = net_.now();
  if (now >= s.remote_until) s.severe = 0;
  s.remote_until = now + s_.flag_timeout;
  s.fb_remote = p.cc_value;
  if (p.cc_value >= s_.sar_severe_fb * s_.fb_max) ++s.severe;
  if (p.cc_flags != std::numeric_limits<uint32_t>::max()) {
    Rcm::CnIds& ids = scheme_.cn(p.cc_flags);
    if (ids.n > 0) {  // CAM(p) := CN.flowIDs
      std::copy(ids.id.begin(), ids.id.begin() + ids.n, s.remote_harm.begin());
      s.n_remote = ids.n;
      s.remote_sig = 0;
      for (int i = 0; i < ids.n; ++i) s.remote_sig += mix(ids.id[static_cast<size_t>(i)]);
      update_effective(s);
    }
    scheme_.cn_free(p.cc_flags);
  }
  if (s_.rcc && p.cc_value > 0) {
    rcc_trigger(in_port, p.cc_value);
    if (s.rcc) s.edge = true;  // an edge (or inner) point until RCC quits
  }
}

// An output queue: F_b > 0 sets the local flag and triggers RCC; RCC counts what crosses to the output.
void RcmAgent::on_enqueue(Packet& p, int port) {
  PortState& s = ps_[port];
  if (s_.cfr) cfr_sample(s, p);
  if (s.rcc) {
    s.sent_tot += p.size;
    cnt_.rcc_bytes += p.size;
    if (harmful(port, flow_key(p))) {
      s.sent_c += p.size;
      cnt_.rcc_harmful_bytes += p.size;
    }
    if (s.sent_tot >= s.w) new_window(s);  // the window W has been sent: a new one
  }
  if (!s_.crd) return;
  const double fb = sample(out_q_[port], sw_.egress_data_bytes(port), p.size);
  if (!(fb > 0)) return;
  s.local_until = net_.now() + s_.flag_timeout;
  if (s_.rcc) rcc_trigger(port, fb);
}

// ---------------------------------------------------------------------------------------------- CFR
// The CAM samples the packets entering the output queue [interp: "packets passing through the output
// queue" (seed sec. 3.3); at entry rather than exit, so a burst shows one queueing delay (8 us for
// 100 KB at 100 Gb/s) sooner].
void RcmAgent::cfr_sample(PortState& s, const Packet& p) {
  if (--s.cam_countdown > 0) return;
  s.cam_countdown = 1 + static_cast<int>(rng_.below(static_cast<uint64_t>(2 * s_.cam_interval - 1)));
  cam_write(s, flow_key(p));
}

// Cyclic CAM write, then the harmful set: flows holding at least cfr_share of an equal share of the CAM.
void RcmAgent::cam_write(PortState& s, uint64_t key) {
  s.cam[static_cast<size_t>(s.cam_pos)] = key;
  s.cam_pos = (s.cam_pos + 1) % s_.cam_depth;
  int distinct = 0;
  for (uint64_t k : s.cam) {
    if (k == ~uint64_t{0}) continue;
    int i = 0;
    while (i < distinct && scratch_keys_[static_cast<size_t>(i)] != k) ++i;
    if (i == distinct) {
      scratch_keys_[static_cast<size_t>(distinct)] = k;
      scratch_counts_[static_cast<size_t>(distinct++)] = 0;
    }
    ++scratch_counts_[static_cast<size_t>(i)];
  }
  std::copy(scratch_keys_.begin(), scratch_keys_.begin() + distinct, s.cam_flows.begin());
  s.n_cam_flows = distinct;
  // A flow well above an equal share of the CAM becomes harmful; it stays so while above an equal share.
  const double fair = distinct ? static_cast<double>(s_.cam_depth) / distinct : 0;
  int n = 0;
  for (int i = 0; i < distinct; ++i) {
    const uint64_t k = scratch_keys_[static_cast<size_t>(i)];
    const double c = scratch_counts_[static_cast<size_t>(i)];
    bool was = false;
    if (s.harm_specific)
      for (int j = 0; j < s.n_harm && !was; ++j) was = s.harm[static_cast<size_t>(j)] == k;
    if (c >= s_.cfr_share * fair || (was && c >= s_.cfr_keep_share * fair))
      scratch_keys_[static_cast<size_t>(n++)] = k;
  }
  s.harm_specific = n > 0;
  if (n == 0) {  // nobody stands out: every flow in the CAM contributes alike
    n = distinct;
  }
  s.n_harm = n;
  s.harm_sig = s.harm_specific ? 1 : 0;
  for (int i = 0; i < n; ++i) {
    s.harm[static_cast<size_t>(i)] = scratch_keys_[static_cast<size_t>(i)];
    s.harm_sig += mix(s.harm[static_cast<size_t>(i)]);
  }
  update_effective(s);
}

// Edge and inner points take the root's harmful IDs [seed sec. 3.2], restricted to the flows this port
// carries (its CAM); if none of them passes here, the port's own CAM decides [interp: the root's IDs
// cannot control a port they do not cross; e.g. rcm/victim, where the root's CFR singles out S4 while
// SW_L1_5's core ports carry only S1 or S2, whose back-pressure still blocks the victim].
void RcmAgent::update_effective(PortState& s) {
  int n = 0;
  for (int i = 0; i < s.n_remote; ++i) {
    const uint64_t k = s.remote_harm[static_cast<size_t>(i)];
    for (int j = 0; j < s.n_cam_flows; ++j)
      if (s.cam_flows[static_cast<size_t>(j)] == k) {
        s.eff[static_cast<size_t>(n++)] = k;
        break;
      }
  }
  const bool local = n == 0 && s.n_cam_flows > 0;  // an empty CAM knows nothing: take the root's IDs
  if (n == 0 && !local) {
    std::copy(s.remote_harm.begin(), s.remote_harm.begin() + s.n_remote, s.eff.begin());
    n = s.n_remote;
  }
  if (local) {
    std::copy(s.harm.begin(), s.harm.begin() + s.n_harm, s.eff.begin());
    n = s.n_harm;
  }
  s.n_eff = n;
  s.eff_sig = local ? s.harm_sig : 2;
  for (int i = 0; i < n; ++i) s.eff_sig += mix(s.eff[static_cast<size_t>(i)]);
}

const uint64_t* RcmAgent::harmful_set(int port, int& n) const {
  const PortState& s = ps_[port];
  if (remote_flag(port) && s.n_remote > 0) {  // edge / inner point
    n = s.n_eff;
    return s.eff.data();
  }
  n = s.n_harm;
  return s.harm.data();
}

bool RcmAgent::harmful(int port, uint64_t key) const {
  if (!s_.cfr) return true;  // without CFR every flow of a controlled port counts as harmful
  int n = 0;
  const uint64_t* set = harmful_set(port, n);
  for (int i = 0; i < n; ++i)
    if (set[i] == key) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------- RCC
// Enters RCC with W and W_c measured from the output queue at detection (the bytes sent from detection
// until the packets present then have left [seed sec. 3.4]); every trigger sets W_c = W_c0 (1 - F_b G_d)
// (Eq. 5) [interp: relative to the measured W_c0, so one congestion episode cuts the harmful share by at
// most half as the seed states, since the seed gives no increase rule].
void RcmAgent::rcc_trigger(int port, double fb) {
  PortState& s = ps_[port];
  ++cnt_.rcc_triggers;
  // A new harmful set (remote at edge and inner points, else the CAM's) starts a new measurement.
  const uint64_t sig = remote_flag(port) && s.n_remote > 0 ? s.eff_sig : s.harm_sig;
  if (s.rcc && sig != s.rcc_sig) s.rcc = s.edge = false;
  const bool fresh = !s.rcc;
  if (!s.rcc) {
    s.rcc_sig = sig;
    const Port& pt = sw_.ports()[port];
    Bytes total = 0, harm = 0;
    for (int prio = 1; prio < kNumPriorities; ++prio)
      for (const Packet* q = pt.q[prio].head; q; q = q->next) {
        total += q->size;
        if (harmful(port, flow_key(*q))) harm += q->size;
      }
    if (total == 0 || harm == 0) return;
    s.w = std::max(total, s_.rcc_min_window_bytes);
    s.wc0 =
        static_cast<Bytes>(static_cast<double>(s.w) * static_cast<double>(harm) / static_cast<double>(total));
    s.period = tx_time(s.w, sw_.ports()[port].rate);
    new_window(s);
    s.rcc = true;
    ++cnt_.rcc_entries;
  }
  // Eq. 5 never raises W_c: a milder trigger (e.g. an input queue's smaller F_b right after the output
  // queue's) must not undo a deeper cut within the episode [interp].
  const double cut = 1 - std::min(fb, static_cast<double>(s_.fb_max)) * g_d_;
  const Bytes wc = static_cast<Bytes>(static_cast<double>(s.wc0) * cut);  // Eq. 5; W_nc = W - W_c (Eq. 6)
  s.wc = fresh ? wc : std::min(s.wc, wc);
}

// RCC quits once neither flag holds (no F_b > 0 and no CN for T_exp).
void RcmAgent::rcc_exit_if_idle(int port) {
  PortState& s = ps_[port];
  if (s.rcc && !local_flag(port) && !remote_flag(port)) s.rcc = s.edge = false;
}

void RcmAgent::new_window(PortState& s) {
  s.sent_c = s.sent_tot = 0;
  s.window_end = net_.now() + s.period;
}

// The crossbar asks before a packet crosses: a harmful flow waits once W_c is spent until W is sent or
// the window's period is over.
bool RcmAgent::hold(const Packet& p, int out_port) {
  PortState& s = ps_[out_port];
  if (!s.rcc) return false;
  rcc_exit_if_idle(out_port);
  if (!s.rcc) return false;
  if (net_.now() >= s.window_end) new_window(s);
  if (s.sent_c < s.wc) return false;
  if (!harmful(out_port, flow_key(p))) return false;
  ++cnt_.holds;
  return true;
}

// Only held (harmful) packets wait. At the root the next window opens now [algorithms.md 3.2 interp:
// work conserving]; at an edge or inner point (rcc_edge_strict) at the end of the period.
bool RcmAgent::on_crossbar_idle(int out_port) {
  PortState& s = ps_[out_port];
  if (!s.rcc) return false;
  if (s_.rcc_edge_strict && (s.edge || remote_flag(out_port))) {
    if (!s.kick_pending) {
      s.kick_pending = true;
      net_.schedule_at(std::max(s.window_end, net_.now()), handler_, 0, static_cast<uint64_t>(out_port));
    }
    return false;
  }
  ++cnt_.idle_windows;
  new_window(s);
  return true;
}

void RcmAgent::on_event(uint32_t /*kind*/, uint64_t arg) {
  const int port = static_cast<int>(arg);
  ps_[port].kick_pending = false;
  sw_.crossbar_kick(port);  // hold() opens the next window (or ends RCC once the flags expired)
}

// ---------------------------------------------------------------------------------------------- SAR
bool RcmAgent::congested(int port) const {
  return local_flag(port) || (remote_flag(port) && ps_[port].severe >= s_.sar_severe_cns);
}

int RcmAgent::select_port(const Packet& p, const uint16_t* ports, int n, int hashed_port) {
  if (!s_.sar) return hashed_port;
  const uint64_t key = flow_key(p);
  const Time now = net_.now();
  SarEntry& e = sar_[(key * 0x9E3779B97F4A7C15ull >> 32) & static_cast<uint64_t>(s_.sar_table_size - 1)];
  if (e.key == key && now - e.last < gap_) {  // a running flow keeps its port (no reordering)
    e.last = now;
    return e.port;
  }
  int choice = hashed_port;
  ++cnt_.sar_decisions;
  // New flow, or a flowlet gap: detour only a non-harmful flow away from a congested port.
  if (congested(hashed_port) && !(s_.cfr && harmful(hashed_port, key))) {
    double best = regional_fb(hashed_port);
    for (int i = 0; i < n; ++i) {
      const double f = regional_fb(ports[i]);
      if (f < best) {
        best = f;
        choice = ports[i];
      }
    }
    if (choice != hashed_port) {
      ++cnt_.sar_detours;
      if (s_.cfr && harmful(hashed_port, key)) ++cnt_.sar_detours_of_harmful;  // never, by the rule above
    }
  }
  e.key = key;
  e.last = now;
  e.port = choice;
  return choice;
}

// --- [cc.rcm] -> RcmSettings (rcm.h documents every value and its source) ---
// The table also takes the DCQCN keys of [cc.dcqcn] (variant, g, ..., cnp_interval_us) for the hosts,
// "mellanox" by default.

namespace {

SchemeFactory read_scheme_rcm(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.rcm.";
  RcmSettings s;
  s.host = read_dcqcn_settings(c, "cc.rcm", ctx.nic_rate);
  s.crd = c.get_bool(k + "crd", s.crd);
  s.cfr = c.get_bool(k + "cfr", s.cfr);
  s.rcc = c.get_bool(k + "rcc", s.rcc);
  s.sar = c.get_bool(k + "sar", s.sar);
  s.q_eq_bytes = c.get_int(k + "q_eq_bytes", s.q_eq_bytes, 1, int64_t{1} << 40);
  s.w_q = c.get_double(k + "w_q", s.w_q, 0, 100);
  s.fb_full_queue = c.get_bool(k + "fb_full_queue", s.fb_full_queue);
  s.fb_max = static_cast<int>(c.get_int(k + "fb_max", s.fb_max, 1, 1 << 16));
  s.w_remote = c.get_double(k + "w_remote", s.w_remote, 0, 1);
  s.sample_bytes = c.get_int(k + "sample_bytes", s.sample_bytes, 64, int64_t{1} << 40);
  s.sample_jitter = c.get_double(k + "sample_jitter", s.sample_jitter, 0, 0.9);
  s.flag_timeout = c.get_us(k + "flag_timeout_us", s.flag_timeout, 0.001, 1e9);
  s.cam_depth = static_cast<int>(c.get_int(k + "cam_depth", s.cam_depth, 1, 1024));
  s.cam_interval = static_cast<int>(c.get_int(k + "cam_interval", s.cam_interval, 1, 1 << 20));
  s.cfr_share = c.get_double(k + "cfr_share", s.cfr_share, 0, 100);
  s.cfr_keep_share = c.get_double(k + "cfr_keep_share", s.cfr_keep_share, 0, 100);
  s.rcc_edge_strict = c.get_bool(k + "rcc_edge_strict", s.rcc_edge_strict);
  s.rcc_min_window_bytes = c.get_int(k + "rcc_min_window_bytes", s.rcc_min_window_bytes, 1, int64_t{1} << 40);
  s.sar_severe_cns = static_cast<int>(c.get_int(k + "sar_severe_cns", s.sar_severe_cns, 0, 1 << 20));
  s.sar_severe_fb = c.get_double(k + "sar_severe_fb", s.sar_severe_fb, 0, 1);
  s.sar_flowlet_gap = c.get_us(k + "sar_flowlet_gap_us", s.sar_flowlet_gap, 0, 1e9);
  s.sar_table_size = static_cast<int>(c.get_int(k + "sar_table_size", s.sar_table_size, 1, 1 << 24));
  if (s.sar_table_size & (s.sar_table_size - 1)) c.fail(k + "sar_table_size", "must be a power of two");
  return [s] { return std::make_unique<Rcm>(s); };
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry rcm_scheme() {
  return {.name = "rcm",
          .summary =
              "RCM (switch-to-switch CNs, CAM-recognised harmful flows, crossbar window control, "
              "adaptive routing; DCQCN hosts)",
          .read = read_scheme_rcm};
}

}  // namespace rocesim
