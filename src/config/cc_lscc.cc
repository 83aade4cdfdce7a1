// [cc.lscc], [cc.hpcc_star], [cc.swing] -> LsccSettings / HpccStarSettings / SwingSettings (cc/lscc.h,
// cc/lscc_rate.h, cc/hpcc_star.h and cc/swing.h document every value and its source). [cc.lscc] also takes
// the DCQCN keys of [cc.dcqcn] for the sources (variant "mellanox" by default); its cnp_interval_us is
// replaced by normal_cnp_multiple x direct_cnp_interval_us. [cc.hpcc_star] takes the keys of [cc.hpcc].
#include "cc/hpcc_star.h"
#include "cc/lscc.h"
#include "cc/swing.h"
#include "config/schemes.h"

namespace rocesim {
namespace {

LsccRateSettings read_rate_settings(Config& c, const std::string& k) {
  LsccRateSettings r;
  r.period = c.get_us(k + "period_us", r.period, 1, 1e7);
  r.q_ref_bytes = c.get_int(k + "q_ref_bytes", r.q_ref_bytes, 0, int64_t{1} << 40);
  r.q_star_ref_bytes = c.get_int(k + "q_star_ref_bytes", r.q_star_ref_bytes, 0, int64_t{1} << 40);
  r.delta_r = Rate::from_mbps(c.get_double(k + "delta_r_mbps", r.delta_r.mbps(), 0.001, 1e7));
  r.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", r.min_rate.mbps(), 0.001, 1e7));
  r.max_rate_fraction = c.get_double(k + "max_rate_fraction", r.max_rate_fraction, 0.01, 1);
  r.rate_unit = Rate::from_mbps(c.get_double(k + "rate_unit_mbps", r.rate_unit.mbps(), 0, 1e6));
  r.rtt = c.get_us(k + "long_haul_rtt_us", r.rtt, 0, 1e8);
  r.message_bytes = c.get_int(k + "message_bytes", r.message_bytes, 1, 9000);
  r.long_haul_xoff_bytes = c.get_int(k + "long_haul_xoff_bytes", r.long_haul_xoff_bytes, 0, int64_t{1} << 40);
  return r;
}

}  // namespace

SchemeFactory read_scheme_lscc(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.lscc.";
  LsccSettings s;
  // The sources' DCQCN keys, as [cc.dcqcn]'s, defaulting to LsccSettings::sender_defaults() unless a
  // variant is named.
  DcqcnSettings& d = s.rp;
  if (c.has(k + "variant"))
    d = DcqcnSettings::for_variant(c.get_string(k + "variant", "mellanox", DcqcnSettings::variants()),
                                   ctx.nic_rate);
  d = read_dcqcn_keys(c, "cc.lscc", d, false);
  s.rate = read_rate_settings(c, k);
  s.direct_cnp_interval = c.get_us(k + "direct_cnp_interval_us", s.direct_cnp_interval, 0.1, 1e7);
  s.normal_cnp_multiple = c.get_double(k + "normal_cnp_multiple", s.normal_cnp_multiple, 0, 1e6);
  s.long_flow_bdp = c.get_double(k + "long_flow_bdp", s.long_flow_bdp, 0, 1e6);
  s.long_flow_bytes = c.get_int(k + "long_flow_bytes", s.long_flow_bytes, 0, int64_t{1} << 50);
  s.flow_table_entries =
      static_cast<int>(c.get_int(k + "flow_table_entries", s.flow_table_entries, 1, 1 << 22));
  s.mark_at_rate_calc = c.get_bool(k + "mark_at_rate_calc", s.mark_at_rate_calc);
  s.flag_hold = c.get_us(k + "flag_hold_us", s.flag_hold, 0, 1e9);
  return [s] { return std::make_unique<Lscc>(s); };
}

SchemeFactory read_scheme_hpcc_star(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.hpcc_star.";
  HpccStarSettings s;
  s.hpcc = read_hpcc_keys(c, "cc.hpcc_star", HpccSettings::for_nic_rate(ctx.nic_rate));
  s.rate = read_rate_settings(c, k);
  return [s] { return std::make_unique<HpccStar>(s); };
}

SchemeFactory read_scheme_swing(Config& c, const SchemeContext&) {
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

}  // namespace rocesim
