// The adversarial probes: UUID needles at 10/50/90% (RULER's niah_single_3 wording, placed as
// gkamradt's tester places needles) and one field of one of 80 JSON records, both scored by
// verbatim containment; hand-worked cases with the byte-level tokenizer (one token per byte).
#include "suites/probes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "models/tokenizer.h"
#include "suites/niah_haystack.h"
#include "tests/support/pattern.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

std::string fixture_essays() {
  const char* words[] = {"remarkable", "foundation", "creative", "engineer",   "careful",
                         "attention",  "valuable",   "movement", "curious",    "statement",
                         "useful",     "director",   "logical",  "experiment", "famous"};
  std::string t;
  for (int i = 0; i < 500; ++i) {
    t += "Sentence " + std::to_string(i) + " has";
    for (int w = 0; w < 3 + i % 6; ++w) t += std::string(" ") + words[(i * 3 + w) % 15];
    t += (i % 4 == 0) ? ".\n" : ". ";
  }
  return t;
}

struct Probes : ::testing::Test {
  test::TempDir dir;
  std::string essays = dir.file("essays.txt");
  const Suite& s = find_suite("probes");
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  void SetUp() override { std::ofstream(essays) << fixture_essays(); }
  nlohmann::json params(nlohmann::json given = nlohmann::json::object()) const {
    if (!given.contains("data")) given["data"] = essays;
    return resolve_suite_params(s, given);
  }
  std::string text(std::span<const int32_t> ids) const { return tok->decode(ids); }
  Scores score(const Sample& sm, const std::string& gen, const nlohmann::json& p) const {
    Generation g;
    g.tokens = tok->encode(gen, false, false);
    return s.score(sm, g, nullptr, ctx, p);
  }
};

const accel::test::Pattern kUuid(
    "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");

TEST_F(Probes, IsRegisteredWithItsMetrics) {
  EXPECT_EQ(s.name(), "probes");
  const nlohmann::json p = params();
  EXPECT_EQ(p["task"], "all");
  EXPECT_EQ(p["max_new_tokens"], 64);
  std::set<std::string> names;
  for (const auto& m : s.metrics()) names.insert(m.name);
  EXPECT_EQ(names, (std::set<std::string>{"probes.exact", "probes.uuid", "probes.uuid.d10",
                                          "probes.uuid.d50", "probes.uuid.d90", "probes.json"}));
  EXPECT_THROW(params({{"task", "csv"}}), std::invalid_argument);
}

TEST_F(Probes, SamplesTakeTheProbesInTurn) {
  const nlohmann::json all = params();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(s.make_sample(16384, i, 0, ctx, all).id);
  EXPECT_EQ(ids, (std::vector<std::string>{"uuid-d10-0", "uuid-d50-0", "uuid-d90-0", "json-0",
                                           "uuid-d10-1"}));
  EXPECT_EQ(s.make_sample(2048, 4, 0, ctx, params({{"task", "uuid"}})).id, "uuid-d50-1");
  EXPECT_EQ(s.make_sample(16384, 2, 0, ctx, params({{"task", "json"}})).id, "json-2");
}

TEST_F(Probes, UuidNeedlesSitAtTenFiftyAndNinetyPercent) {
  const nlohmann::json p = params({{"task", "uuid"}});
  for (int len : {1024, 4096})
    for (int i = 0; i < 6; ++i) {
      const Sample sm = s.make_sample(len, i, 7, ctx, p);
      const int depth = std::vector<int>{10, 50, 90}[size_t(i % 3)];
      EXPECT_EQ(sm.meta["depth_percent"], depth);
      EXPECT_EQ(sm.prompt.size() + 64, size_t(len));
      const std::string value = sm.reference.at(0);
      EXPECT_TRUE(kUuid.full_match(value)) << value;
      const std::string key = sm.meta["key"];
      const std::string needle =
          " One of the special magic uuids for " + key + " is: " + value + ".";
      const size_t at = sm.meta["needle_token"], begin = sm.meta["haystack_token"];
      const size_t n = sm.meta["context_tokens"];
      ASSERT_EQ(text(std::span<const int32_t>(sm.prompt).subspan(at, needle.size())), needle);
      // At a sentence end at or before int(n * depth / 100), no sentence end in between.
      const size_t pos = at - begin, target = size_t(double(n) * (depth / 100.0));
      ASSERT_LE(pos, target);
      if (pos > 0) {
        EXPECT_TRUE(niah::ends_sentence(*tok, sm.prompt[at - 1])) << sm.id;
      }
      for (size_t k = 0; k < target - pos; ++k)
        EXPECT_FALSE(niah::ends_sentence(*tok, sm.prompt[at + needle.size() + k])) << sm.id;
      // RULER's singular template around it, the answer prefix last.
      const std::string t = text(sm.prompt);
      EXPECT_EQ(t.rfind("A special magic uuid is hidden within the following text. Make sure to "
                        "memorize it. I will quiz you about the uuid afterwards.\n",
                        0),
                0u);
      const std::string tail = "\nWhat is the special magic uuid for " + key +
                               " mentioned in the provided text? The special magic uuid for " +
                               key + " mentioned in the provided text is";
      EXPECT_EQ(t.substr(t.size() - tail.size()), tail);
    }
}

