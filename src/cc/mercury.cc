#include "cc/mercury.h"

#include <algorithm>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

CcNeeds Mercury::needs() const {
  CcNeeds n;
  n.ecn_marking = false;  // the switch agent decides who gets a CNP [algorithms.md 3.1 (a)]
  n.window = ms_.window;
  return n;
}

void Mercury::attach(CcServices& net) {
  Dcqcn::attach(net);
  base_rtt_ = ms_.base_rtt > Time::zero() ? ms_.base_rtt : net.max_base_rtt();
}

std::unique_ptr<SwitchAgent> Mercury::make_switch_agent(Switch& sw) {
  return std::make_unique<MercuryAgent>(*net_, sw, ms_, base_rtt_);
}

// Algorithm 2 line 20 ("Rate_recovery": cwnd = C x baseRTT), also the initial window [Mercury paper text:
// "Initially, the window sizes are uniformly set to C x baseRTT"]. C is the sender NIC's rate.
Bytes Mercury::initial_window(const Qp& qp) const {
  const Bytes mtu = net_->nic_settings().mtu_bytes;
  return std::max(mtu, static_cast<Bytes>(qp.line_rate.bps * base_rtt_.sec() / 8.0));
}

void Mercury::read_state(const Qp& qp, std::span<double> out) const {
  const size_t n = Dcqcn::kVariables.size();
  Dcqcn::read_state(qp, out.first(n));
  out[n] = static_cast<double>(last_window(qp));
}

void Mercury::on_flow_start(Qp& qp) {
  Dcqcn::on_flow_start(qp);
  last_win_.start(*net_, qp);
  if (ms_.window) net_->set_window(qp, initial_window(qp));
}

// Algorithm 2 lines 15-17: the DCQCN reaction (algorithms.md 2.2) and cwnd = min(cwnd, win).
void Mercury::on_cnp(Qp& qp, const Packet& cnp) {
  congestion_notified(qp);
  const Bytes win = static_cast<Bytes>(cnp.cc_value);
  if (!ms_.window || win <= 0) return;
  last_win_[qp.slot] = win;
  if (qp.window == 0 || win < qp.window) net_->set_window(qp, win);
}

// Algorithm 2 lines 18-20: any DCQCN increase step (fast recovery, additive, hyper) resets the window.
void Mercury::on_increase_event(Qp& qp) {
  if (ms_.window) net_->set_window(qp, initial_window(qp));
}

// ---------------------------------------------------------------------------------------------------
MercuryAgent::MercuryAgent(CcServices& net, Switch& sw, const MercurySettings& s, Time base_rtt)
    : net_(net),
      sw_(sw),
      s_(s),
      base_rtt_(base_rtt),
      mtu_(net.nic_settings().mtu_bytes),
      q_(sw.ports().size() * kNumPriorities),
      th_(sw.ports().size()) {
  for (size_t i = 0; i < th_.size(); ++i)
    th_[i] = s.threshold_bytes > 0 ? s.threshold_bytes : sw.ecn(static_cast<int>(i)).kmin;
}

// Algorithm 1 lines 1-3 [restored in algorithms.md: "PFC triggered => Undetermined"]: a PAUSE starts
// the pause clock and the rxByte count. Lines 6-14 at the RESUME.
void MercuryAgent::on_pfc(int port, int prio, bool paused) {
  QueueState& q = q_[idx(port, prio)];
  const Time now = net_.now();
  if (paused) {
    q.paused = true;
    q.pause_time = now;    // line 2
    q.rx_bytes = 0;        // line 3
    q.determined = false;  // [restored] the port affected by PFC is Undetermined
    q.timer = false;
    return;
  }
  if (!q.paused) return;
  q.paused = false;
  const Time t_pause = now - q.pause_time;  // line 7
  const Bytes qlen = sw_.egress_bytes(port, prio);
  if (qlen >= th_[port]) {  // line 8
    const double drain = sw_.port(port).rate.bps * t_pause.sec() / 8.0;
    if (static_cast<double>(q.rx_bytes) <= drain) {  // line 9: rxRate <= C, backlog from the pause
      q.determined = false;                          // line 10
      q.q_rec = qlen;
      q.timer = true;
      q.timer_start = now;
      ++resumes_undetermined_;
    } else {
      q.determined = true;  // line 12 [seed text]: grows at line rate
      q.timer = false;
      ++resumes_determined_;
    }
  } else {
    q.determined = true;  // lines 13-14 [seed text]: not congested
    q.timer = false;
    ++resumes_determined_;
  }
}

// Algorithm 1 lines 4-5 (rxByte while paused) and Algorithm 2 lines 1-4 (flow table on arrival).
void MercuryAgent::on_enqueue(Packet& p, int port) {
  if (p.type != PktType::kData) return;
  QueueState& q = q_[idx(port, p.prio)];
  if (q.paused) q.rx_bytes += p.size;
  q.ft.get_or_insert(flow_key(p)) += p.size;
  q.sum_data += p.size;
}

