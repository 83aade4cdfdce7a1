// [cc.icc] -> IccSettings (cc/icc.h documents every value and its source).
#include "cc/icc.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_icc(Config& c, const SchemeContext& ctx) {
  (void)ctx;
  const std::string k = "cc.icc.";
  IccSettings s;
  s.lu_threshold = c.get_double(k + "lu_threshold", s.lu_threshold, 0, 1);
  s.sample_interval = c.get_us(k + "sample_interval_us", s.sample_interval, 0.001, 1e6);
  s.feedback_period = c.get_us(k + "feedback_period_us", s.feedback_period, 0.001, 1e6);
  s.flow_window = c.get_us(k + "flow_window_us", s.flow_window, 0.001, 1e6);
  s.flow_idle = c.get_us(k + "flow_idle_us", s.flow_idle, 1, 1e9);
  s.q_d_bytes = c.get_int(k + "q_d_bytes", s.q_d_bytes, 0, int64_t{1} << 40);
  s.q_d_cap_bytes = c.get_int(k + "q_d_cap_bytes", s.q_d_cap_bytes, 1, int64_t{1} << 40);
  s.q_d_fraction = c.get_double(k + "q_d_fraction", s.q_d_fraction, 0.01, 1);
  s.min_rate = Rate::from_mbps(c.get_double(k + "min_rate_mbps", s.min_rate.mbps(), 0.001, 1e6));
  s.feedback_bytes = c.get_int(k + "feedback_bytes", s.feedback_bytes, 0, 1024);
  return [s] { return std::make_unique<Icc>(s); };
}

// ICC's switch agent judges congestion itself and feeds back in ACKs: no ECN [ICC paper].
std::string switch_defaults_icc(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "icc: switch agent feedback in ACKs, no ECN marking (ecn = false)";
}

}  // namespace rocesim
