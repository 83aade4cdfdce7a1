#include "app/progress.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "app/estimate.h"
#include "config/scenario.h"
#include "net/network.h"

namespace rocesim {

bool is_terminal(std::FILE* f) { return f && isatty(fileno(f)); }

std::string format_duration(double s) {
  if (!(s >= 0) || std::isinf(s)) return "?";
  if (s < 10) return fmt::format("{:.1f} s", s);
  const auto t = static_cast<int64_t>(std::llround(s));
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} m {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} m", t / 3600, (t % 3600) / 60);
}

namespace {

// Columns of the terminal behind `f` (0 when unknown).
size_t terminal_width(std::FILE* f) {
  struct winsize ws {};
  if (f && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0) return ws.ws_col;
  return 0;
}

}  // namespace

StatusLine::StatusLine(std::FILE* out, bool active, double min_interval_s, double delay_s)
    : out_(out),
      active_(active && out),
      min_interval_(min_interval_s),
      delay_(delay_s),
      start_(Clock::now()) {}

StatusLine::~StatusLine() { clear(); }

double StatusLine::elapsed(Clock::time_point now) const {
  return std::chrono::duration<double>(now - start_).count();
}

bool StatusLine::due(Clock::time_point now) const {
  if (!active_ || elapsed(now) < delay_) return false;
  return drawn_width_ == 0 || std::chrono::duration<double>(now - last_draw_).count() >= min_interval_;
}

void StatusLine::draw(const std::string& text, Clock::time_point now, bool force) {
  if (!active_ || elapsed(now) < delay_) return;
  if (!force && !due(now)) return;
  std::string t = text;
  // A line longer than the terminal wraps, and "\r" could no longer overwrite it.
  const size_t width = terminal_width(out_);
  if (width > 1 && t.size() > width - 1) t.resize(width - 1);
  const size_t pad = drawn_width_ > t.size() ? drawn_width_ - t.size() : 0;
  fmt::print(out_, "\r{}{:{}}", t, "", pad);
  std::fflush(out_);
  drawn_width_ = std::max<size_t>(t.size(), 1);
  last_draw_ = now;
}

void StatusLine::clear() {
  if (!active_ || drawn_width_ == 0) return;
  fmt::print(out_, "\r{:{}}\r", "", drawn_width_);
  std::fflush(out_);
  drawn_width_ = 0;
}

void StatusLine::print_above(const std::string& line) {
  clear();
  fmt::print(out_ ? out_ : stderr, "{}\n", line);
  std::fflush(out_ ? out_ : stderr);
}

ProgressMeter::ProgressMeter(Time duration, double window_s) : duration_(duration), window_s_(window_s) {
  samples_.push_back(ProgressSample{});
}

void ProgressMeter::set_work(std::vector<double> bytes_by_start, Time last_start) {
  cumulative_ = std::move(bytes_by_start);
  for (size_t i = 1; i < cumulative_.size(); ++i) cumulative_[i] += cumulative_[i - 1];
  if (!cumulative_.empty() && cumulative_.back() <= 0) cumulative_.clear();
  // Arrivals that end before the last tenth of the run leave it time to drain its backlog.
  drains_ = last_start.ps < duration_.ps - duration_.ps / 10;
}

double ProgressMeter::arrived_by(Time t) const {
  if (cumulative_.empty() || duration_.ps <= 0) return 0;
  const double x = std::clamp(static_cast<double>(t.ps) / static_cast<double>(duration_.ps), 0.0, 1.0) *
                   static_cast<double>(cumulative_.size());
  const auto i = std::min(static_cast<size_t>(x), cumulative_.size() - 1);
  const double before = i > 0 ? cumulative_[i - 1] : 0.0;
  return before + (cumulative_[i] - before) * std::min(1.0, x - static_cast<double>(i));
}

void ProgressMeter::add(const ProgressSample& s) {
  if (s.wall_s - samples_.back().wall_s < 1.0) return;
  samples_.push_back(s);
  while (samples_.size() > 2 && s.wall_s - samples_[1].wall_s >= window_s_) samples_.pop_front();
}

