// [cc.pcn] -> PcnSettings (cc/pcn.h documents every value and its source).
#include "cc/pcn.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_pcn(Config& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.pcn.";
  PcnSettings s;
  s.np_period = c.get_us(k + "np_period_us", s.np_period, 0.001, 1e9);
  s.ece_fraction = c.get_double(k + "ece_fraction", s.ece_fraction, 0, 1);
  s.w_min = c.get_double(k + "w_min", s.w_min, 1e-9, 1);
  s.w_max = c.get_double(k + "w_max", s.w_max, 1e-9, 1);
  s.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", s.min_rate.mbps(), 0.001, 1e6));
  s.k_np_pkts = static_cast<uint32_t>(c.get_int(k + "k_np_pkts", s.k_np_pkts, 0, 1'000'000));
  if (s.w_min > s.w_max) c.fail(k + "w_min", "must not exceed w_max");
  return [s] { return std::make_unique<Pcn>(s); };
}

// PCN's NP-ECN (PcnAgent::mark) replaces RED marking [PCN paper sec. 4].
std::string switch_defaults_pcn(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "pcn: NP-ECN in the switch agent instead of RED (ecn = false)";
}

}  // namespace rocesim
