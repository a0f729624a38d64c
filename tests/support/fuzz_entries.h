// The entry points of the libFuzzer targets (tests/fuzz/fuzz_*.cpp) and the regression replay test
// (tests/harness/fuzz_regressions_test.cpp): untrusted bytes in, every documented bad-input error
// (std::runtime_error subclasses such as GgufError, TokenizerError, PlanError, Llama2cError, and
// std::invalid_argument) caught. Anything else escaping, or a sanitizer report, is a finding.
// Also the seed inputs each target starts from, generated here so no binary seed is committed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace accel::fuzz {

// A GGUF file as a loader reads it: the reader's validation, then the model config, the tokenizer
// built from its metadata (encode/decode of a fixed text), and the first row of every tensor
// dequantized (every block type, k-quants included).
int gguf(const uint8_t* data, size_t size);
// Tokenizer metadata alone (the same file format; TokenizerSpec::from_gguf and the tokenizer it
// builds, on a few texts including invalid UTF-8).
int tokenizer_metadata(const uint8_t* data, size_t size);
// The llama2.c importer: bytes [0, 4) = little-endian length L of the checkpoint, then L bytes of
// checkpoint, then the tokenizer.bin bytes.
int llama2c(const uint8_t* data, size_t size);
// A plan file: read by load_plan (JSON parsed, validated), then expanded into cases.
int plan(const uint8_t* data, size_t size);

int run(const std::string& target, const uint8_t* data, size_t size);  // by name, as below
const std::vector<std::string>& targets();  // "gguf", "tokenizer_metadata", "llama2c", "plan"
// Small valid inputs for a target (named, for corpus file names).
std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds(const std::string& target);

}  // namespace accel::fuzz
