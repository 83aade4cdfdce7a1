// [cc.dcqcn] -> DcqcnSettings (cc/dcqcn.h documents every value and its source).
#include "cc/dcqcn.h"
#include "cc/none.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_none(Config&, const SchemeContext&) {
  return [] { return std::make_unique<NoCc>(); };
}

// Reads [cc.dcqcn] at `prefix` (schemes built on DCQCN reuse it with their own table).
DcqcnSettings read_dcqcn_settings(Config& c, const std::string& prefix, Rate nic_rate) {
  const std::string variant = c.get_string(prefix + ".variant", "mellanox", DcqcnSettings::variants());
  return read_dcqcn_keys(c, prefix, DcqcnSettings::for_variant(variant, nic_rate), true);
}

DcqcnSettings read_dcqcn_keys(Config& c, const std::string& prefix, DcqcnSettings d, bool np_keys) {
  const std::string k = prefix + ".";
  d.g = c.get_double(k + "g", d.g, 0, 1);
  d.alpha_period = c.get_us(k + "alpha_period_us", d.alpha_period, 0.001);
  d.dec_period = c.get_us(k + "dec_period_us", d.dec_period, 0.001);
  d.inc_period = c.get_us(k + "inc_period_us", d.inc_period, 0.001);
  d.byte_counter_bytes = c.get_int(k + "byte_counter_bytes", d.byte_counter_bytes, 0, int64_t{1} << 40);
  d.fast_recovery_steps =
      static_cast<int>(c.get_int(k + "fast_recovery_steps", d.fast_recovery_steps, 0, 1000));
  d.rate_ai = Rate::from_mbps(c.get_double(k + "rate_ai_mbps", d.rate_ai.mbps(), 0, 1e6));
  d.rate_hai = Rate::from_mbps(c.get_double(k + "rate_hai_mbps", d.rate_hai.mbps(), 0, 1e6));
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  if (np_keys) {
    d.cnp_interval = c.get_us(k + "cnp_interval_us", d.cnp_interval, 0);
    d.cnp_on_ack = c.get_bool(k + "cnp_on_ack", d.cnp_on_ack);
  }
  d.rate_on_first_cnp = c.get_double(k + "rate_on_first_cnp", d.rate_on_first_cnp, 0.001, 1);
  d.clamp_target = c.get_bool(k + "clamp_target", d.clamp_target);
  return d;
}

SchemeFactory read_scheme_dcqcn(Config& c, const SchemeContext& ctx) {
  const DcqcnSettings d = read_dcqcn_settings(c, "cc.dcqcn", ctx.nic_rate);
  return [d] { return std::make_unique<Dcqcn>(d); };
}

// PFC only: nobody reads ECN marks.
std::string switch_defaults_none(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "none: no congestion control, no ECN marking (ecn = false)";
}

}  // namespace rocesim
