#include "cc/lscc_rate.h"

#include <algorithm>
#include <cmath>

#include "core/key_reader.h"
#include "net/switch.h"

namespace rocesim {

LsccRateCalc::LsccRateCalc(Time period, Bytes q_ref, Rate delta_r, Rate r_min, Rate r_max, int n)
    : t_sec_(period.sec()),
      q_ref_bits_(static_cast<double>(q_ref) * 8),
      delta_r_(delta_r.bps),
      r_min_(r_min.bps),
      r_max_(r_max.bps),
      r_last_(r_max.bps),
      ra_(static_cast<size_t>(std::max(1, n)), 0.0) {}

double LsccRateCalc::ra_sent() const {
  double sum = 0;
  for (double v : ra_) sum += v;
  return sum;
}

// Algorithm 1 (rates in bits/s, queues in bits).
Rate LsccRateCalc::step(Rate br_rate, Bytes q_cur) {
  const double br = br_rate.bps;
  if (!started_) {
    // R_last starts at the first measured bottleneck rate [interp: the seed gives no initial value; starting
    // at R_max would take (R_max - BR) / delta R periods, 30 ms here, before the loop acts].
    if (br <= 0) return Rate::from_bps(r_last_);
    started_ = true;
    r_last_ = std::clamp(br, r_min_, r_max_);
  }
  const double ra_sent = this->ra_sent();                                         // line 1
  double ra = (static_cast<double>(q_cur) * 8 - q_ref_bits_) / t_sec_ - ra_sent;  // line 2
  double r = br - ra;                                                             // line 3
  r = std::clamp(r, r_last_ - delta_r_, r_last_ + delta_r_);                      // lines 4-7
  r = std::clamp(r, r_min_, r_max_);                                              // lines 8-11
  r_last_ = r;                                                                    // line 12
  ra = br - r;                                                                    // line 13
  head_ = (head_ + ra_.size() - 1) % ra_.size();                                  // lines 14-15: shift right
  ra_[head_] = ra;                                                                // line 16
  return Rate::from_bps(r);
}

// ---------------------------------------------------------------------------------------------------
// The long-haul ingress queue is held around Q_ref: its PFC Xoff must sit well above (see
// LsccRateSettings::long_haul_xoff_bytes).
PfcThresholds lscc_long_haul_thresholds(const LsccRateSettings& s, PfcThresholds own) {
  const Bytes want = s.long_haul_xoff_bytes > 0 ? s.long_haul_xoff_bytes : 4 * s.q_ref_bytes;
  if (own.xoff >= want) return own;
  return {want, std::max<Bytes>(0, want - (own.xoff - own.xon))};
}

bool LsccSwitchAgent::has_long_haul(Switch& sw) {
  for (const Port& p : sw.ports())
    if (p.long_haul && p.peer->is_switch()) return true;
  return false;
}

LsccSwitchAgent::LsccSwitchAgent(CcServices& net, Switch& sw, const LsccRateSettings& s)
    : net_(net), sw_(sw), s_(s), lp_of_(sw.ports().size(), -1) {
  handler_ = net.add_handler(this, sw.handler());
  for (const Port& p : sw.ports()) {
    if (!p.long_haul || !p.peer->is_switch()) continue;
    LongPort l;
    l.port = p.index;
    l.peer = p.peer->id();
    const Time rtt = s.rtt > Time::zero() ? s.rtt : p.delay * 2;
    const int n = std::max(1, static_cast<int>(std::llround(rtt.sec() / s.period.sec())));  // N = 2D / T
    const Rate r_max = p.rate * s.max_rate_fraction;
    l.calc = LsccRateCalc(s.period, s.q_ref_bytes, s.delta_r, s.min_rate, r_max, n);
    l.r_fb = r_max;  // until the first feedback arrives [interp: R_last's initial value]
    const PfcThresholds t = lscc_long_haul_thresholds(s, {sw.xoff(p.index), sw.xon(p.index)});
    sw.set_port_thresholds(p.index, t.xoff, t.xon);
    lp_of_[p.index] = static_cast<int>(lp_.size());
    lp_.push_back(l);
  }
  if (!lp_.empty()) schedule(s.period, kPeriod);
}

// Background events: the period timer never keeps an otherwise finished run going.
void LsccSwitchAgent::schedule(Time after, uint32_t kind, uint64_t arg) {
  net_.schedule_after(after, handler_, kind | Simulator::kBackground, arg);
}

void LsccSwitchAgent::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kPeriod) {
    period();
    schedule(s_.period, kPeriod);
  } else {
    on_subclass_event(kind, arg);
  }
}

