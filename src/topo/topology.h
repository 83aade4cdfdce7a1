// A topology as plain data: nodes (hosts or switches) and full-duplex links.
// Builders and file readers produce it; net/ turns it into live nodes and ports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace rocesim {

struct LinkSpec {
  int a = 0;                // node id of one end
  int b = 0;                // node id of the other end
  Rate rate;                // same rate both directions
  Time delay;               // one-way propagation delay
  double error_rate = 0.0;  // per-packet loss probability (ns-3 files carry it; 0 = lossless wire)
  bool long_haul = false;   // an inter-datacenter link: its switch ports size headroom to the link's BDP
                            // and may use their own PFC thresholds (SwitchSettings long_haul_*)
};

// What a node is, beyond host or switch: a GPU is a host (an endpoint that sends and receives: a rank), an
// NVSwitch is a switch (a server's NVLink domain), a NIC is a switch too (a NIC that GPUs of a server share,
// behind its PCIe switch: docs/models.md A14). Builders of GPU clusters and topology files that name
// them set the kinds; they never change how a node works (docs/models.md A14), but that a NIC marks no ECN.
enum class NodeKind : uint8_t { kHost, kSwitch, kGpu, kNvSwitch, kNic };
inline constexpr int kNodeKinds = 5;
const char* node_kind_name(NodeKind k);

struct TopoSpec {
  std::string name;  // e.g. "fat_tree_3tier", or the file path it was read from
  int num_nodes = 0;
  std::vector<bool> is_switch;  // size num_nodes
  std::vector<LinkSpec> links;
  // Optional labels for scenarios and plots: a name per node ("H1", "S3", "tor0", ...); empty = default.
  std::vector<std::string> node_names;
  // Optional grouping of hosts (e.g. rack / ToR index, datacenter index); empty = no groups.
  std::vector<int> host_group;  // size num_nodes when present, -1 for switches
  // Optional pods: per node, the pod of a switch below a shared top layer (and of its hosts), -1 for the
  // others (cores); empty = none. Lets the route table be stored per pod (net/routes.h); never changes a
  // route.
  std::vector<int> pod;  // size num_nodes when present
  // Optional kinds (NodeKind), size num_nodes when present; empty = hosts and switches.
  std::vector<NodeKind> kind;

  NodeKind kind_of(int id) const {
    if (!kind.empty()) return kind[static_cast<size_t>(id)];
    return is_switch[static_cast<size_t>(id)] ? NodeKind::kSwitch : NodeKind::kHost;
  }

  std::vector<int> hosts() const {
    std::vector<int> h;
    for (int i = 0; i < num_nodes; ++i)
      if (!is_switch[i]) h.push_back(i);
    return h;
  }
  int num_hosts() const {
    int n = 0;
    for (int i = 0; i < num_nodes; ++i) n += is_switch[i] ? 0 : 1;
    return n;
  }
};

}  // namespace rocesim
