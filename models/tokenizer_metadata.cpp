// write_tokenizer_metadata (see tokenizer_metadata.h). Optional arrays are written only when set.
#include "models/tokenizer_metadata.h"

namespace accel {

void write_tokenizer_metadata(GgufWriter& w, const TokenizerSpec& s) {
  w.set("tokenizer.ggml.model", GgufValue::of_string(s.model));
  if (!s.pre.empty()) w.set("tokenizer.ggml.pre", GgufValue::of_string(s.pre));
  w.set("tokenizer.ggml.tokens", GgufValue::of_string_array(s.tokens));
  if (!s.scores.empty()) w.set("tokenizer.ggml.scores", GgufValue::of_f32_array(s.scores));
  if (!s.types.empty()) w.set("tokenizer.ggml.token_type", GgufValue::of_i32_array(s.types));
  // llama.cpp refuses a gpt2 vocabulary without this key, even when it has no merges (byte-level).
  if (!s.merges.empty() || s.model == "gpt2")
    w.set("tokenizer.ggml.merges", GgufValue::of_string_array(s.merges));
  if (s.bos >= 0) w.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(uint32_t(s.bos)));
  if (s.eos >= 0) w.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(uint32_t(s.eos)));
  if (s.unk >= 0) w.set("tokenizer.ggml.unknown_token_id", GgufValue::of_u32(uint32_t(s.unk)));
  if (s.pad >= 0) w.set("tokenizer.ggml.padding_token_id", GgufValue::of_u32(uint32_t(s.pad)));
  w.set("tokenizer.ggml.add_bos_token", GgufValue::of_bool(s.add_bos));
  w.set("tokenizer.ggml.add_eos_token", GgufValue::of_bool(s.add_eos));
  if (s.model == "llama")
    w.set("tokenizer.ggml.add_space_prefix", GgufValue::of_bool(s.add_space_prefix));
}

}  // namespace accel
