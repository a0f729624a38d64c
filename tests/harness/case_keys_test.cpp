// Tests of case keys and the resume rule (harness/case_keys.h): a timing case is done only under
// the conditions it was measured in, a quality-only case under any, rows keyed before v7 count as
// timings of unknown conditions, and --reuse-timings accepts timings from any conditions.
#include "harness/case_keys.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

const TimingConditions kOld{"1111111111111111111111111111111111111111", "CPU A"};
const TimingConditions kNew{"2222222222222222222222222222222222222222", "CPU A"};
const std::string kBase(64, 'b');

TEST(CaseKeys, TimingKeysDependOnCodeStateAndCpuButQualityKeysDoNot) {
  const ResumeRule rule({}, kNew, {}, false);
  EXPECT_EQ(rule.key(kBase, false), kBase);
  EXPECT_NE(rule.key(kBase, true), kBase);
  EXPECT_EQ(rule.key(kBase, true), timing_case_key(kBase, kNew));
  EXPECT_NE(timing_case_key(kBase, kOld), timing_case_key(kBase, kNew));
  EXPECT_NE(timing_case_key(kBase, {kNew.code_state, "CPU B"}), timing_case_key(kBase, kNew));
  EXPECT_NE(timing_case_key(kBase, {kNew.code_state + "-dirty-0123456789ab", "CPU A"}),
            timing_case_key(kBase, kNew));
}

TEST(CaseKeys, ATimingCaseFinishedUnderOtherConditionsIsReMeasuredAndSaysWhy) {
  const std::set<std::string> done{timing_case_key(kBase, kOld)};
  const ResumeState st = ResumeRule(done, kNew, {kOld}, false).state(kBase, true);
  EXPECT_FALSE(st.done);
  EXPECT_EQ(st.remeasure_why, "commit 111111111111 -> 222222222222");
  const TimingConditions other_cpu{kOld.code_state, "CPU B"};
  EXPECT_EQ(ResumeRule(done, other_cpu, {kOld}, false).state(kBase, true).remeasure_why,
            "CPU 'CPU A' -> 'CPU B'");
  EXPECT_TRUE(ResumeRule(done, kNew, {kOld}, true).state(kBase, true).done) << "--reuse-timings";
  EXPECT_TRUE(ResumeRule(done, kOld, {kOld}, false).state(kBase, true).done) << "same conditions";
  const ResumeState fresh = ResumeRule({}, kNew, {kOld}, false).state(kBase, true);
  EXPECT_FALSE(fresh.done);
  EXPECT_EQ(fresh.remeasure_why, "") << "never measured: plain to-do, nothing re-measured";
}

TEST(CaseKeys, DirtyStatesKeepTheirDiffDigestInMessages) {
  const TimingConditions dirty{kOld.code_state + "-dirty-0123456789ab", "CPU A"};
  const std::set<std::string> done{timing_case_key(kBase, dirty)};
  EXPECT_EQ(ResumeRule(done, kOld, {dirty}, false).state(kBase, true).remeasure_why,
            "commit 111111111111-dirty-0123456789ab -> 111111111111");
}

// Rows stored before v7 are keyed by the base key: reused as scores, re-measured as timings.
TEST(CaseKeys, RowsKeyedBeforeConditionsAreReusedOnlyAsScoresOrWithReuseTimings) {
  const std::set<std::string> done{kBase};
  EXPECT_TRUE(ResumeRule(done, kNew, {}, false).state(kBase, false).done);
  const ResumeState timing = ResumeRule(done, kNew, {}, false).state(kBase, true);
  EXPECT_FALSE(timing.done);
  EXPECT_NE(timing.remeasure_why.find("before keys named the commit"), std::string::npos);
  EXPECT_TRUE(ResumeRule(done, kNew, {}, true).state(kBase, true).done);
}

TEST(CaseKeys, QualityOnlyCasesIgnoreConditions) {
  const std::set<std::string> done{kBase};
  EXPECT_TRUE(ResumeRule(done, kOld, {kNew}, false).state(kBase, false).done);
  EXPECT_TRUE(ResumeRule(done, kNew, {kOld}, false).state(kBase, false).done);
}

}  // namespace
}  // namespace accel
