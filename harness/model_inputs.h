// The inputs of a plan's model sets, by role: synthetic families made on demand, SHA-256 digests
// (cached in the store by file identity so a large file is hashed once), models loaded lazily per
// role, and the references stored with runs and trials. Owns no timing and no case logic.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "harness/plan.h"
#include "models/model.h"
#include "results/records.h"
#include "results/result_store.h"
#include "suites/suite.h"

namespace accel {

// Makes the set's synthetic family when any of its files is missing (a no-op for explicit paths).
void ensure_family(const ModelSetSpec& s, std::ostream& log);

// SHA-256 of `path`, taken from `store`'s digest cache when the file's identity still matches and
// remembered there otherwise (store may be null, or read-only: then nothing is remembered).
std::string input_digest(const std::string& path, results::ResultStore* store);

// Digests of every existing input of every set: [set][role] -> sha256.
using SetDigests = std::vector<std::map<std::string, std::string>>;
SetDigests digest_inputs(const Plan& plan, results::ResultStore* store);

// One model set in memory: models are loaded on first use of their role.
class LoadedModelSet {
 public:
  LoadedModelSet(const ModelSetSpec& spec, std::map<std::string, std::string> digests);
  const ModelSetSpec& spec() const { return spec_; }
  // The model of a role; throws naming the set and role when the set has none or it fails to load.
  const Model& model(const std::string& role);
  results::ModelRef ref(const std::string& role);  // of a loaded (or loadable) model
  const std::string& digest(const std::string& role) const;
  // What suites may know of the target: vocabulary size, BOS/EOS and its tokenizer (when usable).
  const SuiteContext& suite_context();

 private:
  ModelSetSpec spec_;
  std::map<std::string, std::string> digests_;
  std::map<std::string, std::unique_ptr<Model>> models_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<ChatTemplate> chat_template_;
  std::unique_ptr<SuiteContext> suite_ctx_;
};

// {set name: {role: {path, sha256, arch, n_params, family}}} for RunInfo::inputs; files that are
// not GGUF models (e.g. predictor weights) carry path and sha256 only.
nlohmann::json describe_inputs(const Plan& plan, const SetDigests& digests);

}  // namespace accel
