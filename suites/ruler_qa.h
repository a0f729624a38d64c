// RULER's QA tasks (scripts/data/synthetic/qa.py): qa_1 over SQuAD v2.0 (dev-v2.0.json, the
// unanswerable questions dropped) and qa_2 over HotpotQA (hotpot_dev_distractor_v1.json). Owns the
// two readers, which validate the untrusted JSON with bounds and name the file and field of any
// fault, and the generator: the gold paragraph(s), then same-article paragraphs (SQuAD) or the
// question's ten paragraphs (HotpotQA), then random others, shuffled, as many as the context holds.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "suites/ruler_tasks.h"

namespace accel::ruler {

struct QaItem {
  std::string query;
  std::vector<std::string> outputs;  // every gold answer (SQuAD), the answer (HotpotQA)
  std::vector<size_t> context;       // indices into QaDataset::docs
  std::vector<size_t> more_context;  // SQuAD: the article's other paragraphs
};

struct QaDataset {
  std::string source;
  std::vector<QaItem> qas;
  std::vector<std::string> docs;  // sorted(set(...)), as RULER indexes them
};

// Limits on untrusted files: size and JSON nesting depth.
inline constexpr uintmax_t kMaxQaFileBytes = uintmax_t(256) << 20;
inline constexpr int kMaxQaJsonDepth = 64;

// Parse already-loaded JSON (`source` names the file in errors). Throws std::invalid_argument
// "<source>: <field path>: <what>", e.g. "dev.json: data[0].paragraphs[2].qas[1].is_impossible:
// expected a boolean".
QaDataset read_squad(const nlohmann::json& j, const std::string& source);
QaDataset read_hotpotqa(const nlohmann::json& j, const std::string& source);

// Reads, checks (size, UTF-8, nesting, JSON syntax) and parses `path` once per process.
// `dataset` is "squad" or "hotpotqa".
std::shared_ptr<const QaDataset> load_qa(const std::string& dataset, const std::string& path,
                                         const std::string& who);

// One qa.py run for sample `index` (question `index`; the sizing uses question 0, as qa.py does
// with --pre_samples). meta: documents, question_index.
RulerRecord generate_qa(const RulerArgs& a, const QaDataset& d, size_t index);

}  // namespace accel::ruler
