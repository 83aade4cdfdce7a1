#include "cc/icc.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

CcNeeds Icc::needs() const {
  CcNeeds n;
  n.ecn_marking = false;       // ICC does not use ECN
  n.ack_high_priority = true;  // ACKs pass the switches as control packets (SwitchAgent::on_control)
  return n;
}

void Icc::attach(CcServices& net) {
  CongestionControl::attach(net);
  if (s_.q_d_bytes > 0) {
    q_d_ = s_.q_d_bytes;
  } else {
    // Xoff = the smallest PFC threshold any switch port has with an empty buffer (static: Xoff; dynamic:
    // alpha x the free shared buffer).
    const double xoff = static_cast<double>(net.min_pfc_threshold());
    q_d_ = std::min(static_cast<Bytes>(s_.q_d_fraction * xoff), s_.q_d_cap_bytes);
  }
}

void Icc::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.rate = qp.line_rate;  // start at line rate (as DCQCN, whose code base ICC reuses)
  qp.rate = qp.line_rate;
}

// The sender's link changed rate (docs/models.md A3b): V follows it.
void Icc::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st_[qp.slot];
  s.rate = follow_line_rate(s.rate, old_line, qp.line_rate);
}

bool Icc::decode(const Packet& ack, Feedback& f) {
  if (!(ack.cc_flags & kInfo) || !ack.hops) return false;
  const IntHop& h = ack.hops[0];
  f.qlen = h.qlen_bytes;
  f.qlen_rate = h.extra;
  f.lu = ack.cc_value;
  f.c = h.rate;
  f.n_flows = static_cast<int>(std::max<Bytes>(1, h.tx_bytes));
  f.ts = h.ts;
  f.congested = (ack.cc_flags & kCongested) != 0;
  return true;
}

Rate Icc::v_max(const Feedback& f, Time t, Bytes q_d) {
  const double tt = std::max(t.sec(), 1e-9);
  const double room = static_cast<double>(q_d) - static_cast<double>(f.qlen) - f.qlen_rate * tt;  // bytes
  return Rate::from_bps((f.c.bps * f.lu + room * 8.0 / tt) / f.n_flows);
}

Rate Icc::v_min(const Feedback& f, Time t) {
  const double tt = std::max(t.sec(), 1e-9);
  return Rate::from_bps((f.c.bps - static_cast<double>(f.qlen) * 8.0 / tt) / f.n_flows);
}

Rate Icc::next_rate(Rate v, const Feedback& f, Rate line_rate, Time t, Bytes q_d, Rate r_min) {
  Rate nv = v;
  if (f.qlen > 0) {
    if (f.qlen_rate > 0) {
      nv = std::min(v, v_max(f, t, q_d));
    } else {
      const double t1 = f.qlen_rate < 0 ? static_cast<double>(f.qlen) / -f.qlen_rate : 1e300;
      if (t1 >= t.sec()) nv = v_min(f, t);
    }
  } else {
    nv = v * f.lu + line_rate * (1 - f.lu);  // Eq. 6
  }
  return std::clamp(nv, r_min, line_rate);
}

void Icc::on_ack(Qp& qp, const Packet& ack) {
  Feedback f;
  if (!decode(ack, f)) return;
  State& s = st_[qp.slot];
  const Time now = net_->now();
  if (s.feedbacks == 0) s.first_fb = now;
  s.last_fb = now;
  s.last = f;
  ++s.feedbacks;
  const Rate nv = next_rate(s.rate, f, qp.line_rate, qp.base_rtt, q_d_, s_.min_rate);
  if (nv < s.rate) ++s.decreases;
  if (nv != s.rate) {
    s.rate = nv;
    net_->set_rate(qp, nv);
  }
}

void Icc::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  out[0] = static_cast<double>(s.last.qlen);
  out[1] = s.last.qlen_rate * 8 * 1e-9;  // bytes per second -> Gb/s
  out[2] = s.last.lu;
  out[3] = s.feedbacks > 0 ? s.last.n_flows : 0;
  out[4] = s.last.congested ? 1 : 0;
  out[5] = static_cast<double>(s.feedbacks);
  out[6] = static_cast<double>(s.decreases);
}

