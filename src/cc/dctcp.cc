#include "cc/dctcp.h"

#include <algorithm>

#include "cc/registry.h"

namespace rocesim {

void Dctcp::attach(CcServices& net) {
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

void Dctcp::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  out[0] = s.alpha;
  out[1] = s.last_fraction;
  out[2] = s.cwr ? 1 : 0;
}

// --- [cc.dctcp] -> DctcpSettings (dctcp.h documents every value and its source) ---
// Step marking at K is a switch setting: [switch] kmin_bytes = kmax_bytes = K, pmax = 1.

namespace {

SchemeFactory read_scheme_dctcp(KeyReader& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.dctcp.";
  DctcpSettings d;
  d.mode = c.get_string(k + "mode", d.mode, DctcpSettings::modes());
  d.g = c.get_double(k + "g", d.g, 0, 1);
  d.alpha_init = c.get_double(k + "alpha_init", d.alpha_init, 0, 1);
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  d.rate_window = c.get_bool(k + "rate_window", d.rate_window);
  d.t = c.get_us(k + "t_us", d.t, 0, 1e9);
  d.min_cwnd_bytes = c.get_int(k + "min_cwnd_bytes", d.min_cwnd_bytes, 1, int64_t{1} << 40);
  return [d] { return std::make_unique<Dctcp>(d); };
}

// DCTCP marks with a step at one threshold K instead of RED [paper; sim run.py: K = 30 KB x C/10G, i.e.
// 300 KB at 100 Gb/s, scaled with the port speed by ecn_scale_with_rate; cc/dctcp.h].
std::string switch_defaults_dctcp(SwitchSettings& s) {
  s.ecn_enabled = true;
  s.kmin_bytes = 300'000;
  s.kmax_bytes = 300'000;
  s.pmax = 1.0;
  return "dctcp: step marking at K = 300 KB at 100 Gb/s (kmin_bytes = kmax_bytes = 300000, pmax = 1)";
}

// The ns-3 HPCC simulator's DCTCP runs (profile hpcc-sim, config/profiles.h).
constexpr char kHpccSimDctcp[] = R"(
[switch]
kmin_bytes = 300000           # step marking at K = 30 KB x C/10G
kmax_bytes = 300000
pmax = 1.0

[cc.dctcp]
mode = "rate"                 # CC_MODE 8
g = 0.0625
alpha_init = 1.0
rate_ai_mbps = 615.0          # DCTCP_RATE_AI
min_rate_mbps = 1000.0
rate_window = true            # HAS_WIN 1, VAR_WIN 1
t_us = 0.0
)";

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry dctcp_scheme() {
  return {
      .name = "dctcp",
      .summary = "DCTCP on RDMA QPs (ECN echo per ACK, alpha per window); modes rate (ns-3 HPCC sim), window",
      .read = read_scheme_dctcp,
      .switch_defaults = switch_defaults_dctcp,
      .profiles = {{"hpcc-sim", kHpccSimDctcp}}};
}

}  // namespace rocesim
