// [cc.mercury] -> MercurySettings (cc/mercury.h documents every value and its source). The table also
// takes the DCQCN reaction-point keys of [cc.dcqcn] (variant, g, ..., min_rate_mbps), with the same
// defaults as [cc.dcqcn] (variant "mellanox"), so Mercury and DCQCN share one RP; the notification-point keys
// (cnp_interval_us, cnp_on_ack) are read but unused: the switches send the CNPs, spaced by
// cnp_spacing_us.
#include "cc/mercury.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_mercury(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.mercury.";
  MercurySettings s;
  s.rp = read_dcqcn_settings(c, "cc.mercury", ctx.nic_rate);
  s.check_period = c.get_us(k + "check_period_us", s.check_period, 0.001, 1e9);
  s.threshold_bytes = c.get_int(k + "threshold_bytes", s.threshold_bytes, 0, int64_t{1} << 40);
  s.cnp_interval = c.get_us(k + "cnp_spacing_us", s.cnp_interval, 0, 1e9);
  s.base_rtt = c.get_us(k + "base_rtt_us", s.base_rtt, 0, 1e9);
  s.window = c.get_bool(k + "window", s.window);
  return [s] { return std::make_unique<Mercury>(s); };
}

// Mercury's switch agent decides who gets a CNP [algorithms.md 3.1 (a)]: no RED marking.
std::string switch_defaults_mercury(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "mercury: the switch agent sends CNPs instead of RED marking (ecn = false)";
}

}  // namespace rocesim
