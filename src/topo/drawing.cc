// A picture of a topology; see drawing.h.
#include "topo/drawing.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "topo/tiers.h"

namespace rocesim {
namespace {

// Geometry, px.
constexpr double kGpuW = 10, kGpuStep = 13, kServerPad = 5, kServerGap = 8;
constexpr double kSwW = 36, kSwH = 16, kSwStep = 44;
constexpr double kBoxW = 64, kGroupGap = 20;
constexpr double kRowGap = 90, kBelowGap = 80;  // between tiers; tier 0 to plane 1's first row (mirrored)
constexpr double kNvBarDy = 17, kNvBarH = 6;    // an NVSwitch bar under its server's GPUs
constexpr double kNicBarDy = 13;                // a shared NIC's bar above its GPUs (kNvBarH high)
constexpr double kTop = 64, kLeft = 190, kMargin = 16;

int uf_find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

struct RowEntry {
  int node = -1;            // -1: a box
  std::vector<int> hidden;  // a box: its nodes
};

struct Part {
  int level = 0;
  std::vector<int> own;                     // nodes of tier `level` in it, by plane then id
  std::vector<int> kids;                    // parts of level - 1 inside it, by first node id
  std::vector<int> seq;                     // the kids drawn, in order; -1 the box of the others
  std::vector<std::vector<RowEntry>> rows;  // own nodes: level 0: endpoints, NVSwitches, NICs; above: per row
  double width = 0;
};

class Builder {
 public:
  Builder(const TopoSpec& topo, const DrawOptions& opt, Drawing& d) : topo_(topo), opt_(opt), d_(d) {}

  void run() {
    const int n = topo_.num_nodes;
    if (n == 0) throw std::invalid_argument("draw: the topology has no node");
    std::vector<int> degree(static_cast<size_t>(n), 0);
    for (const LinkSpec& l : topo_.links) ++degree[l.a], ++degree[l.b];
    for (int i = 0; i < n; ++i)
      if (degree[i] == 0)
        throw std::invalid_argument(fmt::format("draw: node {} ({}) has no link", i, name(i)));
    d_.tier = node_tiers(topo_);
    int top = *std::max_element(d_.tier.begin(), d_.tier.end());
    const bool unreached = std::count(d_.tier.begin(), d_.tier.end(), -1) > 0;
    if (unreached) {
      ++top;
      for (int& t : d_.tier)
        if (t < 0) t = top;
    }
    d_.tiers = top + 1;
    find_planes();
    mirror_ = d_.planes == 2;
    find_parts();
    d_.item_of.assign(static_cast<size_t>(n), -1);
    for (size_t p = 0; p < parts_.size(); ++p)
      if (parts_[p].level == 0) measure(static_cast<int>(p));  // level 0 first: widths bottom-up
    for (int level = 1; level <= max_level_; ++level)
      for (size_t p = 0; p < parts_.size(); ++p)
        if (parts_[p].level == level) measure(static_cast<int>(p));
    // Rows above tier 0 (plane 0 and, unless mirrored, the others) and below it (plane 1, mirrored).
    d_.left = kLeft;
    d_.y_tier0 = kTop + 20 + (d_.tiers - 1) * kRowGap;
    d_.height =
        d_.y_tier0 + kNvBarDy + kNvBarH + 16 + (mirror_ ? kBelowGap + (d_.tiers - 2) * kRowGap + 16 : 0);
    y_tier0_ = d_.y_tier0;
    place(root_, kLeft);
    d_.width = kLeft + parts_[root_].width + kMargin;
    make_lines();
  }

  bool mirror() const { return mirror_; }

 private:
  std::string name(int i) const {
    return i < static_cast<int>(topo_.node_names.size()) && !topo_.node_names[i].empty() ? topo_.node_names[i]
                                                                                         : std::to_string(i);
  }

