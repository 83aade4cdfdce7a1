// [cc.hpcc] -> HpccSettings (cc/hpcc.h documents every value and its source).
#include "cc/hpcc.h"
#include "config/schemes.h"

namespace rocesim {

HpccSettings read_hpcc_keys(Config& c, const std::string& prefix, HpccSettings d) {
  const std::string k = prefix + ".";
  d.eta = c.get_double(k + "eta", d.eta, 0.01, 1);
  d.max_stage = static_cast<int>(c.get_int(k + "max_stage", d.max_stage, 0, 1'000'000));
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.t = c.get_us(k + "t_us", d.t, 0, 1e9);
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  d.fast_react = c.get_bool(k + "fast_react", d.fast_react);
  d.u_init = c.get_double(k + "u_init", d.u_init, 0, 100);
  return d;
}

SchemeFactory read_scheme_hpcc(Config& c, const SchemeContext& ctx) {
  const HpccSettings d = read_hpcc_keys(c, "cc.hpcc", HpccSettings::for_nic_rate(ctx.nic_rate));
  return [d] { return std::make_unique<Hpcc>(d); };
}

// HPCC (and HPCC*) read INT hop records, which the switches stamp for them (CcNeeds::int_stamping), and
// ignore ECN [HPCC paper sec. 3; sim CC_MODE 3 runs without RED].
std::string switch_defaults_hpcc(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "hpcc: INT stamping on every switch, no ECN marking (ecn = false)";
}

}  // namespace rocesim
