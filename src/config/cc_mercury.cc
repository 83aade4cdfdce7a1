// [cc.mercury] -> MercurySettings (cc/mercury.h documents every value and its source). The table also
// takes the DCQCN reaction-point keys of [cc.dcqcn] (variant, g, ..., min_rate_mbps), with variant
// "paper" by default (the seed runs DCQCN with its paper's parameters); the notification-point keys
// (cnp_interval_us, cnp_on_ack) are read but unused: the switches send the CNPs, spaced by
// cnp_spacing_us.
#include "cc/mercury.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_mercury(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.mercury.";
  MercurySettings s;
  const bool variant_given = c.has(k + "variant");
  s.rp = read_dcqcn_settings(c, "cc.mercury", ctx.nic_rate);
  if (!variant_given) {
    // read_dcqcn_settings fills the keys not given from "mellanox": redo them from "paper".
    const DcqcnSettings& r = s.rp;
    DcqcnSettings p = DcqcnSettings::for_variant("paper", ctx.nic_rate);
    auto given = [&](const char* key) { return c.has(k + key); };
    auto put_us = [&](const char* key, Time t) { c.set_resolved(k + key, toml::value<double>(t.us())); };
    auto put_d = [&](const char* key, double v) { c.set_resolved(k + key, toml::value<double>(v)); };
    c.set_resolved(k + "variant", toml::value<std::string>("paper"));
    if (given("g")) p.g = r.g; else put_d("g", p.g);
    if (given("alpha_period_us")) p.alpha_period = r.alpha_period;
    else put_us("alpha_period_us", p.alpha_period);
    if (given("dec_period_us")) p.dec_period = r.dec_period; else put_us("dec_period_us", p.dec_period);
    if (given("inc_period_us")) p.inc_period = r.inc_period; else put_us("inc_period_us", p.inc_period);
    if (given("byte_counter_bytes")) p.byte_counter_bytes = r.byte_counter_bytes;
    else c.set_resolved(k + "byte_counter_bytes", toml::value<int64_t>(p.byte_counter_bytes));
    if (given("fast_recovery_steps")) p.fast_recovery_steps = r.fast_recovery_steps;
    else c.set_resolved(k + "fast_recovery_steps", toml::value<int64_t>(p.fast_recovery_steps));
    if (given("rate_ai_mbps")) p.rate_ai = r.rate_ai; else put_d("rate_ai_mbps", p.rate_ai.mbps());
    if (given("rate_hai_mbps")) p.rate_hai = r.rate_hai; else put_d("rate_hai_mbps", p.rate_hai.mbps());
    if (given("min_rate_mbps")) p.min_rate = r.min_rate; else put_d("min_rate_mbps", p.min_rate.mbps());
    if (given("cnp_interval_us")) p.cnp_interval = r.cnp_interval;
    else put_us("cnp_interval_us", p.cnp_interval);
    if (given("cnp_on_ack")) p.cnp_on_ack = r.cnp_on_ack;
    else c.set_resolved(k + "cnp_on_ack", toml::value<bool>(p.cnp_on_ack));
    if (given("rate_on_first_cnp")) p.rate_on_first_cnp = r.rate_on_first_cnp;
    else put_d("rate_on_first_cnp", p.rate_on_first_cnp);
    if (given("clamp_target")) p.clamp_target = r.clamp_target;
    else c.set_resolved(k + "clamp_target", toml::value<bool>(p.clamp_target));
    s.rp = p;
  }
  s.check_period = Time::from_us(c.get_double(k + "check_period_us", s.check_period.us(), 0.001, 1e9));
  s.threshold_bytes = c.get_int(k + "threshold_bytes", s.threshold_bytes, 0, int64_t{1} << 40);
  s.cnp_interval = Time::from_us(c.get_double(k + "cnp_spacing_us", s.cnp_interval.us(), 0, 1e9));
  s.base_rtt = Time::from_us(c.get_double(k + "base_rtt_us", s.base_rtt.us(), 0, 1e9));
  s.window = c.get_bool(k + "window", s.window);
  return [s] { return std::make_unique<Mercury>(s); };
}

}  // namespace rocesim
