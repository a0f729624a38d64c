// Writes a TokenizerSpec as GGUF `tokenizer.ggml.*` metadata: the inverse of
// TokenizerSpec::from_gguf. Used by every GGUF this project writes (synthetic families, imports).
#pragma once
#include "models/gguf.h"
#include "models/tokenizer.h"

namespace accel {

void write_tokenizer_metadata(GgufWriter& w, const TokenizerSpec& s);

}  // namespace accel