ProgressMeter::Estimate ProgressMeter::estimate(const ProgressSample& now) const {
  Estimate e;
  e.time_fraction =
      duration_.ps > 0 ? std::clamp(now.sim.ps / static_cast<double>(duration_.ps), 0.0, 1.0) : 0.0;
  // The rates over the window: from the newest sample at least window_s old (or the start).
  const ProgressSample* from = &samples_.front();
  for (const ProgressSample& x : samples_)
    if (now.wall_s - x.wall_s >= window_s_) from = &x;
  const double dt = now.wall_s - from->wall_s;
  if (dt <= 0) return e;
  e.events_per_s = static_cast<double>(now.events - std::min(now.events, from->events)) / dt;
  const double bytes_rate = (now.delivered_bytes - from->delivered_bytes) / dt;
  const double sim_rate = static_cast<double>((now.sim - from->sim).ps) / dt;
  if (has_work()) {
    const double arrived = arrived_by(now.sim);
    const double backlog = std::max(0.0, arrived - now.delivered_bytes);
    const double to_go = (cumulative_.back() - arrived) + (drains_ ? backlog : 0.0);
    e.work_fraction =
        now.delivered_bytes + to_go > 0 ? now.delivered_bytes / (now.delivered_bytes + to_go) : 0;
    if (bytes_rate > 0 && to_go > 0) {
      e.eta_s = to_go / bytes_rate;
      e.eta_from_work = true;
      return e;
    }
  }
  if (sim_rate > 0) e.eta_s = static_cast<double>((duration_ - std::min(now.sim, duration_)).ps) / sim_rate;
  return e;
}

std::string run_progress_text(const ProgressSample& now, Time duration, const ProgressMeter::Estimate& e) {
  return fmt::format("{:.3f} / {:.3f} ms simulated ({:4.1f} %){}, {} wall, ETA {}, {:.2f} M events/s",
                     now.sim.ms(), duration.ms(), 100 * e.time_fraction,
                     e.work_fraction >= 0 ? fmt::format(", work {:4.1f} %", 100 * e.work_fraction) : "",
                     format_duration(now.wall_s), format_duration(e.eta_s), e.events_per_s / 1e6);
}

RunProgress::RunProgress(bool wanted, double every_s, const Scenario& s, Network& net, std::FILE* batch_out)
    : line_(stderr, wanted && is_terminal(stderr)),
      batch_out_(wanted && every_s > 0 && !is_terminal(stderr) ? batch_out : nullptr),
      every_s_(every_s),
      s_(s),
      net_(net),
      meter_(s.duration),
      next_batch_s_(every_s) {
  if (const char* fd = std::getenv(kProgressFdEnv); fd && *fd) {
    char* end = nullptr;
    const long v = std::strtol(fd, &end, 10);
    if (*end == 0 && v > 2 && v < 1 << 20 && fcntl(static_cast<int>(v), F_GETFD) != -1)
      report_fd_ = static_cast<int>(v);
  }
}

RunProgress::~RunProgress() = default;

ProgressSample RunProgress::sample(Time now, StatusLine::Clock::time_point t) const {
  return {line_.elapsed(t), now, net_.sim().events_executed(),
          static_cast<double>(net_.stats().bytes_delivered)};
}

std::function<void(Time)> RunProgress::callback() {
  if (!line_.active() && !batch_out_ && report_fd_ < 0) return nullptr;
  return [this](Time now) { on_progress(now); };
}

void RunProgress::on_progress(Time now) {
  const auto t = StatusLine::Clock::now();
  const double wall = line_.elapsed(t);
  if (report_fd_ >= 0 && std::chrono::duration<double>(t - last_report_).count() >= 0.2) {
    last_report_ = t;
    const double frac =
        s_.duration.ps > 0 ? std::clamp(now.ps / static_cast<double>(s_.duration.ps), 0.0, 1.0) : 0;
    const std::string msg = fmt::format("{:.6f} {:.3f}\n", frac, wall);
    if (write(report_fd_, msg.data(), msg.size()) < 0 && errno != EAGAIN && errno != EINTR)
      report_fd_ = -1;  // not a pipe we can write: stop reporting
  }
  const bool draw = line_.due(t);
  const bool print = batch_out_ && wall >= next_batch_s_;
  if (!draw && !print && wall < next_sample_s_) return;
  if ((draw || print) && !work_tried_) {
    // The first line is due: the run is long enough to pay for the work estimate (app/estimate.h). Not
    // across ranks: this rank's delivered payload is only its own share.
    work_tried_ = true;
    if (!net_.ranks()) {
      EstimateOptions o;
      o.max_bfs_visits = 0;  // the payload by start time is all the ETA needs
      o.time_bins = 1024;
      try {
        WorkEstimate w = estimate_work(s_, o);
        meter_.set_work(std::move(w.bytes_by_start), w.last_start);
      } catch (const std::exception&) {
        // A bad flow file: the run reports it when it gets there; the ETA comes from simulated time.
      }
    }
  }
  const ProgressSample now_s = sample(now, t);
  meter_.add(now_s);
  next_sample_s_ = wall + 1;
  if (!draw && !print) return;
  const std::string text = run_progress_text(now_s, s_.duration, meter_.estimate(now_s));
  if (draw) line_.draw("  " + text, t);
  if (print) {
    fmt::print(batch_out_, "progress: {}\n", text);
    std::fflush(batch_out_);
    ++batch_lines_;
    while (next_batch_s_ <= wall) next_batch_s_ += every_s_;
  }
}

}  // namespace rocesim
