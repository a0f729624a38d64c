// The RULER generators against RULER's own scripts and against the spec's rules: byte-identical
// records for RULER c3f5e3b's scripts run on the same inputs, the length budget in the model's
// tokenizer for every task at several lengths, needles at their requested depths, keys and
// distractors that never collide with an answer, and seeds that fix the sample.
#include <gtest/gtest.h>

#include <set>

#include "harness/file_hash.h"
#include "models/gguf.h"
#include "models/tokenizer.h"
#include "suites/ruler.h"
#include "suites/ruler_niah.h"
#include "suites/ruler_sentences.h"
#include "suites/ruler_tasks.h"
#include "suites/ruler_text.h"
#include "suites/suite.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using namespace ruler;

// One token per 4 bytes, no BOS: a stand-in where the byte-level tokenizer is too fine for
// RULER's scripts (vt's one-shot example must fit 500 tokens).
struct QuarterTokenizer : Tokenizer {
  QuarterTokenizer() : Tokenizer(byte_level_tokenizer_spec()) {}
  std::vector<int32_t> encode(std::string_view t, bool, bool) const override {
    return std::vector<int32_t>((t.size() + 3) / 4, 65);
  }
  std::string decode(std::span<const int32_t>, bool) const override { return ""; }
};

std::string essays() {
  const auto d = test::shared_data("niah");
  return d ? d->string() : "";
}
const std::string kFixtures = ACCELBENCH_SOURCE_DIR "/tests/suites/fixtures/";

nlohmann::json params(const std::string& task) {
  return resolve_suite_params(find_suite("ruler"),
                              {{"task", task},
                               {"data", essays()},
                               {"squad", kFixtures + "ruler_squad.json"},
                               {"hotpotqa", kFixtures + "ruler_hotpotqa.json"}});
}

bool available(const TaskConfig& t) {
  return !needs_essays(t) || !essays().empty();
}

struct RulerByteLevel : ::testing::Test {
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_tokenizer_spec());
  SuiteContext ctx{258, 256, 257, tok.get()};
  Sample make(const std::string& task, int len, int index, uint64_t seed,
              const SuiteContext* c = nullptr) const {
    return find_suite("ruler").make_sample(len, index, seed, c ? *c : ctx, params(task));
  }
};

// The record as RULER's jsonl holds it, hashed.
std::string record_hash(const Sample& s) {
  std::string r =
      s.meta["input"].get<std::string>() + '\0' + s.meta["answer_prefix"].get<std::string>() + '\0';
  const auto outs = s.reference.get<std::vector<std::string>>();
  for (size_t i = 0; i < outs.size(); ++i) r += (i ? std::string(1, '\0') : "") + outs[i];
  return sha256_text(r + '\0' + std::to_string(s.meta["length"].get<int>()));
}

