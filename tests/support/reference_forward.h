// A naive double-precision forward pass written plainly from the architecture definitions,
// reading weights straight from the GGUF file: the independent oracle for Model::forward.
// Deliberately shares no computation with the engine beyond the GGUF reader, ModelConfig, ggml's
// dequantize_row and, for k-quant matrices, the q8_K activation rounding the engine's contract
// defines (quantize_activations_q8_K, pinned by its own hand-worked test).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace accel::test {

// Logits [T][n_vocab] for tokens[t] at absolute position positions[t]. Masking is by position:
// token j is visible to token t iff positions[j] <= positions[t] (a sparse subset of a prompt at
// its original positions sees exactly its kept predecessors). Throws when the sizes differ.
std::vector<double> reference_forward(const std::string& gguf_path,
                                      const std::vector<int32_t>& tokens,
                                      const std::vector<int32_t>& positions);
// The same at positions 0..T-1.
std::vector<double> reference_forward(const std::string& gguf_path,
                                      const std::vector<int32_t>& tokens);

}  // namespace accel::test
