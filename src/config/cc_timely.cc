// [cc.timely] -> TimelySettings (cc/timely.h documents every value and its source).
#include "cc/timely.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_timely(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.timely.";
  TimelySettings d = TimelySettings::for_nic_rate(ctx.nic_rate);
  d.alpha = c.get_double(k + "alpha", d.alpha, 0, 1);
  d.beta = c.get_double(k + "beta", d.beta, 0, 1);
  d.t_low = c.get_us(k + "t_low_us", d.t_low, 0.001);
  d.t_high = c.get_us(k + "t_high_us", d.t_high, 0.001);
  d.min_rtt = c.get_us(k + "min_rtt_us", d.min_rtt, 0.001);
  d.delta = Rate::from_mbps(c.get_double(k + "delta_mbps", d.delta.mbps(), 0, 1e6));
  d.hai_step = Rate::from_mbps(c.get_double(k + "hai_mbps", d.hai_step.mbps(), 0, 1e6));
  d.hai_after = static_cast<int>(c.get_int(k + "hai_after", d.hai_after, 0, 1'000'000));
  d.hai_below_tlow = c.get_bool(k + "hai_below_tlow", d.hai_below_tlow);
  d.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", d.min_rate.mbps(), 0.001, 1e6));
  if (d.t_high < d.t_low) c.fail(k + "t_high_us", "must not be below t_low_us");
  return [d] { return std::make_unique<Timely>(d); };
}

// TIMELY reacts to RTT alone: no ECN marking [TIMELY paper].
std::string switch_defaults_timely(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "timely: delay-based, no ECN marking (ecn = false)";
}

}  // namespace rocesim