void LsccSwitchAgent::drain(LongPort& l) {
  const Time now = net_.now();
  if (now > l.q_star_at) {
    l.q_star = std::max(0.0, l.q_star - l.r_fb.bps * (now - l.q_star_at).sec() / 8);  // Eq. 10, export R
    l.q_star_at = now;
  }
}

// Rate limiting: the pseudo queue takes the actual input of internal traffic towards the long-haul link.
void LsccSwitchAgent::on_enqueue(Packet& p, int port) {
  const int i = long_index(port);
  if (i < 0 || !internal(p)) return;
  LongPort& l = lp_[i];
  drain(l);
  l.q_star += p.size;
}

// Rate calculation: BR counts long-haul ingress traffic as this switch forwards it (to any egress).
void LsccSwitchAgent::on_dequeue(Packet& p, int port) {
  (void)port;
  const int i = p.in_port >= 0 ? long_index(p.in_port) : -1;
  if (i >= 0) lp_[i].br_bytes += p.size;
}

// Every T: Algorithm 1 for each long-haul ingress, then the feedback message to the far switch.
void LsccSwitchAgent::period() {
  for (LongPort& l : lp_) {
    const Rate br = Rate::from_bps(static_cast<double>(l.br_bytes) * 8 / s_.period.sec());
    l.br_bytes = 0;
    const Rate r = l.calc.step(br, ingress_queue(l.port));
    const double unit = s_.rate_unit.bps > 0 ? s_.rate_unit.bps : 1;
    Packet* m = net_.pool().get();
    m->type = PktType::kCtrl;
    m->prio = 0;  // top priority [LSCC paper]
    m->src = sw_.id();
    m->dst = l.peer;
    m->size = static_cast<uint32_t>(s_.message_bytes);
    m->cc_flags = kFeedbackTag;
    m->cc_value = std::floor(r.bps / unit) * unit;  // quantised to the message's unit delta F
    ++messages_sent_;
    net_.inject(sw_.id(), m);
  }
  on_period();
}

void LsccSwitchAgent::on_switch_message(const Packet& p, int in_port) {
  if (p.cc_flags != kFeedbackTag) return;
  const int i = long_index(in_port);
  if (i < 0) return;
  LongPort& l = lp_[i];
  drain(l);  // the old rate applies until now
  l.r_fb = Rate::from_bps(p.cc_value);
}

Bytes LsccSwitchAgent::pseudo_queue(int port) {
  const int i = long_index(port);
  if (i < 0) return 0;
  drain(lp_[i]);
  return static_cast<Bytes>(lp_[i].q_star);
}

Rate LsccSwitchAgent::feedback_rate(int port) const {
  const int i = long_index(port);
  return i < 0 ? Rate{} : lp_[i].r_fb;
}

Rate LsccSwitchAgent::computed_rate(int port) const {
  const int i = long_index(port);
  return i < 0 ? Rate{} : lp_[i].calc.last();
}

Bytes LsccSwitchAgent::ingress_queue(int port) const {
  Bytes q = 0;
  for (int prio = 1; prio < kNumPriorities; ++prio) {
    const IngressCounters& c = sw_.ingress(port, prio);
    q += c.bytes + c.hdrm_bytes;
  }
  return q;
}

// --- the keys of LsccRateSettings (lscc_rate.h documents every value and its source) ---

LsccRateSettings read_lscc_rate_settings(KeyReader& c, const std::string& prefix) {
  const std::string k = prefix + ".";
  LsccRateSettings r;
  r.period = c.get_us(k + "period_us", r.period, 1, 1e7);
  r.q_ref_bytes = c.get_int(k + "q_ref_bytes", r.q_ref_bytes, 0, int64_t{1} << 40);
  r.q_star_ref_bytes = c.get_int(k + "q_star_ref_bytes", r.q_star_ref_bytes, 0, int64_t{1} << 40);
  r.delta_r = Rate::from_mbps(c.get_double(k + "delta_r_mbps", r.delta_r.mbps(), 0.001, 1e7));
  r.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", r.min_rate.mbps(), 0.001, 1e7));
  r.max_rate_fraction = c.get_double(k + "max_rate_fraction", r.max_rate_fraction, 0.01, 1);
  r.rate_unit = Rate::from_mbps(c.get_double(k + "rate_unit_mbps", r.rate_unit.mbps(), 0, 1e6));
  r.rtt = c.get_us(k + "long_haul_rtt_us", r.rtt, 0, 1e8);
  r.message_bytes = c.get_int(k + "message_bytes", r.message_bytes, 1, 9000);
  r.long_haul_xoff_bytes = c.get_int(k + "long_haul_xoff_bytes", r.long_haul_xoff_bytes, 0, int64_t{1} << 40);
  return r;
}

}  // namespace rocesim
