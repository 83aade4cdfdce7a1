#include "cc/lscc.h"

#include <algorithm>

#include "cc/registry.h"
#include "core/rng.h"
#include "net/switch.h"

namespace rocesim {

DcqcnSettings Lscc::sender_settings(const LsccSettings& s) {
  DcqcnSettings d = s.rp;
  // Normal CNPs from receivers: one per flow per normal_cnp_multiple x T_dcnp [LSCC paper: 10 x].
  if (s.normal_cnp_multiple > 0) d.cnp_interval = s.direct_cnp_interval * s.normal_cnp_multiple;
  d.cnp_on_ack = false;
  return d;
}

Lscc::Lscc(const LsccSettings& s) : Dcqcn(sender_settings(s)), ls_(s) {}

RxDecision Lscc::on_data_received(Qp& qp, const Packet& data) {
  if (ls_.normal_cnp_multiple <= 0) return {};  // "infinity": no normal CNPs
  return Dcqcn::on_data_received(qp, data);
}

std::unique_ptr<SwitchAgent> Lscc::make_switch_agent(Switch& sw) {
  if (!LsccSwitchAgent::has_long_haul(sw)) return nullptr;
  return std::make_unique<LsccAgent>(*net_, sw, ls_);
}

// ---------------------------------------------------------------------------------------------------
LsccAgent::LsccAgent(CcServices& net, Switch& sw, const LsccSettings& s)
    : LsccSwitchAgent(net, sw, s.rate), ls_(s) {
  size_t cap = 16;
  while (cap < static_cast<size_t>(std::max(1, s.flow_table_entries)) * 2) cap *= 2;  // load <= 1/2
  table_.assign(cap, Entry{});
  scratch_.reserve(cap);
  mask_ = cap - 1;
  // Long-flow threshold: above one BDP of the (first) long-haul link [LSCC paper].
  long_flow_th_ = s.long_flow_bytes;
  if (long_flow_th_ <= 0 && !lp_.empty()) {
    const Port& p = sw.port(lp_[0].port);
    const Time rtt = s.rate.rtt > Time::zero() ? s.rate.rtt : p.delay * 2;
    long_flow_th_ = static_cast<Bytes>(s.long_flow_bdp * p.rate.bps * rtt.sec() / 8);
  }
  flag_hold_ = s.flag_hold > Time::zero()  ? s.flag_hold
               : s.normal_cnp_multiple > 0 ? s.direct_cnp_interval * (2 * s.normal_cnp_multiple)
                                           : s.direct_cnp_interval * 20;
  if (!lp_.empty()) schedule(s.direct_cnp_interval, kDirectCnp);
}

LsccAgent::Entry* LsccAgent::find(int32_t sip, int32_t dip, uint16_t sport, uint16_t dport, bool insert) {
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(sip)) << 32 | static_cast<uint32_t>(dip)) ^
                 (static_cast<uint64_t>(sport) << 48 | static_cast<uint64_t>(dport) << 16);
  const uint64_t h = splitmix64(key);
  for (size_t i = h & mask_, probes = 0; probes <= mask_; i = (i + 1) & mask_, ++probes) {
    Entry& e = table_[i];
    if (!e.used) {
      if (!insert) return nullptr;
      if (used_ >= ls_.flow_table_entries) {
        ++overflows_;
        return nullptr;
      }
      e = Entry{};
      e.used = true;
      e.sip = sip;
      e.dip = dip;
      e.sport = sport;
      e.dport = dport;
      ++used_;
      return &e;
    }
    if (e.sip == sip && e.dip == dip && e.sport == sport && e.dport == dport) return &e;
  }
  return nullptr;
}

// Alg. 2 ReceivePacket: internal data packets towards the long-haul link feed Q* (base class) and the
// flow table; a CE mark (local congestion) sets the flow's CNP flag and is cleared here.
void LsccAgent::on_enqueue(Packet& p, int port) {
  LsccSwitchAgent::on_enqueue(p, port);
  const int i = long_index(port);
  if (i < 0 || !internal(p) || p.type != PktType::kData) return;
  Entry* e = find(p.src, p.dst, p.sport, p.dport, true);
  if (!e) return;
  e->lport = static_cast<int16_t>(i);
  e->qp = p.qp;
  e->tag = p.qp_tag;
  e->tx_bytes += p.size;  // TxBytes
  e->last_seen = net_.now();
  if (p.ecn == kCe) {
    e->cnp = true;
    e->flagged_at = net_.now();
    p.ecn = kEct0;
  }
}

// Alg. 2 ReceivePacket, "P is CNP": a normal CNP from the remote DC for an internal flow sets its flag
// (and goes on to the source).
void LsccAgent::on_control(Packet& p, int port) {
  (void)port;
  if (p.type != PktType::kCnp || (p.flags & Packet::kFlagFromSwitch) || p.in_port < 0 ||
      long_index(p.in_port) < 0)
    return;
  if (Entry* e = find(p.dst, p.src, p.dport, p.sport, false)) {
    e->cnp = true;
    e->flagged_at = net_.now();
  }
}

