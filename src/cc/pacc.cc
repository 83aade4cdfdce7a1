#include "cc/pacc.h"

#include <algorithm>
#include <cmath>

#include "net/network.h"
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

PaccAgent::PaccAgent(Network& net, Switch& sw, const PaccSettings& s)
    : net_(net), sw_(sw), s_(s), q_(sw.ports().size() * kNumPriorities) {
  handler_ = net_.sim().add_handler(this, sw.handler());
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
    net_.sim().after(s_.period, handler_, 0);
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
    net_.sim().after(s_.period, handler_, 0);
  }
}

}  // namespace rocesim