// RULER c3f5e3b's generator scripts, run with --num_samples 1 --random_seed seed+index
// --model_template_token 1 (0 for the quarter tokenizer) and the base template, on the same
// inputs: a byte tokenizer (len of the UTF-8 bytes; a quarter of them for vt), the essays of
// ../shared/data/niah as PaulGrahamEssays.json, our word lists in place of wonderwords' (and our
// keys as english_words.json), a Python port of our sentence rule in place of sent_tokenize, the
// qa fixtures as squad.json/hotpotqa.json, numpy 1.24 and CPython 3.11. Their records hashed as
// record_hash does; every field compared equal before hashing.
struct Golden {
  const char* task;
  int len, index;
  uint64_t seed;
  bool quarter;
  const char* sha256;
};
const Golden kGolden[] = {
    {"niah_single_1", 4096, 0, 42, false,
     "b980e616f5dfb31522bd13889951109b279ae8f6d73d80b8b3a2309824f5f491"},
    {"niah_single_2", 4096, 0, 42, false,
     "16456dde001703158a6fd8fff7c3e335551b4e9ba123ce67a81a05910f6298aa"},
    {"niah_single_3", 8192, 0, 42, false,
     "c40f55fcb7c25a422f3d6e5f05988fc5f98bf4210c44e55d8379215dc3f53154"},
    {"niah_multikey_1", 8192, 2, 7, false,
     "bdc6aa61b64b7a5f314c76e0e6553a3e6852b4f5b76f0bd92e091676fb322db7"},
    {"niah_multikey_2", 2048, 1, 42, false,
     "4f589dfa4956b2a987a14ccbda2dd9b33604baa336947a3248e567a8e6de16c3"},
    {"niah_multikey_3", 8192, 0, 42, false,
     "cdffc276061816bc546f609b35b090aed34dd13ba74cdc9103156dcd7544fa99"},
    {"niah_multivalue", 8192, 1, 3, false,
     "c76f6610d51e26952b395ed79c8cad617ec212d2b55510fd356b2a7df2576262"},
    {"niah_multiquery", 8192, 4, 42, false,
     "a31532c1ce0f44694754a125b0c07d86e2f019ff2d95a427a814be680a6a5330"},
    {"vt", 4096, 0, 42, true, "de0825d9b568c1ccd4b0226a9439706e9f4bfba7257ede9d9ee65f4ae74a4135"},
    {"vt", 2048, 0, 42, true, "adabca744caed6e15fbe974d3e7b5ea73a536acd539d3b2d7c3c5d41ae2fa7cd"},
    {"vt", 8192, 3, 5, true, "7048424aaa7ab5ea193ad4d6f583417b70b519e4c4044721f8e510253a754963"},
    {"cwe", 8192, 0, 42, false, "a8d9ddaaef6075350c0cc4894853cd3377319f7da5736f3bad9a5fab42258736"},
    {"cwe", 3000, 0, 1, false, "b631e81d6543b5bc1b8ca6b9943dabbb0da4c82f0fe4ca55c49f5d3cf8a9fa9c"},
    {"fwe", 4096, 0, 42, false, "196b04b4db578e5b4cbab4d15f0b4c5ef7737ca2aee749aebd99e46492933921"},
    {"fwe", 2048, 0, 1, false, "303e1dc13cd3fb189f95a291bbf16d08238eb75a1fe36b4661523b0a2c4a12f3"},
    {"qa_1", 4096, 0, 42, false,
     "297240db60e527c7c7a94cc830acd238f94f59d0348ddbe834ca2b06bfce12f5"},
    {"qa_2", 4096, 1, 42, false,
     "22ec2dbf04e2298346818f5466eca1e708ad0969f37866f5d2595c656c8f3371"},
};

TEST_F(RulerByteLevel, RecordsAreByteIdenticalToRulersScripts) {
  QuarterTokenizer quarter;
  const SuiteContext qctx{258, -1, -1, &quarter};
  int checked = 0;
  for (const Golden& g : kGolden) {
    SCOPED_TRACE(std::string(g.task) + " " + std::to_string(g.len));
    if (!available(*find_ruler_task(g.task))) continue;
    const Sample s = make(g.task, g.len, g.index, g.seed, g.quarter ? &qctx : nullptr);
    EXPECT_EQ(record_hash(s), g.sha256);
    ++checked;
  }
  if (checked < int(std::size(kGolden)))
    GTEST_SKIP() << "essay tasks skipped: " << test::missing_shared_data("niah");
}

