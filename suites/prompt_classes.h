// The seed study's prompt classes (methods.md §3.3), generated deterministically from a seed as
// text and encoded with the model's tokenizer to exactly the requested length. Owns prompt
// generation only: no scoring, no knowledge of methods or runs.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "suites/suite.h"

namespace accel {

// "passage", "json_rag", "code", "essay", "random_tokens".
const std::vector<std::string>& prompt_class_names();

struct ClassPrompt {
  std::vector<int32_t> tokens;  // exactly context_len ids, BOS first when the model has one
  nlohmann::json meta;          // {prompt_class, whole_units, quoted_unit, ...}
};

// One prompt of class `cls` and exactly `context_len` tokens: BOS (when ctx.bos >= 0), then the
// body (records, passage sentences, functions or essay lines) encoded unit by unit and cut at a
// token boundary, then the tail (the question or instruction), which is always whole. The length
// is exact for every tokenizer because the cut is made in tokens, not in text; only the last body
// unit may be cut, and a question's quoted record or function is always whole.
//  - json_rag: JSON records, then a question quoting the name and id of one record;
//  - passage: prose sentences, then an instruction to continue or restate the passage;
//  - code: a C or Python file, then an instruction to change one named function;
//  - essay: consecutive lines of the text file(s) at `data` (a file or a directory of .txt
//    files) from a seeded start line, then an instruction to summarize or continue;
//  - random_tokens: seeded uniform ids (synthetic_prompt); needs no tokenizer.
// Same arguments, same prompt. Throws std::invalid_argument starting with `who` (e.g. "suite
// 'parity'") when the class needs a tokenizer the model lacks, essay has no readable `data`, or
// the context cannot hold the tail and the quoted unit.
ClassPrompt make_class_prompt(const std::string& cls, int context_len, uint64_t seed,
                              const SuiteContext& ctx, const std::string& data,
                              const std::string& who);

}  // namespace accel
