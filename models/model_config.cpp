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
    case Arch::Gemma3:
      return "gemma3";
    case Arch::Gemma4:
      return "gemma4";
    case Arch::GptOss:
      return "gpt-oss";
    case Arch::Qwen35:
      return "qwen35";
    case Arch::Qwen35Moe:
      return "qwen35moe";
    case Arch::NemotronH:
      return "nemotron_h";
    case Arch::NemotronHMoe:
      return "nemotron_h_moe";
    case Arch::Qwen3Next:
      return "qwen3next";
  }
  return "?";
}

float attention_scale(const ModelConfig& c) {
  return c.attn_scale > 0.f ? c.attn_scale : float(1.0 / std::sqrt(double(c.head_dim)));
}

LayerAttention layer_attention(const ModelConfig& c, int il) {
  LayerAttention a;
  a.sliding = c.n_swa > 0 && il >= 0 && size_t(il) < c.swa_layers.size() && c.swa_layers[il];
  a.window = a.sliding ? c.n_swa : 0;
  a.n_head_kv = size_t(il) < c.n_head_kv_layer.size() ? c.n_head_kv_layer[il] : c.n_head_kv;
  a.head_dim = a.sliding && c.head_dim_swa > 0 ? c.head_dim_swa : c.head_dim;
  a.n_rot = a.sliding && c.n_rot_swa > 0 ? c.n_rot_swa : c.rope.n_rot;
  a.rope_base = a.sliding && c.rope_base_swa > 0.f ? c.rope_base_swa : c.rope.freq_base;
  return a;
}

LayerAttention full_layer_attention(const ModelConfig& c) {
  for (int il = 0; il < c.n_layer; ++il)
    if (!layer_attention(c, il).sliding) return layer_attention(c, il);
  return layer_attention(c, 0);
}

bool has_sliding_layers(const ModelConfig& c) {
  for (uint8_t s : c.swa_layers)
    if (s) return true;
  return false;
}

bool is_recurrent_layer(const ModelConfig& c, int il) {
  return il >= 0 && size_t(il) < c.recurrent_layers.size() && c.recurrent_layers[size_t(il)];
}

bool has_recurrent_layers(const ModelConfig& c) {
  for (uint8_t r : c.recurrent_layers)
    if (r) return true;
  return false;
}

bool is_qwen35_arch(Arch a) {
  return a == Arch::Qwen35 || a == Arch::Qwen35Moe || a == Arch::Qwen3Next;
}

bool is_qwen35_moe_arch(Arch a) {
  return a == Arch::Qwen35Moe || a == Arch::Qwen3Next;
}

bool is_nemotron_h_arch(Arch a) {
  return a == Arch::NemotronH || a == Arch::NemotronHMoe;
}

bool is_ffn_only_layer(const ModelConfig& c, int il) {
  return il >= 0 && size_t(il) < c.ffn_layers.size() && c.ffn_layers[size_t(il)];
}

bool is_attention_layer(const ModelConfig& c, int il) {
  return il >= 0 && il < c.n_layer && !is_recurrent_layer(c, il) && !is_ffn_only_layer(c, il);
}

Mamba2LayerDims mamba2_layer_dims(const ModelConfig& c) {
  Mamba2LayerDims d;
  d.n_heads = c.ssm_dt_rank;
  d.head_dim = c.ssm_dt_rank > 0 ? c.ssm_d_inner / c.ssm_dt_rank : 0;
  d.d_state = c.ssm_d_state;
  d.n_groups = c.ssm_n_group;
  d.d_conv = c.ssm_d_conv;
  return d;
}

