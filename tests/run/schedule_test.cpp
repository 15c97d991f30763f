// run/train/schedule: the rate along a run, its re-plans (--replan), and the checks a
// --time-budget run makes of its pace (run/train/time_budget.h) that make them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "run/train/schedule.h"
#include "run/train/time_budget.h"
#include "util/error.h"

namespace legalnet::run {
namespace {

Schedule cosine(int64_t steps, std::vector<Replan> replans = {}) {
  return {.peak = 1e-2,
          .warmup = 0.02,
          .min_lr_ratio = 0.02,
          .first_steps = steps,
          .replans = std::move(replans),
          .peak_for = {}};
}

// The schedule every run without a re-plan has had: a linear warm-up over 2% of the steps, then
// a cosine from the peak to 2% of it at the last step.
TEST(Schedule, WarmsUpThenDecaysAlongACosineToItsFloor) {
  const Schedule s = cosine(1000);
  EXPECT_DOUBLE_EQ(s.warmup_steps(), 20);
  EXPECT_DOUBLE_EQ(s.lr(0), 1e-2 / 20);
  EXPECT_DOUBLE_EQ(s.lr(19), 1e-2);
  EXPECT_DOUBLE_EQ(s.lr(20), 1e-2);
  EXPECT_NEAR(s.lr(510), 1e-2 * (0.02 + 0.98 * 0.5), 1e-12);  // half-way through the cosine
  EXPECT_NEAR(s.lr(1000), 2e-4, 1e-15);
  for (int64_t step = 21; step <= 1000; ++step) EXPECT_LT(s.lr(step), s.lr(step - 1)) << step;
}

// From a re-plan on each step takes the rate a run planned for the new length has there (with
// the first plan's warm-up), sooner or later than planned, and the floor at the new end.
TEST(Schedule, AfterAReplanEachStepTakesTheRateOfARunPlannedForTheNewLength) {
  for (const int64_t end : {700, 1400}) {
    const Schedule plain = cosine(1000), moved = cosine(1000, {{400, end}});
    Schedule planned = cosine(end);
    planned.warmup = 20.0 / double(end);  // the first plan's 20 warm-up steps
    EXPECT_EQ(moved.steps(), end);
    EXPECT_EQ(moved.steps_at(399), 1000);
    EXPECT_EQ(moved.steps_at(400), end);
    for (int64_t step = 0; step < 400; ++step) EXPECT_EQ(moved.lr(step), plain.lr(step)) << step;
    for (int64_t step = 400; step <= end; ++step) EXPECT_NEAR(moved.lr(step), planned.lr(step), 1e-15) << step;
    EXPECT_DOUBLE_EQ(moved.progress(end), 1) << end;
    EXPECT_NEAR(moved.lr(end), 2e-4, 1e-15) << end;
  }
  // A second re-plan takes over from the first.
  const Schedule once = cosine(1000, {{400, 700}}), twice = cosine(1000, {{400, 700}, {500, 600}});
  for (int64_t step = 0; step < 500; ++step) EXPECT_EQ(twice.lr(step), once.lr(step)) << step;
  EXPECT_DOUBLE_EQ(twice.progress(500), (500.0 - 20) / (600 - 20));
  EXPECT_DOUBLE_EQ(twice.progress(600), 1);
  // One within the warm-up leaves it as planned.
  const Schedule early = cosine(1000, {{10, 500}});
  EXPECT_EQ(early.lr(15), cosine(1000).lr(15));
  EXPECT_DOUBLE_EQ(early.progress(20), 0);
  EXPECT_DOUBLE_EQ(early.progress(260), 0.5);
}

// With the peak left to the architecture (peak_for), a re-plan takes the peak of a plan of its
// length too: the first plan's steps keep `peak`, each later step the rate a run planned for the
// new length with the new length's peak has there; a given --lr (no peak_for) keeps its peak.
TEST(Schedule, AReplanTakesTheArchitecturesPeakForTheNewLength) {
  auto rule = [](int64_t steps) { return 10.0 / double(steps); };  // 1e-2 for 1,000 steps
  Schedule moved = cosine(1000, {{400, 4000}});
  moved.peak_for = rule;
  Schedule planned = cosine(4000);
  planned.peak = rule(4000);
  planned.warmup = 20.0 / 4000;  // the first plan's 20 warm-up steps
  const Schedule fixed = cosine(1000, {{400, 4000}});
  for (int64_t step = 0; step < 400; ++step) EXPECT_EQ(moved.lr(step), fixed.lr(step)) << step;
  EXPECT_DOUBLE_EQ(moved.peak_at(399), 1e-2);
  EXPECT_DOUBLE_EQ(moved.peak_at(400), 2.5e-3);
  for (int64_t step = 400; step <= 4000; step += 7) EXPECT_NEAR(moved.lr(step), planned.lr(step), 1e-15) << step;
  EXPECT_NEAR(moved.lr(4000), 2.5e-3 * 0.02, 1e-15);
  EXPECT_NEAR(fixed.lr(4000), 1e-2 * 0.02, 1e-15);
  // A second re-plan takes its own length's peak.
  moved.replans.push_back({1000, 2000});
  EXPECT_DOUBLE_EQ(moved.peak_at(999), 2.5e-3);
  EXPECT_DOUBLE_EQ(moved.peak_at(1000), 5e-3);
}

TEST(Schedule, ReplansAreReadAndWrittenAsOptionsJsonHasThem) {
  EXPECT_TRUE(parse_replans("").empty());
  const std::vector<Replan> r = parse_replans("339:10950,678:11200");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (Replan{339, 10950}));
  EXPECT_EQ(r[1], (Replan{678, 11200}));
  EXPECT_EQ(replans_text(r), "339:10950,678:11200");
  EXPECT_EQ(replans_text({}), "");
  for (const char* bad : {"12", ":5", "5:", "a:9", "5:9x", "5:9,", "5:9,,7:12", "-1:5", "0:5", "9:9", "9:5",
                          "10:20,10:30", "10:20,5:30", " 5:9", "5:9 "}) {
    try {
      parse_replans(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("--replan '") + bad + "'", 0), 0u) << e.what();
    }
  }
}

