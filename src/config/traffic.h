// [[traffic]] tables: flow generators (workload x traffic pattern) of a scenario.
#pragma once
#include <memory>
#include <vector>

#include "config/scenario.h"
#include "workload/cdf.h"
#include "workload/generators.h"

namespace rocesim {

// Reads every [[traffic]] table into s.traffic.
void read_traffic(Config& c, Scenario& s);
// Adds one streaming generator per traffic spec to `merged`; CDFs are kept alive in `cdfs`.
void add_traffic_sources(const Scenario& s, MergedSource& merged, std::vector<std::unique_ptr<SizeCdf>>& cdfs);

}  // namespace rocesim
