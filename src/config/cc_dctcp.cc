// [cc.dctcp] -> DctcpSettings (cc/dctcp.h documents every value and its source).
// Step marking at K is a switch setting: [switch] kmin_bytes = kmax_bytes = K, pmax = 1.
#include "cc/dctcp.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_dctcp(Config& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.dctcp.";
  DctcpSettings d;
  d.mode = c.get_string(k + "mode", d.mode, DctcpSettings::modes());
  d.g = c.get_double(k + "g", d.g, 0, 1);
  d.alpha_init = c.get_double(k + "alpha_init", d.alpha_init, 0, 1);
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  d.rate_window = c.get_bool(k + "rate_window", d.rate_window);
  d.t = c.get_us(k + "t_us", d.t, 0, 1e9);
  d.min_cwnd_bytes = c.get_int(k + "min_cwnd_bytes", d.min_cwnd_bytes, 1, int64_t{1} << 40);
  return [d] { return std::make_unique<Dctcp>(d); };
}

// DCTCP marks with a step at one threshold K instead of RED [paper; sim run.py: K = 30 KB x C/10G, i.e.
// 300 KB at 100 Gb/s, scaled with the port speed by ecn_scale_with_rate; cc/dctcp.h].
std::string switch_defaults_dctcp(SwitchSettings& s) {
  s.ecn_enabled = true;
  s.kmin_bytes = 300'000;
  s.kmax_bytes = 300'000;
  s.pmax = 1.0;
  return "dctcp: step marking at K = 300 KB at 100 Gb/s (kmin_bytes = kmax_bytes = 300000, pmax = 1)";
}

}  // namespace rocesim
