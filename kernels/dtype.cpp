// Type table for DType: ids, names and block geometry (see dtype.h).
#include "kernels/dtype.h"

#include <cassert>

namespace accel {

std::optional<DType> dtype_from_ggml(uint32_t id) {
  switch (id) {
    case 0:
      return DType::F32;
    case 1:
      return DType::F16;
    case 2:
      return DType::Q4_0;
    case 8:
      return DType::Q8_0;
    case 30:
      return DType::BF16;
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
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0})
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

size_t dtype_block_elems(DType t) {
  return (t == DType::Q8_0 || t == DType::Q4_0) ? 32 : 1;
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
  }
  return 0;
}

size_t dtype_row_bytes(DType t, size_t n) {
  assert(n % dtype_block_elems(t) == 0);
  return n / dtype_block_elems(t) * dtype_block_bytes(t);
}

}  // namespace accel
