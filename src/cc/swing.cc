#include "cc/swing.h"

#include <algorithm>

#include "cc/registry.h"
#include "net/switch.h"

namespace rocesim {

std::unique_ptr<SwitchAgent> Swing::make_switch_agent(Switch& sw) {
  for (const Port& p : sw.ports())
    if (p.long_haul && p.peer->is_switch()) return std::make_unique<SwingAgent>(*net_, sw, s_);
  return nullptr;
}

SwingAgent::SwingAgent(CcServices& net, Switch& sw, const SwingSettings& s)
    : net_(net), sw_(sw), s_(s), is_long_(sw.ports().size(), false) {
  const Bytes mtu = net.nic_settings().mtu_bytes + net.nic_settings().header_bytes;
  for (const Port& p : sw.ports()) {
    if (!p.long_haul || !p.peer->is_switch()) continue;
    long_ports_.push_back(p.index);
    is_long_[p.index] = true;
    const PfcThresholds t = Swing::relay_thresholds(s, p.rate, p.delay, mtu);
    sw.set_port_thresholds(p.index, t.xoff, t.xon);
  }
}

PfcThresholds Swing::relay_thresholds(const SwingSettings& s, Rate rate, Time delay, Bytes packet_bytes) {
  const double bdp = rate.bps * (delay * 2).sec() / 8;
  const Bytes xon = static_cast<Bytes>(s.xon_bdp * bdp);
  const Bytes xoff =
      std::max(xon + packet_bytes, static_cast<Bytes>(s.buffer_bdp * bdp - bdp) - 2 * packet_bytes);
  return {xoff, xon};
}

void SwingAgent::on_pfc(int port, int prio, bool paused) {
  if (!s_.relay_in_dc_pause || prio <= 0 || prio >= 8) return;
  if (is_long_[port]) {
    // R_u: the far relay paused our long-haul egress: pause the DC side now (relay), release on RESUME.
    for (const Port& p : sw_.ports())
      if (!is_long_[p.index]) sw_.hold_pause(p.index, prio, paused);
    ++relayed_;
    return;
  }
  // R_d: our DC paused one of our in-DC egresses: relay across the long-haul link at once.
  const int before = in_dc_paused_[prio];
  in_dc_paused_[prio] = std::max(0, before + (paused ? 1 : -1));
  if ((before == 0) != (in_dc_paused_[prio] == 0)) {
    for (int l : long_ports_) sw_.hold_pause(l, prio, in_dc_paused_[prio] > 0);
    ++relayed_;
  }
}

// --- [cc.swing] -> SwingSettings (swing.h documents every value and its source) ---

namespace {

SchemeFactory read_scheme_swing(KeyReader& c, const SchemeContext&) {
  const std::string k = "cc.swing.";
  SwingSettings s;
  s.buffer_bdp = c.get_double(k + "buffer_bdp", s.buffer_bdp, 0.1, 100);
  s.xon_bdp = c.get_double(k + "xon_bdp", s.xon_bdp, 0, 100);
  s.relay_in_dc_pause = c.get_bool(k + "relay_in_dc_pause", s.relay_in_dc_pause);
  if (s.xon_bdp >= s.buffer_bdp - 1) c.fail(k + "xon_bdp", "must be below buffer_bdp - 1 (X_on < X_off)");
  return [s] { return std::make_unique<Swing>(s); };
}

// SWING hosts send at line rate; the PFC relay works without ECN.
std::string switch_defaults_swing(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "swing: line-rate hosts, no ECN marking (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry swing_scheme() {
  return {.name = "swing",
          .summary = "SWING (PFC relay at both ends of the long-haul link, early resume; line-rate hosts)",
          .read = read_scheme_swing,
          .switch_defaults = switch_defaults_swing};
}

}  // namespace rocesim
