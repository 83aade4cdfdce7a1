#include "cc/registry.h"

#include "cc/dcqcn.h"
#include "cc/dctcp.h"
#include "cc/hpcc.h"
#include "cc/hpcc_star.h"
#include "cc/icc.h"
#include "cc/lscc.h"
#include "cc/mercury.h"
#include "cc/none.h"
#include "cc/pacc.h"
#include "cc/pcn.h"
#include "cc/rcm.h"
#include "cc/swing.h"
#include "cc/tcd.h"
#include "cc/timely.h"

namespace rocesim {

const std::vector<SchemeEntry>& scheme_registry() {
  // One line per scheme: its entry function, in the scheme's own files.
  static const std::vector<SchemeEntry> r = {
      none_scheme(),       // cc/none.h
      dcqcn_scheme(),      // cc/dcqcn.h
      dctcp_scheme(),      // cc/dctcp.h
      timely_scheme(),     // cc/timely.h
      hpcc_scheme(),       // cc/hpcc.h
      pcn_scheme(),        // cc/pcn.h
      pacc_scheme(),       // cc/pacc.h
      icc_scheme(),        // cc/icc.h
      dcqcn_tcd_scheme(),  // cc/tcd.h
      mercury_scheme(),    // cc/mercury.h
      lscc_scheme(),       // cc/lscc.h
      hpcc_star_scheme(),  // cc/hpcc_star.h
      swing_scheme(),      // cc/swing.h
      rcm_scheme(),        // cc/rcm.h
  };
  return r;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& e : scheme_registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace rocesim