TEST_F(Probes, TheSameSeedGivesIdenticalSamplesAndSeedsDiffer) {
  const nlohmann::json p = params();
  for (int i = 0; i < 4; ++i) {
    const Sample a = s.make_sample(16384, i, 5, ctx, p), b = s.make_sample(16384, i, 5, ctx, p);
    EXPECT_EQ(a.prompt, b.prompt);
    EXPECT_EQ(a.reference, b.reference);
    EXPECT_EQ(a.meta, b.meta);
    const Sample c = s.make_sample(16384, i, 6, ctx, p);
    EXPECT_NE(a.reference, c.reference) << a.id;
    EXPECT_NE(a.prompt, c.prompt) << a.id;
  }
  // Samples of one seed draw different values.
  EXPECT_NE(s.make_sample(4096, 0, 5, ctx, p).reference,
            s.make_sample(4096, 1, 5, ctx, p).reference);
}

TEST_F(Probes, JsonProbeAsksOneFieldOfOneOfEightyRecords) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const probes::JsonProbe j = probes::json_probe(seed);
    std::vector<std::string> lines;
    size_t from = 0;
    for (size_t nl; (nl = j.text.find('\n', from)) != std::string::npos; from = nl + 1)
      lines.push_back(j.text.substr(from, nl - from));
    std::vector<std::string> records;
    for (const auto& l : lines)
      if (l.rfind("{\"id\": ", 0) == 0) records.push_back(l);
    ASSERT_EQ(records.size(), 80u);
    EXPECT_TRUE(j.field == "email" || j.field == "phone" || j.field == "account") << j.field;
    // The target record holds the id and the value; the value occurs nowhere else.
    const std::string& target = records[size_t(j.position)];
    EXPECT_EQ(target.rfind("{\"id\": " + std::to_string(j.id) + ",", 0), 0u);
    EXPECT_NE(target.find("\"" + j.field + "\": \"" + j.value + "\""), std::string::npos);
    size_t count = 0;
    for (size_t at = j.text.find(j.value); at != std::string::npos;
         at = j.text.find(j.value, at + 1))
      ++count;
    EXPECT_EQ(count, 1u) << j.value;
    // The distractor: another record with the same name.
    ASSERT_NE(j.twin, j.position);
    const auto name = [](const std::string& r) {
      const size_t a = r.find("\"name\": \"") + 9;
      return r.substr(a, r.find('"', a) - a);
    };
    EXPECT_EQ(name(records[size_t(j.twin)]), name(target));
    EXPECT_NE(records[size_t(j.twin)], target);
    const std::string q = "Question: What is the \"" + j.field +
                          "\" of the record with \"id\": " + std::to_string(j.id) +
                          "? Answer with the value only.\nAnswer:";
    EXPECT_EQ(j.text.substr(j.text.size() - q.size()), q);
  }
}

TEST_F(Probes, JsonPromptIsTheRecordsWithBosAndTooShortContextsAreRefused) {
  const nlohmann::json p = params({{"task", "json"}});
  const Sample sm = s.make_sample(16384, 0, 3, ctx, p);
  EXPECT_EQ(sm.prompt.front(), 256);
  const probes::JsonProbe j = probes::json_probe(niah::mix(3, 0));
  EXPECT_EQ(text(std::span<const int32_t>(sm.prompt).subspan(1)), j.text);
  EXPECT_EQ(sm.reference, nlohmann::json::array({j.value}));
  EXPECT_EQ(sm.meta["position"], j.position);
  try {
    s.make_sample(2048, 0, 3, ctx, p);
    ADD_FAILURE() << "80 records do not fit 2048 bytes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("context length 2048 is too short"), std::string::npos)
        << e.what();
  }
}

TEST_F(Probes, ScoresVerbatimContainmentUnderTheProbesMetrics) {
  const nlohmann::json p = params();
  const Sample u = s.make_sample(2048, 1, 0, ctx, p);  // uuid at 50%
  const std::string v = u.reference.at(0);
  Scores sc = score(u, " " + v + ".", p);
  EXPECT_EQ(sc, (Scores{{"probes.exact", 100}, {"probes.uuid", 100}, {"probes.uuid.d50", 100}}));
  std::string upper = v;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(score(u, upper, p).at("probes.uuid"), 0.0) << "exact: not case-folded";
  EXPECT_EQ(score(u, v.substr(0, 35), p).at("probes.exact"), 0.0) << "one character short";
  EXPECT_EQ(score(u, "", p).at("probes.uuid.d50"), 0.0);
  Generation g;
  g.tokens = {257};
  const auto ids = tok->encode(v, false, false);
  g.tokens.insert(g.tokens.end(), ids.begin(), ids.end());
  EXPECT_EQ(s.score(u, g, nullptr, ctx, p).at("probes.exact"), 0.0) << "after EOS";

  const Sample j = s.make_sample(16384, 3, 0, ctx, p);
  const std::string jv = j.reference.at(0);
  EXPECT_EQ(score(j, " \"" + jv + "\"", p), (Scores{{"probes.exact", 100}, {"probes.json", 100}}));
  EXPECT_EQ(score(j, "I do not know", p), (Scores{{"probes.exact", 0}, {"probes.json", 0}}));
  EXPECT_EQ(probes::exact_score("abc", ""), 0.0);
}

}  // namespace
}  // namespace accel
