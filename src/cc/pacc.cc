#include "cc/pacc.h"

#include <algorithm>
#include <cmath>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

CcNeeds Pacc::needs() const {
  CcNeeds n;
  n.ecn_marking = false;  // the PI controller replaces RED marking
  return n;
}

std::unique_ptr<SwitchAgent> Pacc::make_switch_agent(Switch& sw) {
  return std::make_unique<PaccAgent>(*net_, sw, ps_);
}

PaccAgent::PaccAgent(CcServices& net, Switch& sw, const PaccSettings& s)
    : net_(net), sw_(sw), s_(s), q_(sw.ports().size() * kNumPriorities) {
  handler_ = net_.add_handler(this, sw.handler());
  const size_t n = sw.ports().size();
  q_ref_.resize(n);
  a_.resize(n);
  b_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int port = static_cast<int>(i);
    const double bdp = std::max(1.0, sw.port(port).rate.bps * net.max_base_rtt().sec() / 8.0);
    q_ref_[i] = s.q_ref_bytes > 0 ? s.q_ref_bytes : sw.ecn(port).kmin;
    a_[i] = s.a_per_bdp / bdp;
    b_[i] = s.b_per_bdp / bdp;
  }
}

// Flow table: count the flow's packets in this period.
void PaccAgent::on_enqueue(Packet& p, int port) {
  if (p.type != PktType::kData) return;
  const size_t i = idx(port, p.prio);
  QueueState& q = q_[i];
  const uint64_t key = (static_cast<uint64_t>(p.qp) << 32) | p.qp_tag;
  if (!q.last || q.last_key != key) {
    q.last = &q.flows[key];  // node-based map: stable until erased in update()
    q.last_key = key;
  }
  ++q.last->pkts;
  if (!q.listed) {
    q.listed = true;
    active_.push_back(i);
  }
  if (!timer_armed_) {
    timer_armed_ = true;
    net_.schedule_after(s_.period, handler_, 0);
  }
}

// One T_upd period of one egress queue: PI update, then CNPs in proportion to each flow's packets.
void PaccAgent::update(size_t i) {
  QueueState& st = q_[i];
  const int port = static_cast<int>(i / kNumPriorities);
  const int prio = static_cast<int>(i % kNumPriorities);
  const Bytes q = sw_.egress_bytes(port, prio);
  const double dp =
      a_[port] * static_cast<double>(q - q_ref_[port]) + b_[port] * static_cast<double>(q - st.q_old);
  double cap = 1.0;
  if (s_.anti_windup) {
    // Once the heaviest flow of the period gets a CNP every period, CNPs stop being proportional to
    // packets: a larger p only delays the release once the queue is gone. Without arrivals (a paused
    // port) there is nothing to act on: p may only fall.
    uint32_t most = 0;
    for (const auto& [key, f] : st.flows) most = std::max(most, f.pkts);
    cap = most > 0 ? 1.0 / most : st.p;
  }
  st.p = std::clamp(st.p + dp, 0.0, cap);
  st.q_old = q;
  st.last = nullptr;
  for (auto it = st.flows.begin(); it != st.flows.end();) {
    FlowEntry& f = it->second;
    f.credit += st.p * f.pkts;
    if (f.credit >= 1) {
      f.credit -= std::floor(f.credit);  // one CNP per period; the RP would coalesce more
      const uint32_t slot = static_cast<uint32_t>(it->first >> 32);
      if (slot < net_.qp_capacity()) {
        Qp& qp = net_.qp(slot);
        if (qp.in_use && qp.tag == static_cast<uint32_t>(it->first)) {
          Packet* c = net_.make_cnp(qp, sw_.id());
          ++cnps_sent_;
          ++net_.counters().cnps_from_switches;
          net_.inject(sw_.id(), c);
        }
      }
    }
    if (f.pkts == 0) {
      if (++f.idle >= s_.idle_periods) {
        it = st.flows.erase(it);
        continue;
      }
    } else {
      f.idle = 0;
    }
    f.pkts = 0;
    ++it;
  }
}

void PaccAgent::on_event(uint32_t kind, uint64_t arg) {
  (void)kind;
  (void)arg;
  timer_armed_ = false;
  for (size_t k = 0; k < active_.size();) {
    const size_t i = active_[k];
    update(i);
    QueueState& st = q_[i];
    if (st.flows.empty() && st.p == 0 && st.q_old == 0) {
      st.listed = false;  // idle: nothing changes until the next packet
      active_[k] = active_.back();
      active_.pop_back();
    } else {
      ++k;
    }
  }
  if (!active_.empty()) {
    timer_armed_ = true;
    net_.schedule_after(s_.period, handler_, 0);
  }
}

// --- [cc.pacc] -> PaccSettings (pacc.h documents every value and its source) ---
// The table also takes the DCQCN reaction-point keys of [cc.dcqcn] (variant, g, ..., min_rate_mbps); the
// notification-point keys (cnp_interval_us, cnp_on_ack) are read but unused: PACC's switches send the CNPs.

namespace {

SchemeFactory read_scheme_pacc(KeyReader& c, const SchemeContext& ctx) {
  const std::string k = "cc.pacc.";
  PaccSettings s;
  const bool clamp_given = c.has(k + "clamp_target");
  s.rp = read_dcqcn_settings(c, "cc.pacc", ctx.nic_rate);
  if (!clamp_given) {  // PACC's default differs from DCQCN's (cc/pacc.h)
    s.rp.clamp_target = true;
    c.set_resolved_bool(k + "clamp_target", true);
  }
  s.period = c.get_us(k + "period_us", s.period, 0.001, 1e9);
  s.q_ref_bytes = c.get_int(k + "q_ref_bytes", s.q_ref_bytes, 0, int64_t{1} << 40);
  s.a_per_bdp = c.get_double(k + "a_per_bdp", s.a_per_bdp, 0, 1e6);
  s.b_per_bdp = c.get_double(k + "b_per_bdp", s.b_per_bdp, 0, 1e6);
  s.anti_windup = c.get_bool(k + "anti_windup", s.anti_windup);
  s.idle_periods = static_cast<int>(c.get_int(k + "idle_periods", s.idle_periods, 1, 1'000'000));
  return [s] { return std::make_unique<Pacc>(s); };
}

// PACC's switch PI controller sends the CNPs; no RED marking [PACC paper].
std::string switch_defaults_pacc(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "pacc: the switch PI controller sends CNPs instead of RED marking (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry pacc_scheme() {
  return {.name = "pacc",
          .summary = "PACC (switch PI controller sends CNPs per flow every 80 us; DCQCN sender)",
          .read = read_scheme_pacc,
          .switch_defaults = switch_defaults_pacc};
}

}  // namespace rocesim
