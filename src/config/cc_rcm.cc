// [cc.rcm] -> RcmSettings (cc/rcm.h documents every value and its source). The table also takes the DCQCN
// keys of [cc.dcqcn] (variant, g, ..., cnp_interval_us) for the hosts, "mellanox" by default.
#include "cc/rcm.h"
#include "config/schemes.h"

namespace rocesim {

SchemeFactory read_scheme_rcm(Config& c, const SchemeContext& ctx) {
  const std::string k = "cc.rcm.";
  RcmSettings s;
  s.host = read_dcqcn_settings(c, "cc.rcm", ctx.nic_rate);
  s.crd = c.get_bool(k + "crd", s.crd);
  s.cfr = c.get_bool(k + "cfr", s.cfr);
  s.rcc = c.get_bool(k + "rcc", s.rcc);
  s.sar = c.get_bool(k + "sar", s.sar);
  s.q_eq_bytes = c.get_int(k + "q_eq_bytes", s.q_eq_bytes, 1, int64_t{1} << 40);
  s.w_q = c.get_double(k + "w_q", s.w_q, 0, 100);
  s.fb_full_queue = c.get_bool(k + "fb_full_queue", s.fb_full_queue);
  s.fb_max = static_cast<int>(c.get_int(k + "fb_max", s.fb_max, 1, 1 << 16));
  s.w_remote = c.get_double(k + "w_remote", s.w_remote, 0, 1);
  s.sample_bytes = c.get_int(k + "sample_bytes", s.sample_bytes, 64, int64_t{1} << 40);
  s.sample_jitter = c.get_double(k + "sample_jitter", s.sample_jitter, 0, 0.9);
  s.flag_timeout = c.get_us(k + "flag_timeout_us", s.flag_timeout, 0.001, 1e9);
  s.cam_depth = static_cast<int>(c.get_int(k + "cam_depth", s.cam_depth, 1, 1024));
  s.cam_interval = static_cast<int>(c.get_int(k + "cam_interval", s.cam_interval, 1, 1 << 20));
  s.cfr_share = c.get_double(k + "cfr_share", s.cfr_share, 0, 100);
  s.cfr_keep_share = c.get_double(k + "cfr_keep_share", s.cfr_keep_share, 0, 100);
  s.rcc_edge_strict = c.get_bool(k + "rcc_edge_strict", s.rcc_edge_strict);
  s.rcc_min_window_bytes = c.get_int(k + "rcc_min_window_bytes", s.rcc_min_window_bytes, 1, int64_t{1} << 40);
  s.sar_severe_cns = static_cast<int>(c.get_int(k + "sar_severe_cns", s.sar_severe_cns, 0, 1 << 20));
  s.sar_severe_fb = c.get_double(k + "sar_severe_fb", s.sar_severe_fb, 0, 1);
  s.sar_flowlet_gap = c.get_us(k + "sar_flowlet_gap_us", s.sar_flowlet_gap, 0, 1e9);
  s.sar_table_size = static_cast<int>(c.get_int(k + "sar_table_size", s.sar_table_size, 1, 1 << 24));
  if (s.sar_table_size & (s.sar_table_size - 1)) c.fail(k + "sar_table_size", "must be a power of two");
  return [s] { return std::make_unique<Rcm>(s); };
}

}  // namespace rocesim
