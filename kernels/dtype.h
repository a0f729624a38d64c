// Weight element types the kernels understand, with ggml's type ids and block geometry.
// Owns only the description of a type (ids, names, block sizes, byte counts); conversion lives in
// fp16.h and quant.h, arithmetic in gemm.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace accel {

// Values are ggml's `ggml_type` ids, so a GGUF tensor's type field maps directly.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q5_0 = 6,  // read from files only: PackedWeight::pack repacks it into q8_0 (exactly)
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
  MXFP4 = 39  // ggml.h GGML_TYPE_MXFP4
};

// Returns the DType for a ggml type id, or nullopt when the engine does not support it.
std::optional<DType> dtype_from_ggml(uint32_t id);
std::string_view dtype_name(DType t);
// "f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "mxfp4" (q5_0 is named but not
// accepted: nothing writes it)
std::optional<DType> dtype_from_name(std::string_view name);

// Elements per block (1 for float types, 32 for q8_0/q4_0/q5_0/mxfp4, 256 for the k-quant
// super-blocks)
// and bytes per block.
size_t dtype_block_elems(DType t);
size_t dtype_block_bytes(DType t);
// Bytes of a row of `n` elements; n must be a multiple of the block size (ACCEL_CHECK).
size_t dtype_row_bytes(DType t, size_t n);

}  // namespace accel
