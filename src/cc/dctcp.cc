#include "cc/dctcp.h"

#include <algorithm>

#include "net/network.h"

namespace rocesim {

void Dctcp::attach(Network& net) {
  CongestionControl::attach(net);
  t_ = s_.t > Time::zero() ? s_.t : net.max_base_rtt();
}

void Dctcp::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.alpha = s_.alpha_init;
  s.rate = qp.line_rate;                     // start at line rate [sim]
  s.cwnd = qp.line_rate.bps * t_.sec() / 8;  // window mode: one BDP of the NIC, C_nic x T
  qp.rate = qp.line_rate;
  if (window_mode_)
    qp.window = std::max<Bytes>(s_.min_cwnd_bytes, static_cast<Bytes>(s.cwnd));
  else if (s_.rate_window)
    qp.window = std::max<Bytes>(1, bytes_in(qp.line_rate, t_));
}

// The sender's link changed rate (docs/models.md A3b): the rate, and the window as the rate cwnd / T,
// follow it.
void Dctcp::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st_[qp.slot];
  s.rate = follow_line_rate(s.rate, old_line, qp.line_rate);
  const double t_sec = t_.sec();
  if (t_sec > 0)
    s.cwnd = follow_line_rate(Rate::from_bps(s.cwnd * 8 / t_sec), old_line, qp.line_rate).bps * t_sec / 8;
}

// algorithms.md 2.3 (c): count ECN echoes per ACK; once per window (ack > lastUpdateSeq) fold the
// fraction into alpha; on an echo outside CWR cut by (1 - alpha/2) and enter CWR until the data sent
// before the cut is acknowledged; otherwise grow once per window.
void Dctcp::on_ack(Qp& qp, const Packet& ack) {
  State& s = st_[qp.slot];
  const bool echo = (ack.flags & Packet::kFlagEcnEcho) != 0;
  ++s.acks;
  if (echo) ++s.marked;

  bool new_window = false;
  if (ack.seq > s.last_update_seq) {
    new_window = true;
    // The first boundary only opens the first full window (the simulator's "first RTT").
    if (s.started) {
      const double f = static_cast<double>(s.marked) / static_cast<double>(s.acks);
      s.alpha = (1 - s_.g) * s.alpha + s_.g * f;  // alpha <- (1 - g) alpha + g F
      s.last_fraction = f;
      ++s.windows;
    }
    s.started = true;
    s.acks = s.marked = 0;
    s.last_update_seq = qp.snd_nxt;
  }

  if (s.cwr && ack.seq > s.high_seq) s.cwr = false;  // the window that saw the cut is acknowledged

  if (echo && !s.cwr) {
    const double cut = 1 - s.alpha / 2;
    if (window_mode_)
      s.cwnd = std::max<double>(static_cast<double>(s_.min_cwnd_bytes), s.cwnd * cut);
    else
      s.rate = std::max(s_.min_rate, s.rate * cut);
    s.cwr = true;
    s.high_seq = qp.snd_nxt;
  } else if (!s.cwr && new_window) {
    // Additive increase: one MTU per window (window mode), DCTCP_RATE_AI per window (rate mode).
    // The window is not capped (TCP: only ECN limits it); the rate stops at line rate.
    if (window_mode_)
      s.cwnd += static_cast<double>(net_->nic_settings().mtu_bytes);
    else
      s.rate = std::min(qp.line_rate, s.rate + s_.rate_ai);
  }
  apply(qp);
}

void Dctcp::apply(Qp& qp) {
  const State& s = st_[qp.slot];
  if (window_mode_) {
    net_->set_window(qp, static_cast<Bytes>(s.cwnd));
    return;
  }
  net_->set_rate(qp, s.rate);
  if (s_.rate_window) net_->set_window(qp, std::max<Bytes>(1, bytes_in(s.rate, t_)));
}

}  // namespace rocesim
