#include "net/switch_mmu.h"

#include <algorithm>

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

namespace {

// Headroom absorbs what is in flight after a PAUSE: `rtts` x the link's bandwidth-delay product plus a
// packet being sent at each end [sim: 3 x rate x delay; algorithms.md 1.2]. `fixed` > 0 replaces it.
Bytes headroom_for(Rate rate, Time delay, Bytes fixed, double rtts, Bytes extra) {
  return fixed > 0 ? fixed : static_cast<Bytes>(rtts * rate.bps * delay.sec() / 8.0) + extra;
}

}  // namespace

Bytes port_headroom_bytes(const SwitchSettings& s, Rate rate, Time delay, bool long_haul,
                          Bytes packet_bytes) {
  const Bytes extra = s.headroom_extra_bytes >= 0 ? s.headroom_extra_bytes : 2 * packet_bytes;
  // Long haul: one BDP of the link [LSCC paper; algorithms.md 1.2].
  if (long_haul) return headroom_for(rate, delay, s.long_haul_headroom_bytes, 2.0, extra);
  return headroom_for(rate, delay, s.headroom_bytes, s.headroom_factor, extra);
}

namespace {
// Counts a port of link `l`, whose headroom is `h`, among the ports of its kind (rate, delay, long haul).
void count_port_kind(std::vector<BufferSetAside::Ports>& kinds, const LinkSpec& l, Bytes h) {
  for (BufferSetAside::Ports& k : kinds)
    if (k.rate == l.rate && k.delay == l.delay && k.long_haul == l.long_haul) {
      ++k.count;
      return;
    }
  kinds.push_back({l.rate, l.delay, l.long_haul, 1, h});
}

// Each switch's record of its ports (`add_port(record, node, link)` for every link end at a switch, in the
// order Fabric::build_nodes gives the ports: one per link end, in link order), then those whose need exceeds
// `budget`, the largest need first.
template <typename Rec, typename AddPort, typename Need>
std::vector<Rec> switches_over_budget(const TopoSpec& topo, Bytes budget, AddPort&& add_port, Need&& need) {
  std::vector<Rec> all(static_cast<size_t>(topo.num_nodes));
  for (const LinkSpec& l : topo.links)
    for (const int node : {l.a, l.b})
      if (topo.is_switch[node]) add_port(all[node], node, l);
  std::vector<Rec> over;
  for (Rec& r : all)
    if (r.node >= 0 && budget < need(r)) over.push_back(std::move(r));
  std::stable_sort(over.begin(), over.end(), [&](const Rec& x, const Rec& y) { return need(x) > need(y); });
  return over;
}
}  // namespace

std::vector<BufferSetAside> switches_short_of_buffer(const TopoSpec& topo, const SwitchSettings& s,
                                                     Bytes packet_bytes) {
  if (!s.pfc_enabled || s.model != SwitchModel::kSharedBuffer) return {};
  auto add = [&](BufferSetAside& b, int node, const LinkSpec& l) {
    b.node = node;
    b.packet_bytes = packet_bytes;
    ++b.ports;
    const Bytes h = port_headroom_bytes(s, l.rate, l.delay, l.long_haul, packet_bytes);
    b.headroom_bytes += h;
    if (s.pfc_mode == PfcThresholdMode::kDynamic) b.reserve_bytes += s.reserve_bytes;
    count_port_kind(b.kinds, l, h);
  };
  return switches_over_budget<BufferSetAside>(topo, s.buffer_bytes, add,
                                              [](const BufferSetAside& b) { return b.needed_bytes(); });
}

Bytes BufferCommitted::max_per_pair_bytes(Bytes buffer_bytes) const {
  const int free_ports = ports - own_xoff_ports;
  if (priorities <= 0 || free_ports <= 0) return 0;
  const Bytes room = buffer_bytes / priorities - own_xoff_bytes - headroom_bytes;
  return room > 0 ? room / free_ports : 0;
}

std::vector<BufferCommitted> switches_over_committed(const TopoSpec& topo, const SwitchSettings& s,
                                                     Bytes packet_bytes, int priorities,
                                                     const CongestionControl* cc) {
  const bool credit = s.credit_enabled;
  const bool static_pfc =
      s.pfc_enabled && s.model == SwitchModel::kSharedBuffer && s.pfc_mode == PfcThresholdMode::kStatic;
  if ((!credit && !static_pfc) || priorities <= 0) return {};
  auto add = [&](BufferCommitted& b, int node, const LinkSpec& l) {
    b.node = node;
    b.priorities = priorities;
    ++b.ports;
    if (credit) {
      b.per_pair_bytes = s.credit_buffer_bytes;
      return;
    }
    b.per_pair_bytes = s.xoff_bytes;
    if (l.long_haul) {
      // SwitchMmu::configure: the port's own Xoff; then the scheme's agent on a port from a switch.
      PfcThresholds t{s.long_haul_xoff_bytes > 0 ? s.long_haul_xoff_bytes : s.xoff_bytes,
                      s.long_haul_xon_bytes > 0 ? s.long_haul_xon_bytes : s.xon_bytes};
      const int peer = l.a == node ? l.b : l.a;
      const Bytes before = t.xoff;
      if (cc && topo.is_switch[peer]) t = cc->long_haul_thresholds(l.rate, l.delay, packet_bytes, t);
      if (t.xoff != before) ++b.scheme_xoff_ports;
      if (s.long_haul_xoff_bytes > 0 || t.xoff != before) {
        ++b.own_xoff_ports;
        b.own_xoff_bytes += t.xoff;
      }
    }
    const Bytes h = port_headroom_bytes(s, l.rate, l.delay, l.long_haul, packet_bytes);
    b.headroom_bytes += h;
    count_port_kind(b.kinds, l, h);
  };
  return switches_over_budget<BufferCommitted>(topo, s.buffer_bytes, add,
                                               [](const BufferCommitted& b) { return b.committed_bytes(); });
}

