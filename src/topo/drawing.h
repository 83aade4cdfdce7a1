// A picture of a topology as the simulator builds it (`rocesim draw`; docs/user-guide.md, "GPU clusters"):
// its nodes in tiers (tiers.h), the links coloured by rate, repeated groups collapsed into boxes.
//
// Groups: the nodes of tiers 0..t fall in parts (tiers.h); a part of tiers 0..t holds the parts of tiers
// 0..t-1 inside it and its own tier-t switches. Tier-0 parts are servers (GPUs with their NVSwitch) or
// hosts; tier-1 parts with one switch are racks, larger ones pods (a pod of a rail fabric holds its servers
// and its rail switches). Planes: the parts of the switches (tiers 1 and up) alone; with two planes, plane
// 1 is drawn below tier 0, mirrored; with more, the planes lie side by side in each row.
//
// Collapsing (DrawOptions): a part holding more than `max_groups` parts shows its first and last and one
// dashed box between them for the others; a row of more than `max_row` switches of one part and plane
// shows its first max_row - 2, a box for the others, and its last. Nothing inside a box is drawn; the links
// to its nodes are drawn to the box, dashed, one line per rate and row.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "topo/topology.h"

namespace rocesim {

struct DrawOptions {
  int max_groups = 3;  // 0: never collapse groups
  int max_row = 8;     // 0: never collapse a row (at least 3 otherwise)
};

struct Drawing {
  // A drawn node, or a box standing for hidden ones.
  struct Item {
    int node = -1;   // the node; -1 for a box
    int tier = 0;    // its row; a box of groups: the highest tier inside
    int plane = -1;  // a switch's plane; -1 in tier 0 and for a box of groups
    NodeKind kind = NodeKind::kHost;
    int hidden_nodes = 0;               // a box: the nodes it stands for
    int hidden_groups = 0;              // a box of groups: how many groups
    std::string label;                  // a box: "28 more servers"; a node: its name
    double x = 0, y = 0, w = 0, h = 0;  // centre and size, px
  };
  // The links between two items at one rate: one line (a box's lines attach at the row of their nodes).
  struct Line {
    int a = 0, b = 0;  // items
    double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
    double rate_bps = 0;
    int64_t links = 0;
    bool to_box = false;
  };
  // A frame around a server (a tier-0 part of several nodes) that is drawn.
  struct Frame {
    double x = 0, y = 0, w = 0, h = 0;  // top-left corner and size
    std::string label;                  // "h0..h7"
  };
  std::vector<Item> items;
  std::vector<Line> lines;
  std::vector<Frame> frames;
  std::vector<int> item_of;  // per node: its item, or the box hiding it
  std::vector<int> tier;     // per node (tiers.h; a node no endpoint reaches: one row above the top)
  std::vector<int> plane;    // per node: -1 in tier 0, else its plane
  std::vector<int> group;    // per node in tier 0: its server (tier-0 part), numbered in id order; else -1
  int tiers = 0, planes = 0, groups = 0;
  int64_t links_inside_boxes = 0;  // links with both ends in one box (not drawn)
  bool collapsed = false;
  int max_groups = 0, max_row = 0;  // the options it was drawn with
  double width = 0, height = 0;
  double left = 0;  // x where the network starts (row labels to the left of it)
  double y_tier0 = 0;
  double row_y(int tier, int plane) const;
};

// Throws std::invalid_argument when a node has no link or an option is out of range.
Drawing draw_topology(const TopoSpec& topo, const DrawOptions& opt = {});

// The drawing as a standalone SVG document: `title` on top, a row label per tier and plane, a legend of
// node kinds and link rates (with counts over the whole network) and the collapsing rule when it applied.
std::string drawing_svg(const TopoSpec& topo, const Drawing& d, const std::string& title);

// The network and its drawing as JSON: every node (id, name, kind, tier, plane, server, item) and link (a,
// b, rate_gbps, delay_us), then the drawing's items and lines.
std::string drawing_json(const TopoSpec& topo, const Drawing& d, const std::string& title);

}  // namespace rocesim