std::unique_ptr<SwitchAgent> Icc::make_switch_agent(Switch& sw) {
  return std::make_unique<IccAgent>(*net_, sw, s_);
}

// --- switch side ---

IccAgent::IccAgent(CcServices& net, Switch& sw, const IccSettings& s)
    : net_(net), sw_(sw), s_(s), ports_(sw.ports().size()) {
  handler_ = net_.add_handler(this, sw.handler());
}

// A qlenRate / lu sample of `port` (at most one per sample_interval).
void IccAgent::sample(int port) {
  PortState& ps = ports_[port];
  const Time now = net_.now();
  const Bytes q = sw_.egress_data_bytes(port);
  const Bytes tx = sw_.port(port).tx_bytes;
  if (ps.sampled) {
    if (now - ps.sample_t < s_.sample_interval) return;
    const double dt = (now - ps.sample_t).sec();
    ps.r1 = ps.r2;
    ps.r2 = static_cast<double>(q - ps.sample_q) / dt;
    const double bits = static_cast<double>(tx - ps.sample_tx) * 8.0;
    ps.lu = std::clamp(bits / (sw_.port(port).rate.bps * dt), 0.0, 1.0);
  }
  ps.sampled = true;
  ps.sample_t = now;
  ps.sample_q = q;
  ps.sample_tx = tx;
}

// Arms feedback for every flow of `port`: their next ACK carries the snapshot.
void IccAgent::feedback(int port, bool immediate) {
  PortState& ps = ports_[port];
  const Time now = net_.now();
  if (now - ps.epoch_start >= s_.flow_window) {
    ps.cnt_prev = now - ps.epoch_start < s_.flow_window * 2 ? ps.cnt_cur : 0;
    ps.cnt_cur = 0;
    ++ps.epoch;
    ps.epoch_start = now;
  }
  Icc::Feedback& f = ps.snap;
  f.qlen = sw_.egress_data_bytes(port);
  f.qlen_rate = ps.r2;
  f.lu = ps.lu;
  f.c = sw_.port(port).rate;
  f.n_flows = static_cast<int>(std::max<uint32_t>(1, std::max(ps.cnt_cur, ps.cnt_prev)));
  f.ts = now;
  ++ps.stamp;
  ps.last_fb = now;  // (re)starts the periodic timer
  if (immediate)
    ++immediate_;
  else
    ++periodic_;
}

void IccAgent::arm_timer(int port) {
  PortState& ps = ports_[port];
  if (ps.timer_pending) return;
  ps.timer_pending = true;
  const Time at = std::max(net_.now(), ps.last_fb + s_.feedback_period);
  net_.schedule_at(at, handler_, 0, static_cast<uint64_t>(port));
}

void IccAgent::on_event(uint32_t kind, uint64_t arg) {
  (void)kind;
  const int port = static_cast<int>(arg);
  PortState& ps = ports_[port];
  ps.timer_pending = false;
  const Time now = net_.now();
  if (now - ps.last_data > s_.feedback_period * 2 && sw_.egress_data_bytes(port) == 0) return;  // idle
  if (now >= ps.last_fb + s_.feedback_period) {
    sample(port);
    ps.snap.congested = false;
    feedback(port, false);
  }
  arm_timer(port);
}

void IccAgent::sweep() {
  const Time now = net_.now();
  last_sweep_ = now;
  for (auto it = flows_.begin(); it != flows_.end();) {
    if (now - it->second.last_seen > s_.flow_idle)
      it = flows_.erase(it);
    else
      ++it;
  }
}