std::vector<InputQueueShort> switches_short_of_input_queue(const TopoSpec& topo, const SwitchSettings& s,
                                                           Bytes packet_bytes) {
  if (!s.pfc_enabled || s.model != SwitchModel::kInputOutputQueued) return {};
  auto add = [&](InputQueueShort& q, int node, const LinkSpec& l) {
    const Bytes h = port_headroom_bytes(s, l.rate, l.delay, l.long_haul, packet_bytes);
    if (q.node >= 0 && h < q.port.headroom_bytes) return;
    if (q.node >= 0 && h == q.port.headroom_bytes) {
      ++q.port.count;
      return;
    }
    q.node = node;
    q.packet_bytes = packet_bytes;
    q.port = {l.rate, l.delay, l.long_haul, 1, h};
  };
  return switches_over_budget<InputQueueShort>(topo, s.input_queue_bytes, add,
                                               [](const InputQueueShort& q) { return q.needed_bytes(); });
}

void SwitchMmu::configure(Rate host_rate, bool input_queues) {
  const std::vector<Port>& ports = sw_.ports_;
  const NicSettings& nic = sw_.net_.nic_settings();
  const Bytes pkt = nic.mtu_bytes + nic.header_bytes;
  const SwitchSettings& s = s_;
  reserve_ = s.reserve_bytes;
  const size_t n = ports.size();
  in_.assign(n, IngressPort{});
  hdrm_total_ = 0;
  reserve_total_ = 0;
  for (size_t i = 0; i < n; ++i) {
    const Port& p = ports[i];
    IngressPort& in = in_[i];
    in.xoff = s.xoff_bytes;
    in.xon = s.xon_bytes;
    // The same headroom the scenario check (switches_short_of_buffer) adds up.
    in.headroom = port_headroom_bytes(s, p.rate, p.delay, p.long_haul, pkt);
    if (p.long_haul) {
      // A long-haul link's own static thresholds.
      if (s.long_haul_xoff_bytes > 0) in.xoff = s.long_haul_xoff_bytes;
      if (s.long_haul_xon_bytes > 0) in.xon = s.long_haul_xon_bytes;
    }
    // Dynamic threshold: shift at host speed, one less per doubling of port speed [sim].
    int shift = s.dt_shift_at_host_rate;
    for (double r = host_rate.bps * 2; r <= p.rate.bps * 1.0001 && shift > 0; r *= 2) --shift;
    in.dt_shift = shift;
    hdrm_total_ += in.headroom;
    reserve_total_ += reserve_;  // set aside once per port in the free-buffer term [sim; algorithms.md 1.1]
    if (input_queues) {
      // Pause while the headroom still fits in the queue; at least two packets before a pause.
      in.input_xoff = std::max<Bytes>(s.input_queue_bytes - in.headroom, 2 * pkt);
      in.input_xon = std::max<Bytes>(in.input_xoff - 2 * pkt, 0);
    }
  }
}

Bytes SwitchMmu::pfc_threshold(int port) const {
  if (s_.pfc_mode == PfcThresholdMode::kStatic) return in_[port].xoff;
  const Bytes free_shared = s_.buffer_bytes - hdrm_total_ - reserve_total_ - shared_used_;
  return free_shared > 0 ? (free_shared >> in_[port].dt_shift) : 0;
}

void SwitchMmu::count_peaks(const IngressCounters& c) {
  NetStats& st = sw_.net_.counters();
  if (total_bytes_ > st.max_switch_buffer_bytes) st.max_switch_buffer_bytes = total_bytes_;
  const Bytes held = c.bytes + c.hdrm_bytes;
  if (held > st.max_ingress_bytes) st.max_ingress_bytes = held;
}

