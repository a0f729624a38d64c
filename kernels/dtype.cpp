// Type table for DType: ids, names and block geometry (see dtype.h).
#include "kernels/dtype.h"

#include "kernels/check.h"

namespace accel {

std::optional<DType> dtype_from_ggml(uint32_t id) {
  switch (id) {
    case 0:
      return DType::F32;
    case 1:
      return DType::F16;
    case 2:
      return DType::Q4_0;
    case 6:
      return DType::Q5_0;
    case 8:
      return DType::Q8_0;
    case 12:
      return DType::Q4_K;
    case 13:
      return DType::Q5_K;
    case 14:
      return DType::Q6_K;
    case 30:
      return DType::BF16;
    case 39:
      return DType::MXFP4;
    default:
      return std::nullopt;
  }
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::Q8_0:
      return "q8_0";
    case DType::Q4_0:
      return "q4_0";
    case DType::Q5_0:
      return "q5_0";
    case DType::Q4_K:
      return "q4_k";
    case DType::Q5_K:
      return "q5_k";
    case DType::Q6_K:
      return "q6_k";
    case DType::MXFP4:
      return "mxfp4";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K,
                  DType::Q5_K, DType::Q6_K, DType::MXFP4})
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

size_t dtype_block_elems(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::MXFP4:
      return 32;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      return 256;  // ggml's QK_K super-block
    default:
      return 1;
  }
}

size_t dtype_block_bytes(DType t) {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::Q8_0:
      return 2 + 32;  // fp16 scale + 32 int8
    case DType::Q4_0:
      return 2 + 16;  // fp16 scale + 32 nibbles
    case DType::Q5_0:
      return 2 + 4 + 16;  // fp16 scale + 32 fifth bits + 32 nibbles
    case DType::Q4_K:
      return 2 + 2 + 12 + 128;  // fp16 d, dmin + 8 packed 6-bit (scale, min) + 256 nibbles
    case DType::Q5_K:
      return 2 + 2 + 12 + 32 + 128;  // as q4_k + 256 high bits
    case DType::Q6_K:
      return 128 + 64 + 16 + 2;  // low nibbles, high 2-bit pairs, 16 int8 scales, fp16 d
    case DType::MXFP4:
      return 1 + 16;  // e8m0 scale + 32 nibbles
  }
  return 0;
}

size_t dtype_row_bytes(DType t, size_t n) {
  ACCEL_CHECK(n % dtype_block_elems(t) == 0, "%zu %.*s elements is not a whole number of blocks", n,
              int(dtype_name(t).size()), dtype_name(t).data());
  return n / dtype_block_elems(t) * dtype_block_bytes(t);
}

}  // namespace accel