// The judgement, on every data packet queued at `port`.
void IccAgent::on_enqueue(Packet& p, int port) {
  if (p.type != PktType::kData) return;
  const Time now = net_.now();
  PortState& ps = ports_[port];
  if (now - last_sweep_ > s_.flow_idle) sweep();

  FlowEntry& e = flows_[FlowKey{p.src, p.dst, p.sport, p.dport}];
  if (e.port != port) {
    e.port = port;
    e.epoch = 0;
    e.delivered = ps.stamp;  // feedback armed before the flow used this port is not its business
  }
  e.last_seen = now;
  if (now - ps.epoch_start >= s_.flow_window) {
    ps.cnt_prev = now - ps.epoch_start < s_.flow_window * 2 ? ps.cnt_cur : 0;
    ps.cnt_cur = 0;
    ++ps.epoch;
    ps.epoch_start = now;
  }
  if (e.epoch != ps.epoch) {
    e.epoch = ps.epoch;
    ++ps.cnt_cur;
  }
  ps.last_data = now;

  sample(port);
  const Bytes qlen = sw_.egress_data_bytes(port) - p.size;  // bytes ahead of this packet
  if (qlen > 0) {
    const bool high = ps.lu >= s_.lu_threshold;
    if (ps.r1 >= 0 && ps.r2 >= 0 && high) {
      ++congested_;
      ps.snap.congested = true;
      feedback(port, true);
    } else if (!(ps.r2 < 0 && !high)) {
      ps.snap.congested = false;
      feedback(port, true);
    }
  }
  arm_timer(port);
}

// ACKs towards the senders: write the pending feedback of the egress the flow's data uses.
void IccAgent::on_control(Packet& p, int port) {
  (void)port;
  if (p.type != PktType::kAck) return;
  auto it = flows_.find(FlowKey{p.dst, p.src, p.dport, p.sport});
  if (it == flows_.end()) return;
  FlowEntry& e = it->second;
  const PortState& ps = ports_[e.port];
  if (ps.stamp <= e.delivered) return;
  e.delivered = ps.stamp;
  const Icc::Feedback& f = ps.snap;
  Icc::Feedback old;
  if (Icc::decode(p, old)) {
    // keep the more congested record (in the place of the other: the ACK keeps its size)
    const auto key = [](const Icc::Feedback& x) { return std::make_tuple(x.congested, x.qlen, x.lu); };
    if (key(old) >= key(f)) return;
  } else {
    // The switch inserts the record (as INT does): the ACK is larger from here on. It is not queued yet
    // (Switch::forward calls this before the queue or the buffer counts it).
    p.size += static_cast<uint32_t>(s_.feedback_bytes);
  }
  net_.pool().attach_int(&p);
  p.n_hops = 1;
  IntHop& h = p.hops[0];
  h.ts = f.ts;
  h.qlen_bytes = f.qlen;
  h.rate = f.c;
  h.extra = f.qlen_rate;
  h.tx_bytes = f.n_flows;
  p.cc_value = f.lu;
  p.cc_flags = Icc::kInfo | (f.congested ? Icc::kCongested : 0);
  ++written_;
}

// --- [cc.icc] -> IccSettings (icc.h documents every value and its source) ---

namespace {

SchemeFactory read_scheme_icc(KeyReader& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.icc.";
  IccSettings s;
  s.lu_threshold = c.get_double(k + "lu_threshold", s.lu_threshold, 0, 1);
  s.sample_interval = c.get_us(k + "sample_interval_us", s.sample_interval, 0.001, 1e6);
  s.feedback_period = c.get_us(k + "feedback_period_us", s.feedback_period, 0.001, 1e6);
  s.flow_window = c.get_us(k + "flow_window_us", s.flow_window, 0.001, 1e6);
  s.flow_idle = c.get_us(k + "flow_idle_us", s.flow_idle, 1, 1e9);
  s.q_d_bytes = c.get_int(k + "q_d_bytes", s.q_d_bytes, 0, int64_t{1} << 40);
  s.q_d_cap_bytes = c.get_int(k + "q_d_cap_bytes", s.q_d_cap_bytes, 1, int64_t{1} << 40);
  s.q_d_fraction = c.get_double(k + "q_d_fraction", s.q_d_fraction, 0.01, 1);
  s.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", s.min_rate.mbps(), 0.001, 1e6));
  s.feedback_bytes = c.get_int(k + "feedback_bytes", s.feedback_bytes, 0, 1024);
  return [s] { return std::make_unique<Icc>(s); };
}

// ICC's switch agent judges congestion itself and feeds back in ACKs: no ECN [ICC paper].
std::string switch_defaults_icc(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "icc: switch agent feedback in ACKs, no ECN marking (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry icc_scheme() {
  return {.name = "icc",
          .summary = "ICC (switch judges qlen, qlen rate, utilisation; feedback in ACKs; Vmax/Vmin rates)",
          .read = read_scheme_icc,
          .switch_defaults = switch_defaults_icc};
}

}  // namespace rocesim
