// The back-off mark (backoff_mark.h) on in-memory records: a cell is marked when any trial on
// either side backed off, unrecorded (null) and zero counts never mark, and the footnote counts
// each flagged trial once however many cells it is behind.
#include "reports/backoff_mark.h"

#include <gtest/gtest.h>

namespace accel::reports {
namespace {

results::TrialRecord trial(std::optional<int64_t> backoffs) {
  results::TrialRecord t;
  t.backoffs_in_region = backoffs;
  return t;
}

TEST(BackoffMark, MarksCellsWhoseTrialsBackedOff) {
  const auto clean = trial(0), unknown = trial(std::nullopt), hit = trial(2), hit2 = trial(1);
  EXPECT_FALSE(backed_off(clean));
  EXPECT_FALSE(backed_off(unknown));
  EXPECT_TRUE(backed_off(hit));
  BackoffMarks marks;
  Cell a("1.10 ± 0.10", {{"mean", 1.1}});
  marks.mark(a, {&clean, &unknown});
  EXPECT_EQ(a.text, "1.10 ± 0.10");
  EXPECT_EQ(marks.footnote(), "");
  Cell b("2.00× [1.8, 2.2]", {{"ratio", 2.0}});
  marks.mark(b, {&clean}, {&hit, &hit2});  // the candidate side backed off
  EXPECT_EQ(b.text, "2.00× [1.8, 2.2] †");
  EXPECT_EQ(b.data["backoff_trials"], 2);
  Cell c("0.550", 0.55);
  marks.mark(c, {&hit}, {});  // the baseline side alone also marks
  EXPECT_EQ(c.text, "0.550 †");
  EXPECT_EQ(c.data, 0.55) << "a number's JSON stays a number";
  Cell empty("—", nullptr);
  marks.mark(empty, {&hit});
  EXPECT_EQ(empty.text, "—") << "no figure, no mark";
  EXPECT_EQ(marks.flagged(), 2u);
  EXPECT_EQ(marks.footnote().rfind("† 2 trial(s) ", 0), 0u) << marks.footnote();
  EXPECT_NE(marks.footnote().find("ran part of a timed region on one thread (pool back-off)"),
            std::string::npos);
}

}  // namespace
}  // namespace accel::reports
