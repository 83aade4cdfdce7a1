#include "cc/tcd.h"

#include <algorithm>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

Time tcd_max_ton(Rate c, double epsilon, Bytes mtu, Time t_p, Bytes xoff_minus_xon) {
  const double tau = 2.0 * static_cast<double>(mtu) * 8.0 / c.bps + 2.0 * t_p.sec();
  const double fill = static_cast<double>(xoff_minus_xon) * 8.0 / (epsilon * c.bps);
  return Time::from_s(fill + tau * (1.0 + 1.0 / (2.0 * epsilon)));
}

// ---------------------------------------------------------------------------------------------------
// Switch agent

TcdAgent::TcdAgent(Switch& sw, CcServices& net, const TcdSettings& s) : sw_(sw), net_(net), s_(s) {
  const size_t n = sw.ports().size();
  st_.assign(n * kNumPriorities, {});
  max_ton_.assign(n, Time::zero());
  period_.assign(n, Time::zero());
  k_.assign(n, 0);
  k_low_.assign(n, 0);
  cnt_.assign(n, {});
  const SwitchSettings& ss = net.switch_settings();
  const Bytes mtu = net.nic_settings().mtu_bytes;
  for (size_t i = 0; i < n; ++i) {
    const Port& p = sw.ports()[i];
    Time m = s.max_ton;
    if (m <= Time::zero()) {
      if (ss.credit_enabled) {
        m = ss.credit_period;  // T_on = R_d T_c / (R_d + eps C) <= T_c [TCD paper, eq. 4]
      } else {
        Bytes b = s.xoff_minus_xon_bytes;
        if (b <= 0) b = ss.pfc_mode == PfcThresholdMode::kStatic ? ss.xoff_bytes - ss.xon_bytes : 2 * mtu;
        if (b <= 0) b = 2 * mtu;
        m = tcd_max_ton(p.rate, s.epsilon, mtu, p.delay, b);
      }
    }
    max_ton_[i] = m;
    period_[i] = s.timer_period > Time::zero() ? s.timer_period : m;
    k_[i] = s.k_bytes > 0 ? s.k_bytes : sw.ecn(static_cast<int>(i)).kmin;
    k_low_[i] = s.k_low_bytes > 0 ? s.k_low_bytes : k_[i];
  }
}

// RESUME (or credit refill): the OFF period ended; RecordQueue(); ResetTimer(T).
void TcdAgent::on_pfc(int port, int prio, bool paused) {
  PortPrio& s = st_[idx(port, prio)];
  const Time now = net_.now();
  s.paused = paused;
  if (paused) {
    s.ever_paused = true;
    return;
  }
  s.off_end = now;
  s.q_rec = sw_.egress_bytes(port, prio);
  s.timer_start = now;
}

// The flowchart of algorithms.md 2.9, run as each data packet is transmitted. Returns true always: TCD
// replaces RED marking.
bool TcdAgent::mark(Packet& p, int port) {
  const int prio = p.prio;
  PortPrio& s = st_[idx(port, prio)];
  Counters& c = cnt_[port];
  const Time now = net_.now();
  const Bytes q = sw_.egress_bytes(port, prio);
  const bool ect = p.ecn != kNotEct;
  auto mark_ce = [&] {
    if (ect && p.ecn != kCe) {
      p.ecn = kCe;
      ++c.ce;
      ++sw_.port(port).stats.ecn_marked;
    }
  };
  const bool in_on_off = s.ever_paused && (s.paused || now - s.off_end < max_ton_[port]);
  if (in_on_off) {
    s.last_state = TcdState::kUndetermined;
    if (ect && p.ecn != kCe && p.ecn != kEct1) {
      p.ecn = kEct1;  // UE
      ++c.ue;
    }
  } else if (s.last_state == TcdState::kUndetermined) {
    // Just released from an ON-OFF pattern.
    if (now - s.timer_start >= period_[port]) {
      const bool decreasing = q < s.q_rec;
      s.q_rec = q;
      s.timer_start = now;
      if (!decreasing && q > k_[port]) {
        mark_ce();
        s.last_state = TcdState::kCongestion;
      }
    } else if (q < k_low_[port]) {
      s.last_state = TcdState::kNonCongestion;
    }
  } else if (q > k_[port]) {
    mark_ce();
    s.last_state = TcdState::kCongestion;
  } else {
    s.last_state = TcdState::kNonCongestion;
  }
  ++c.seen[static_cast<int>(s.last_state)];
  return true;
}

// ---------------------------------------------------------------------------------------------------
// DCQCN+TCD

void DcqcnTcd::on_flow_start(Qp& qp) {
  Dcqcn::on_flow_start(qp);
  ts_.start(*net_, qp);
}

// The receiver's side of the state (when it last sent a UE-CNP) is fresh before the first packet arrives,
// in whichever process the receiver runs.
void DcqcnTcd::on_flow_allocated(Qp& qp) {
  Dcqcn::on_flow_allocated(qp);
  ts_.start(*net_, qp);
}