// "Send_packet": Algorithm 1 lines 15-24 and Algorithm 2 lines 5-13.
void MercuryAgent::on_dequeue(Packet& p, int port) {
  if (p.type != PktType::kData) return;
  QueueState& q = q_[idx(port, p.prio)];
  const Time now = net_.now();
  // The queue this packet leaves (the switch has already taken it off).
  const Bytes qlen = sw_.egress_bytes(port, p.prio) + p.size;
  const Bytes th = th_[port];
  if (!q.determined && q.timer && now - q.timer_start >= s_.check_period) {  // lines 15-16
    if (qlen >= th && qlen < q.q_rec) {  // line 17: still draining the backlog of a pause
      q.timer_start = now;               // lines 18-19: restart T, remember the queue
      q.q_rec = qlen;
    } else {
      q.determined = true;  // line 20
      q.timer = false;
    }
  }
  Bytes* queued = q.ft.find(flow_key(p));
  if (q.determined && qlen > th && queued && q.sum_data > 0) {  // lines 21-22
    // Algorithm 2 lines 10-13 (Window_calculation), with the flow's bytes before this packet leaves.
    const double share = static_cast<double>(*queued) / static_cast<double>(q.sum_data);
    const double rate_bps = sw_.port(port).rate.bps * share;
    const Bytes win = std::max(mtu_, static_cast<Bytes>(rate_bps * base_rtt_.sec() / 8.0));
    send_cnp(p, win);  // lines 23-24
  }
  // Algorithm 2 line 6 (the seed's "=" is a typo for "-=", algorithms.md) and lines 7-9.
  if (queued) {
    *queued -= p.size;
    if (*queued <= 0) q.ft.erase(flow_key(p));
  }
  q.sum_data = std::max<Bytes>(0, q.sum_data - p.size);
}

// One CNP per flow per T_cnp (first immediate) [interp], to the QP of the packet that left.
void MercuryAgent::send_cnp(const Packet& p, Bytes win) {
  Qp* qp = net_.qp_of(p);
  if (!qp) return;  // the flow has finished
  const Time now = net_.now();
  const size_t slot = static_cast<size_t>(p.qp);
  if (slot >= last_cnp_.size()) last_cnp_.resize(std::max<size_t>(slot + 1, 2 * last_cnp_.size()));
  LastCnp& last = last_cnp_[slot];
  if (last.tag == p.qp_tag && last.at > Time::zero() && now - last.at < s_.cnp_interval) return;
  last = LastCnp{p.qp_tag, now};
  Packet* c = net_.make_cnp(*qp, sw_.id());
  c->cc_value = static_cast<double>(win);
  ++cnps_sent_;
  ++net_.counters().cnps_from_switches;
  net_.inject(sw_.id(), c);
}

// --- [cc.mercury] -> MercurySettings (mercury.h documents every value and its source) ---
// The table also takes the DCQCN reaction-point keys of [cc.dcqcn] (variant, g, ..., min_rate_mbps), with
// the same defaults as [cc.dcqcn] (variant "mellanox"), so Mercury and DCQCN share one RP; the
// notification-point keys (cnp_interval_us, cnp_on_ack) are read but unused: the switches send the CNPs,
// spaced by cnp_spacing_us.

namespace {

SchemeFactory read_scheme_mercury(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.mercury.";
  MercurySettings s;
  s.rp = read_dcqcn_settings(c, "cc.mercury", ctx.nic_rate);
  s.check_period = c.get_us(k + "check_period_us", s.check_period, 0.001, 1e9);
  s.threshold_bytes = c.get_int(k + "threshold_bytes", s.threshold_bytes, 0, int64_t{1} << 40);
  s.cnp_interval = c.get_us(k + "cnp_spacing_us", s.cnp_interval, 0, 1e9);
  s.base_rtt = c.get_us(k + "base_rtt_us", s.base_rtt, 0, 1e9);
  s.window = c.get_bool(k + "window", s.window);
  return [s] { return std::make_unique<Mercury>(s); };
}

// Mercury's switch agent decides who gets a CNP [algorithms.md 3.1 (a)]: no RED marking.
std::string switch_defaults_mercury(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "mercury: the switch agent sends CNPs instead of RED marking (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry mercury_scheme() {
  return {
      .name = "mercury",
      .summary =
          "Mercury (switch PFC-aware port states, window-carrying CNPs; DCQCN sender (as [cc.dcqcn]) + cwnd)",
      .read = read_scheme_mercury,
      .switch_defaults = switch_defaults_mercury};
}

}  // namespace rocesim