DeltaLayerDims delta_layer_dims(const ModelConfig& c) {
  DeltaLayerDims d;
  d.n_k_heads = c.ssm_n_group;
  d.n_v_heads = c.ssm_dt_rank;
  d.head_k_dim = c.ssm_d_state;
  d.head_v_dim = c.ssm_dt_rank > 0 ? c.ssm_d_inner / c.ssm_dt_rank : 0;
  d.d_conv = c.ssm_d_conv;
  return d;
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

// A key llama.cpp reads with get_key_or_arr into per-layer values: a scalar (every layer) or an
// array of exactly n_layer non-negative integers or booleans, each at most `hi`.
std::vector<uint64_t> per_layer_uints(const GgufFile& f, const std::string& key, int n_layer,
                                      uint64_t hi) {
  const GgufValue* v = f.find(key);
  std::vector<uint64_t> out;
  if (v->type != GgufType::ARRAY) {
    out.assign(size_t(n_layer), uint64_t(bounded_int(f, key, 0, hi)));
    return out;
  }
  if (v->array_size() != size_t(n_layer))
    bad(f, key,
        "array of " + std::to_string(v->array_size()) + " values, expected one per layer (" +
            std::to_string(n_layer) + ")");
  if (!v->arr_u.empty()) {
    out = v->arr_u;
  } else if (!v->arr_i.empty()) {
    for (int64_t x : v->arr_i) {
      if (x < 0) bad(f, key, "negative value " + std::to_string(x));
      out.push_back(uint64_t(x));
    }
  } else {
    bad(f, key, "must be an array of integers or booleans");
  }
  for (uint64_t x : out)
    if (x > hi) bad(f, key, "value " + std::to_string(x) + " above " + std::to_string(hi));
  return out;
}

// llama.cpp's set_swa_pattern(p) without dense_first: layer il slides iff il % p < p - 1.
std::vector<uint8_t> period_pattern(int n_layer, int p) {
  std::vector<uint8_t> s(size_t(n_layer), 0);
  for (int il = 0; il < n_layer; ++il) s[size_t(il)] = il % p < p - 1;
  return s;
}

// The sliding-window keys of gemma3, gemma4 and gpt-oss as llama.cpp 3f545bec's loaders read them
// (src/models/gemma3.cpp, gemma4.cpp, openai-moe.cpp), plus refusals llama.cpp does not make: a
// window of 0 (gemma3 would read it as "no sliding layers"; a file stating a window of 0 is
// refused here rather than guessed), a period above the layer count, and features of these
// families the engine does not implement (Gemma 4's per-layer embeddings, shared KV layers and
// experts).
void read_sliding_window(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const std::string win = a + "attention.sliding_window",
                    pat = a + "attention.sliding_window_pattern";
  const bool required = c.arch != Arch::Gemma3;  // gemma3 without the key: every layer is full
  if (!required && !f.has(win)) return;
  c.n_swa = bounded_int(f, win, 0, 1u << 24);
  if (c.n_swa == 0) bad(f, win, "a sliding window of 0 positions (no key would be visible)");
  if (c.arch == Arch::Gemma4) {
    if (!f.has(pat)) bad(f, pat, "missing (gemma4 gives one flag per layer)");
    const auto flags = per_layer_uints(f, pat, c.n_layer, 1);
    c.swa_layers.assign(flags.begin(), flags.end());
  } else {
    int period = c.arch == Arch::Gemma3 ? 6 : 2;  // llama.cpp's defaults
    // llama.cpp reads this key as a scalar only (an array leaves the default period).
    if (f.has(pat) && f.find(pat)->type != GgufType::ARRAY) {
      period = bounded_int(f, pat, 1, 1u << 24);
      if (period > c.n_layer)
        bad(f, pat,
            "period " + std::to_string(period) + " is longer than the layer count (" +
                std::to_string(c.n_layer) + ")");
    }
    c.swa_layers = period_pattern(c.n_layer, period);
  }
  // Gemma's sliding layers default to RoPE base 10000 (llama_hparams' default); gpt-oss's to the
  // full layers' base.
  c.rope_base_swa = c.arch == Arch::GptOss ? c.rope.freq_base : 10000.f;
  if (const auto b = f.get_float_opt(a + "rope.freq_base_swa")) {
    c.rope_base_swa = float(*b);
    if (!(c.rope_base_swa > 1.f) || !std::isfinite(c.rope_base_swa))
      bad(f, a + "rope.freq_base_swa", "must be a finite number > 1");
  }
}

// Head sizes of sliding layers (llama.cpp reads key_length_swa for every architecture; gemma4
// requires it) and per-layer KV head counts, validated against the query heads.
void read_layer_shapes(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const std::string kls = a + "attention.key_length_swa", vls = a + "attention.value_length_swa";
  if (c.arch == Arch::Gemma4 && !f.has(kls)) bad(f, kls, "missing");
  c.head_dim_swa = bounded_int_or(f, kls, c.head_dim, 1, 1024);
  if (c.head_dim_swa % 2) bad(f, kls, "head size " + std::to_string(c.head_dim_swa) + " is odd");
  if (f.has(vls) && f.get_uint(vls) != uint64_t(c.head_dim_swa))
    bad(f, vls, "must equal key_length_swa");
  const int rot_full = c.rope.n_rot == c.head_dim ? c.head_dim_swa : c.rope.n_rot;
  c.n_rot_swa =
      bounded_int_or(f, a + "rope.dimension_count_swa", rot_full, 2, uint64_t(c.head_dim_swa));
  if (c.n_rot_swa % 2) bad(f, a + "rope.dimension_count_swa", "must be even");
  const std::string hkv = a + "attention.head_count_kv";
  if (f.has(hkv) && f.find(hkv)->type == GgufType::ARRAY) {
    for (uint64_t x : per_layer_uints(f, hkv, c.n_layer, 1024)) {
      if (x == 0 || c.n_head % int(x) != 0)
        bad(f, hkv,
            "per-layer value " + std::to_string(x) + " does not divide head_count " +
                std::to_string(c.n_head));
      c.n_head_kv_layer.push_back(int(x));
    }
    c.n_head_kv = c.n_head_kv_layer[0];
  }
  c.final_softcap = float(finite_float_or(f, a + "final_logit_softcapping", 0.0, 0.0, 1e6));
}

// Whether interleaved M-RoPE (ggml's GGML_ROPE_TYPE_IMROPE) turns rotated pair i of a text token
// by the token's position: pair i falls in sector i % (sum of sections), and sectors 3j, 3j + 1,
// 3j + 2 take the t, h, w positions (all equal to the token's) while j is below that section's
// size; every other pair takes the fourth position, which is 0 for text (no rotation).
bool imrope_turns_by_position(const std::vector<int>& s, int pair) {
  const int sect_dims = s[0] + s[1] + s[2] + s[3];
  const int sector = pair % sect_dims;
  return sector < 3 * s[sector % 3];
}

// qwen35's hybrid keys as llama_model_qwen35::load_arch_hparams reads them (3f545bec), refusing
// what llama.cpp would divide by or silently misread: a zero interval or state size, value heads
// not a multiple of key heads, an inner size other than value heads x state size (qwen35 sizes
// its value heads by state_size when it loads tensors and by inner_size / time_step_rank when it
// runs them), MTP blocks marked recurrent, and M-RoPE sections that leave a rotated pair at
// position 0.
// The keys both hybrids share: NextN blocks (counted in block_count, not in n_layer) and the
// ssm.* sizes within the given bounds, a state size of 0 refused. Returns block_count.
int read_ssm_keys(const GgufFile& f, const std::string& a, ModelConfig& c, uint64_t max_inner,
                  uint64_t max_heads) {
  const int n_layer_all = c.n_layer;
  const std::string nextn = a + "nextn_predict_layers";
  c.n_layer_nextn = bounded_int_or(f, nextn, 0, 0, 1024);
  if (c.n_layer_nextn >= n_layer_all)
    bad(f, nextn, "must be below block_count (" + std::to_string(n_layer_all) + ")");
  c.n_layer = n_layer_all - c.n_layer_nextn;
  c.ssm_d_conv = bounded_int(f, a + "ssm.conv_kernel", 1, 64);
  c.ssm_d_inner = bounded_int(f, a + "ssm.inner_size", 1, max_inner);
  c.ssm_d_state = bounded_int(f, a + "ssm.state_size", 0, 1024);
  if (c.ssm_d_state == 0) bad(f, a + "ssm.state_size", "a state size of 0");
  c.ssm_dt_rank = bounded_int(f, a + "ssm.time_step_rank", 1, max_heads);
  c.ssm_n_group = bounded_int(f, a + "ssm.group_count", 1, max_heads);
  return n_layer_all;
}

// qwen35's interleaved M-RoPE sections, accepted only when every rotated pair of a text token
// turns by the token's position (then M-RoPE is NeoX RoPE over n_rot dimensions).
void read_rope_sections(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const std::string sk = a + "rope.dimension_sections";
  const GgufValue* sv = f.find(sk);
  if (!sv) bad(f, sk, "missing (llama.cpp requires it)");
  if (sv->type != GgufType::ARRAY || sv->array_size() == 0 || sv->array_size() > 4 ||
      (sv->arr_u.empty() && sv->arr_i.empty()))
    bad(f, sk, "must be an array of 1 to 4 integers");
  c.rope_sections.assign(4, 0);
  for (size_t i = 0; i < sv->array_size(); ++i) {
    const int64_t v = sv->arr_u.empty() ? sv->arr_i[i] : int64_t(sv->arr_u[i]);
    if (v < 0 || v > 1024) bad(f, sk, "section " + std::to_string(v) + " outside [0, 1024]");
    c.rope_sections[i] = int(v);
  }
  const int sect_dims =
      c.rope_sections[0] + c.rope_sections[1] + c.rope_sections[2] + c.rope_sections[3];
  if (c.rope_sections[0] + c.rope_sections[1] + c.rope_sections[2] == 0 || sect_dims > c.head_dim)
    bad(f, sk, "sections must be non-zero and sum to at most the head size");
  for (int i = 0; i < c.rope.n_rot / 2; ++i)
    if (!imrope_turns_by_position(c.rope_sections, i))
      bad(f, sk,
          "rotated pair " + std::to_string(i) +
              " would turn by the fourth (vision) position; only sections that rotate every pair "
              "of a text token are supported");
}

void read_hybrid(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const int n_layer_all = read_ssm_keys(f, a, c, 1u << 16, 1024);
  if (c.ssm_dt_rank % c.ssm_n_group != 0)
    bad(f, a + "ssm.group_count",
        std::to_string(c.ssm_n_group) + " key heads do not divide time_step_rank's " +
            std::to_string(c.ssm_dt_rank) + " value heads");
  if (uint64_t(c.ssm_d_inner) != uint64_t(c.ssm_dt_rank) * uint64_t(c.ssm_d_state))
    bad(f, a + "ssm.inner_size",
        std::to_string(c.ssm_d_inner) + " is not time_step_rank x state_size (" +
            std::to_string(c.ssm_dt_rank) + " x " + std::to_string(c.ssm_d_state) + ")");
  const std::string rl = a + "attention.recurrent_layers", fi = a + "full_attention_interval";
  if (f.has(rl)) {
    const auto flags = per_layer_uints(f, rl, n_layer_all, 1);
    c.recurrent_layers.assign(flags.begin(), flags.begin() + c.n_layer);
    for (int il = c.n_layer; il < n_layer_all; ++il)
      if (flags[size_t(il)])
        bad(f, rl, "marks NextN block " + std::to_string(il) + " recurrent (they attend)");
  } else {
    const int interval = bounded_int_or(f, fi, 4, 0, 1024);
    if (interval == 0) bad(f, fi, "an interval of 0 layers");
    c.recurrent_layers.assign(size_t(c.n_layer), 0);
    for (int il = 0; il < c.n_layer; ++il)
      c.recurrent_layers[size_t(il)] = (il + 1) % interval != 0;
  }
  // qwen3next has plain NeoX RoPE (llama.cpp's rope_ext; it never reads the sections key).
  if (c.arch != Arch::Qwen3Next) read_rope_sections(f, a, c);
  if (c.rope.ext_factor != 0.f)
    bad(f, a + "rope.scaling.type", "YaRN is not supported for qwen35 (ggml-angle RoPE)");
  c.attn_output_gate = true;
  c.qk_norm = true;
}

// nemotron_h's keys as llama_model_nemotron_h::load_arch_hparams reads them (3f545bec): the block
// kinds from the per-layer attention.head_count_kv and feed_forward_length arrays (recurrent iff
// both are 0, attention iff only feed_forward_length is 0, else FFN-only) and the Mamba-2 sizes.
// Refused by key, where llama.cpp would assert, divide or silently misread: a state size of 0,
// an inner size that time_step_rank (heads) does not divide, group counts that do not divide the
// heads (the scan shares B/C across a group of heads) or the inner size (the grouped norm),
// arrays of the wrong length, an FFN block that also states KV heads, and attention (or FFN)
// layers whose KV head counts (widths) differ: the cache keeps one K/V row shape.
void read_nemotron_h(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const int n_layer_all = read_ssm_keys(f, a, c, 1u << 17, 1u << 14);
  if (c.ssm_d_inner % c.ssm_dt_rank != 0)
    bad(f, a + "ssm.time_step_rank",
        std::to_string(c.ssm_dt_rank) + " heads do not divide inner_size " +
            std::to_string(c.ssm_d_inner));
  if (c.ssm_dt_rank % c.ssm_n_group != 0 || c.ssm_d_inner % c.ssm_n_group != 0)
    bad(f, a + "ssm.group_count",
        std::to_string(c.ssm_n_group) + " groups do not divide time_step_rank's " +
            std::to_string(c.ssm_dt_rank) + " heads and inner_size " +
            std::to_string(c.ssm_d_inner));
  const std::string hkv = a + "attention.head_count_kv", ff = a + "feed_forward_length";
  if (!f.has(hkv)) bad(f, hkv, "missing (nemotron_h marks its layer kinds with it)");
  if (!f.has(ff)) bad(f, ff, "missing (nemotron_h marks its layer kinds with it)");
  const auto kv = per_layer_uints(f, hkv, n_layer_all, 1024);
  const auto fw = per_layer_uints(f, ff, n_layer_all, 1u << 18);
  c.recurrent_layers.assign(size_t(c.n_layer), 0);
  c.ffn_layers.assign(size_t(c.n_layer), 0);
  c.n_head_kv = 0;
  c.n_ff = 0;
  for (int il = 0; il < c.n_layer; ++il) {
    const int h = int(kv[size_t(il)]), w = int(fw[size_t(il)]);
    const std::string at = "layer " + std::to_string(il) + ": ";
    if (h == 0 && w == 0) {
      c.recurrent_layers[size_t(il)] = 1;
    } else if (w == 0) {
      if (c.n_head % h != 0)
        bad(f, hkv,
            at + std::to_string(h) + " does not divide head_count " + std::to_string(c.n_head));
      if (c.n_head_kv != 0 && h != c.n_head_kv)
        bad(f, hkv,
            at + std::to_string(h) + " KV heads where an earlier attention layer has " +
                std::to_string(c.n_head_kv) + " (one row shape is supported)");
      c.n_head_kv = h;
    } else {
      if (h != 0)
        bad(f, hkv,
            at + "an FFN block (feed_forward_length " + std::to_string(w) + ") with " +
                std::to_string(h) + " KV heads");
      if (c.n_ff != 0 && w != c.n_ff)
        bad(f, ff,
            at + "width " + std::to_string(w) + " where an earlier FFN block has " +
                std::to_string(c.n_ff) + " (one width is supported)");
      c.ffn_layers[size_t(il)] = 1;
      c.n_ff = w;
    }
  }
  if (c.n_head_kv == 0) c.n_head_kv = c.n_head;  // no attention layer: the value is unused
}

// nemotron_h_moe's expert keys as llama_model_nemotron_h::load_arch_hparams reads them: the
// shared expert's width (its tensors are required, so 0 or missing is refused), the weights'
// norm flag and scale, and the latent width. Expert groups (expert_group_count > 1: selection
// within the best groups) are refused: build_moe_ffn's group step is not implemented here, and no
// converted file needs it (llama.cpp's NemotronH converter writes no expert_group_used_count,
// which its loader requires above 0 once there are groups, so such a file loads nowhere).
void read_nemotron_h_moe(const GgufFile& f, const std::string& a, ModelConfig& c) {
  c.n_ff_shexp = bounded_int(f, a + "expert_shared_feed_forward_length", 1, 1u << 18);
  if (const GgufValue* v = f.find(a + "expert_weights_norm")) {
    if (v->type != GgufType::BOOL) bad(f, a + "expert_weights_norm", "must be a bool");
    c.expert_weights_norm = v->u != 0;
  }
  c.expert_weights_scale = float(finite_float_or(f, a + "expert_weights_scale", 0.0, 0.0, 1e3));
  c.moe_latent = bounded_int_or(f, a + "moe_latent_size", 0, 0, 1u << 16);
  if (bounded_int_or(f, a + "expert_group_count", 0, 0, 1024) > 1)
    bad(f, a + "expert_group_count", "grouped expert selection is not supported");
}

bool sliding_arch(Arch a) {
  return a == Arch::Gemma3 || a == Arch::Gemma4 || a == Arch::GptOss;
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
  } else if (c.arch_name == "gemma3") {
    c.arch = Arch::Gemma3;
  } else if (c.arch_name == "gemma4") {
    c.arch = Arch::Gemma4;
  } else if (c.arch_name == "gpt-oss") {
    c.arch = Arch::GptOss;
  } else if (c.arch_name == "qwen35") {
    c.arch = Arch::Qwen35;
  } else if (c.arch_name == "qwen35moe") {
    c.arch = Arch::Qwen35Moe;
  } else if (c.arch_name == "nemotron_h") {
    c.arch = Arch::NemotronH;
  } else if (c.arch_name == "nemotron_h_moe") {
    c.arch = Arch::NemotronHMoe;
  } else if (c.arch_name == "qwen3next") {
    c.arch = Arch::Qwen3Next;
  } else {
    bad(f, "general.architecture",
        "architecture '" + c.arch_name +
            "' is not supported (supported: llama, qwen2, qwen3, gemma3, gemma4, gpt-oss, "
            "qwen35, qwen35moe, qwen3next, nemotron_h, nemotron_h_moe)");
  }
  const std::string a = c.arch_name + ".";
  // Bounds are generous for real models and small enough that products cannot overflow.
  c.n_ctx = bounded_int(f, a + "context_length", 1, 1u << 24);
  c.n_embd = bounded_int(f, a + "embedding_length", 1, 1u << 16);
  c.n_layer = bounded_int(f, a + "block_count", 1, 1024);
  // nemotron_h(_moe) gives the FFN width per layer (read_nemotron_h).
  if (!is_nemotron_h_arch(c.arch))
    c.n_ff = bounded_int_or(f, a + "feed_forward_length", 0, 0, 1u << 18);
  c.n_head = bounded_int(f, a + "attention.head_count", 1, 1024);
  const std::string hkv_key = a + "attention.head_count_kv";
  const bool hkv_array = f.has(hkv_key) && f.find(hkv_key)->type == GgufType::ARRAY;
  if (hkv_array && !sliding_arch(c.arch) && !is_nemotron_h_arch(c.arch))
    bad(f, hkv_key, "per-layer values are read for gemma3, gemma4, gpt-oss and nemotron_h only");
  c.n_head_kv = hkv_array ? c.n_head : bounded_int_or(f, hkv_key, c.n_head, 1, 1024);
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
  // llama.cpp's rope type: NORM (adjacent pairs) for llama, NEOX (halves) for the others here.
  c.rope.layout = c.arch == Arch::Llama ? RopeLayout::Adjacent : RopeLayout::HalfSplit;
  c.rms_eps = float(f.get_float_opt(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rms_eps > 0.f && c.rms_eps < 1.f))
    bad(f, a + "attention.layer_norm_rms_epsilon", "must be in (0, 1)");
  if (const auto scale = f.get_float_opt(a + "attention.scale")) {
    c.attn_scale = float(*scale);  // a float64 value beyond float's range becomes inf: refused
    if (!(std::isfinite(c.attn_scale) && c.attn_scale > 0.f))
      bad(f, a + "attention.scale", "must be a finite number > 0, got " + std::to_string(*scale));
  }
  c.qkv_bias = c.arch == Arch::Qwen2 || c.arch == Arch::GptOss;
  c.qk_norm = c.arch == Arch::Qwen3 || c.arch == Arch::Gemma3 || c.arch == Arch::Gemma4;
  if (sliding_arch(c.arch)) {
    read_sliding_window(f, a, c);
    read_layer_shapes(f, a, c);
    c.attn_sinks = c.arch == Arch::GptOss;
    // llama.cpp does not read attention.scale for these: gemma3 takes 1/sqrt(n_embd / n_head) for
    // its 62-layer 27B and 1/sqrt(head_dim) otherwise, gemma4 takes 1.0 (Q and K are normed).
    if (c.arch == Arch::Gemma3)
      c.attn_scale = c.n_layer == 62 ? float(1.0 / std::sqrt(double(c.n_embd / c.n_head)))
                                     : float(1.0 / std::sqrt(double(c.head_dim)));
    else if (c.arch == Arch::Gemma4)
      c.attn_scale = 1.f;
    if (c.arch == Arch::Gemma4) {
      const std::string pl = a + "embedding_length_per_layer_input";
      if (!f.has(pl)) bad(f, pl, "missing (llama.cpp requires it; 0 for the dense 31B)");
      if (f.get_uint(pl) != 0)
        bad(f, pl, "per-layer embeddings (Gemma 4 E2B / E4B) are not supported");
      if (f.get_uint_opt(a + "attention.shared_kv_layers").value_or(0) != 0)
        bad(f, a + "attention.shared_kv_layers", "shared KV layers are not supported");
      if (f.has(a + "expert_count"))
        bad(f, a + "expert_count", "Gemma 4's mixture of experts is not supported");
    }
  }
  if (is_qwen35_arch(c.arch)) read_hybrid(f, a, c);
  if (is_nemotron_h_arch(c.arch)) read_nemotron_h(f, a, c);
  c.n_expert = bounded_int_or(f, a + "expert_count", 0, 0, 1024);
  // qwen3next: llama.cpp refuses zero experts ("model cannot have zero experts").
  if (is_qwen35_moe_arch(c.arch) && c.n_expert == 0) bad(f, a + "expert_count", "missing or 0");
  if (c.arch == Arch::Qwen35 && c.n_expert > 0)
    bad(f, a + "expert_count", "qwen35 has a dense FFN (experts are qwen35moe's)");
  if (c.arch == Arch::NemotronH && c.n_expert > 0)
    bad(f, a + "expert_count", "nemotron_h has dense FFN blocks (experts are nemotron_h_moe's)");
  if (c.arch == Arch::NemotronHMoe && c.n_expert == 0) bad(f, a + "expert_count", "missing or 0");
  if (c.n_expert > 0) {
    c.n_expert_used = bounded_int(f, a + "expert_used_count", 1, uint64_t(c.n_expert));
    // qwen35moe's and nemotron_h_moe's default is feed_forward_length / expert_used_count.
    const int def_ff = is_qwen35_moe_arch(c.arch) || c.arch == Arch::NemotronHMoe
                           ? c.n_ff / c.n_expert_used
                           : c.n_ff;
    c.n_ff_expert = bounded_int_or(f, a + "expert_feed_forward_length", def_ff, 1, 1u << 18);
    if (is_qwen35_moe_arch(c.arch))
      c.n_ff_shexp =
          bounded_int_or(f, a + "expert_shared_feed_forward_length", c.n_ff, 1, 1u << 18);
    if (c.n_ff_expert == 0) bad(f, a + "expert_feed_forward_length", "missing");
    if (is_qwen35_moe_arch(c.arch) && c.n_ff_shexp == 0)
      bad(f, a + "expert_shared_feed_forward_length", "missing");
    if (c.arch == Arch::NemotronHMoe) read_nemotron_h_moe(f, a, c);
  } else if (c.n_ff == 0 && c.arch != Arch::NemotronH) {  // nemotron_h: FFN blocks are optional
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
  if (c.n_swa > 0) {
    j["n_swa"] = c.n_swa;
    j["swa_layers"] = c.swa_layers;
    j["head_dim_swa"] = c.head_dim_swa;
    j["rope_base_swa"] = c.rope_base_swa;
  }
  if (!c.n_head_kv_layer.empty()) j["n_head_kv_layer"] = c.n_head_kv_layer;
  if (c.final_softcap > 0.f) j["final_softcap"] = c.final_softcap;
  if (c.attn_sinks) j["attn_sinks"] = true;
  if (has_recurrent_layers(c)) {
    j["recurrent_layers"] = c.recurrent_layers;
    j["ssm_d_conv"] = c.ssm_d_conv;
    j["ssm_d_inner"] = c.ssm_d_inner;
    j["ssm_d_state"] = c.ssm_d_state;
    j["ssm_dt_rank"] = c.ssm_dt_rank;
    j["ssm_n_group"] = c.ssm_n_group;
  }
  if (c.n_ff_shexp > 0) j["n_ff_shexp"] = c.n_ff_shexp;
  if (!c.ffn_layers.empty()) j["ffn_layers"] = c.ffn_layers;
  if (c.arch == Arch::NemotronHMoe) {
    j["expert_weights_norm"] = c.expert_weights_norm;
    j["expert_weights_scale"] = c.expert_weights_scale;
    j["moe_latent"] = c.moe_latent;
  }
  return j;
}

}  // namespace accel
