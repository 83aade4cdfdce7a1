#include "app/progress.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/simulator.h"

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

std::string run_progress_text(Time now, Time duration, double wall_s, uint64_t events) {
  const double frac = duration.ps > 0 ? std::clamp(now.ps / static_cast<double>(duration.ps), 0.0, 1.0) : 0.0;
  const std::string eta = frac > 0 ? format_duration(wall_s / frac - wall_s) : "?";
  return fmt::format("  {:.3f} / {:.3f} ms simulated ({:4.1f} %), {} wall, ETA {}, {:.2f} M events/s",
                     now.ms(), duration.ms(), 100 * frac, format_duration(wall_s), eta,
                     wall_s > 0 ? static_cast<double>(events) / wall_s / 1e6 : 0.0);
}

RunProgress::RunProgress(bool wanted, Time duration, const Simulator& sim)
    : line_(stderr, wanted && is_terminal(stderr)), duration_(duration), sim_(sim) {
  if (const char* fd = std::getenv(kProgressFdEnv); fd && *fd) {
    char* end = nullptr;
    const long v = std::strtol(fd, &end, 10);
    if (*end == 0 && v > 2 && v < 1 << 20 && fcntl(static_cast<int>(v), F_GETFD) != -1)
      report_fd_ = static_cast<int>(v);
  }
}

std::function<void(Time)> RunProgress::callback() {
  if (!line_.active() && report_fd_ < 0) return nullptr;
  return [this](Time now) {
    const auto t = StatusLine::Clock::now();
    if (report_fd_ >= 0 && std::chrono::duration<double>(t - last_report_).count() >= 0.2) {
      last_report_ = t;
      const double frac =
          duration_.ps > 0 ? std::clamp(now.ps / static_cast<double>(duration_.ps), 0.0, 1.0) : 0;
      const std::string msg = fmt::format("{:.6f} {:.3f}\n", frac, line_.elapsed(t));
      if (write(report_fd_, msg.data(), msg.size()) < 0 && errno != EAGAIN && errno != EINTR)
        report_fd_ = -1;  // not a pipe we can write: stop reporting
    }
    if (!line_.due(t)) return;
    line_.draw(run_progress_text(now, duration_, line_.elapsed(t), sim_.events_executed()), t);
  };
}

}  // namespace rocesim
