// [cc.dcqcn_tcd] -> DcqcnSettings (DCQCN's keys, cc/dcqcn.h) + TcdSettings (cc/tcd.h documents every value).
#include "cc/tcd.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_dcqcn_tcd(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.dcqcn_tcd.";
  const DcqcnSettings d = read_dcqcn_settings(c, "cc.dcqcn_tcd", ctx.nic_rate);
  TcdSettings t;
  t.epsilon = c.get_double(k + "epsilon", t.epsilon, 1e-6, 1);
  t.xoff_minus_xon_bytes = c.get_int(k + "xoff_minus_xon_bytes", t.xoff_minus_xon_bytes, 0, int64_t{1} << 40);
  t.max_ton = c.get_us(k + "max_ton_us", t.max_ton, 0, 1e9);
  t.timer_period = c.get_us(k + "timer_period_us", t.timer_period, 0, 1e9);
  t.k_bytes = c.get_int(k + "k_bytes", t.k_bytes, 0, int64_t{1} << 40);
  t.k_low_bytes = c.get_int(k + "k_low_bytes", t.k_low_bytes, 0, int64_t{1} << 40);
  return [d, t] { return std::make_unique<DcqcnTcd>(d, t); };
}

}  // namespace rocesim
