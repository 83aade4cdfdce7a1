#include "cc/hpcc.h"

#include <algorithm>

#include "cc/registry.h"

namespace rocesim {

HpccSettings HpccSettings::for_nic_rate(Rate nic_rate) {
  HpccSettings s;
  s.rate_ai = Rate::from_mbps(10 * nic_rate.bps / 25e9);
  return s;
}

HpccSettings HpccSettings::paper(Rate nic_rate, int expected_flows) {
  HpccSettings s;
  s.max_stage = 5;
  s.rate_ai = nic_rate * ((1 - s.eta) / std::max(1, expected_flows));
  return s;
}

void Hpcc::attach(CcServices& net) {
  CongestionControl::attach(net);
  t_ = s_.t > Time::zero() ? s_.t : net.max_base_rtt();
}

void Hpcc::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.u = s_.u_init;
  s.wc = s.w = qp.line_rate.bps * t_.sec() / 8;  // W_init = C_nic x T: start at line rate
  qp.rate = qp.line_rate;
  qp.window = std::max<Bytes>(1, static_cast<Bytes>(s.w));
}

// The sender's link changed rate (docs/models.md A3b): W and Wc, as rates W / T, follow it.
void Hpcc::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st_[qp.slot];
  const double t_sec = t_.sec();
  if (t_sec <= 0) return;
  auto follow = [&](double w) {
    return follow_line_rate(Rate::from_bps(w * 8 / t_sec), old_line, qp.line_rate).bps * t_sec / 8;
  };
  s.w = follow(s.w);
  s.wc = follow(s.wc);
}

// algorithms.md 2.5 (c).
void Hpcc::on_ack(Qp& qp, const Packet& ack) {
  if (!ack.hops || ack.n_hops == 0) return;
  State& s = st_[qp.slot];
  const int n = std::min<int>(ack.n_hops, kMaxIntHops);
  auto store = [&] {
    s.n_hops = n;
    std::copy(ack.hops, ack.hops + n, s.hop);
  };
  if (!s.have_ref || n != s.n_hops) {  // first ACK (or a new path): keep L only
    if (!s.have_ref) s.last_update_seq = qp.snd_nxt;
    s.have_ref = true;
    store();
    return;
  }
  const bool full = ack.seq > s.last_update_seq;  // a whole RTT of feedback since the last update
  if (!full && !s_.fast_react) {
    store();
    return;
  }

  // u = max over hops of qlen / (B T) + txRate / B, with the hop's interval tau.
  double u_max = 0;
  Time tau;
  const bool any = max_utilization(ack.hops, s.hop, n, t_, u_max, tau);
  store();
  if (!any) {
    if (full) s.last_update_seq = qp.snd_nxt;
    return;
  }
  int stage;
  const double w = compute_window(qp, s.u, s.wc, s.inc_stage, u_max, tau, stage);
  if (full) {
    s.wc = w;
    s.inc_stage = stage;
    s.last_update_seq = qp.snd_nxt;
  }
  apply(qp, w);
}

void Hpcc::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  out[0] = s.u;
  out[1] = s.wc;
  out[2] = s.inc_stage;
}

// Window W, paced at W / T.
void Hpcc::apply(Qp& qp, double w) {
  State& s = st_[qp.slot];
  s.w = w;
  net_->set_window(qp, std::max<Bytes>(1, static_cast<Bytes>(w)));
  net_->set_rate(qp, std::min(qp.line_rate, Rate::from_bps(w * 8 / t_.sec())));
}

double Hpcc::compute_window(const Qp& qp, double& u, double wc, int inc_stage, double u_max, Time tau,
                            int& stage) const {
  const double t_sec = t_.sec();
  tau = std::min(tau, t_);
  const double w_tau = tau.sec() / t_sec;
  u = (1 - w_tau) * u + w_tau * u_max;  // U = (1 - tau/T) U + (tau/T) u
  const double w_ai = s_.rate_ai.bps * t_sec / 8;
  double w;
  if (u >= s_.eta || inc_stage >= s_.max_stage) {
    w = wc / (u / s_.eta) + w_ai;  // multiplicative: Wc / (U / eta) + W_AI
    stage = 0;
  } else {
    w = wc + w_ai;  // additive: Wc + W_AI
    stage = inc_stage + 1;
  }
  const double w_min = s_.min_rate.bps * t_sec / 8, w_init = qp.line_rate.bps * t_sec / 8;
  return std::clamp(w, w_min, w_init);
}

bool Hpcc::max_utilization(const IntHop* now, const IntHop* then, int n, Time t, double& u_max, Time& tau) {
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const Time dt = now[i].ts - then[i].ts;
    if (dt <= Time::zero() || now[i].rate.bps <= 0) continue;
    const double tx_rate = static_cast<double>(now[i].tx_bytes - then[i].tx_bytes) * 8 / dt.sec();
    const double qlen = static_cast<double>(std::min(now[i].qlen_bytes, then[i].qlen_bytes));
    const double u = qlen * 8 / (now[i].rate.bps * t.sec()) + tx_rate / now[i].rate.bps;
    if (!any || u > u_max) {
      u_max = u;
      tau = dt;
    }
    any = true;
  }
  return any;
}

// --- [cc.hpcc] -> HpccSettings (hpcc.h documents every value and its source) ---

HpccSettings read_hpcc_keys(KeyReader& c, const std::string& prefix, HpccSettings d) {
  const std::string k = prefix + ".";
  d.eta = c.get_double(k + "eta", d.eta, 0.01, 1);
  d.max_stage = static_cast<int>(c.get_int(k + "max_stage", d.max_stage, 0, 1'000'000));
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.t = c.get_us(k + "t_us", d.t, 0, 1e9);
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  d.fast_react = c.get_bool(k + "fast_react", d.fast_react);
  d.u_init = c.get_double(k + "u_init", d.u_init, 0, 100);
  return d;
}

// HPCC (and HPCC*) read INT hop records, which the switches stamp for them (CcNeeds::int_stamping), and
// ignore ECN [HPCC paper sec. 3; sim CC_MODE 3 runs without RED].
std::string switch_defaults_hpcc(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "hpcc: INT stamping on every switch, no ECN marking (ecn = false)";
}

namespace {

SchemeFactory read_scheme_hpcc(KeyReader& c, const SchemeContext& ctx) {
  const HpccSettings d = read_hpcc_keys(c, "cc.hpcc", HpccSettings::for_nic_rate(ctx.nic_rate));
  return [d] { return std::make_unique<Hpcc>(d); };
}

// The ns-3 HPCC simulator's HPCC (profile hpcc-sim, config/profiles.h).
constexpr char kHpccSimHpcc[] = R"(
[cc.hpcc]
eta = 0.95                    # U_TARGET
max_stage = 0                 # MI_THRESH
t_us = 0.0                    # GLOBAL_T 1: the topology's longest base RTT
min_rate_mbps = 1000.0
fast_react = true             # FAST_REACT
u_init = 1.0
)";

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry hpcc_scheme() {
  return {.name = "hpcc",
          .summary = "HPCC (INT per hop, window W = Wc / (U / eta) + W_AI paced at W / T)",
          .read = read_scheme_hpcc,
          .switch_defaults = switch_defaults_hpcc,
          .profiles = {{"hpcc-sim", kHpccSimHpcc}}};
}

}  // namespace rocesim
