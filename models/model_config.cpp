// ModelConfig::from_gguf: the `{arch}.*` metadata keys, bounded before use (see model_config.h).
#include "models/model_config.h"

#include <cmath>
#include <string>

#include "models/gguf.h"

namespace accel {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::Llama:
      return "llama";
    case Arch::Qwen2:
      return "qwen2";
    case Arch::Qwen3:
      return "qwen3";
  }
  return "?";
}

float attention_scale(const ModelConfig& c) {
  return c.attn_scale > 0.f ? c.attn_scale : float(1.0 / std::sqrt(double(c.head_dim)));
}

namespace {

[[noreturn]] void bad(const GgufFile& f, const std::string& key, const std::string& what) {
  throw GgufError("[model] " + f.path() + ": " + key + ": " + what);
}

int bounded_int(const GgufFile& f, const std::string& key, uint64_t lo, uint64_t hi) {
  const uint64_t v = f.get_uint(key);
  if (v < lo || v > hi)
    bad(f, key,
        "value " + std::to_string(v) + " outside [" + std::to_string(lo) + ", " +
            std::to_string(hi) + "]");
  return int(v);
}

int bounded_int_or(const GgufFile& f, const std::string& key, int def, uint64_t lo, uint64_t hi) {
  return f.has(key) ? bounded_int(f, key, lo, hi) : def;
}

double finite_float_or(const GgufFile& f, const std::string& key, double def, double lo,
                       double hi) {
  const double v = f.get_float_opt(key).value_or(def);
  if (!(std::isfinite(v) && v >= lo && v <= hi))
    bad(f, key,
        "value " + std::to_string(v) + " outside [" + std::to_string(lo) + ", " +
            std::to_string(hi) + "]");
  return v;
}

// `{arch}.rope.scaling.*` as llama.cpp's loader and llama_context read them for llama, qwen2 and
// qwen3: the type defaults to linear; the factor (or the older `rope.scale_linear`) sets
// freq_scale = 1/factor unless the type is none; YaRN runs with ext_factor 1, beta_fast 32 and
// beta_slow 1 (llama.cpp reads the `yarn_*` override keys only for other architectures, so they
// are ignored here too) and the original context (default: the training context); `attn_factor`
// multiplies cos and sin for every type. Llama 3's factors are a tensor (Model::load_weights).
void read_rope_scaling(const GgufFile& f, const std::string& a, ModelConfig& c) {
  RopeParams& r = c.rope;
  const std::string type = f.get_string_opt(a + "rope.scaling.type").value_or("linear");
  if (type != "none" && type != "linear" && type != "yarn")
    bad(f, a + "rope.scaling.type",
        "RoPE scaling '" + type + "' is not supported (supported: none, linear, yarn)");
  const std::string factor_key =
      f.has(a + "rope.scaling.factor") ? a + "rope.scaling.factor" : a + "rope.scale_linear";
  double factor = finite_float_or(f, factor_key, 0.0, 0.0, 1024.0);
  if (factor == 0.0) factor = 1.0;  // llama.cpp: 0 (or absent) means no scaling
  if (factor < 1.0) bad(f, factor_key, "must be 0 or in [1, 1024], got " + std::to_string(factor));
  r.freq_scale = type == "none" ? 1.f : float(1.0 / factor);
  r.attn_factor = float(finite_float_or(f, a + "rope.scaling.attn_factor", 1.0, 1e-3, 1e3));
  r.ext_factor = 0.f;
  if (type != "yarn") return;
  r.ext_factor = 1.f;
  r.beta_fast = 32.f;
  r.beta_slow = 1.f;
  r.n_ctx_orig =
      bounded_int_or(f, a + "rope.scaling.original_context_length", c.n_ctx, 1, 1u << 24);
  // DeepSeek's mscale_all_dim correction, whose meaning has changed across llama.cpp versions;
  // none of the supported architectures sets it.
  if (f.get_float_opt(a + "rope.scaling.yarn_log_multiplier").value_or(0.0) != 0.0)
    bad(f, a + "rope.scaling.yarn_log_multiplier", "is not supported (must be 0 or absent)");
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const GgufFile& f) {
  ModelConfig c;
  c.arch_name = f.get_string("general.architecture");
  if (c.arch_name == "llama") {
    c.arch = Arch::Llama;
  } else if (c.arch_name == "qwen2") {
    c.arch = Arch::Qwen2;
  } else if (c.arch_name == "qwen3") {
    c.arch = Arch::Qwen3;
  } else {
    bad(f, "general.architecture",
        "architecture '" + c.arch_name + "' is not supported (supported: llama, qwen2, qwen3)");
  }
  const std::string a = c.arch_name + ".";
  // Bounds are generous for real models and small enough that products cannot overflow.
  c.n_ctx = bounded_int(f, a + "context_length", 1, 1u << 24);
  c.n_embd = bounded_int(f, a + "embedding_length", 1, 1u << 16);
  c.n_layer = bounded_int(f, a + "block_count", 1, 1024);
  c.n_ff = bounded_int_or(f, a + "feed_forward_length", 0, 0, 1u << 18);
  c.n_head = bounded_int(f, a + "attention.head_count", 1, 1024);
  c.n_head_kv = bounded_int_or(f, a + "attention.head_count_kv", c.n_head, 1, 1024);
  if (c.n_head % c.n_head_kv != 0)
    bad(f, a + "attention.head_count_kv",
        std::to_string(c.n_head_kv) + " does not divide head_count " + std::to_string(c.n_head));
  const int default_hd = c.n_embd % c.n_head == 0 ? c.n_embd / c.n_head : 0;
  c.head_dim = bounded_int_or(f, a + "attention.key_length", default_hd, 1, 1024);
  if (c.head_dim == 0)
    bad(f, a + "attention.head_count", "embedding_length is not a multiple of head_count");
  if (f.has(a + "attention.value_length") &&
      f.get_uint(a + "attention.value_length") != uint64_t(c.head_dim))
    bad(f, a + "attention.value_length", "must equal key_length");
  c.rope.head_dim = c.head_dim;
  c.rope.n_rot = bounded_int_or(f, a + "rope.dimension_count", c.head_dim, 2, uint64_t(c.head_dim));
  if (c.rope.n_rot % 2) bad(f, a + "rope.dimension_count", "must be even");
  c.rope.freq_base = float(f.get_float_opt(a + "rope.freq_base").value_or(10000.0));
  if (!(c.rope.freq_base > 1.f) || !std::isfinite(c.rope.freq_base))
    bad(f, a + "rope.freq_base", "must be a finite number > 1");
  read_rope_scaling(f, a, c);
  c.rope.layout = c.arch == Arch::Llama ? RopeLayout::Adjacent : RopeLayout::HalfSplit;
  c.rms_eps = float(f.get_float_opt(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rms_eps > 0.f && c.rms_eps < 1.f))
    bad(f, a + "attention.layer_norm_rms_epsilon", "must be in (0, 1)");
  if (const auto scale = f.get_float_opt(a + "attention.scale")) {
    c.attn_scale = float(*scale);  // a float64 value beyond float's range becomes inf: refused
    if (!(std::isfinite(c.attn_scale) && c.attn_scale > 0.f))
      bad(f, a + "attention.scale", "must be a finite number > 0, got " + std::to_string(*scale));
  }
  c.qkv_bias = c.arch == Arch::Qwen2;
  c.qk_norm = c.arch == Arch::Qwen3;
  c.n_expert = bounded_int_or(f, a + "expert_count", 0, 0, 1024);
  if (c.n_expert > 0) {
    c.n_expert_used = bounded_int(f, a + "expert_used_count", 1, uint64_t(c.n_expert));
    c.n_ff_expert = bounded_int_or(f, a + "expert_feed_forward_length", c.n_ff, 1, 1u << 18);
  } else if (c.n_ff == 0) {
    bad(f, a + "feed_forward_length", "missing");
  }
  // Vocabulary size: the key when present, else the tokenizer's token count; the token embedding
  // tensor is checked against it when weights load.
  if (f.has(a + "vocab_size")) {
    c.n_vocab = bounded_int(f, a + "vocab_size", 1, 1u << 22);
  } else if (const GgufValue* t = f.find("tokenizer.ggml.tokens")) {
    c.n_vocab = int(t->array_size());
  }
  return c;
}

nlohmann::json config_json(const ModelConfig& c) {
  nlohmann::json j = {{"arch", c.arch_name},
                      {"n_vocab", c.n_vocab},
                      {"n_ctx", c.n_ctx},
                      {"n_embd", c.n_embd},
                      {"n_layer", c.n_layer},
                      {"n_head", c.n_head},
                      {"n_head_kv", c.n_head_kv},
                      {"head_dim", c.head_dim},
                      {"n_ff", c.n_ff},
                      {"n_expert", c.n_expert},
                      {"n_expert_used", c.n_expert_used},
                      {"n_ff_expert", c.n_ff_expert}};
  if (c.attn_scale > 0.f) j["attn_scale"] = c.attn_scale;
  return j;
}

}  // namespace accel