  // Planes: the parts of the switches of tiers 1 and up, with the links among them, numbered by their
  // first node.
  void find_planes() {
    const int n = topo_.num_nodes;
    std::vector<int> parent(static_cast<size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    for (const LinkSpec& l : topo_.links)
      if (d_.tier[l.a] > 0 && d_.tier[l.b] > 0) parent[uf_find(parent, l.a)] = uf_find(parent, l.b);
    std::map<int, int> plane_of_root;
    d_.plane.assign(static_cast<size_t>(n), -1);
    for (int i = 0; i < n; ++i) {
      if (d_.tier[i] == 0) continue;
      const int r = uf_find(parent, i);
      auto [it, fresh] = plane_of_root.emplace(r, static_cast<int>(plane_of_root.size()));
      d_.plane[i] = it->second;
    }
    d_.planes = static_cast<int>(plane_of_root.size());
  }

  // The parts of tiers 0..t for every t, as a tree (Part::kids), and its root.
  void find_parts() {
    const int n = topo_.num_nodes;
    std::vector<int> parent(static_cast<size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    std::vector<std::vector<const LinkSpec*>> at(static_cast<size_t>(d_.tiers));
    for (const LinkSpec& l : topo_.links) at[std::max(d_.tier[l.a], d_.tier[l.b])].push_back(&l);
    std::vector<int> part_below(static_cast<size_t>(n), -1);  // per node: its part of the previous level
    d_.group.assign(static_cast<size_t>(n), -1);
    for (int t = 0; t < d_.tiers; ++t) {
      for (const LinkSpec* l : at[t]) parent[uf_find(parent, l->a)] = uf_find(parent, l->b);
      std::map<int, int> part_of_root;
      std::vector<int> part_here(static_cast<size_t>(n), -1);
      std::vector<char> taken(parts_.size(), 0);
      for (int i = 0; i < n; ++i) {
        if (d_.tier[i] > t) continue;
        const int r = uf_find(parent, i);
        auto [it, fresh] = part_of_root.emplace(r, static_cast<int>(parts_.size()));
        if (fresh) {
          parts_.emplace_back();
          parts_.back().level = t;
          taken.push_back(0);
        }
        Part& p = parts_[it->second];
        part_here[i] = it->second;
        if (d_.tier[i] == t) {
          p.own.push_back(i);
        } else if (!taken[part_below[i]]) {
          taken[part_below[i]] = 1;
          p.kids.push_back(part_below[i]);
        }
      }
      if (t == 0)
        for (int i = 0; i < n; ++i)
          if (part_here[i] >= 0) d_.group[i] = part_here[i];  // parts of level 0 are numbered 0.. in id order
      part_below = std::move(part_here);
    }
    d_.groups = 0;
    for (const Part& p : parts_) d_.groups += p.level == 0;
    max_level_ = d_.tiers - 1;
    std::vector<int> tops;
    for (size_t p = 0; p < parts_.size(); ++p)
      if (parts_[p].level == max_level_) tops.push_back(static_cast<int>(p));
    if (tops.size() == 1) {
      root_ = tops[0];
    } else {  // several networks: one root above them
      parts_.emplace_back();
      parts_.back().level = ++max_level_;
      parts_.back().kids = tops;
      root_ = static_cast<int>(parts_.size()) - 1;
    }
    for (Part& p : parts_)
      std::stable_sort(p.own.begin(), p.own.end(), [&](int a, int b) { return d_.plane[a] < d_.plane[b]; });
  }

  std::vector<RowEntry> make_row(const std::vector<int>& nodes) {
    std::vector<RowEntry> row;
    const int n = static_cast<int>(nodes.size());
    if (opt_.max_row > 0 && n > opt_.max_row) {
      d_.collapsed = true;
      for (int i = 0; i < opt_.max_row - 2; ++i) row.push_back({nodes[i], {}});
      RowEntry box;
      box.hidden.assign(nodes.begin() + (opt_.max_row - 2), nodes.end() - 1);
      row.push_back(std::move(box));
      row.push_back({nodes.back(), {}});
    } else {
      for (int v : nodes) row.push_back({v, {}});
    }
    return row;
  }

  static double row_width(const std::vector<RowEntry>& row, double step) {
    return static_cast<double>(row.size()) * step;
  }

  void measure(int pi) {
    Part& p = parts_[pi];
    if (p.level == 0) {
      std::vector<int> ends, nvs, nics;
      for (int v : p.own) {
        const NodeKind k = topo_.kind_of(v);
        (k == NodeKind::kNvSwitch ? nvs : k == NodeKind::kNic ? nics : ends).push_back(v);
      }
      p.rows.push_back(make_row(ends));
      p.rows.emplace_back();
      for (int v : nvs) p.rows[1].push_back({v, {}});
      p.rows.emplace_back();
      for (int v : nics) p.rows[2].push_back({v, {}});
      const bool framed = p.own.size() > 1;
      p.width = row_width(p.rows[0], kGpuStep) + (framed ? 2 * kServerPad : 0);
      return;
    }
    // Own switches: one row per plane when mirrored (plane 0 above, plane 1 below), else one row.
    std::map<int, std::vector<int>> by_row;
    for (int v : p.own) by_row[row_key(v)].push_back(v);
    double w = 0;
    for (auto& [key, nodes] : by_row) {
      p.rows.push_back(make_row(nodes));
      w = std::max(w, row_width(p.rows.back(), kSwStep));
    }
    const int k = static_cast<int>(p.kids.size());
    if (opt_.max_groups > 0 && k > opt_.max_groups && k > 2) {  // a box hides at least one
      d_.collapsed = true;
      p.seq = {p.kids.front(), -1, p.kids.back()};
    } else {
      p.seq = p.kids;
    }
    double kw = 0;
    for (size_t i = 0; i < p.seq.size(); ++i) {
      if (i) kw += gap_between(p);
      kw += p.seq[i] < 0 ? kBoxW : parts_[p.seq[i]].width;
    }
    p.width = std::max(w, kw);
  }

  double gap_between(const Part& p) const {
    if (p.level != 1) return kGroupGap;
    for (int kid : p.kids)
      if (parts_[kid].own.size() > 1) return kServerGap;
    return 0;  // hosts alone side by side
  }

  int row_key(int v) const { return mirror_ && d_.plane[v] == 1 ? 1 : 0; }

  double row_y(int tier, int plane) const { return d_.row_y(tier, plane); }

  int add_item(Drawing::Item it) {
    d_.items.push_back(std::move(it));
    return static_cast<int>(d_.items.size()) - 1;
  }

  void add_node(int v, double x, double y, double w, double h) {
    Drawing::Item it;
    it.node = v;
    it.tier = d_.tier[v];
    it.plane = d_.plane[v];
    it.kind = topo_.kind_of(v);
    it.label = name(v);
    it.x = x, it.y = y, it.w = w, it.h = h;
    d_.item_of[v] = add_item(std::move(it));
  }

  void add_row_box(const RowEntry& e, double x, double y, double w, double h) {
    Drawing::Item it;
    const int v0 = e.hidden.front();
    it.tier = d_.tier[v0];
    it.plane = d_.plane[v0];
    it.kind = topo_.kind_of(v0);
    it.hidden_nodes = static_cast<int>(e.hidden.size());
    it.label = fmt::format("{} more", e.hidden.size());
    it.x = x, it.y = y, it.w = w, it.h = h;
    const int id = add_item(std::move(it));
    for (int v : e.hidden) d_.item_of[v] = id;
  }

  void collect(int pi, std::vector<int>& nodes) const {
    const Part& p = parts_[pi];
    nodes.insert(nodes.end(), p.own.begin(), p.own.end());
    for (int k : p.kids) collect(k, nodes);
  }

  std::string group_word(int pi, int count) const {
    const Part& p = parts_[pi];
    const bool one = count == 1;
    if (p.level == 0) {
      if (p.own.size() > 1) return one ? "server" : "servers";
      return one ? "host" : "hosts";
    }
    if (p.level == 1 && p.own.size() == 1) return one ? "rack" : "racks";
    return one ? "pod" : "pods";
  }

  void place(int pi, double x0) {
    Part& p = parts_[pi];
    if (p.level == 0) {
      const bool framed = p.own.size() > 1;
      const double pad = framed ? kServerPad : 0;
      const auto& ends = p.rows[0];
      for (size_t i = 0; i < ends.size(); ++i) {
        const double x = x0 + pad + (static_cast<double>(i) + 0.5) * kGpuStep;
        if (ends[i].node >= 0)
          add_node(ends[i].node, x, y_tier0_, kGpuW, kGpuW);
        else
          add_row_box(ends[i], x, y_tier0_, kGpuW, kGpuW);
      }
      const auto& nvs = p.rows[1];
      const double inner = p.width - 2 * pad;
      for (size_t i = 0; i < nvs.size(); ++i) {
        const double w = inner / static_cast<double>(nvs.size());
        add_node(nvs[i].node, x0 + pad + (static_cast<double>(i) + 0.5) * w, y_tier0_ + kNvBarDy, w - 2,
                 kNvBarH);
      }
      // Shared NICs: bars above the GPUs, side by side in id order (the builders give NIC k the k-th run of
      // a server's GPUs).
      const auto& nics = p.rows[2];
      for (size_t i = 0; i < nics.size(); ++i) {
        const double w = inner / static_cast<double>(nics.size());
        add_node(nics[i].node, x0 + pad + (static_cast<double>(i) + 0.5) * w, y_tier0_ - kNicBarDy, w - 2,
                 kNvBarH);
      }
      if (framed) {
        Drawing::Frame f;
        f.x = x0 + 1;
        const double above = nics.empty() ? 0 : kNicBarDy + kNvBarH / 2 - kGpuW / 2;
        f.y = y_tier0_ - kGpuW / 2 - 4 - above;
        f.w = p.width - 2;
        f.h = above + kGpuW + 4 + (nvs.empty() ? 4 : kNvBarDy + kNvBarH / 2 - kGpuW / 2 + 4);
        std::vector<int> nodes = ends_of(p);
        f.label = nodes.empty() ? "" : name(nodes.front()) + ".." + name(nodes.back());
        d_.frames.push_back(std::move(f));
      }
      return;
    }
    // Kids, centred.
    double kw = 0;
    for (size_t i = 0; i < p.seq.size(); ++i) {
      if (i) kw += gap_between(p);
      kw += p.seq[i] < 0 ? kBoxW : parts_[p.seq[i]].width;
    }
    double x = x0 + (p.width - kw) / 2;
    for (size_t i = 0; i < p.seq.size(); ++i) {
      if (i) x += gap_between(p);
      if (p.seq[i] >= 0) {
        place(p.seq[i], x);
        x += parts_[p.seq[i]].width;
        continue;
      }
      // The box of the hidden kids: from tier 0 (or the lowest row below it) up to their top tier.
      std::vector<int> nodes;
      const int hidden = static_cast<int>(p.kids.size()) - 2;
      for (size_t k = 1; k + 1 < p.kids.size(); ++k) collect(p.kids[k], nodes);
      const int level = p.level - 1;
      const double top = (level == 0 ? y_tier0_ : row_y(level, 0)) - kSwH / 2 - 6;
      const double bottom = mirror_ && level > 0 ? row_y(level, 1) + kSwH / 2 + 6 : y_tier0_ + kNvBarDy + 6;
      Drawing::Item it;
      it.tier = level;
      it.kind = NodeKind::kSwitch;
      it.hidden_nodes = static_cast<int>(nodes.size());
      it.hidden_groups = hidden;
      it.label = fmt::format("{} more {}", hidden, group_word(p.kids[1], hidden));
      it.x = x + kBoxW / 2, it.y = (top + bottom) / 2, it.w = kBoxW - 6, it.h = bottom - top;
      const int id = add_item(std::move(it));
      for (int v : nodes) d_.item_of[v] = id;
      x += kBoxW;
    }
    // Own rows, spread over the part's width.
    for (const auto& row : p.rows) {
      const double step = p.width / static_cast<double>(row.size());
      for (size_t i = 0; i < row.size(); ++i) {
        const double cx = x0 + (static_cast<double>(i) + 0.5) * step;
        const int v = row[i].node >= 0 ? row[i].node : row[i].hidden.front();
        const double y = row_y(d_.tier[v], d_.plane[v]);
        if (row[i].node >= 0)
          add_node(v, cx, y, kSwW, kSwH);
        else
          add_row_box(row[i], cx, y, kSwW, kSwH);
      }
    }
  }

  std::vector<int> ends_of(const Part& p) const {
    std::vector<int> v;
    for (int i : p.own)
      if (topo_.kind_of(i) != NodeKind::kNvSwitch && topo_.kind_of(i) != NodeKind::kNic) v.push_back(i);
    return v;
  }

  void make_lines() {
    // Key: the two items (lower first), the row of each end inside a box of groups, the rate.
    using Key = std::tuple<int, int, int, int, double>;
    std::map<Key, Drawing::Line> lines;
    for (const LinkSpec& l : topo_.links) {
      int a = l.a, b = l.b;
      int ia = d_.item_of[a], ib = d_.item_of[b];
      if (ia == ib) {
        ++d_.links_inside_boxes;
        continue;
      }
      if (ia > ib) std::swap(a, b), std::swap(ia, ib);
      const auto row_in_box = [&](int v, int item) {
        return d_.items[item].hidden_groups > 0 ? d_.tier[v] * 16 + d_.plane[v] + 1 : -1;
      };
      const Key key{ia, row_in_box(a, ia), ib, row_in_box(b, ib), l.rate.bps};
      auto [it, fresh] = lines.emplace(key, Drawing::Line{});
      Drawing::Line& line = it->second;
      ++line.links;
      if (!fresh) continue;
      line.a = ia, line.b = ib, line.rate_bps = l.rate.bps;
      line.to_box = d_.items[ia].node < 0 || d_.items[ib].node < 0;
      end_point(a, ia, b, ib, line.x1, line.y1);
      end_point(b, ib, a, ia, line.x2, line.y2);
    }
    for (auto& [key, line] : lines) d_.lines.push_back(line);
    std::stable_sort(d_.lines.begin(), d_.lines.end(), [](const Drawing::Line& x, const Drawing::Line& y) {
      return std::tie(y.to_box, x.rate_bps) < std::tie(x.to_box, y.rate_bps);
    });
  }

  // Where a line leaves item `ia` (holding node a) towards item `ib`: an NVSwitch bar under the GPU (a NIC
  // bar above it; towards a leaf, the bar's centre), a box
  // of groups at the row of the node inside it, else the item's centre.
  void end_point(int a, int ia, int /*b*/, int ib, double& x, double& y) const {
    const Drawing::Item& it = d_.items[ia];
    x = it.x, y = it.y;
    if (it.node >= 0 && it.kind == NodeKind::kNvSwitch) x = d_.items[ib].x;
    if (it.node >= 0 && it.kind == NodeKind::kNic && d_.items[ib].tier == 0) x = d_.items[ib].x;
    if (it.hidden_groups > 0) y = row_y(d_.tier[a], d_.plane[a]);
  }

  const TopoSpec& topo_;
  const DrawOptions& opt_;
  Drawing& d_;
  std::vector<Part> parts_;
  int root_ = 0, max_level_ = 0;
  bool mirror_ = false;
  double y_tier0_ = 0;
};

std::string svg_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

std::string rate_text(double bps) { return fmt::format("{:g} Gb/s", bps * 1e-9); }

const char* kRateColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                              "#9467bd", "#8c564b", "#e377c2", "#17becf"};
const char* kTierColours[] = {"#4a7ebb", "#8e5ea2", "#d9822b", "#a05050", "#666666"};

const char* node_fill(NodeKind k, int tier) {
  switch (k) {
    case NodeKind::kGpu:
      return "#76b900";
    case NodeKind::kNvSwitch:
      return "#3d6b00";
    case NodeKind::kNic:
      return "#b07d00";
    case NodeKind::kHost:
      return "#5b7083";
    case NodeKind::kSwitch:
      break;
  }
  return kTierColours[std::clamp(tier - 1, 0, 4)];
}

const char* kind_word(NodeKind k, bool plural) {
  switch (k) {
    case NodeKind::kGpu:
      return plural ? "GPUs" : "GPU";
    case NodeKind::kNvSwitch:
      return plural ? "NVSwitches" : "NVSwitch";
    case NodeKind::kNic:
      return plural ? "NICs" : "NIC";
    case NodeKind::kHost:
      return plural ? "hosts" : "host";
    case NodeKind::kSwitch:
      break;
  }
  return plural ? "switches" : "switch";
}

std::string count_text(int64_t n, NodeKind k) { return with_commas(n) + " " + kind_word(k, n != 1); }

// "1,024 GPUs, 128 NVSwitches, 64 switches": endpoints first.
std::string counts_text(const std::map<NodeKind, int64_t>& kinds) {
  std::string s;
  for (NodeKind k :
       {NodeKind::kGpu, NodeKind::kHost, NodeKind::kNvSwitch, NodeKind::kNic, NodeKind::kSwitch}) {
    const auto it = kinds.find(k);
    if (it != kinds.end()) s += (s.empty() ? "" : ", ") + count_text(it->second, k);
  }
  return s;
}

}  // namespace

double Drawing::row_y(int t, int p) const {
  if (t == 0) return y_tier0;
  if (planes == 2 && p == 1) return y_tier0 + kBelowGap + (t - 1) * kRowGap;
  return y_tier0 - t * kRowGap;
}

Drawing draw_topology(const TopoSpec& topo, const DrawOptions& opt) {
  if (opt.max_groups < 0) throw std::invalid_argument("draw: max_groups must not be negative");
  if (opt.max_row != 0 && opt.max_row < 3)
    throw std::invalid_argument("draw: max_row must be 0 (no collapsing) or at least 3");
  Drawing d;
  d.max_groups = opt.max_groups;
  d.max_row = opt.max_row;
  Builder(topo, opt, d).run();
  return d;
}

std::string drawing_svg(const TopoSpec& topo, const Drawing& d, const std::string& title) {
  // Rates of every link, ascending, with their counts; kinds per (tier, plane).
  std::map<double, int64_t> rates;
  for (const LinkSpec& l : topo.links) ++rates[l.rate.bps];
  std::map<double, int> colour;
  for (const auto& [r, n] : rates) colour.emplace(r, static_cast<int>(colour.size()) % 8);
  std::map<std::pair<int, int>, std::map<NodeKind, int64_t>> row_kinds;
  std::map<NodeKind, int64_t> kinds;
  for (int i = 0; i < topo.num_nodes; ++i) {
    const int plane = d.planes == 2 ? std::max(d.plane[i], 0) : 0;
    ++row_kinds[{d.tier[i], d.tier[i] == 0 ? 0 : plane}][topo.kind_of(i)];
    ++kinds[topo.kind_of(i)];
  }
  const double legend_y = d.height + 8;
  const bool rule = d.collapsed;
  const double height = legend_y + 44 + (rule ? 32 : 0);
  const double width = std::max(d.width, 760.0);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} "
      "{1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", kMargin,
                   svg_escape(title));
  const std::string counts = counts_text(kinds);
  s += fmt::format("<text x=\"{}\" y=\"40\" font-size=\"11\" fill=\"#444\">{}; {} links; {} tiers{}</text>\n",
                   kMargin, svg_escape(counts), with_commas(static_cast<int64_t>(topo.links.size())), d.tiers,
                   d.planes > 1 ? fmt::format(", {} planes", d.planes) : "");
  // Row labels.
  for (const auto& [row, ks] : row_kinds) {
    std::string text = fmt::format("tier {}", row.first);
    if (d.planes == 2 && row.first > 0) text += fmt::format(", plane {}", row.second);
    const std::string what = counts_text(ks);
    const double y = d.row_y(row.first, row.second);
    s += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\">{}</text>\n<text x=\"{}\" y=\"{:.1f}\" "
        "font-size=\"10\" fill=\"#666\">{}</text>\n",
        kMargin, y - 2, svg_escape(text), kMargin, y + 11, svg_escape(what));
  }
  // Server frames.
  for (const Drawing::Frame& f : d.frames)
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"3\" fill=\"#f3f7ec\" "
        "stroke=\"#9ab57a\" stroke-width=\"0.8\"><title>server {}</title></rect>\n",
        f.x, f.y, f.w, f.h, svg_escape(f.label));
  // Lines: to boxes (dashed) first, then the others, slow rates under fast ones.
  for (const Drawing::Line& l : d.lines)
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}>"
        "<title>{} link{} at {}</title></line>\n",
        l.x1, l.y1, l.x2, l.y2, kRateColours[colour[l.rate_bps]], l.to_box ? "0.8" : "1.1",
        l.to_box ? " stroke-dasharray=\"4 3\"" : "", with_commas(l.links), l.links == 1 ? "" : "s",
        rate_text(l.rate_bps));
  // Items.
  for (const Drawing::Item& it : d.items) {
    const double x = it.x - it.w / 2, y = it.y - it.h / 2;
    if (it.node < 0) {
      const bool group = it.hidden_groups > 0;
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"3\" fill=\"#f6f6f6\" "
          "stroke=\"#888\" stroke-dasharray=\"3 2\"><title>{} ({} nodes)</title></rect>\n",
          x, y, it.w, it.h, svg_escape(it.label), with_commas(it.hidden_nodes));
      if (group) {
        // The label inside the box, at tier 0, in two lines.
        const auto space = it.label.rfind(' ');
        s += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#333\">{}"
            "<tspan x=\"{:.1f}\" dy=\"11\">{}</tspan></text>\n",
            it.x, d.y_tier0 - 2, svg_escape(it.label.substr(0, space)), it.x,
            svg_escape(it.label.substr(space + 1)));
      } else if (it.tier > 0) {
        s += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"7\" text-anchor=\"middle\" "
            "fill=\"#333\">{}</text>\n",
            it.x, it.y + 3, svg_escape(it.label));
      } else {
        s += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"7\" text-anchor=\"middle\" "
            "fill=\"#333\">{}</text>\n",
            it.x, it.y - it.h / 2 - 2, svg_escape(it.label));
      }
      continue;
    }
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"{}\" fill=\"{}\"><title>{} "
        "({}, tier {}{})</title></rect>\n",
        x, y, it.w, it.h, it.tier > 0 ? 2 : 1, node_fill(it.kind, it.tier), svg_escape(it.label),
        kind_word(it.kind, false), it.tier,
        it.plane >= 0 && d.planes > 1 ? fmt::format(", plane {}", it.plane) : "");
    if (it.tier > 0)
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"8\" text-anchor=\"middle\" fill=\"white\">{}</text>\n",
          it.x, it.y + 3, svg_escape(it.label));
  }
  // Legend: node kinds, link rates (counts over the whole network), the rule.
  double x = kMargin;
  double y = legend_y + 10;
  for (NodeKind k : {NodeKind::kGpu, NodeKind::kHost, NodeKind::kNvSwitch, NodeKind::kNic}) {
    if (!kinds.count(k)) continue;
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" "
        "font-size=\"11\">{}</text>\n",
        x, y - 9, node_fill(k, 0), x + 14, y, kind_word(k, true));
    x += 30 + 7.0 * static_cast<double>(std::string(kind_word(k, true)).size());
  }
  for (int t = 1; t < d.tiers; ++t) {
    const std::string text = fmt::format("tier {} switch", t);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" rx=\"2\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
        x, y - 9, node_fill(NodeKind::kSwitch, t), x + 18, y, text);
    x += 34 + 6.0 * static_cast<double>(text.size());
  }
  s += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"18\" height=\"10\" rx=\"2\" fill=\"#f6f6f6\" stroke=\"#888\" "
      "stroke-dasharray=\"3 2\"/><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">nodes not drawn</text>\n",
      x, y - 9, x + 22, y);
  x = kMargin;
  y += 18;
  for (const auto& [r, n] : rates) {
    const std::string text = fmt::format("{}: {} link{}", rate_text(r), with_commas(n), n == 1 ? "" : "s");
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"/><text "
        "x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
        x, y - 4, x + 18, y - 4, kRateColours[colour[r]], x + 22, y, svg_escape(text));
    x += 40 + 6.2 * static_cast<double>(text.size());
  }
  s += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#555\" "
      "stroke-dasharray=\"4 "
      "3\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"11\">links into a box</text>\n",
      x, y - 4, x + 18, x + 22, y);
  if (rule) {
    y += 18;
    s += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#555\">Collapsed: a group (pod, rack, server) "
        "holding more than {} groups shows its first and last; a row of more than {} switches its first {} "
        "and "
        "last;</text>\n<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#555\">a dashed box stands for "
        "the others. One line per pair of drawn items and rate (hover for its link count).</text>\n",
        kMargin, y, d.max_groups, d.max_row, d.max_row - 2, kMargin, y + 13);
  }
  s += "</svg>\n";
  return s;
}

