#include "stats/monitor_spec.h"

namespace rocesim {

std::string monitor_node_name(const TopoSpec& topo, int id) {
  if (id >= 0 && static_cast<size_t>(id) < topo.node_names.size() && !topo.node_names[id].empty())
    return topo.node_names[id];
  return std::to_string(id);
}

}  // namespace rocesim
