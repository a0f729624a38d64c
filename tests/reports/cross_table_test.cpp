// The same trials give the same figure in every table (issue: one statistic per figure): the
// decode speedup of `--table decode` and `--table paper`, the TTFT speedup of ttft, ablation,
// costmodel and paper, and the cost model's rows in paper. Samples are skewed so that a ratio of
// means and a ratio of medians differ: a table using the other statistic fails these tests.
#include <gtest/gtest.h>

#include "reports/cost_model.h"
#include "reports/paper_table.h"
#include "reports/tables.h"
#include "tests/results/store_fixtures.h"
#include "tests/support/test_support.h"

namespace accel::reports {
namespace {

// Baseline TTFTs median 1.1 (mean 1.44: one slow outlier); specprefill keep 0.3 median 0.5.
// simple_trial's decode speed is 10 / TTFT, so the decode medians are 10/1.1 and 10/0.5.
const std::vector<double> kBaseTtft = {1.0, 1.1, 1.2, 2.9, 1.0};
const std::vector<double> kMineTtft = {0.5, 0.45, 0.55, 0.5, 0.9};

void record(results::ResultStore& s, const std::string& run, const std::string& method,
            const nlohmann::json& params, const std::vector<double>& ttfts, bool scoring) {
  std::vector<results::TrialRecord> v;
  for (size_t i = 0; i < ttfts.size(); ++i) {
    auto t = test::simple_trial(run, method, params, 1024, "s0", int64_t(i), ttfts[i]);
    t.prompt_tokens = 1024;
    t.kept_tokens = scoring ? 307 : 1024;
    t.phases = {{"prefill", ttfts[i] * 0.8}, {"first_token", ttfts[i] * 0.1}};
    if (scoring) {
      t.draft = results::ModelRef{"/m/draft.gguf", "sha-draft", "llama", 100};
      t.phases["draft_prefill"] = ttfts[i] * 0.2;
      t.phases["score"] = ttfts[i] * 0.05;
    }
    v.push_back(t);
  }
  s.record_case(v);
}

struct CrossTable : ::testing::Test {
  test::TempDir dir;
  std::string path = dir.file("x.sqlite");
  void SetUp() override {
    auto s = results::ResultStore::open(path);
    const std::string run = s.begin_run(test::full_run());
    record(s, run, "baseline", nlohmann::json::object(), kBaseTtft, false);
    record(s, run, "specprefill", {{"keep", 0.3}, {"lookahead", 8}}, kMineTtft, true);
    record(s, run, "specprefill", {{"keep", 0.5}, {"lookahead", 8}}, {0.7, 0.8, 0.75}, true);
  }
  results::ResultStore store() const { return results::ResultStore::open_readonly(path); }
};

size_t column(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return i;
  ADD_FAILURE() << "no column " << key << " in " << t.title;
  return 0;
}

// The cell in column `key` of the row whose `match_key` column reads `match`.
const Cell& cell(const Table& t, const std::string& match_key, const std::string& match,
                 const std::string& key) {
  const size_t m = column(t, match_key), c = column(t, key);
  for (const auto& r : t.rows)
    if (r[m].text == match) return r[c];
  ADD_FAILURE() << "no row with " << match_key << " = " << match << " in " << t.title;
  static const Cell none;
  return none;
}

PublishedRow published(const std::string& metric, const std::string& label) {
  PublishedRow r;
  r.label = label;
  r.metric = metric;
  r.method = "specprefill";
  r.params = {{"keep", 0.3}};
  r.context = {ContextSelector::Kind::Exact, 1024, "1024"};
  r.value = 2.0;
  return r;
}

PublishedSet paper() {
  PublishedSet s;
  s.id = "cross";
  s.title = "Cross-table";
  s.source = {{"kind", "paper"}, {"citation", "c"}, {"table", "t"}, {"quoted_in", "q"}};
  s.setup = {{"hardware", "h"}, {"target", "t"}};
  s.rows = {published("ttft_speedup", "ttft"), published("decode_speedup", "decode"),
            published("costmodel", "costmodel")};
  return s;
}

// The paper table's Store cell of the row labelled `label`.
const Cell& paper_store(const Table& t, const std::string& label) {
  return cell(t, "row", label, "measured");
}

TEST_F(CrossTable, DecodeSpeedupIsTheSameInDecodeAndPaperTables) {
  const auto s = store();
  const Table decode = decode_table(s, {});
  const PaperReport rep = paper_table(s, paper(), {});
  const Cell& d = cell(decode, "params", "keep=0.3", "speed");
  const Cell& p = paper_store(rep.table, "decode");
  EXPECT_EQ(d.text, p.text);
  EXPECT_EQ(d.data, p.data);
  EXPECT_DOUBLE_EQ(d.data["ratio"].get<double>(), (10 / 0.5) / (10 / 1.1)) << "ratio of medians";
}

TEST_F(CrossTable, TtftSpeedupIsTheSameInTtftAblationCostmodelAndPaper) {
  const auto s = store();
  ReportOptions ablation;
  ablation.param = "keep";
  const Table tt = ttft_table(s, {});
  const Cell& ttft = cell(tt, "params", "keep=0.3", "speedup@1024");
  const Table abl = ablation_table(s, ablation);
  const Cell& abl_cell = cell(abl, "keep", "0.3", "speedup");
  const Table cm = costmodel_table(s, {});
  const Cell& cm_cell = cell(cm, "keep", "0.3", "measured");
  const PaperReport rep = paper_table(s, paper(), {});
  const Cell& pub = paper_store(rep.table, "ttft");
  EXPECT_DOUBLE_EQ(ttft.data["ratio"].get<double>(), 1.1 / 0.5) << "ratio of medians";
  for (const Cell* other : {&abl_cell, &cm_cell, &pub}) {
    EXPECT_EQ(ttft.text, other->text);
    EXPECT_EQ(ttft.data, other->data);
  }
}

TEST_F(CrossTable, PaperCostModelRowsAreTheCostModelsOwn) {
  const auto s = store();
  const CostModel cm = cost_model(s, {});
  const PaperReport rep = paper_table(s, paper(), {});
  const Cell& pub = paper_store(rep.table, "costmodel");
  const auto row = std::find_if(cm.rows.begin(), cm.rows.end(),
                                [](const CostModelRow& r) { return r.keep == 0.3; });
  ASSERT_NE(row, cm.rows.end());
  EXPECT_EQ(pub.data["measured"], row->measured_cell.data);
  EXPECT_DOUBLE_EQ(pub.data["G"].get<double>(), row->G());
  const Cell& detail = cell(rep.table, "row", "costmodel", "store_detail");
  EXPECT_NE(detail.text.find("measured " + row->measured_cell.text), std::string::npos)
      << detail.text;
}

TEST_F(CrossTable, EveryTimingTableStatesTheStatistic) {
  const auto s = store();
  ReportOptions ablation;
  ablation.param = "keep";
  const std::string stat = "ratio of medians";
  const std::string interval = "95% percentile-bootstrap interval, 2000 resamples";
  std::vector<Table> tables = {ttft_table(s, {}), ablation_table(s, ablation), decode_table(s, {}),
                               costmodel_table(s, {}), paper_table(s, paper(), {}).table};
  for (const Table& t : tables) {
    bool found = false;
    for (const auto& f : t.footnotes)
      found |= f.find(stat) != std::string::npos && f.find(interval) != std::string::npos;
    EXPECT_TRUE(found) << t.title << " has no footnote naming " << stat << " and " << interval;
  }
}

}  // namespace
}  // namespace accel::reports
