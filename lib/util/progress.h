// A one-line progress display (done/total, rate, ETA) on a terminal; silent in logs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace legalnet {

// True when stderr is a terminal: progress lines are drawn only then.
bool stderr_is_terminal();

class Progress {
 public:
  // `unit` names what is counted ("games"); total 0 means unknown (no ETA).
  Progress(std::string unit, uint64_t total, bool enabled);
  ~Progress();
  // Redraws at most five times a second.
  void update(uint64_t done);
  // For work whose total count is unknown: the fraction done (of input bytes, say) gives the ETA.
  void set_fraction(double fraction) { fraction_ = fraction; }
  // For work whose total changes on the way (a run whose end a time budget moved).
  void set_total(uint64_t total) { total_ = total; }
  // Clears the line.
  void finish();
  double elapsed_seconds() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::string unit_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  double fraction_ = -1;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

// "1.23 M", "45.6 k": a rate or count with three significant digits.
std::string human_count(double value);
// "1h02m", "3m05s", "12.3s".
std::string human_duration(double seconds);

}  // namespace legalnet
