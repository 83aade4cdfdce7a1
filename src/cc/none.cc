// The reader and the switch defaults of `none` (none.h): PFC only, no [cc.none] keys.
#include "cc/none.h"

#include "cc/registry.h"

namespace rocesim {

namespace {

SchemeFactory read_scheme_none(KeyReader&, const SchemeContext&) {
  return [] { return std::make_unique<NoCc>(); };
}

// PFC only: nobody reads ECN marks.
std::string switch_defaults_none(SwitchSettings& s) {
  s.ecn_enabled = false;
  return "none: no congestion control, no ECN marking (ecn = false)";
}

}  // namespace

// The registry entry (cc/registry.h).
SchemeEntry none_scheme() {
  return {.name = "none",
          .summary = "PFC only: line rate, no congestion control",
          .read = read_scheme_none,
          .switch_defaults = switch_defaults_none};
}

}  // namespace rocesim
