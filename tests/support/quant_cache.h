// A quantized KV cache (int4 / q8_0) in the fused kernel's head-major layout, built from seeded
// random rows, with its exact dequantized values as token-major f32 rows: the input the
// attention_quant tests attend over and the values their double references use. For tests only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/attention_quant.h"
#include "kernels/kv_quant.h"

namespace accel::test {

struct QuantCache {
  KVQuant f;
  int hkv, D;
  size_t n, rec;
  std::vector<uint8_t> k, v;  // key blocks [head][n / 32 blocks], value records [head][n]
  std::vector<float> kf, vf;  // [n][hkv * D], the records dequantized
  std::vector<uint8_t> vblk;  // int4: the value records as value blocks [head][n / 32 blocks]
  size_t khead() const { return kv_quant_khead_bytes(f, D, n); }
  size_t vhead() const { return kv_quant_vhead_bytes(f, D, n); }
  // The kernel's view: key blocks, and value blocks (int4) or the records (q8_0).
  QuantKV view() const {
    return {f, k.data(), f == KVQuant::Int4 ? vblk.data() : v.data(), khead(), vhead()};
  }
  // Re-derives kf / vf and the value blocks from the records (after a test edits them).
  void dequantize();
};

// n entries of hkv heads: keys ~ N(0, kscale^2), values ~ N(0, 1), seeded.
QuantCache make_quant_cache(KVQuant f, int hkv, int D, size_t n, uint64_t seed, float kscale = 1.f);

}  // namespace accel::test