TEST_F(RulerByteLevel, LengthBudgetIsMetForEveryTaskAtSeveralLengths) {
  // Byte-level (the synthetic families) and, when present, stories260K's SentencePiece vocab.
  std::vector<std::pair<std::string, SuiteContext>> tokenizers = {{"byte-level", ctx}};
  std::unique_ptr<Tokenizer> stories;
  if (const auto p = test::shared_data("stories260K/stories260K.gguf")) {
    stories = Tokenizer::create(TokenizerSpec::from_gguf(GgufFile::open(p->string())));
    tokenizers.push_back(
        {"stories260K", {stories->n_vocab(), stories->bos(), stories->eos(), stories.get()}});
  }
  for (const auto& [name, c] : tokenizers)
    for (const TaskConfig& t : ruler_tasks()) {
      if (!available(t)) continue;
      for (int len : {4096, 9000}) {
        if (len == 4096 && t.generator == Generator::CommonWords)
          continue;  // the example and 10 words x 30 need more than 4096 of these tokens
        SCOPED_TRACE(name + " " + std::string(t.name) + " " + std::to_string(len));
        const Sample s = make(std::string(t.name), len, 1, 3, &c);
        const int gen = generator_template(t.generator).tokens_to_generate;
        EXPECT_EQ(s.max_new_tokens, gen);
        EXPECT_LE(s.prompt.size() + size_t(gen), size_t(len));
        EXPECT_EQ(s.prompt.front(), c.bos);
        // RULER's `length` is the same count: the text's tokens plus the generation.
        EXPECT_EQ(size_t(s.meta["length"].get<int>()) + 1, s.prompt.size() + size_t(gen));
        // The haystack fills much of the context. Not all of it: when a sample drawn at the
        // searched size does not fit, RULER lowers the size by a whole step (500 words for the
        // essay), which at 4096 bytes can leave a quarter (RULER's script gives the same).
        EXPECT_GT(double(s.prompt.size() + size_t(gen)), 0.25 * len);
        // The prompt is the input and the answer prefix, which ends it.
        const std::string text = c.tokenizer->decode(std::span<const int32_t>(s.prompt).subspan(1));
        if (name == "byte-level") {
          EXPECT_EQ(text, s.meta["input"].get<std::string>() +
                              s.meta["answer_prefix"].get<std::string>());
        }
      }
    }
}

TEST_F(RulerByteLevel, EssayNeedlesSitAtTheirRequestedDepths) {
  if (essays().empty()) GTEST_SKIP() << test::missing_shared_data("niah");
  for (const char* task :
       {"niah_single_2", "niah_multikey_1", "niah_multivalue", "niah_multiquery"})
    for (uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE(std::string(task) + " seed " + std::to_string(seed));
      const Sample s = make(task, 12000, 0, seed);
      const auto needles = s.meta["needles"].get<std::vector<std::string>>();
      const auto depths = s.meta["depths"].get<std::vector<int>>();
      const auto at = s.meta["needle_sentence"].get<std::vector<size_t>>();
      const size_t n_sents = s.meta["sentences"].get<size_t>();
      ASSERT_EQ(needles.size(), depths.size());
      ASSERT_EQ(needles.size(), at.size());
      // The context: between the intro line and the question line.
      const std::string input = s.meta["input"].get<std::string>();
      const std::string context =
          input.substr(input.find('\n') + 1, input.rfind('\n') - input.find('\n') - 1);
      for (size_t j = 0; j < needles.size(); ++j) {
        EXPECT_NE(std::find(niah_depths().begin(), niah_depths().end(), depths[j]),
                  niah_depths().end());
        EXPECT_EQ(at[j], size_t(double(n_sents) * (depths[j] / 100.0)));
        // Count the haystack sentences before the needle, the other needles taken out.
        const size_t pos = context.find(needles[j]);
        ASSERT_NE(pos, std::string::npos);
        std::string before = context.substr(0, pos);
        for (const auto& other : needles)
          if (before.find(other) != std::string::npos) before = py_replace(before, other, "");
        EXPECT_EQ(split_sentences(before).size(), at[j]) << "needle " << j;
        // As a share of the haystack's characters, near the depth (sentences are short).
        const double share = double(before.size()) / double(context.size());
        EXPECT_NEAR(share, depths[j] / 100.0, 0.12) << "needle " << j;
      }
    }
}

