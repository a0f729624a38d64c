// Checks shared by the hybrid-model tests (qwen35, nemotron_h): bit-exact comparison of two
// caches' recurrent states, and a copy of a GGUF file with some metadata keys replaced (for
// markers that disagree with the tensors). Test support only; owns no model state.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/gguf.h"
#include "models/kv_cache.h"
#include "models/model.h"

namespace accel::test {

// The recurrent states of two caches, bit for bit (token count, conv window and scan state of
// every recurrent layer among the first n_layer).
::testing::AssertionResult same_states(const KVCache& a, const KVCache& b, int n_layer);

// Copies src to dst with the metadata keys in `keys` set (added or replaced), tensors unchanged;
// returns dst.
std::string with_keys(const std::string& src, const std::string& dst,
                      const std::vector<std::pair<std::string, GgufValue>>& keys);

// A tensor for with_tensors: its name, dims (ggml order), type and bytes.
struct TensorBytes {
  std::string name;
  std::vector<uint64_t> dims;
  DType type = DType::F32;
  std::vector<uint8_t> bytes;
};

// Copies src to dst without the tensors named in `drop` and with `add` appended, metadata
// unchanged; returns dst.
std::string with_tensors(const std::string& src, const std::string& dst,
                         const std::vector<std::string>& drop, const std::vector<TensorBytes>& add);

// The engine's contracts on a hybrid model `m`, on seeded tokens (seed), as gtest expectations:
//  - every position's logits bit-identical across prefill chunkings (1, 13, 64, 300 of 300
//    tokens) on 1 and 2 threads;
//  - a token decoded alone equals the same token inside a verify batch (9 tokens after 120) and
//    inside the whole prefill;
//  - PLD's verify step: feed k + 1 = 7 tokens after 80, keep j + 1 of them (trim, twice in a row),
//    then decode: the recurrent states equal prefilling exactly the kept tokens and every later
//    logit equals plain decoding's, bit for bit, for every j;
//  - a rollback past the last batch (the replay's inputs) is refused without changing the cache,
//    trimming everything clears every state, and a fresh prefill then gives a fresh cache's bits.
void expect_chunk_and_thread_invariance(const Model& m, uint64_t seed);
// Each file's model against the naive double forward (reference_forward.h) on 37 seeded tokens
// (seed 3) prefilled in chunks of 16, within 1e-4 absolute + 1e-4 relative (the tolerance
// model_qwen35_test.cpp and model_nemotron_h_test.cpp derive for their families).
void expect_members_match_reference(const std::vector<std::string>& paths);
// A sparse prefill (24 kept tokens at positions 0, 3, 4, 7, 8, ..., in chunks of 7) against the
// naive double forward of the file at `path` at the same positions, within 1e-4 absolute + 1e-4
// relative (the tolerance model_qwen35_test.cpp derives): attention layers mask by position and
// recurrent layers consume only the kept tokens, in order, on both sides.
void expect_sparse_positions_match_reference(const Model& m, const std::string& path,
                                             uint64_t seed);
void expect_decode_equals_verify_and_prefill(const Model& m, uint64_t seed);
void expect_trim_replay_equals_plain_decode(const Model& m, uint64_t seed);
void expect_trim_beyond_last_batch_refused(const Model& m, uint64_t seed);
// KV Prediction's store_pre_rope_kv into attention layer `layer` is refused naming the
// architecture (std::invalid_argument).
void expect_kv_prediction_refused(const Model& m, int layer);

}  // namespace accel::test