void TcdAgent::port_counters(int port, std::vector<std::pair<const char*, double>>& out) const {
  const Counters& c = cnt_[port];
  out.emplace_back("ce_marks", static_cast<double>(c.ce));
  out.emplace_back("ue_marks", static_cast<double>(c.ue));
  out.emplace_back("dequeues_congestion",
                   static_cast<double>(c.seen[static_cast<int>(TcdState::kCongestion)]));
  out.emplace_back("dequeues_noncongestion",
                   static_cast<double>(c.seen[static_cast<int>(TcdState::kNonCongestion)]));
  out.emplace_back("dequeues_undetermined",
                   static_cast<double>(c.seen[static_cast<int>(TcdState::kUndetermined)]));
  out.emplace_back("max_ton_us", max_ton_[port].us());
}

std::unique_ptr<SwitchAgent> DcqcnTcd::make_switch_agent(Switch& sw) {
  return std::make_unique<TcdAgent>(sw, *net_, t_);
}

// NP: DCQCN's CNP for CE; a UE-CNP (same spacing, own clock) for a packet marked only UE.
RxDecision DcqcnTcd::on_data_received(Qp& qp, const Packet& data) {
  if (data.ecn == kCe) return Dcqcn::on_data_received(qp, data);
  if (data.ecn != kEct1) return {};
  TcdState2& t = ts_[qp.slot];
  const Time now = net_->now();
  if (now - t.last_ue_cnp_sent < settings().cnp_interval) return {};
  t.last_ue_cnp_sent = now;
  ++t.ue_cnps_sent;
  // A CNP like the others in the flow's and the run's counts (its own spacing clock: not last_cnp_sent).
  ++qp.cnps_sent;
  ++net_->counters().cnps_sent;
  ++net_->counters().ue_cnps_sent;
  Packet* c = net_->make_cnp(qp, qp.dst);
  c->cc_flags |= kUeCnp;
  net_->inject(qp.dst, c);
  return {};
}

// RP: a UE-CNP holds the rate for one T_inc; a normal CNP is DCQCN's.
void DcqcnTcd::on_cnp(Qp& qp, const Packet& cnp) {
  TcdState2& t = ts_[qp.slot];
  if (cnp.cc_flags & kUeCnp) {
    ++t.ue_cnps_received;
    t.hold_until = net_->now() + settings().inc_period;
    return;
  }
  ++t.ce_cnps_received;
  Dcqcn::on_cnp(qp, cnp);
}

bool DcqcnTcd::increase_allowed(const Qp& qp) const { return net_->now() >= ts_[qp.slot].hold_until; }

void DcqcnTcd::read_state(const Qp& qp, std::span<double> out) const {
  const size_t n = Dcqcn::kVariables.size();
  Dcqcn::read_state(qp, out.first(n));
  const TcdState2& t = ts_[qp.slot];
  out[n] = increase_allowed(qp) ? 0 : 1;
  out[n + 1] = t.ue_cnps_received;
  out[n + 2] = t.ce_cnps_received;
}

// While held, a rate-increase timer expiry does not advance the increase stage either.
void DcqcnTcd::on_timer(Qp& qp, uint32_t kind) {
  const int before = state(qp).t_cnt;
  const bool held = !increase_allowed(qp);
  Dcqcn::on_timer(qp, kind);
  if (held && (kind & 0xf) == kIncrease && state(qp).t_cnt == before + 1) --st(qp).t_cnt;
}

// --- [cc.dcqcn_tcd] -> DcqcnSettings (DCQCN's keys, dcqcn.h) + TcdSettings (tcd.h documents every
// value and its source) ---

namespace {

SchemeFactory read_scheme_dcqcn_tcd(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.dcqcn_tcd.";
  const DcqcnSettings d = read_dcqcn_settings(c, "cc.dcqcn_tcd", ctx.nic_rate);
  TcdSettings t;
  t.epsilon = c.get_double(k + "epsilon", t.epsilon, 1e-6, 1);
  t.xoff_minus_xon_bytes = c.get_int(k + "xoff_minus_xon_bytes", t.xoff_minus_xon_bytes, 0, int64_t{1} << 40);
  t.max_ton = c.get_us(k + "max_ton_us", t.max_ton, 0, 1e9);
  t.timer_period = c.get_us(k + "timer_period_us", t.timer_period, 0, 1e9);
  t.k_bytes = c.get_int(k + "k_bytes", t.k_bytes, 0, int64_t{1} << 40);
  t.k_low_bytes = c.get_int(k + "k_low_bytes", t.k_low_bytes, 0, int64_t{1} << 40);
  return [d, t] { return std::make_unique<DcqcnTcd>(d, t); };
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry dcqcn_tcd_scheme() {
  return {
      .name = "dcqcn_tcd",
      .summary = "DCQCN+TCD (ternary detection: CE for congestion, UE for ON-OFF ports; UE-CNP holds rate)",
      .read = read_scheme_dcqcn_tcd};
}

}  // namespace rocesim
