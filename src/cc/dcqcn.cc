#include "cc/dcqcn.h"

#include <algorithm>
#include <cmath>

#include "cc/registry.h"

namespace rocesim {

DcqcnSettings DcqcnSettings::for_variant(const std::string& variant, Rate nic_rate) {
  DcqcnSettings s;
  s.variant = variant;
  if (variant == "paper") {
    s.alpha_period = Time::from_us(55);
    s.dec_period = Time::from_us(50);
    s.inc_period = Time::from_us(55);
    s.byte_counter_bytes = 10'000'000;
    s.fast_recovery_steps = 5;
    s.rate_ai = Rate::from_mbps(40);
    s.rate_hai = Rate::from_mbps(400);
    s.min_rate = Rate::from_mbps(100);
    s.clamp_target = true;
    return s;
  }
  const double scale = nic_rate.bps / 25e9;
  s.rate_ai = Rate::from_mbps(5 * scale);
  s.rate_hai = Rate::from_mbps(50 * scale);
  if (variant == "hpcc_sim") {
    s.cnp_interval = Time::zero();
    s.cnp_on_ack = true;
  }
  return s;
}

void Dcqcn::on_flow_start(Qp& qp) {
  State& s = st_.start(*net_, qp);
  s.rc = s.rt = qp.line_rate;  // start at line rate
  qp.rate = qp.line_rate;
}

// The sender's link changed rate (docs/models.md A3b): Rc and Rt follow it.
void Dcqcn::on_line_rate_change(Qp& qp, Rate old_line) {
  State& s = st(qp);
  s.rc = follow_line_rate(s.rc, old_line, qp.line_rate);
  s.rt = follow_line_rate(s.rt, old_line, qp.line_rate);
}

// NP (algorithms.md 2.2): a CNP per CE packet, at most one per flow per cnp_interval; or the
// per-ACK congestion flag of the Mellanox model.
RxDecision Dcqcn::on_data_received(Qp& qp, const Packet& data) {
  RxDecision d;
  if (data.ecn != kCe) return d;
  if (s_.cnp_on_ack) {
    d.ack_now = true;
    d.ack_flags = Packet::kFlagCongestion;
  } else if (net_->now() - qp.last_cnp_sent >= s_.cnp_interval) {
    d.send_cnp = true;
  }
  return d;
}

void Dcqcn::on_ack(Qp& qp, const Packet& ack) {
  if (ack.flags & Packet::kFlagCongestion) congestion_notified(qp);
}

void Dcqcn::on_cnp(Qp& qp, const Packet& cnp) {
  (void)cnp;
  congestion_notified(qp);
}

// Alpha is updated every K after the first CNP. Instead of a timer per QP, the boundaries that
// passed are applied when alpha is needed: the first one sees the CNP flag, the rest decay it.
void Dcqcn::catch_up_alpha(State& s, Time now) {
  const int64_t k = (now - s.alpha_anchor).ps / s_.alpha_period.ps;
  if (k <= 0) return;
  s.alpha = (1 - s_.g) * s.alpha + s_.g * (s.cnp_since_alpha ? 1.0 : 0.0);
  s.cnp_since_alpha = false;
  if (k > 1) s.alpha *= std::pow(1 - s_.g, static_cast<double>(k - 1));
  s.alpha_anchor += s_.alpha_period * k;
}

void Dcqcn::congestion_notified(Qp& qp) {
  State& s = st(qp);
  const Time now = net_->now();
  if (!s.started) {
    // First CNP: alpha = 1, optional immediate cut, start the alpha and decrease timers.
    s.started = true;
    s.alpha = 1.0;
    s.alpha_anchor = now;
    s.dec_anchor = now;
    s.rc = s.rc * s_.rate_on_first_cnp;
    s.rt = s.rc;
    apply(qp);
    s.cnp_since_alpha = false;  // alpha = 1 already counts this CNP [sim cnp_received_mlx]
  } else {
    catch_up_alpha(s, now);
    s.cnp_since_alpha = true;
  }
  s.cnp_since_dec = true;
  if (!s.dec_pending) {
    // The next decrease check on the T_dec grid anchored at the first CNP.
    const int64_t k = (now - s.dec_anchor).ps / s_.dec_period.ps + 1;
    s.dec_pending = true;
    net_->schedule_qp_timer(qp, s.dec_anchor + s_.dec_period * k, kDecrease);
  }
}

void Dcqcn::decrease(Qp& qp) {
  State& s = st(qp);
  catch_up_alpha(s, net_->now());
  if (s_.clamp_target || s.t_cnt > 0 || s.bc_cnt > 0) s.rt = s.rc;
  s.rc = std::max(s_.min_rate, s.rc * (1 - s.alpha / 2));
  s.t_cnt = s.bc_cnt = 0;
  s.bytes_since_inc = 0;
  s.cnp_since_dec = false;
  ++s.inc_gen;
  s.inc_pending = false;
  apply(qp);
  schedule_increase(qp);
}

void Dcqcn::schedule_increase(Qp& qp) {
  State& s = st(qp);
  if (s.inc_pending) return;
  s.inc_pending = true;
  net_->schedule_qp_timer(qp, net_->now() + s_.inc_period, kIncrease + (s.inc_gen << 4));
}

void Dcqcn::on_timer(Qp& qp, uint32_t kind) {
  State& s = st(qp);
  if ((kind & 0xf) == kDecrease) {
    s.dec_pending = false;
    s.dec_anchor = net_->now();
    if (s.cnp_since_dec) decrease(qp);
    return;
  }
  if ((kind & 0xf) == kIncrease) {
    if ((kind >> 4) != (s.inc_gen & 0x0fffffff)) return;  // superseded by a cut
    s.inc_pending = false;
    ++s.t_cnt;
    increase_event(qp);
    if (s.rc < qp.line_rate || s.rt < qp.line_rate) schedule_increase(qp);
  }
}

void Dcqcn::on_data_sent(Qp& qp, Packet& p) {
  if (s_.byte_counter_bytes <= 0) return;
  State& s = st(qp);
  if (!s.started) return;
  s.bytes_since_inc += p.size;
  if (s.bytes_since_inc >= s_.byte_counter_bytes) {
    s.bytes_since_inc = 0;
    ++s.bc_cnt;
    increase_event(qp);
  }
}

// Rate increase (algorithms.md 2.2): fast recovery, then additive, then hyper increase.
void Dcqcn::increase_event(Qp& qp) {
  if (!increase_allowed(qp)) return;
  State& s = st(qp);
  const int f = s_.fast_recovery_steps;
  if (s_.byte_counter_bytes > 0) {
    if (std::max(s.t_cnt, s.bc_cnt) < f) {
      // fast recovery: Rt unchanged
    } else if (std::min(s.t_cnt, s.bc_cnt) > f) {
      const int i = std::min(s.t_cnt, s.bc_cnt) - f;
      s.rt = std::min(qp.line_rate, s.rt + s_.rate_hai * i);
    } else {
      s.rt = std::min(qp.line_rate, s.rt + s_.rate_ai);
    }
  } else {
    // Timer-only model: the stage is the number of timer expiries since the last cut *before* this one
    // (the simulator's RateIncEventTimerMlx counts after increasing), so the first F expiries are fast
    // recovery, the next one additive, the rest hyper (docs/coming-from-hpcc-sim.md, DCQCN stages).
    const int stage = s.t_cnt - 1;
    if (stage < f) {
    } else if (stage == f) {
      s.rt = std::min(qp.line_rate, s.rt + s_.rate_ai);
    } else {
      s.rt = std::min(qp.line_rate, s.rt + s_.rate_hai);
    }
  }
  s.rc = Rate{(s.rt.bps + s.rc.bps) / 2};
  apply(qp);
  on_increase_event(qp);
}

void Dcqcn::apply(Qp& qp) { net_->set_rate(qp, st(qp).rc); }

void Dcqcn::read_state(const Qp& qp, std::span<double> out) const {
  const State& s = st_[qp.slot];
  // Alpha as catch_up_alpha would leave it now (the boundaries that passed since the last update).
  double alpha = s.alpha;
  if (s.started) {
    const int64_t k = (net_->now() - s.alpha_anchor).ps / s_.alpha_period.ps;
    if (k > 0) {
      alpha = (1 - s_.g) * alpha + s_.g * (s.cnp_since_alpha ? 1.0 : 0.0);
      if (k > 1) alpha *= std::pow(1 - s_.g, static_cast<double>(k - 1));
    }
  }
  // The stage of the latest increase event, as increase_event decides it.
  const int f = s_.fast_recovery_steps;
  int stage = 0;
  if (s.started) {
    if (s_.byte_counter_bytes > 0)
      stage = std::max(s.t_cnt, s.bc_cnt) < f ? 1 : std::min(s.t_cnt, s.bc_cnt) > f ? 3 : 2;
    else
      stage = s.t_cnt - 1 < f ? 1 : s.t_cnt - 1 == f ? 2 : 3;
  }
  out[0] = alpha;
  out[1] = s.rt.gbps();
  out[2] = stage;
  out[3] = s.t_cnt;
  out[4] = s.bc_cnt;
}

// --- [cc.dcqcn] -> DcqcnSettings (dcqcn.h documents every value and its source) ---

// Reads [cc.dcqcn] at `prefix` (schemes built on DCQCN reuse it with their own table).
DcqcnSettings read_dcqcn_settings(KeyReader& c, const std::string& prefix, Rate nic_rate) {
  const std::string variant = c.get_string(prefix + ".variant", "mellanox", DcqcnSettings::variants());
  return read_dcqcn_keys(c, prefix, DcqcnSettings::for_variant(variant, nic_rate), true);
}

DcqcnSettings read_dcqcn_keys(KeyReader& c, const std::string& prefix, DcqcnSettings d, bool np_keys) {
  const std::string k = prefix + ".";
  d.g = c.get_double(k + "g", d.g, 0, 1);
  d.alpha_period = c.get_us(k + "alpha_period_us", d.alpha_period, 0.001);
  d.dec_period = c.get_us(k + "dec_period_us", d.dec_period, 0.001);
  d.inc_period = c.get_us(k + "inc_period_us", d.inc_period, 0.001);
  d.byte_counter_bytes = c.get_int(k + "byte_counter_bytes", d.byte_counter_bytes, 0, int64_t{1} << 40);
  d.fast_recovery_steps =
      static_cast<int>(c.get_int(k + "fast_recovery_steps", d.fast_recovery_steps, 0, 1000));
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.rate_hai = Rate::from_mbps(c.get_double(k + "rate_hai_mbps", d.rate_hai.mbps(), 0, 1e6));
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  if (np_keys) {
    d.cnp_interval = c.get_us(k + "cnp_interval_us", d.cnp_interval, 0);
    d.cnp_on_ack = c.get_bool(k + "cnp_on_ack", d.cnp_on_ack);
  }
  d.rate_on_first_cnp = c.get_double(k + "rate_on_first_cnp", d.rate_on_first_cnp, 0.001, 1);
  d.clamp_target = c.get_bool(k + "clamp_target", d.clamp_target);
  return d;
}

namespace {

SchemeFactory read_scheme_dcqcn(KeyReader& c, const SchemeContext& ctx) {
  const DcqcnSettings d = read_dcqcn_settings(c, "cc.dcqcn", ctx.nic_rate);
  return [d] { return std::make_unique<Dcqcn>(d); };
}

// The ns-3 HPCC simulator's DCQCN (profile hpcc-sim, config/profiles.h).
constexpr char kHpccSimDcqcn[] = R"(
[cc.dcqcn]
variant = "hpcc_sim"          # CC_MODE 1: the receiver flags congestion on the ACK of every CE packet
g = 0.00390625                # EWMA_GAIN
alpha_period_us = 1.0         # ALPHA_RESUME_INTERVAL
dec_period_us = 4.0           # RATE_DECREASE_INTERVAL
inc_period_us = 300.0         # RP_TIMER
byte_counter_bytes = 0
fast_recovery_steps = 1       # FAST_RECOVERY_TIMES
min_rate_mbps = 1000.0        # MIN_RATE
clamp_target = false          # CLAMP_TARGET_RATE
rate_on_first_cnp = 1.0
)";

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry dcqcn_scheme() {
  return {.name = "dcqcn",
          .summary = "DCQCN (ECN marking, CNPs, rate decrease/increase); variants mellanox, hpcc_sim, paper",
          .read = read_scheme_dcqcn,
          .profiles = {{"hpcc-sim", kHpccSimDcqcn}}};
}

}  // namespace rocesim