TEST_F(RulerByteLevel, NoiseAndNeedleHaystacksPlaceNeedlesOnTheirLines) {
  for (const char* task : {"niah_single_1", "niah_multikey_2", "niah_multikey_3"}) {
    if (!available(*find_ruler_task(task))) continue;
    const Sample s = make(task, 8192, 2, 9);
    const std::string input = s.meta["input"].get<std::string>();
    const std::string context =
        input.substr(input.find('\n') + 1, input.rfind('\n') - input.find('\n') - 1);
    // Named: py_split returns views into its argument, which must outlive the loop.
    const std::string marked = py_replace(context, " ", "\x01");
    std::vector<std::string> lines;
    for (auto v : py_split(marked)) lines.emplace_back(v);
    const auto needles = s.meta["needles"].get<std::vector<std::string>>();
    const auto line = s.meta["needle_line"].get<std::vector<size_t>>();
    ASSERT_EQ(lines.size(), size_t(s.meta["haystack"].get<int>()) + needles.size()) << task;
    for (size_t j = 0; j < needles.size(); ++j)
      EXPECT_EQ(py_replace(lines[line[j]], "\x01", " "), needles[j]) << task;
  }
}

TEST(RulerNiah, KeysAndDistractorsNeverCollideEvenWithFourPossibleKeys) {
  // Four keys in all: without redrawing, four needles or hundreds of distractors would repeat
  // the queried key.
  WordLists tiny;
  tiny.adjs = {"blue", "red"};
  tiny.nouns = {"cat", "dog"};
  RulerArgs a;
  a.max_seq_length = 6000;
  a.model_template_token = 1;
  a.tokens_to_generate = 128;
  const GeneratorTemplate& gt = generator_template(Generator::Niah);
  a.template_text = std::string(gt.task_template) + std::string(gt.answer_prefix);
  a.count_tokens = [](const std::string& s) { return s.size(); };
  a.who = "test";
  TaskConfig four = *find_ruler_task("niah_single_1");  // noise haystack, word keys
  four.num_needle_k = 4;
  const TaskConfig distractors = *find_ruler_task("niah_multikey_2");
  for (uint64_t seed = 0; seed < 12; ++seed) {
    a.random_seed = seed;
    const RulerRecord r4 = generate_niah(four, a, {nullptr, &tiny});
    const auto keys = r4.meta["keys"].get<std::vector<std::string>>();
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 4u) << seed;
    const RulerRecord rd = generate_niah(distractors, a, {nullptr, &tiny});
    const std::string query = rd.meta["queries"][0].get<std::string>();
    const std::string gold = rd.outputs.at(0);
    const auto needles = rd.meta["needles"].get<std::vector<std::string>>();
    size_t lines = 0;
    const std::string marked = py_replace(rd.input, " ", "\x01");  // outlives py_split's views
    for (auto line : py_split(marked)) {
      const std::string l = py_replace(line, "\x01", " ");
      if (l.rfind("One of the special magic", 0) != 0 || l == needles[0]) continue;
      ++lines;
      EXPECT_EQ(l.find(" " + query + " "), std::string::npos) << l;
      EXPECT_EQ(l.find(gold), std::string::npos) << l;
    }
    EXPECT_GT(lines, 50u);
  }
}

TEST_F(RulerByteLevel, TheSameSeedGivesByteIdenticalSamplesAndSeedsDiffer) {
  for (const TaskConfig& t : ruler_tasks()) {
    if (!available(t)) continue;
    const std::string task(t.name);
    const int len = t.generator == Generator::CommonWords ? 8192 : 4096;
    const Sample a = make(task, len, 0, 5), b = make(task, len, 0, 5);
    EXPECT_EQ(a.prompt, b.prompt) << task;
    EXPECT_EQ(a.meta["input"], b.meta["input"]) << task;
    EXPECT_EQ(a.reference, b.reference) << task;
    EXPECT_EQ(record_hash(a), record_hash(b)) << task;
    // Another seed, or another index of the same seed, is another sample (qa: another question,
    // or the same question with its documents drawn and shuffled anew).
    EXPECT_NE(a.prompt, make(task, len, 0, 6).prompt) << task;
    EXPECT_NE(a.prompt, make(task, len, 1, 5).prompt) << task;
    EXPECT_EQ(a.id, task + "-0");
  }
}

TEST_F(RulerByteLevel, ContextsTooShortAreRefusedNamingTaskAndLength) {
  try {
    make("cwe", 2048, 0, 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cwe: context 2048 is too short"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make("fwe", 200, 0, 1), std::invalid_argument);
  EXPECT_THROW(make("niah_multikey_3", 300, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace accel
