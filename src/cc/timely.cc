#include "cc/timely.h"

#include <algorithm>

#include "net/network.h"

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

}  // namespace rocesim
