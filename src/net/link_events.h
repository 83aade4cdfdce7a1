// Link events of a run ([[events]] in a scenario; docs/models.md section A3b): at a simulated time a link
// goes down or up, changes rate, or gets a drop probability. A failed link loses what it carries (counted
// in NetStats::link_down_drops) and its PFC state is cleared; the routes are recomputed
// SwitchSettings::failure_detection after a link goes down or up. Events apply between windows of the
// event loop, at exactly their time (a BarrierTask), so results do not depend on the thread count.
#pragma once
#include <string>
#include <vector>

#include "core/time.h"

namespace rocesim {

struct LinkEvent {
  enum class Action { kDown, kUp, kRate, kLoss };
  Time at;
  int a = 0, b = 0;  // the link's two nodes (every link between them, when there are parallel links)
  Action action = Action::kDown;
  Rate rate;        // kRate: the new rate of both directions
  double loss = 0;  // kLoss: the drop probability of each packet on the wire, both directions
};

const char* to_string(LinkEvent::Action a);

// What happened, for summary.json and the run table: the events applied and the route recomputations.
struct LinkLogEntry {
  Time at;
  std::string what;  // "down 3-7", "up 3-7", "rate 3-7 50 Gb/s", "loss 3-7 0.001", "routes recomputed"
};

}  // namespace rocesim
