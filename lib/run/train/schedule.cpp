#include "run/train/schedule.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/error.h"

namespace legalnet::run {
namespace {

// One "AT:STEPS" of --replan, or nothing where it is not two counts.
bool parse_entry(const std::string& entry, Replan& r) {
  const size_t colon = entry.find(':');
  if (colon == std::string::npos) return false;
  const char* begin = entry.data();
  const char* end = begin + entry.size();
  auto [after_at, at_error] = std::from_chars(begin, begin + colon, r.at);
  auto [after_steps, steps_error] = std::from_chars(begin + colon + 1, end, r.steps);
  return colon > 0 && at_error == std::errc() && after_at == begin + colon && steps_error == std::errc() &&
         after_steps == end && colon + 1 < entry.size();
}

}  // namespace

std::vector<Replan> parse_replans(const std::string& text) {
  std::vector<Replan> replans;
  if (text.empty()) return replans;
  size_t begin = 0;
  for (;;) {
    const size_t comma = text.find(',', begin);
    const std::string entry = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    Replan r;
    if (!parse_entry(entry, r))
      throw Error(fmt::format("--replan '{}': '{}' is not AT:STEPS (two counts, as options.json's replan has them)",
                              text, entry));
    if (r.at < 1 || r.steps <= r.at)
      throw Error(fmt::format("--replan '{}': '{}' must be at step 1 or later and end after it", text, entry));
    if (!replans.empty() && r.at <= replans.back().at)
      throw Error(fmt::format("--replan '{}': '{}' is not after the re-plan before it", text, entry));
    replans.push_back(r);
    if (comma == std::string::npos) return replans;
    begin = comma + 1;
  }
}

std::string replans_text(const std::vector<Replan>& replans) {
  std::string text;
  for (const Replan& r : replans) text += fmt::format("{}{}:{}", text.empty() ? "" : ",", r.at, r.steps);
  return text;
}

void check_replans(const Schedule& schedule, int64_t most_steps) {
  int64_t end = schedule.first_steps;
  for (const Replan& r : schedule.replans) {
    if (r.at >= end) throw Error(fmt::format("--replan {}:{}: the run ends at step {} before it", r.at, r.steps, end));
    if (r.steps > most_steps)
      throw Error(fmt::format("--replan {}:{}: past the {} steps of --epochs", r.at, r.steps, most_steps));
    end = r.steps;
  }
}

double Schedule::warmup_steps() const { return std::max(1.0, warmup * double(first_steps)); }

int64_t Schedule::steps_at(int64_t step) const {
  int64_t end = first_steps;
  for (const Replan& r : replans)
    if (step >= r.at) end = r.steps;
  return end;
}

double Schedule::progress(int64_t step) const {
  const double w = warmup_steps();
  return std::min(1.0, std::max(0.0, double(step) - w) / std::max(1.0, double(steps_at(step)) - w));
}

double Schedule::peak_at(int64_t step) const {
  if (!peak_for) return peak;
  const Replan* in_force = nullptr;
  for (const Replan& r : replans)
    if (step >= r.at) in_force = &r;
  return in_force ? peak_for(in_force->steps) : peak;
}

double Schedule::lr(int64_t step) const {
  const double top = peak_at(step);
  const double w = warmup_steps();
  if (double(step) < w) return top * (double(step) + 1) / w;
  const double floor = top * min_lr_ratio;
  return floor + (top - floor) * 0.5 * (1 + std::cos(M_PI * progress(step)));
}

double default_lr(nn::ModelKind kind, int64_t steps, int64_t batch_rows, nn::Mixing mixing) {
  const nn::ModelSpec& row = nn::model_spec(kind);
  if (row.lr_steps == 0) return row.lr;
  const double rows = double(std::max<int64_t>(batch_rows, 1));
  const double rate = nn::lr_share(mixing) * row.lr * std::sqrt(rows / double(LR_BATCH));
  const double reference_steps = double(steps) * rows / double(LR_BATCH);  // the rows read, as steps of LR_BATCH
  if (steps <= 0 || reference_steps >= double(row.lr_steps)) return rate;
  return rate * std::min(SHORT_SCHEDULE_MAX, std::pow(double(row.lr_steps) / reference_steps, SHORT_SCHEDULE_POWER));
}

}  // namespace legalnet::run
