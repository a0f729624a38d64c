// Model inputs by role (see model_inputs.h).
#include "harness/model_inputs.h"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>

#include "harness/file_hash.h"
#include "harness/shipped_models.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"

namespace accel {

void ensure_family(const ModelSetSpec& s, std::ostream& log) {
  if (s.family.empty()) return;
  bool missing = false;
  for (const auto& [role, path] : s.inputs) missing = missing || !std::filesystem::exists(path);
  if (!missing) return;
  const std::string dir = std::filesystem::path(s.path("target")).parent_path().string();
  if (const auto shipped = find_shipped_family(s.family)) {
    log << "installing shipped family '" << s.family << "' from " << shipped->dir << " in " << dir
        << "\n";
    install_shipped_family(*shipped, dir);
    return;
  }
  log << "making family '" << s.family << "' in " << dir << "\n";
  make_synthetic_family(s.family, dir, s.family_seed, *weight_scheme_from_name(s.dtype));
}

std::string input_digest(const std::string& path, results::ResultStore* store) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw std::runtime_error("cannot read input '" + path + "' (no such file)");
  const results::ResultStore::FileIdentity id{
      std::filesystem::absolute(path).lexically_normal().string(), int64_t(st.st_size),
      int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, int64_t(st.st_ino)};
  if (store)
    if (auto cached = store->cached_digest(id)) return *cached;
  const std::string sha = sha256_file(path);
  if (store && !store->read_only()) store->remember_digest(id, sha);
  return sha;
}

SetDigests digest_inputs(const Plan& plan, results::ResultStore* store) {
  SetDigests out(plan.models.size());
  for (size_t i = 0; i < plan.models.size(); ++i)
    for (const auto& [role, path] : plan.models[i].inputs)
      if (std::filesystem::exists(path)) out[i][role] = input_digest(path, store);
  return out;
}

LoadedModelSet::LoadedModelSet(const ModelSetSpec& spec, std::map<std::string, std::string> digests)
    : spec_(spec), digests_(std::move(digests)) {}

const Model& LoadedModelSet::model(const std::string& role) {
  auto it = models_.find(role);
  if (it != models_.end()) return *it->second;
  const std::string path = spec_.path(role);
  if (path.empty())
    throw std::runtime_error("model set '" + spec_.name + "' has no '" + role + "' input");
  return *(models_[role] = Model::load(path));
}

const std::string& LoadedModelSet::digest(const std::string& role) const {
  const auto it = digests_.find(role);
  if (it == digests_.end())
    throw std::runtime_error("model set '" + spec_.name + "': input '" + role + "' is missing (" +
                             spec_.path(role) + ")");
  return it->second;
}

results::ModelRef LoadedModelSet::ref(const std::string& role) {
  const Model& m = model(role);
  nlohmann::json cfg = config_json(m.config());
  // Files trained here (models/training/gguf_export.py writes accelbench.training.*) belong to a
  // family too but are not random-weight: reports must not label their scores meaningless.
  if (auto fam = m.file().get_string_opt("accelbench.family"))
    cfg[m.file().has("accelbench.training.step") ? "trained_family" : "synthetic_family"] = *fam;
  return {m.path(), digest(role), m.config().arch_name, int64_t(m.n_params()), cfg};
}

const SuiteContext& LoadedModelSet::suite_context() {
  if (suite_ctx_) return *suite_ctx_;
  const Model& t = model("target");
  auto ctx = std::make_unique<SuiteContext>();
  ctx->n_vocab = t.config().n_vocab;
  try {
    const TokenizerSpec spec = TokenizerSpec::from_gguf(t.file());
    ctx->bos = spec.bos;
    ctx->eos = spec.eos;
    tokenizer_ = Tokenizer::create(spec);
    ctx->tokenizer = tokenizer_.get();
  } catch (const std::exception&) {
    // No usable tokenizer: suites that need text refuse; token suites run from ids.
  }
  try {
    chat_template_ = ChatTemplate::from_gguf(t.file());
    if (chat_template_)
      ctx->chat_template = &*chat_template_;
    else
      ctx->chat_template_note = t.path() + " has no tokenizer.chat_template";
  } catch (const ChatTemplateError& e) {
    ctx->chat_template_note = e.what();  // only a suite that asks for the template fails
  }
  suite_ctx_ = std::move(ctx);
  return *suite_ctx_;
}

nlohmann::json describe_inputs(const Plan& plan, const SetDigests& digests) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < plan.models.size(); ++i) {
    const ModelSetSpec& s = plan.models[i];
    for (const auto& [role, path] : s.inputs) {
      nlohmann::json e = {{"path", path}};
      if (auto d = digests[i].find(role); d != digests[i].end()) e["sha256"] = d->second;
      if (!s.family.empty()) e["family"] = s.family;
      try {
        const GgufFile f = GgufFile::open(path);  // header only: no weights are read
        const ModelConfig c = ModelConfig::from_gguf(f);
        uint64_t n = 0;
        for (const auto& t : f.tensors()) n += t.n_elements;
        e["arch"] = c.arch_name;
        e["n_params"] = n;
      } catch (const std::exception&) {
        // Not a model (e.g. predictor weights) or not readable: path and digest only.
      }
      out[s.name][role] = e;
    }
  }
  return out;
}

}  // namespace accel
