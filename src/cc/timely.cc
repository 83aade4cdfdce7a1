#include "cc/timely.h"

#include <algorithm>

#include "cc/registry.h"

namespace rocesim {

TimelySettings TimelySettings::for_nic_rate(Rate nic_rate) {
  TimelySettings s;
  const double scale = nic_rate.bps / 10e9;
  s.delta = Rate::from_mbps(10 * scale);
  s.hai_step = Rate::from_mbps(50 * scale);
  return s;
}

void Timely::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.rc = qp.line_rate;  // start at line rate [algorithms.md 1.6]
  qp.rate = qp.line_rate;
}

// The sender's link changed rate (docs/models.md A3b): Rc follows it.
void Timely::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st_[qp.slot];
  s.rc = follow_line_rate(s.rc, old_line, qp.line_rate);
}

// algorithms.md 2.4 (c), once per RTT (ack.seq > lastUpdateSeq, then lastUpdateSeq = snd_nxt).
void Timely::on_ack(Qp& qp, const Packet& ack) {
  State& s = st_[qp.slot];
  const Time rtt = net_->now() - ack.ts;  // the ACK echoes its data packet's send time
  s.last_rtt = rtt;
  if (ack.seq <= s.last_update_seq) return;  // not a new RTT yet
  s.last_update_seq = qp.snd_nxt;
  if (!s.started) {  // first RTT: only remember the sample
    s.started = true;
    s.prev_rtt = rtt;
    return;
  }
  const double new_diff = static_cast<double>((rtt - s.prev_rtt).ps);
  s.prev_rtt = rtt;
  s.rtt_diff_ps = (1 - s_.alpha) * s.rtt_diff_ps + s_.alpha * new_diff;
  const double gradient = s.rtt_diff_ps / static_cast<double>(s_.min_rtt.ps);

  auto increase = [&](bool hai_allowed) {
    const bool hai = hai_allowed && s.inc_stage >= s_.hai_after;
    s.rc = std::min(qp.line_rate, s.rc + (hai ? s_.hai_step : s_.delta));
    ++s.inc_stage;
  };
  auto decrease = [&](double factor) {
    s.rc = std::max(s_.min_rate, s.rc * std::max(0.0, factor));
    s.inc_stage = 0;
    ++s.decreases;
  };
  if (rtt < s_.t_low) {
    increase(s_.hai_below_tlow);  // Rc += delta
  } else if (rtt > s_.t_high) {
    decrease(1 - s_.beta * (1 - static_cast<double>(s_.t_high.ps) / static_cast<double>(rtt.ps)));
  } else if (gradient <= 0) {
    increase(true);  // Rc += delta, or HAI after N
  } else {
    decrease(1 - s_.beta * gradient);  // Rc *= 1 - beta x gradient
  }
  net_->set_rate(qp, s.rc);
}

void Timely::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  out[0] = s.last_rtt.us();
  out[1] = s.rtt_diff_ps * 1e-6;
  out[2] = s.rtt_diff_ps / static_cast<double>(s_.min_rtt.ps);
  out[3] = s.inc_stage;
}

// --- [cc.timely] -> TimelySettings (timely.h documents every value and its source) ---

namespace {

SchemeFactory read_scheme_timely(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.timely.";
  TimelySettings d = TimelySettings::for_nic_rate(ctx.nic_rate);
  d.alpha = c.get_double(k + "alpha", d.alpha, 0, 1);
  d.beta = c.get_double(k + "beta", d.beta, 0, 1);
  d.t_low = c.get_us(k + "t_low_us", d.t_low, 0.001);
  d.t_high = c.get_us(k + "t_high_us", d.t_high, 0.001);
  d.min_rtt = c.get_us(k + "min_rtt_us", d.min_rtt, 0.001);
  d.delta = Rate::from_mbps(c.get_double(k + "delta_mbps", d.delta.mbps(), 0, 1e6));
  d.hai_step = Rate::from_mbps(c.get_double(k + "hai_mbps", d.hai_step.mbps(), 0, 1e6));
  d.hai_after = static_cast<int>(c.get_int(k + "hai_after", d.hai_after, 0, 1'000'000));
  d.hai_below_tlow = c.get_bool(k + "hai_below_tlow", d.hai_below_tlow);
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  if (d.t_high < d.t_low) c.fail(k + "t_high_us", "must not be below t_low_us");
  return [d] { return std::make_unique<Timely>(d); };
}

// TIMELY reacts to RTT alone: no ECN marking [TIMELY paper].
std::string switch_defaults_timely(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "timely: delay-based, no ECN marking (ecn = false)";
}

// The ns-3 HPCC simulator's TIMELY (profile hpcc-sim, config/profiles.h).
constexpr char kHpccSimTimely[] = R"(
[cc.timely]
alpha = 0.875
beta = 0.8
t_low_us = 50.0
t_high_us = 500.0
min_rtt_us = 20.0
hai_after = 5
hai_below_tlow = true
min_rate_mbps = 1000.0
)";

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry timely_scheme() {
  return {.name = "timely",
          .summary = "TIMELY (RTT gradient from ACK timestamps, no ECN)",
          .read = read_scheme_timely,
          .switch_defaults = switch_defaults_timely,
          .profiles = {{"hpcc-sim", kHpccSimTimely}}};
}

}  // namespace rocesim
