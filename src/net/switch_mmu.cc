#include "net/switch_mmu.h"

#include <algorithm>

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

namespace {

// Headroom absorbs what is in flight after a PAUSE: `rtts` x the link's bandwidth-delay product plus a
// packet being sent at each end [sim: 3 x rate x delay; algorithms.md 1.2]. `fixed` > 0 replaces it.
Bytes headroom_for(const Port& p, Bytes fixed, double rtts, Bytes extra) {
  return fixed > 0 ? fixed : static_cast<Bytes>(rtts * p.rate.bps * p.delay.sec() / 8.0) + extra;
}

}  // namespace

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
  const Bytes extra = s.headroom_extra_bytes >= 0 ? s.headroom_extra_bytes : 2 * pkt;
  for (size_t i = 0; i < n; ++i) {
    const Port& p = ports[i];
    IngressPort& in = in_[i];
    in.xoff = s.xoff_bytes;
    in.xon = s.xon_bytes;
    if (p.long_haul) {
      // One BDP of the long-haul link [seed 004; algorithms.md 1.2] and its own static thresholds.
      in.headroom = headroom_for(p, s.long_haul_headroom_bytes, 2.0, extra);
      if (s.long_haul_xoff_bytes > 0) in.xoff = s.long_haul_xoff_bytes;
      if (s.long_haul_xon_bytes > 0) in.xon = s.long_haul_xon_bytes;
    } else {
      in.headroom = headroom_for(p, s.headroom_bytes, s.headroom_factor, extra);
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
