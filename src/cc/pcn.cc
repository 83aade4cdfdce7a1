#include "cc/pcn.h"

#include <algorithm>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

CcNeeds Pcn::needs() const {
  CcNeeds n;
  n.ecn_marking = false;  // NP-ECN (PcnAgent::mark) replaces RED
  return n;
}

void Pcn::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.rate = qp.line_rate;  // start at line rate
  s.w = s_.w_min;         // as the public ns-3 code initialises w
  qp.rate = qp.line_rate;
}

// The sender's link changed rate (docs/models.md A3b): the rate follows it.
void Pcn::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st_[qp.slot];
  s.rate = follow_line_rate(s.rate, old_line, qp.line_rate);
}

// NP (algorithms.md 2.7): count what arrives; the first packet starts the T_np timer.
RxDecision Pcn::on_data_received(Qp& qp, const Packet& data) {
  State& s = st_[qp.slot];
  const Time now = net_->now();
  ++s.rec_num;
  s.rec_bytes += data.size;
  s.last_size = data.size;
  if (data.ecn == kCe) ++s.ecn_num;
  if (s.last_arrival > Time::zero()) s.inter_arrival = now - s.last_arrival;
  s.last_arrival = now;
  if (!s.timer_running) {
    s.timer_running = true;
    net_->schedule_qp_timer(qp, now + s_.np_period, kRxPeriod);
  }
  return {};
}

void Pcn::on_timer(Qp& qp, uint32_t kind) {
  if (kind == kRxPeriod) end_of_period(qp);
}

// End of a T_np period at the receiver: one CNP per flow that received packets, with the received
// rate and ECE when (nearly) every packet was CE-marked.
void Pcn::end_of_period(Qp& qp) {
  State& s = st_[qp.slot];
  if (s.rec_num == 0) {
    s.timer_running = false;  // idle: the next packet restarts the timer
    return;
  }
  double rec_bps;
  if (s.rec_num == 1 && s.inter_arrival > Time::zero())
    rec_bps = static_cast<double>(s.last_size) * 8.0 / s.inter_arrival.sec();
  else
    rec_bps = static_cast<double>(s.rec_bytes) * 8.0 / s_.np_period.sec();
  const bool ece = static_cast<double>(s.ecn_num) > s_.ece_fraction * static_cast<double>(s.rec_num);
  Packet* c = net_->make_cnp(qp, qp.dst);
  c->cc_value = rec_bps * 1e-6;  // Mb/s, as the CNP's 32-bit field carries it
  c->cc_flags = ece ? kEce : 0;
  ++qp.cnps_sent;
  ++net_->counters().cnps_sent;
  qp.last_cnp_sent = net_->now();
  net_->inject(qp.dst, c);
  s.rec_num = 0;
  s.ecn_num = 0;
  s.rec_bytes = 0;
  net_->schedule_qp_timer(qp, net_->now() + s_.np_period, kRxPeriod);
}

// RP (algorithms.md 2.7).
void Pcn::on_cnp(Qp& qp, const Packet& cnp) {
  State& s = st_[qp.slot];
  const Rate c = qp.line_rate;
  if (cnp.cc_flags & kEce) {
    ++s.ece_cnps;
    const Rate rec = Rate::from_mbps(cnp.cc_value);
    s.rec_rate = rec;
    s.rate = std::max(s_.min_rate, std::min(s.rate, rec * (1 - s_.w_min)));
    s.w = s_.w_min;
  } else {
    ++s.plain_cnps;
    s.rate = std::min(c, s.rate * (1 - s.w) + c * s.w);
    s.w = (1 - s.w) * s.w + s.w * s_.w_max;
  }
  net_->set_rate(qp, s.rate);
}

void Pcn::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  out[0] = s.w;
  out[1] = s.rec_rate.gbps();
  out[2] = s.ece_cnps;
  out[3] = s.plain_cnps;
}

std::unique_ptr<SwitchAgent> Pcn::make_switch_agent(Switch& sw) { return std::make_unique<PcnAgent>(sw, s_); }

PcnAgent::PcnAgent(Switch& sw, const PcnSettings& s)
    : sw_(sw), k_np_(s.k_np_pkts), paused_counter_(sw.ports().size() * kNumPriorities, 0) {}

// RESUME: every packet now in the queue sat through the pause.
void PcnAgent::on_pfc(int port, int prio, bool paused) {
  if (paused) return;
  paused_counter_[static_cast<size_t>(port) * kNumPriorities + prio] = sw_.port(port).q[prio].pkts;
}

// NP-ECN, evaluated when the packet leaves (it is already off the queue: q.pkts are the packets behind).
bool PcnAgent::mark(Packet& p, int port) {
  uint32_t& paused = paused_counter_[static_cast<size_t>(port) * kNumPriorities + p.prio];
  if (paused > 0) {
    --paused;
    ++paused_unmarked_;
    return true;
  }
  Port& pt = sw_.port(port);
  if (p.ecn != kNotEct && p.ecn != kCe && pt.q[p.prio].pkts > k_np_) {
    p.ecn = kCe;
    ++pt.stats.ecn_marked;
  }
  return true;
}

// --- [cc.pcn] -> PcnSettings (pcn.h documents every value and its source) ---

namespace {

SchemeFactory read_scheme_pcn(KeyReader& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.pcn.";
  PcnSettings s;
  s.np_period = c.get_us(k + "np_period_us", s.np_period, 0.001, 1e9);
  s.ece_fraction = c.get_double(k + "ece_fraction", s.ece_fraction, 0, 1);
  s.w_min = c.get_double(k + "w_min", s.w_min, 1e-9, 1);
  s.w_max = c.get_double(k + "w_max", s.w_max, 1e-9, 1);
  s.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", s.min_rate.mbps(), 0.001, 1e6));
  s.k_np_pkts = static_cast<uint32_t>(c.get_int(k + "k_np_pkts", s.k_np_pkts, 0, 1'000'000));
  if (s.w_min > s.w_max) c.fail(k + "w_min", "must not exceed w_max");
  return [s] { return std::make_unique<Pcn>(s); };
}

// PCN's NP-ECN (PcnAgent::mark) replaces RED marking [PCN paper sec. 4].
std::string switch_defaults_pcn(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "pcn: NP-ECN in the switch agent instead of RED (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry pcn_scheme() {
  return {.name = "pcn",
          .summary = "PCN (NP-ECN spares paused packets; receiver rate in CNPs every 50 us)",
          .read = read_scheme_pcn,
          .switch_defaults = switch_defaults_pcn};
}

}  // namespace rocesim