TEST(Schedule, AReplanMustComeBeforeTheEndItMovesAndWithinTheEpochs) {
  check_replans(cosine(1000, {{400, 700}, {600, 2000}}), 2000);
  EXPECT_THROW(check_replans(cosine(1000, {{1000, 1200}}), 2000), Error);            // the run has ended
  EXPECT_THROW(check_replans(cosine(1000, {{400, 700}, {700, 900}}), 2000), Error);  // the first re-plan's end
  try {
    check_replans(cosine(1000, {{400, 2001}}), 2000);
    ADD_FAILURE() << "past the epochs";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--replan 400:2001: past the 2000 steps of --epochs");
  }
}

// The pace check: the steps that fit 95% of the budget at the pace of the steps, within the
// options' steps, and at least one more; and a re-plan only where they differ from the plan by
// more than 3% of it, before its last 5%.
TEST(TimeBudget, APaceCheckMovesTheEndOnlyWhereTheBudgetIsMissedByMoreThanItsTolerance) {
  EXPECT_EQ(budget_check_interval(13582), 679);
  EXPECT_EQ(budget_check_interval(10), 1);
  EXPECT_EQ(steps_at_pace(1200, 40, 400, 0.1, 25000), 400 + 11000);  // 1140 - 40 s left, 10 steps a second
  EXPECT_EQ(steps_at_pace(1200, 100, 1000, 0.1, 5000), 5000);        // the options' steps cap it
  EXPECT_EQ(steps_at_pace(1200, 1300, 1000, 0.1, 5000), 1001);       // the budget is spent: one more step
  EXPECT_EQ(steps_at_pace(1200, 0, 0, 0, 5000), 1);
  const Schedule plan = cosine(13582);
  EXPECT_EQ(replan_for_pace(plan, 1358, 10163), (Replan{1358, 10163}));  // 25% slower than probed
  EXPECT_EQ(replan_for_pace(plan, 1358, 14000), (Replan{1358, 14000}));  // 3.1% faster
  EXPECT_FALSE(replan_for_pace(plan, 1358, 13582 - 407));                // within 3%
  EXPECT_FALSE(replan_for_pace(plan, 1358, 13582 + 407));
  EXPECT_FALSE(replan_for_pace(plan, 12903, 12000));  // the last 5%: the end stays
  EXPECT_EQ(replan_for_pace(plan, 12902, 12903), (Replan{12902, 12903}));
  // A re-plan's end is the plan the next check compares with.
  EXPECT_FALSE(replan_for_pace(cosine(13582, {{1358, 10163}}), 2037, 10400));
}

}  // namespace
}  // namespace legalnet::run
