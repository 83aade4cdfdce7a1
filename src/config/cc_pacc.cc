// [cc.pacc] -> PaccSettings (cc/pacc.h documents every value and its source). The table also takes the
// DCQCN reaction-point keys of [cc.dcqcn] (variant, g, ..., min_rate_mbps); the notification-point keys
// (cnp_interval_us, cnp_on_ack) are read but unused: PACC's switches send the CNPs.
#include "cc/pacc.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_pacc(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.pacc.";
  PaccSettings s;
  const bool clamp_given = c.has(k + "clamp_target");
  s.rp = read_dcqcn_settings(c, "cc.pacc", ctx.nic_rate);
  if (!clamp_given) {  // PACC's default differs from DCQCN's (cc/pacc.h)
    s.rp.clamp_target = true;
    c.set_resolved(k + "clamp_target", toml::value<bool>(true));
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

}  // namespace rocesim
