// merge(): stores from several machines combine without duplicates, merging twice is idempotent,
// conflicting trials keep the first, successes replace failures, and bad inputs write nothing.
#include <gtest/gtest.h>

#include "results/result_store.h"
#include "results/schema.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::results {
namespace {

std::vector<TrialRecord> whole_case(const std::string& run, const std::string& key) {
  return {test::full_trial(run, key, 0), test::full_trial(run, key, 1)};
}

TEST(Merge, OverlappingInputsGiveTheUnionOnce) {
  test::TempDir dir;
  const std::string a = dir.file("a.sqlite"), b = dir.file("b.sqlite"),
                    out = dir.file("out.sqlite");
  RunInfo ra = test::full_run("machine-a");
  ra.run_id = new_run_id();
  {
    auto s = ResultStore::open(a);
    s.begin_run(ra);
    for (int c = 0; c < 10; ++c) s.record_case(whole_case(ra.run_id, "c" + std::to_string(c)));
  }
  {
    // Machine b holds a copy of a's cases 5..9 (same run) plus its own cases 10..14.
    auto s = ResultStore::open(b);
    s.begin_run(ra);
    for (int c = 5; c < 10; ++c) s.record_case(whole_case(ra.run_id, "c" + std::to_string(c)));
    const std::string rb = s.begin_run(test::full_run("machine-b"));
    for (int c = 10; c < 15; ++c) s.record_case(whole_case(rb, "c" + std::to_string(c)));
  }
  const MergeSummary m = merge(out, {a, b});
  EXPECT_EQ(m.runs_added, 2);
  EXPECT_EQ(m.trials_added, 30);
  EXPECT_EQ(m.trials_duplicate, 10);
  EXPECT_EQ(m.trials_conflict, 0);
  auto s = ResultStore::open_readonly(out);
  EXPECT_EQ(s.trial_count(), 30);
  EXPECT_EQ(s.done_cases(2).size(), 15u);
  EXPECT_EQ(s.runs().size(), 2u);
  EXPECT_EQ(*s.run(ra.run_id), *ResultStore::open_readonly(a).run(ra.run_id));
  const auto before = s.trials();

  // Idempotent: merging the same inputs again (and the output itself) changes nothing.
  const MergeSummary again = merge(out, {a, b, out});
  EXPECT_EQ(again.runs_added, 0);
  EXPECT_EQ(again.trials_added, 0);
  EXPECT_EQ(ResultStore::open_readonly(out).trials(), before);
}

TEST(Merge, ConflictsKeepFirstAndSuccessReplacesFailure) {
  test::TempDir dir;
  const std::string a = dir.file("a.sqlite"), b = dir.file("b.sqlite"),
                    out = dir.file("out.sqlite");
  std::string ra, rb;
  {
    auto s = ResultStore::open(a);
    ra = s.begin_run(test::full_run("a"));
    s.record_case(whole_case(ra, "same"));
    s.record_failure(test::full_trial(ra, "flaky", 0), "timeout");
  }
  {
    auto s = ResultStore::open(b);
    rb = s.begin_run(test::full_run("b"));
    s.record_case(whole_case(rb, "same"));   // the same case measured again elsewhere
    s.record_case(whole_case(rb, "flaky"));  // succeeded here
  }
  const MergeSummary m = merge(out, {a, b});
  EXPECT_EQ(m.trials_conflict, 2);
  EXPECT_EQ(m.failures_replaced, 1);
  auto s = ResultStore::open_readonly(out);
  TrialFilter all;
  all.include_failed = true;
  for (const auto& t : s.trials(all)) {
    EXPECT_FALSE(t.failed());
    if (t.case_key == "same") {
      EXPECT_EQ(t.run_id, ra);
    } else {
      EXPECT_EQ(t.run_id, rb);
    }
  }
  EXPECT_EQ(s.trial_count(), 4);
}

TEST(Merge, MissingInputWritesNothing) {
  test::TempDir dir;
  { ResultStore::open(dir.file("a.sqlite")); }
  try {
    merge(dir.file("out.sqlite"), {dir.file("a.sqlite"), dir.file("nope.sqlite")});
    FAIL() << "no exception";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nope.sqlite"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.sqlite")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("nope.sqlite")));
}

TEST(Merge, ReadsOlderSchemaInputs) {
  test::TempDir dir;
  {
    sqlite::Database db(dir.file("v1.sqlite"), sqlite::Database::Mode::ReadWriteCreate);
    db.exec(schema_v1_ddl());
    db.exec(
        "INSERT INTO runs VALUES ('r1', 't0', NULL, 'c', 0, 'b', 'g', 'cpu', '', 1, '{}', '{}', "
        "'{}', "
        "'h', 'v');"
        "INSERT INTO trials (case_key, trial_index, run_id, method, params, target_path, "
        "target_sha256, target_arch, target_n_params, context_len, workload, sample_id, ttft_s, "
        "phases, decode_tokens, prompt_tokens, kept_tokens, peak_rss_bytes, kv_bytes, "
        "output_tokens, scores, stats, recorded_at) VALUES ('k', 0, 'r1', 'baseline', '{}', 'p', "
        "'s', 'llama', 1, 512, 'w', '0', 0.25, '{}', 0, 512, 512, 0, 0, '[]', '{}', '{}', 't1')");
  }
  const MergeSummary m = merge(dir.file("out.sqlite"), {dir.file("v1.sqlite")});
  EXPECT_EQ(m.trials_added, 1);
  auto s = ResultStore::open_readonly(dir.file("out.sqlite"));
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
  EXPECT_EQ(s.trials()[0].ttft_s, 0.25);
}


// Load-sweep points travel with their requests; merging the same input twice adds nothing.
TEST(Merge, LoadPointsAreMergedOnce) {
  test::TempDir dir;
  const std::string a = dir.file("a.sqlite"), out = dir.file("out.sqlite");
  {
    auto s = ResultStore::open(a);
    const std::string run = s.begin_run(test::full_run());
    TrialRecord t = test::full_trial(run, "point-1", 0);
    LoadPointRecord p;
    p.case_key = "point-1";
    p.run_id = run;
    p.method = "plain";
    p.concurrency = 4;
    p.requests = 1;
    p.wall_s = 0.5;
    p.output_tokens = 64;
    s.record_load_point(p, {t});
  }
  merge(out, {a});
  merge(out, {a});
  const auto s = ResultStore::open_readonly(out);
  ASSERT_EQ(s.load_points().size(), 1u);
  EXPECT_EQ(s.load_points()[0].concurrency, 4);
  EXPECT_EQ(s.load_points()[0].output_tok_s(), 128);
  EXPECT_EQ(s.trials().size(), 1u);
}

}  // namespace
}  // namespace accel::results