// No ECN marking at the rate-calculation hop: packets that came over the long-haul link [LSCC paper].
bool LsccAgent::mark(Packet& p, int port) {
  (void)port;
  return !ls_.mark_at_rate_calc && p.in_port >= 0 && long_index(p.in_port) >= 0;
}

void LsccAgent::on_subclass_event(uint32_t kind, uint64_t arg) {
  (void)arg;
  if (kind != kDirectCnp) return;
  send_direct_cnps();
  schedule(ls_.direct_cnp_interval, kDirectCnp);
}

// Alg. 2 SendDirectCNP: when Q* >= Q*_ref, a CNP to every flagged or not-yet-long flow of that egress.
void LsccAgent::send_direct_cnps() {
  for (LongPort& l : lp_) drain(l);
  const Time now = net_.now();
  for (Entry& e : table_) {
    if (!e.used || e.lport < 0) continue;
    const LongPort& l = lp_[static_cast<size_t>(e.lport)];
    if (l.q_star < static_cast<double>(ls_.rate.q_star_ref_bytes)) continue;  // lines 2-3
    if (e.cnp && now - e.flagged_at > flag_hold_) e.cnp = false;
    if (!(e.cnp || e.tx_bytes < long_flow_th_)) continue;  // lines 5-6
    if (e.qp >= net_.qp_capacity()) continue;
    Qp& qp = net_.qp(e.qp);
    if (!qp.in_use || qp.tag != e.tag) continue;  // the flow has finished
    Packet* c = net_.make_cnp(qp, sw_.id());      // line 7
    ++direct_cnps_;
    ++net_.counters().cnps_from_switches;
    net_.inject(sw_.id(), c);
  }
}

// ResetTable(T): flows not seen for a whole period leave the table (flags expire after flag_hold).
void LsccAgent::on_period() { reset_table(); }

void LsccAgent::reset_table() {
  const Time now = net_.now();
  scratch_.clear();
  for (Entry& e : table_) {
    if (!e.used) continue;
    if (now - e.last_seen <= ls_.rate.period) {
      scratch_.push_back(e);
    }
    e = Entry{};
  }
  used_ = 0;
  for (const Entry& k : scratch_) {
    Entry* e = find(k.sip, k.dip, k.sport, k.dport, true);
    if (e) *e = k;
  }
}

// --- [cc.lscc] -> LsccSettings (lscc.h and lscc_rate.h document every value and its source) ---
// [cc.lscc] also takes the DCQCN keys of [cc.dcqcn] for the sources (variant "mellanox" by default); its
// cnp_interval_us is replaced by normal_cnp_multiple x direct_cnp_interval_us.

namespace {

SchemeFactory read_scheme_lscc(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.lscc.";
  LsccSettings s;
  // The sources' DCQCN keys, as [cc.dcqcn]'s, defaulting to LsccSettings::sender_defaults() unless a
  // variant is named.
  DcqcnSettings& d = s.rp;
  if (c.has(k + "variant"))
    d = DcqcnSettings::for_variant(c.get_string(k + "variant", "mellanox", DcqcnSettings::variants()),
                                   ctx.nic_rate);
  d = read_dcqcn_keys(c, "cc.lscc", d, false);
  s.rate = read_lscc_rate_settings(c, "cc.lscc");
  s.direct_cnp_interval = c.get_us(k + "direct_cnp_interval_us", s.direct_cnp_interval, 0.1, 1e7);
  s.normal_cnp_multiple = c.get_double(k + "normal_cnp_multiple", s.normal_cnp_multiple, 0, 1e6);
  s.long_flow_bdp = c.get_double(k + "long_flow_bdp", s.long_flow_bdp, 0, 1e6);
  s.long_flow_bytes = c.get_int(k + "long_flow_bytes", s.long_flow_bytes, 0, int64_t{1} << 50);
  s.flow_table_entries =
      static_cast<int>(c.get_int(k + "flow_table_entries", s.flow_table_entries, 1, 1 << 22));
  s.mark_at_rate_calc = c.get_bool(k + "mark_at_rate_calc", s.mark_at_rate_calc);
  s.flag_hold = c.get_us(k + "flag_hold_us", s.flag_hold, 0, 1e9);
  return [s] { return std::make_unique<Lscc>(s); };
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry lscc_scheme() {
  return {.name = "lscc",
          .summary =
              "LSCC (cross-DC: rate calc at the far egress switch, pseudo queue + direct CNPs near the "
              "sources; DCQCN)",
          .read = read_scheme_lscc};
}

}  // namespace rocesim
