// Live progress on stderr: for a run, a self-overwriting line on a terminal (throttled to about five
// updates per second, shown once the run has taken a second) or, without a terminal (a batch job's log),
// a plain line every --progress-every seconds; both give simulated time, the share of the work done, wall
// time, events/s and an ETA (ProgressMeter). Also the helpers a sweep uses for its own line.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/time.h"

namespace rocesim {

class Network;
struct Scenario;

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

// Where a run stands at one moment.
struct ProgressSample {
  double wall_s = 0;  // since the run began
  Time sim;           // simulated time reached
  uint64_t events = 0;
  double delivered_bytes = 0;  // payload accepted by receivers so far
};

// The ETA of a run, from the recent rate of delivered payload and the payload still to deliver
// (docs/user-guide.md, "Progress and ETA"):
//  - the work is the payload of the flows that start before the end of the run, known by start time
//    (WorkEstimate::bytes_by_start, app/estimate.h);
//  - the payload still to deliver is that of the flows that start after the current simulated time, plus,
//    when arrivals end before the last tenth of the run (the network drains), the backlog (started but not
//    delivered). When arrivals go on to the end, the backlog is taken as carried past the end;
//  - the rate is the payload delivered per wall second over the last `window_s` (60 s): each packet
//    delivered costs about the same events whether the network is filling or full, so this rate stays
//    steady where simulated time per wall second falls as queues build (the cause of ETAs that grew 4x
//    within a minute).
// Without a work estimate (MPI runs), or with nothing left to deliver by it, the ETA is the simulated time
// left over the recent rate of simulated time.
class ProgressMeter {
 public:
  explicit ProgressMeter(Time duration, double window_s = 60);
  // The work; without it the ETA comes from simulated time.
  void set_work(std::vector<double> bytes_by_start, Time last_start);
  bool has_work() const { return !cumulative_.empty(); }
  // Records `s` (kept at most one per second, over the window).
  void add(const ProgressSample& s);

  struct Estimate {
    double time_fraction = 0;   // simulated time / duration
    double work_fraction = -1;  // delivered / (delivered + still to deliver); -1: no work estimate
    double events_per_s = 0;    // over the window
    double eta_s = -1;          // -1: unknown
    bool eta_from_work = false;
  };
  Estimate estimate(const ProgressSample& now) const;

 private:
  double arrived_by(Time t) const;  // payload of the flows that start before t

  Time duration_;
  double window_s_;
  std::deque<ProgressSample> samples_;  // the oldest is the newest at least window_s old (or the start)
  std::vector<double> cumulative_;      // payload started by the end of each bin
  bool drains_ = false;
};

// The progress line of one run: "1.234 / 5.000 ms simulated (24.7 %), work 31.0 %, 3.1 s wall, ETA 9 s,
// 8.95 M events/s" (without "work" when there is no work estimate).
std::string run_progress_text(const ProgressSample& now, Time duration, const ProgressMeter::Estimate& e);

// The environment variable through which `rocesim sweep` asks its runs for machine-readable progress: a file
// descriptor that receives lines "FRACTION WALL_SECONDS\n" (simulated fraction of the duration, 0..1) at most
// five times per second, whatever -q and the terminal.
inline constexpr const char* kProgressFdEnv = "ROCESIM_PROGRESS_FD";

// Progress of a single run, fed by the simulator's progress callback (on the coordinator, between windows,
// so that it reads the partitions' counters while no thread writes them).
class RunProgress {
 public:
  // When `wanted` (not -q): on a terminal the status line; otherwise a line "progress: ..." every
  // `every_s` wall seconds to `batch_out` (stderr; 0 = none). The work estimate is made when the first
  // line is due (short runs never pay for it), not across MPI ranks. Reports go to $ROCESIM_PROGRESS_FD
  // when that is set to an open descriptor.
  RunProgress(bool wanted, double every_s, const Scenario& s, Network& net, std::FILE* batch_out = stderr);
  ~RunProgress();
  // For Network::run: empty (no callback at all) when inactive.
  std::function<void(Time)> callback();
  // Erases the line.
  void finish() { line_.clear(); }
  int lines_printed() const { return batch_lines_; }

 private:
  void on_progress(Time now);
  ProgressSample sample(Time now, StatusLine::Clock::time_point t) const;

  StatusLine line_;
  std::FILE* batch_out_;
  double every_s_;
  const Scenario& s_;
  Network& net_;
  ProgressMeter meter_;
  bool work_tried_ = false;
  int batch_lines_ = 0;
  double next_batch_s_;
  double next_sample_s_ = 0;
  int report_fd_ = -1;
  StatusLine::Clock::time_point last_report_{};
};

}  // namespace rocesim
