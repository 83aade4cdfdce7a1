// A topology's tiers and bisection, as `rocesim validate` prints them (docs/user-guide.md, "GPU clusters").
//
// Tier 0 holds the endpoints: hosts, GPUs, and the NVSwitches (a server's NVLink domain belongs to its
// server). A switch's tier is its distance in links from tier 0 (leaves 1, spines 2, cores 3).
//
// Bisection: for each tier t, take the nodes of tiers 0..t with the links among them; where they fall in two
// or more parts (servers for t = 0, pods above), a cut between two halves of the parts crosses half the
// capacity of the links from those tiers up to tier t + 1. The bisection is the smallest such half: exact
// for the layered Clos fabrics the builders make (parts alike and even in number), an upper bound for
// others. It is left out (0) when a link joins two switches of one tier (a dumbbell's bottleneck) or when
// no tier parts.
#pragma once
#include <string>
#include <vector>

#include "core/time.h"
#include "topo/topology.h"

namespace rocesim {

struct TierSummary {
  struct Tier {
    int level = 0;
    int nodes = 0;
    int parts = 0;  // the parts tiers 0..level fall in
    // Per kind of node in the tier (NodeKind order): how many.
    int kinds[kNodeKinds] = {};
    // Links from this tier to the next, their count and capacity, and the rates they have (ascending).
    int64_t up_links = 0;
    double up_bps = 0;
    std::vector<double> up_rates_bps;
    // Links inside the tier (NVLinks in tier 0), their count and rates.
    int64_t inner_links = 0;
    std::vector<double> inner_rates_bps;
  };
  std::vector<Tier> tiers;
  double bisection_bps = 0;  // 0: not defined (see above)
  int bisection_tier = -1;   // the tier whose uplinks give it
};

TierSummary summarize_tiers(const TopoSpec& topo);

// Each node's tier (as above), -1 for a node no endpoint reaches.
std::vector<int> node_tiers(const TopoSpec& topo);

// The summary as lines of text (no trailing newline), e.g.
//   "tier 0: 32 gpu, 4 nvswitch; 32 links inside at 3600 Gb/s; 32 links up at 400 Gb/s"
std::vector<std::string> describe_tiers(const TierSummary& s);

}  // namespace rocesim
