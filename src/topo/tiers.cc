// Tiers and bisection of a topology; see tiers.h.
#include "topo/tiers.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace rocesim {
namespace {

int find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

void add_rate(std::vector<double>& rates, double bps) {
  if (std::find(rates.begin(), rates.end(), bps) == rates.end()) {
    rates.push_back(bps);
    std::sort(rates.begin(), rates.end());
  }
}

std::string rates_text(const std::vector<double>& rates) {
  std::string s;
  for (double r : rates) {
    if (!s.empty()) s += ", ";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g Gb/s", r * 1e-9);
    s += buf;
  }
  return s;
}

}  // namespace

std::vector<int> node_tiers(const TopoSpec& topo) {
  const int n = topo.num_nodes;
  std::vector<std::vector<int>> adj(static_cast<size_t>(n));
  for (const LinkSpec& l : topo.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  // Tier of each node: 0 for endpoints and NVSwitches, else the breadth-first distance from them.
  std::vector<int> level(static_cast<size_t>(n), -1);
  std::vector<int> queue;
  for (int i = 0; i < n; ++i) {
    const NodeKind k = topo.kind_of(i);
    if (k != NodeKind::kSwitch) {
      level[i] = 0;
      queue.push_back(i);
    }
  }
  for (size_t q = 0; q < queue.size(); ++q)
    for (int v : adj[queue[q]])
      if (level[v] < 0) {
        level[v] = level[queue[q]] + 1;
        queue.push_back(v);
      }
  return level;
}

TierSummary summarize_tiers(const TopoSpec& topo) {
  const int n = topo.num_nodes;
  const std::vector<int> level = node_tiers(topo);
  TierSummary s;
  const int top = n ? *std::max_element(level.begin(), level.end()) : -1;
  s.tiers.resize(static_cast<size_t>(std::max(top + 1, 0)));
  for (int t = 0; t <= top; ++t) s.tiers[t].level = t;
  for (int i = 0; i < n; ++i) {
    if (level[i] < 0) continue;  // unreachable from any endpoint
    TierSummary::Tier& t = s.tiers[level[i]];
    ++t.nodes;
    ++t.kinds[static_cast<int>(topo.kind_of(i))];
  }
  bool flat = true;  // no link joins two switches of one tier
  for (const LinkSpec& l : topo.links) {
    const int la = level[l.a], lb = level[l.b];
    if (la < 0 || lb < 0) continue;
    if (la == lb) {
      TierSummary::Tier& t = s.tiers[la];
      ++t.inner_links;
      add_rate(t.inner_rates_bps, l.rate.bps);
      if (la > 0) flat = false;
    } else {
      TierSummary::Tier& t = s.tiers[std::min(la, lb)];
      ++t.up_links;
      t.up_bps += l.rate.bps;
      add_rate(t.up_rates_bps, l.rate.bps);
    }
  }
  // The parts of tiers 0..t, one union-find grown tier by tier.
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<std::vector<const LinkSpec*>> inside(s.tiers.size());
  for (const LinkSpec& l : topo.links)
    if (level[l.a] >= 0 && level[l.b] >= 0) inside[std::max(level[l.a], level[l.b])].push_back(&l);
  for (int t = 0; t <= top; ++t) {
    for (const LinkSpec* l : inside[t]) parent[find(parent, l->a)] = find(parent, l->b);
    int parts = 0;
    for (int i = 0; i < n; ++i)
      if (level[i] >= 0 && level[i] <= t && find(parent, i) == i) ++parts;
    TierSummary::Tier& tier = s.tiers[t];
    tier.parts = parts;
    if (!flat || parts < 2 || tier.up_links == 0) continue;
    const double half = tier.up_bps / 2;
    if (s.bisection_tier < 0 || half < s.bisection_bps) {
      s.bisection_bps = half;
      s.bisection_tier = t;
    }
  }
  if (!flat) {
    s.bisection_bps = 0;
    s.bisection_tier = -1;
  }
  return s;
}

std::vector<std::string> describe_tiers(const TierSummary& s) {
  std::vector<std::string> out;
  for (const TierSummary::Tier& t : s.tiers) {
    std::string line = "tier " + std::to_string(t.level) + ": ";
    bool first = true;
    for (int k = 0; k < kNodeKinds; ++k) {
      if (t.kinds[k] == 0) continue;
      if (!first) line += ", ";
      first = false;
      line += std::to_string(t.kinds[k]) + " " + node_kind_name(static_cast<NodeKind>(k));
    }
    if (t.inner_links)
      line += "; " + std::to_string(t.inner_links) + " links inside at " + rates_text(t.inner_rates_bps);
    if (t.up_links) line += "; " + std::to_string(t.up_links) + " links up at " + rates_text(t.up_rates_bps);
    line += "; " + std::to_string(t.parts) + (t.parts == 1 ? " part" : " parts") + " up to here";
    out.push_back(line);
  }
  char buf[160];
  if (s.bisection_tier >= 0)
    std::snprintf(buf, sizeof buf, "bisection: %g Gb/s (half the capacity of tier %d's uplinks)",
                  s.bisection_bps * 1e-9, s.bisection_tier);
  else
    std::snprintf(buf, sizeof buf, "bisection: not defined (not a layered Clos)");
  out.emplace_back(buf);
  return out;
}

}  // namespace rocesim