std::string drawing_json(const TopoSpec& topo, const Drawing& d, const std::string& title) {
  using nlohmann::json;
  json j;
  j["title"] = title;
  j["topology"] = topo.name;
  j["tiers"] = d.tiers;
  j["planes"] = d.planes;
  j["servers"] = d.groups;
  json nodes = json::array();
  for (int i = 0; i < topo.num_nodes; ++i)
    nodes.push_back({{"id", i},
                     {"name", i < static_cast<int>(topo.node_names.size()) ? topo.node_names[i] : ""},
                     {"kind", node_kind_name(topo.kind_of(i))},
                     {"tier", d.tier[i]},
                     {"plane", d.plane[i]},
                     {"server", d.group[i]},
                     {"item", d.item_of[i]}});
  j["nodes"] = std::move(nodes);
  json links = json::array();
  for (const LinkSpec& l : topo.links)
    links.push_back({{"a", l.a}, {"b", l.b}, {"rate_gbps", l.rate.bps * 1e-9}, {"delay_us", l.delay.us()}});
  j["links"] = std::move(links);
  json items = json::array();
  for (const Drawing::Item& it : d.items)
    items.push_back({{"node", it.node},
                     {"label", it.label},
                     {"kind", node_kind_name(it.kind)},
                     {"tier", it.tier},
                     {"plane", it.plane},
                     {"hidden_nodes", it.hidden_nodes},
                     {"hidden_groups", it.hidden_groups},
                     {"x", it.x},
                     {"y", it.y},
                     {"w", it.w},
                     {"h", it.h}});
  json lines = json::array();
  for (const Drawing::Line& l : d.lines)
    lines.push_back({{"a", l.a},
                     {"b", l.b},
                     {"rate_gbps", l.rate_bps * 1e-9},
                     {"links", l.links},
                     {"to_box", l.to_box},
                     {"x1", l.x1},
                     {"y1", l.y1},
                     {"x2", l.x2},
                     {"y2", l.y2}});
  j["drawing"] = {{"width", d.width},          {"height", d.height},
                  {"collapsed", d.collapsed},  {"links_inside_boxes", d.links_inside_boxes},
                  {"items", std::move(items)}, {"lines", std::move(lines)}};
  return j.dump(1) + "\n";
}

}  // namespace rocesim
