#include "config/schemes.h"

namespace rocesim {

const std::vector<SchemeEntry>& scheme_registry() {
  static const std::vector<SchemeEntry> r = {
      {"none", "PFC only: line rate, no congestion control", read_scheme_none},
      {"dcqcn", "DCQCN (ECN marking, CNPs, rate decrease/increase); variants mellanox, hpcc_sim, paper",
       read_scheme_dcqcn},
  };
  return r;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& e : scheme_registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace rocesim
