#include "net/path_select.h"

namespace rocesim {

void PathSelector::configure(const SwitchSettings& s, uint64_t seed, int switch_id) {
  routing_ = s.routing;
  spray_ = s.spray;
  per_flowlet_ = s.adaptive_per_flowlet;
  avoid_paused_ = s.adaptive_avoid_paused;
  gap_ = s.flowlet_gap;
  const bool table = routing_ == Routing::kFlowlet || (routing_ == Routing::kAdaptive && per_flowlet_);
  table_.assign(table ? static_cast<size_t>(s.flowlet_table_size) : 0, Entry{});
  mask_ = table ? static_cast<uint64_t>(s.flowlet_table_size - 1) : 0;
  rng_ = Rng::stream(seed, "routing", static_cast<uint64_t>(switch_id));
}

}  // namespace rocesim
