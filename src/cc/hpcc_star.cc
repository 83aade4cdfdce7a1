#include "cc/hpcc_star.h"

#include <algorithm>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

void HpccStar::on_flow_start(Qp& qp) {
  Hpcc::on_flow_start(qp);
  near_.start(*net_, qp);
  far_w_.start(*net_, qp);
  far_w_[qp.slot] = qp.line_rate.bps * t().sec() / 8;
}

std::unique_ptr<SwitchAgent> HpccStar::make_switch_agent(Switch& sw) {
  if (!LsccSwitchAgent::has_long_haul(sw)) return nullptr;
  return std::make_unique<HpccStarAgent>(*net_, sw, hs_.rate);
}

void HpccStar::read_state(const Qp& qp, std::span<double> out) const {
  const size_t n = Hpcc::kVariables.size();
  Hpcc::read_state(qp, out.first(n));
  const Near& s = near_[qp.slot];
  out[n] = far_w_[qp.slot];
  out[n + 1] = s.have_ref ? s.w : 0;
  out[n + 2] = s.u;
}

// Effective window = min(W, W*) [LSCC paper: "W* is used only when it is smaller"].
void HpccStar::apply(Qp& qp, double w) {
  far_w_[qp.slot] = w;
  const Near& n = near_[qp.slot];
  Hpcc::apply(qp, n.have_ref && n.w > 0 ? std::min(w, n.w) : w);
}

// The near loop: algorithms.md 2.5 (c) on the direct INT's records (the local hops and the pseudo hop).
void HpccStar::on_cnp(Qp& qp, const Packet& cnp) {
  if (cnp.cc_flags != kDirectIntTag || !cnp.hops || cnp.n_hops == 0) return;
  Near& s = near_[qp.slot];
  const int n = std::min<int>(cnp.n_hops, kMaxIntHops);
  const Time now = net_->now();
  auto store = [&] {
    s.n_hops = n;
    std::copy(cnp.hops, cnp.hops + n, s.hop);
  };
  if (!s.have_ref || n != s.n_hops) {
    if (!s.have_ref) {
      s.last_update = now;
      s.wc = s.w = far_w_[qp.slot];
    }
    s.have_ref = true;
    store();
    return;
  }
  const bool full = cnp.ts > s.last_update;  // reports a packet sent after the last reference update
  double u_max = 0;
  Time tau;
  const bool any = max_utilization(cnp.hops, s.hop, n, t(), u_max, tau);
  store();
  if (!any) return;
  int stage;
  const double w = compute_window(qp, s.u, s.wc, s.inc_stage, u_max, tau, stage);
  if (full) {
    s.wc = w;
    s.inc_stage = stage;
    s.last_update = now;
  }
  s.w = w;
  Hpcc::apply(qp, std::min(far_w_[qp.slot], w));
}

// ---------------------------------------------------------------------------------------------------
// Direct INT for every internal data packet leaving on the long-haul link [LSCC paper section V].
void HpccStarAgent::on_dequeue(Packet& p, int port) {
  LsccSwitchAgent::on_dequeue(p, port);
  const int i = long_index(port);
  if (i < 0 || p.type != PktType::kData || !internal(p) || !p.hops) return;
  Qp* qp = net_.qp_of(p);
  if (!qp) return;
  LongPort& l = lp_[i];
  drain(l);
  const NicSettings& nic = net_.nic_settings();
  Packet* d = net_.make_cnp(*qp, sw_.id());
  d->cc_flags = HpccStar::kDirectIntTag;
  d->ts = p.ts;
  net_.pool().attach_int(d);
  // The local DC's records: everything stamped before this switch's own long-haul record.
  int local = p.n_hops;
  if (local > 0 && p.hops[local - 1].rate == sw_.port(port).rate && p.hops[local - 1].ts == net_.now())
    --local;
  local = std::min(local, kMaxIntHops - 1);
  for (int h = 0; h < local; ++h) d->hops[h] = p.hops[h];
  IntHop& ph = d->hops[local];  // the pseudo queue as one more hop
  ph.ts = net_.now();
  ph.tx_bytes = sw_.port(port).tx_bytes + p.size;
  ph.qlen_bytes = static_cast<Bytes>(l.q_star);
  ph.rate = l.r_fb;
  ph.extra = l.r_fb.bps;  // B* [LSCC paper: a 24-bit field per hop]
  d->n_hops = static_cast<uint8_t>(local + 1);
  d->size = static_cast<uint32_t>(nic.cnp_bytes + nic.int_base_bytes + (local + 1) * nic.int_hop_bytes);
  p.n_hops = 0;  // the ACK carries the remote hops only
  ++direct_ints_;
  ++net_.counters().cnps_from_switches;
  net_.inject(sw_.id(), d);
}

// --- [cc.hpcc_star] -> HpccStarSettings (hpcc_star.h, hpcc.h and lscc_rate.h document every value and its
// source): the keys of [cc.hpcc] and the rate keys of [cc.lscc] ---

namespace {

SchemeFactory read_scheme_hpcc_star(KeyReader& c, const SchemeContext& ctx) {
  HpccStarSettings s;
  s.hpcc = read_hpcc_keys(c, "cc.hpcc_star", HpccSettings::for_nic_rate(ctx.nic_rate));
  s.rate = read_lscc_rate_settings(c, "cc.hpcc_star");
  return [s] { return std::make_unique<HpccStar>(s); };
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry hpcc_star_scheme() {
  return {
      .name = "hpcc_star",
      .summary = "HPCC* (HPCC with LSCC's rate calc and direct INT from the near egress switch; min(W, W*))",
      .read = read_scheme_hpcc_star,
      .switch_defaults = switch_defaults_hpcc};
}

}  // namespace rocesim
