// The adversarial probes of the seed study (issue 13 item 5): a UUID needle at depths 10, 50 and
// 90% of the essay haystack, and the extraction of one field of one record out of 80 JSON
// records; both scored exactly (the value must appear verbatim in the generation).
//
// A suite of its own rather than tasks of `niah`: the NIAH grid is gkamradt's test (a fixed
// needle sentence, a depth grid parameter, its version pinned to that repository), while the
// probes draw a fresh random value per sample, fix their depths, and the JSON probe has no essay
// haystack or depth at all; keeping them apart keeps each suite's version, sample indexing and
// report (the NIAH heatmap) about one thing.
//
// UUID probe: RULER's niah_single_3 wording (NVIDIA/RULER c3f5e3b, scripts/data/synthetic/
// constants.py and niah.py: the needle "One of the special magic uuids for {key} is: {value}.",
// the task template and answer prefix after the singular rewrite, an adjective-noun key from the
// essays' word lists as ruler_corpus.h derives them, the value uuid4 from Python's random) placed
// by gkamradt's insert_needle at the fixed depth (niah_haystack.h), the prompt filling the
// context minus the generation budget.
// JSON probe: 80 records {"id", "name", "city", "email", "phone", "account"}, one per line; the
// question asks for the email, phone or account of the record with a given id, and another record
// carries the same name (a distractor for answering by name). The asked value occurs exactly once
// in the prompt. The prompt is as long as the records make it; a context too short for them is
// refused.
#pragma once
#include <cstdint>
#include <string>

#include "suites/suite.h"

namespace accel {

// Params: task (all: sample i takes uuid at 10, 50, 90% then json, in turn, repetition i / 4;
// uuid: the three depths in turn; json), data (the essays; uuid needs them), max_new_tokens
// (default 64). Sample ids "uuid-d<depth>-<rep>", "json-<rep>"; each sample draws its values from
// (seed, index). Metrics, each 100 when the value appears verbatim in the generation (up to EOS),
// else 0: probes.exact (every probe), probes.uuid, probes.uuid.d10/d50/d90, probes.json.
class ProbesSuite : public Suite {
 public:
  std::string name() const override { return "probes"; }
  std::string version() const override { return "1"; }
  std::string summary() const override;
  std::vector<ParamSpec> params() const override;
  std::vector<MetricSpec> metrics() const override;
  Sample make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                     const nlohmann::json& params) const override;
  Scores score(const Sample& s, const Generation& out, const Generation* reference,
               const SuiteContext& ctx, const nlohmann::json& params) const override;
};

namespace probes {

constexpr int kJsonRecords = 80;

// 100 when `value` occurs in `prediction` byte for byte, else 0.
double exact_score(const std::string& prediction, const std::string& value);

// The JSON probe's text (records, question and answer cue) for one seed.
struct JsonProbe {
  std::string text;
  std::string field, value;  // the asked field and its value in the target record
  int64_t id = 0;            // the target record's id
  int position = 0;          // the target record's index among the records
  int twin = 0;              // index of the other record with the target's name
};
JsonProbe json_probe(uint64_t seed);

}  // namespace probes

}  // namespace accel