// Ingress admission and accounting (algorithms.md 1.1).
bool SwitchMmu::admit(Packet* p, int in_port) {
  const Bytes size = p->size;
  if (total_bytes_ + size > s_.buffer_bytes) return false;
  p->acct_prio = p->prio;
  if (in_port < 0) {
    total_bytes_ += size;
    return true;
  }
  IngressPort& in = in_[in_port];
  IngressCounters& c = in.c[p->prio];
  if (s_.pfc_mode == PfcThresholdMode::kStatic || s_.credit_enabled) {  // credits bound c.bytes upstream
    if (s_.pfc_enabled && c.bytes + size > in.xoff + in.headroom) return false;
    c.bytes += size;
  } else {
    const Bytes thresh = pfc_threshold(in_port);
    if (size + c.hdrm_bytes > in.headroom && size + shared_of(c) > thresh) return false;
    const Bytes nb = c.bytes + size;
    if (nb <= reserve_) {
      c.bytes = nb;
    } else if (nb - reserve_ > thresh && s_.pfc_enabled) {
      c.hdrm_bytes += size;  // beyond the threshold: lands in headroom
    } else {
      shared_used_ += std::min(size, nb - reserve_);
      c.bytes = nb;
    }
  }
  total_bytes_ += size;
  count_peaks(c);
  if (s_.pfc_enabled) maybe_pause(in_port, p->prio);
  return true;
}

void SwitchMmu::maybe_pause(int in_port, int prio) {
  IngressCounters& c = in_[in_port].c[prio];
  if (c.pause_sent) return;
  bool over;
  if (s_.pfc_mode == PfcThresholdMode::kStatic)
    over = c.bytes >= in_[in_port].xoff;
  else
    over = c.hdrm_bytes > 0 || shared_of(c) >= pfc_threshold(in_port);
  if (over) {
    c.pause_sent = true;
    sw_.send_pfc(in_port, prio, true);
  }
}

void SwitchMmu::maybe_resume(int in_port, int prio) {
  IngressCounters& c = in_[in_port].c[prio];
  if (!c.pause_sent || c.agent_hold) return;
  bool under;
  if (s_.pfc_mode == PfcThresholdMode::kStatic) {
    under = c.bytes <= in_[in_port].xon;
  } else {
    const Bytes sh = shared_of(c);
    under = c.hdrm_bytes == 0 && (sh == 0 || sh + s_.resume_offset_bytes <= pfc_threshold(in_port));
  }
  if (under) {
    c.pause_sent = false;
    sw_.send_pfc(in_port, prio, false);
  }
}

void SwitchMmu::hold_pause(int port, int prio, bool hold) {
  IngressCounters& c = in_[port].c[prio];
  if (hold == c.agent_hold) return;
  c.agent_hold = hold;
  if (hold) {
    if (!c.pause_sent) {
      c.pause_sent = true;
      sw_.send_pfc(port, prio, true);
    }
  } else if (s_.pfc_enabled) {
    maybe_resume(port, prio);
  } else if (c.pause_sent) {
    c.pause_sent = false;
    sw_.send_pfc(port, prio, false);
  }
}

// Undo the ingress accounting: headroom first, then shared, then reserve [sim].
void SwitchMmu::release(const Packet& p) {
  const Bytes size = p.size;
  total_bytes_ -= size;
  if (p.in_port < 0) return;
  IngressCounters& c = in_[p.in_port].c[p.acct_prio];
  sw_.credit_release(p.in_port, p.acct_prio, size);
  if (s_.pfc_mode == PfcThresholdMode::kStatic || s_.credit_enabled) {
    c.bytes -= size;
  } else {
    Bytes left = size;
    const Bytes from_hdrm = std::min(left, c.hdrm_bytes);
    c.hdrm_bytes -= from_hdrm;
    left -= from_hdrm;
    if (left > 0) {
      const Bytes from_shared = std::min(left, shared_of(c));
      shared_used_ -= from_shared;
      c.bytes -= left;
    }
  }
  if (s_.pfc_enabled) maybe_resume(p.in_port, p.acct_prio);
}

void SwitchMmu::input_enqueued(int in_port, int prio, Bytes size) {
  IngressCounters& c = in_[in_port].c[prio];
  c.bytes += size;
  total_bytes_ += size;
  count_peaks(c);
  if (s_.pfc_enabled && !c.pause_sent && c.bytes >= in_[in_port].input_xoff) {
    c.pause_sent = true;
    sw_.send_pfc(in_port, prio, true);
  }
}

void SwitchMmu::input_dequeued(int in_port, int prio, Bytes size) {
  IngressCounters& c = in_[in_port].c[prio];
  c.bytes -= size;
  sw_.credit_release(in_port, prio, size);
  if (s_.pfc_enabled && c.pause_sent && c.bytes <= in_[in_port].input_xon) {
    c.pause_sent = false;
    sw_.send_pfc(in_port, prio, false);
  }
}

Bytes SwitchMmu::input_bytes(int port) const {
  Bytes b = 0;
  for (int prio = 1; prio < kNumPriorities; ++prio) {
    const IngressCounters& c = in_[port].c[prio];
    b += c.bytes + c.hdrm_bytes;
  }
  return b;
}

}  // namespace rocesim
