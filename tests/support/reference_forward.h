// A naive double-precision forward pass written plainly from the architecture definitions,
// reading weights straight from the GGUF file: the independent oracle for Model::forward.
// Deliberately shares no computation with the engine (only the GGUF reader and ModelConfig).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace accel::test {

// Logits [T][n_vocab] for tokens at positions 0..T-1.
std::vector<double> reference_forward(const std::string& gguf_path,
                                      const std::vector<int32_t>& tokens);

}  // namespace accel::test
