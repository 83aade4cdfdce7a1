#include "config/schemes.h"

namespace rocesim {

const std::vector<SchemeEntry>& scheme_registry() {
  static const std::vector<SchemeEntry> r = {
      {"none", "PFC only: line rate, no congestion control", read_scheme_none, switch_defaults_none},
      {"dcqcn",
       "DCQCN (ECN marking, CNPs, rate decrease/increase); variants mellanox, hpcc_sim, paper",
       read_scheme_dcqcn,
       {}},
      {"dctcp", "DCTCP on RDMA QPs (ECN echo per ACK, alpha per window); modes rate (ns-3 HPCC sim), window",
       read_scheme_dctcp, switch_defaults_dctcp},
      {"timely", "TIMELY (RTT gradient from ACK timestamps, no ECN)", read_scheme_timely,
       switch_defaults_timely},
      {"hpcc", "HPCC (INT per hop, window W = Wc / (U / eta) + W_AI paced at W / T)", read_scheme_hpcc,
       switch_defaults_hpcc},
      {"pcn", "PCN (NP-ECN spares paused packets; receiver rate in CNPs every 50 us)", read_scheme_pcn,
       switch_defaults_pcn},
      {"pacc", "PACC (switch PI controller sends CNPs per flow every 80 us; DCQCN sender)", read_scheme_pacc,
       switch_defaults_pacc},
      {"icc", "ICC (switch judges qlen, qlen rate, utilisation; feedback in ACKs; Vmax/Vmin rates)",
       read_scheme_icc, switch_defaults_icc},
      {"dcqcn_tcd",
       "DCQCN+TCD (ternary detection: CE for congestion, UE for ON-OFF ports; UE-CNP holds rate)",
       read_scheme_dcqcn_tcd,
       {}},
      {"mercury",
       "Mercury (switch PFC-aware port states, window-carrying CNPs; DCQCN sender (as [cc.dcqcn]) + cwnd)",
       read_scheme_mercury, switch_defaults_mercury},
      {"lscc",
       "LSCC (cross-DC: rate calc at the far egress switch, pseudo queue + direct CNPs near the sources; "
       "DCQCN)",
       read_scheme_lscc,
       {}},
      {"hpcc_star",
       "HPCC* (HPCC with LSCC's rate calc and direct INT from the near egress switch; min(W, W*))",
       read_scheme_hpcc_star, switch_defaults_hpcc},
      {"swing", "SWING (PFC relay at both ends of the long-haul link, early resume; line-rate hosts)",
       read_scheme_swing, switch_defaults_swing},
      {"rcm",
       "RCM (switch-to-switch CNs, CAM-recognised harmful flows, crossbar window control, adaptive routing; "
       "DCQCN hosts)",
       read_scheme_rcm,
       {}},
  };
  return r;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& e : scheme_registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace rocesim
