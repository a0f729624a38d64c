// Greedy generation over Model::forward: chunked prefill, argmax decoding, and the bookkeeping a
// caller needs to time it. Owns no timing policy (harness does) and no sampling beyond argmax.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "models/model.h"

namespace accel {

// Index of the largest logit; ties go to the lowest index (the same rule everywhere, so greedy
// decoding and speculative verification agree).
int32_t argmax(std::span<const float> logits);

// Prefills tokens[i] at positions[i] in chunks of `chunk` tokens and returns the logits of the last
// token. With `all_logits` set, the logits of every token are appended to it ([T][n_vocab]).
std::vector<float> prefill(const Model& m, std::span<const int32_t> tokens,
                           std::span<const int32_t> positions, KVCache& cache, size_t chunk,
                           std::vector<float>* all_logits = nullptr,
                           const ForwardHooks* hooks = nullptr);

// Consecutive positions [start, start + n).
std::vector<int32_t> iota_positions(int32_t start, size_t n);

struct DecodeOptions {
  int max_tokens = 32;
  int32_t eos = -1;  // stop after emitting this token (-1: never)
  // Called with each generated token and its logits (before it is fed back); may be empty.
  std::function<void(int32_t token, std::span<const float> logits)> on_token;
};

// Greedy decoding given the logits of the last prompt token, continuing at absolute position
// `next_pos` (the prompt length, even when the cache holds fewer entries, e.g. after a sparse
// prefill). Returns the generated tokens (at most max_tokens; stops after EOS).
std::vector<int32_t> greedy_decode(const Model& m, KVCache& cache, std::vector<float> last_logits,
                                   int32_t next_pos, const DecodeOptions& opt);

}  // namespace accel
