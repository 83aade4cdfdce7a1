// Live progress lines on stderr: one for a run (simulated time, percent, wall time, ETA, events/s) and
// the helpers a sweep uses for its own line. Quiet unless stderr is a terminal; lines are throttled to
// about five updates per second and only appear once a run has taken a second.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "core/time.h"

namespace rocesim {

class Simulator;

// True when `f` is a terminal (progress lines are drawn only there).
bool is_terminal(std::FILE* f);

// "42 s", "3 m 05 s", "2 h 07 m": a wall-clock duration for humans.
std::string format_duration(double seconds);

// One self-overwriting status line ("\r...", cleared at the end). Inactive lines print nothing.
class StatusLine {
 public:
  using Clock = std::chrono::steady_clock;

  // `out` receives the line when `active`; `min_interval` throttles redraws; nothing is drawn before
  // `delay` has passed since construction (short runs stay silent).
  StatusLine(std::FILE* out, bool active, double min_interval_s = 0.2, double delay_s = 1.0);
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool active() const { return active_; }
  // True when a redraw is due at `now` (active, past the delay, and the interval since the last draw).
  bool due(Clock::time_point now) const;
  // Draws `text` when due (or always with `force`, still only when active and past the delay).
  void draw(const std::string& text, Clock::time_point now = Clock::now(), bool force = false);
  // Erases the line if anything was drawn.
  void clear();
  // Prints a permanent line (erasing the status line first; it is redrawn on the next draw).
  void print_above(const std::string& line);
  double elapsed(Clock::time_point now = Clock::now()) const;

 private:
  std::FILE* out_;
  bool active_;
  double min_interval_;
  double delay_;
  Clock::time_point start_;
  Clock::time_point last_draw_{};
  size_t drawn_width_ = 0;  // characters on screen (0: nothing drawn)
};

// The progress line of one run: "1.234 / 5.000 ms simulated (24.7 %), 3.1 s wall, ETA 9 s, 8.95 M events/s".
std::string run_progress_text(Time now, Time duration, double wall_s, uint64_t events);

// The environment variable through which `rocesim sweep` asks its runs for machine-readable progress: a file
// descriptor that receives lines "FRACTION WALL_SECONDS\n" (simulated fraction of the duration, 0..1) at most
// five times per second, whatever -q and the terminal.
inline constexpr const char* kProgressFdEnv = "ROCESIM_PROGRESS_FD";

// Progress of a single run, fed by the simulator's progress callback.
class RunProgress {
 public:
  // The line is drawn when `wanted` (not -q) and stderr is a terminal; reports go to $ROCESIM_PROGRESS_FD
  // when that is set to an open descriptor.
  RunProgress(bool wanted, Time duration, const Simulator& sim);
  // For Network::run: empty (no callback at all) when inactive.
  std::function<void(Time)> callback();
  // Erases the line.
  void finish() { line_.clear(); }

 private:
  StatusLine line_;
  Time duration_;
  const Simulator& sim_;
  int report_fd_ = -1;
  StatusLine::Clock::time_point last_report_{};
};

}  // namespace rocesim
