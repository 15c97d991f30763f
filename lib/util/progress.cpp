#include "util/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "util/console.h"

namespace legalnet {

bool stderr_is_terminal() { return isatty(fileno(stderr)) != 0; }

Progress::Progress(std::string unit, uint64_t total, bool enabled)
    : unit_(std::move(unit)), total_(total), enabled_(enabled) {}

Progress::~Progress() { finish(); }

double Progress::elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::update(uint64_t done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  drawn_ = true;
  const double elapsed = elapsed_seconds();
  const double rate = elapsed > 0 ? double(done) / elapsed : 0.0;
  std::string line;
  if (total_ > 0) {
    const double eta = rate > 0 ? double(total_ - std::min(done, total_)) / rate : 0.0;
    line = fmt::format("{} / {} {} ({:.1f}%)  {} {}/s  ETA {}", done, total_, unit_,
                       100.0 * double(done) / double(total_), human_count(rate), unit_, human_duration(eta));
  } else if (fraction_ > 0) {
    const double eta = elapsed * (1 - std::min(fraction_, 1.0)) / fraction_;
    line = fmt::format("{} {} ({:.1f}%)  {} {}/s  ETA {}", done, unit_, 100 * fraction_, human_count(rate), unit_,
                       human_duration(eta));
  } else {
    line = fmt::format("{} {}  {} {}/s  {}", done, unit_, human_count(rate), unit_, human_duration(elapsed));
  }
  say("\r\033[K{}", line);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || !drawn_) return;
  say("\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

std::string human_count(double value) {
  const char* suffix[] = {"", " k", " M", " G"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 3) {
    value /= 1000;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f}", value);
  return fmt::format(fmt::runtime(value < 10 ? "{:.2f}{}" : value < 100 ? "{:.1f}{}" : "{:.0f}{}"), value, suffix[i]);
}

std::string human_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const long s = std::lround(seconds);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace legalnet
