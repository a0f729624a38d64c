// The KV record formats (kv_quant.h): scalar quantizers and dequantizers, the definition every
// kernel's in-register dequantization must reproduce bit for bit.
#include "kernels/kv_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/check.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace accel {

namespace {

// Scale and zero for a group with range [mn, mx] (see int4_quantize_group).
void int4_scale_zero(float mn, float mx, uint16_t* s_out, uint16_t* z_out) {
  uint16_t sh = f32_to_fp16((mx - mn) / 15.f);
  float s = fp16_to_f32(sh);
  uint16_t zh = s > 0 ? f32_to_fp16(-mn / s) : uint16_t(0);
  const bool degenerate = !(s > 0) || !std::isfinite(fp16_to_f32(zh));
  if (degenerate) {
    sh = f32_to_fp16(std::max(std::fabs(mn), std::fabs(mx)) / 15.f);
    s = fp16_to_f32(sh);
    zh = s > 0 ? f32_to_fp16(-mn / s) : uint16_t(0);
  }
  *s_out = sh;
  *z_out = zh;
}

}  // namespace

size_t kv_quant_record_bytes(KVQuant f, int head_dim) {
  ACCEL_CHECK(head_dim > 0 && head_dim % kKVQuantGroup == 0, "head_dim %d is not a multiple of %d",
              head_dim, kKVQuantGroup);
  const size_t groups = size_t(head_dim / kKVQuantGroup);
  switch (f) {
    case KVQuant::Int4:
      return size_t(head_dim) / 2 + groups * 4;
    case KVQuant::Q8_0:
      return groups * sizeof(BlockQ8_0);
  }
  return 0;
}

void int4_quantize_group(const float* x, uint8_t* codes16, uint16_t* scale, uint16_t* zero) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < kKVQuantGroup; ++i) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  int4_scale_zero(mn, mx, scale, zero);
  const float s = fp16_to_f32(*scale), z = fp16_to_f32(*zero);
  uint8_t q[kKVQuantGroup];
  for (int i = 0; i < kKVQuantGroup; ++i) {
    // std::nearbyint rounds half to even in the default rounding mode, as MLX's round does.
    q[i] = s > 0 ? uint8_t(std::nearbyint(std::clamp(x[i] / s + z, 0.f, 15.f))) : uint8_t(0);
  }
  for (int b = 0; b < kKVQuantGroup / 2; ++b) codes16[b] = uint8_t(q[2 * b] | (q[2 * b + 1] << 4));
}

void kv_quantize_head(KVQuant f, const float* x, int head_dim, uint8_t* record) {
  const int groups = head_dim / kKVQuantGroup;
  if (f == KVQuant::Q8_0) {
    quantize_row(DType::Q8_0, x, record, size_t(head_dim));
    return;
  }
  uint8_t* scales = record + head_dim / 2;
  uint8_t* zeros = scales + 2 * groups;
  for (int g = 0; g < groups; ++g) {
    uint16_t s, z;
    int4_quantize_group(x + g * kKVQuantGroup, record + g * (kKVQuantGroup / 2), &s, &z);
    put_fp16_bits(scales + 2 * g, s);
    put_fp16_bits(zeros + 2 * g, z);
  }
}

void kv_dequantize_head(KVQuant f, const uint8_t* record, int head_dim, float* x) {
  const int groups = head_dim / kKVQuantGroup;
  if (f == KVQuant::Q8_0) {
    dequantize_row(DType::Q8_0, record, x, size_t(head_dim));
    return;
  }
  const uint8_t* scales = record + head_dim / 2;
  const uint8_t* zeros = scales + 2 * groups;
  for (int g = 0; g < groups; ++g) {
    const float s = fp16_to_f32(fp16_bits_at(scales + 2 * g));
    const float z = fp16_to_f32(fp16_bits_at(zeros + 2 * g));
    const uint8_t* c = record + g * (kKVQuantGroup / 2);
    for (int b = 0; b < kKVQuantGroup / 2; ++b) {
      x[g * kKVQuantGroup + 2 * b] = int4_dequant(c[b] & 15, s, z);
      x[g * kKVQuantGroup + 2 * b + 1] = int4_dequant(c[b] >> 4, s, z);
    }
  }
}

size_t kv_quant_kblock_bytes(KVQuant f, int head_dim) {
  return size_t(kKBlockTokens) * kv_quant_record_bytes(f, head_dim);
}

size_t kv_quant_khead_bytes(KVQuant f, int head_dim, size_t capacity) {
  const size_t blocks = (capacity + kKBlockTokens - 1) / kKBlockTokens;
  return blocks * kv_quant_kblock_bytes(f, head_dim);
}

namespace {

// Byte offset of group g's scale (or zero: `which` 1) of token t inside a key block.
size_t kblock_param_offset(KVQuant f, int D, int g, int t, int which) {
  const size_t codes = f == KVQuant::Int4 ? int4_block_params_offset(D) : size_t(D) * 32;
  const size_t per_kind = size_t(D / kKVQuantGroup) * kKBlockTokens * 2;
  return codes + size_t(which) * per_kind + (size_t(g) * kKBlockTokens + size_t(t)) * 2;
}

}  // namespace

void kblock_put(KVQuant f, int D, const uint8_t* record, uint8_t* block, int t) {
  ACCEL_CHECK(t >= 0 && t < kKBlockTokens, "token %d of a %d-token key block", t, kKBlockTokens);
  const int groups = D / kKVQuantGroup;
  if (f == KVQuant::Q8_0) {
    for (int g = 0; g < groups; ++g) {
      const uint8_t* blk = record + g * sizeof(BlockQ8_0);
      std::memcpy(block + kblock_param_offset(f, D, g, t, 0), blk, 2);
      for (int i = 0; i < kKVQuantGroup; ++i)
        block[size_t(g * kKVQuantGroup + i) * 32 + size_t(t)] = blk[2 + i];
    }
    return;
  }
  const int b = t % 16, shift = t < 16 ? 0 : 4;
  for (int e = 0; e < D; ++e) {
    const int code = (record[e / 2] >> (e % 2 ? 4 : 0)) & 15;
    uint8_t& byte = block[size_t(e) * 16 + size_t(b)];
    byte = uint8_t((byte & ~(15 << shift)) | (code << shift));
  }
  for (int g = 0; g < groups; ++g) {
    std::memcpy(block + kblock_param_offset(f, D, g, t, 0), record + D / 2 + 2 * g, 2);
    std::memcpy(block + kblock_param_offset(f, D, g, t, 1), record + D / 2 + 2 * groups + 2 * g, 2);
  }
}

void kblock_get(KVQuant f, int D, const uint8_t* block, int t, uint8_t* record) {
  ACCEL_CHECK(t >= 0 && t < kKBlockTokens, "token %d of a %d-token key block", t, kKBlockTokens);
  const int groups = D / kKVQuantGroup;
  if (f == KVQuant::Q8_0) {
    for (int g = 0; g < groups; ++g) {
      uint8_t* blk = record + g * sizeof(BlockQ8_0);
      std::memcpy(blk, block + kblock_param_offset(f, D, g, t, 0), 2);
      for (int i = 0; i < kKVQuantGroup; ++i)
        blk[2 + i] = block[size_t(g * kKVQuantGroup + i) * 32 + size_t(t)];
    }
    return;
  }
  const int b = t % 16, shift = t < 16 ? 0 : 4;
  for (int e = 0; e < D; e += 2) {
    const int lo = (block[size_t(e) * 16 + size_t(b)] >> shift) & 15;
    const int hi = (block[size_t(e + 1) * 16 + size_t(b)] >> shift) & 15;
    record[e / 2] = uint8_t(lo | hi << 4);
  }
  for (int g = 0; g < groups; ++g) {
    std::memcpy(record + D / 2 + 2 * g, block + kblock_param_offset(f, D, g, t, 0), 2);
    std::memcpy(record + D / 2 + 2 * groups + 2 * g, block + kblock_param_offset(f, D, g, t, 1), 2);
  }
}

size_t kv_quant_vhead_bytes(KVQuant f, int head_dim, size_t capacity) {
  return f == KVQuant::Int4 ? kv_quant_khead_bytes(f, head_dim, capacity)
                            : capacity * kv_quant_record_bytes(f, head_dim);
}

namespace {

// Byte of an int4 value block holding code byte k (elements 2k, 2k + 1) of group g of token t.
size_t vblock_code_offset(int g, int k, int t) {
  return vblock_line_offset(g, t / 4) + size_t(k) * 4 + size_t(t % 4);
}

void check_vblock(KVQuant f, int t) {
  ACCEL_CHECK(f == KVQuant::Int4, "value blocks are an int4 layout; q8_0 values stay records");
  ACCEL_CHECK(t >= 0 && t < kKBlockTokens, "token %d of a %d-token value block", t, kKBlockTokens);
}

}  // namespace

void vblock_put(KVQuant f, int D, const uint8_t* record, uint8_t* block, int t) {
  check_vblock(f, t);
  const int groups = D / kKVQuantGroup;
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < kKVQuantGroup / 2; ++k)
      block[vblock_code_offset(g, k, t)] = record[g * (kKVQuantGroup / 2) + k];
    std::memcpy(block + kblock_param_offset(f, D, g, t, 0), record + D / 2 + 2 * g, 2);
    std::memcpy(block + kblock_param_offset(f, D, g, t, 1), record + D / 2 + 2 * groups + 2 * g, 2);
  }
}

void vblock_get(KVQuant f, int D, const uint8_t* block, int t, uint8_t* record) {
  check_vblock(f, t);
  const int groups = D / kKVQuantGroup;
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < kKVQuantGroup / 2; ++k)
      record[g * (kKVQuantGroup / 2) + k] = block[vblock_code_offset(g, k, t)];
    std::memcpy(record + D / 2 + 2 * g, block + kblock_param_offset(f, D, g, t, 0), 2);
    std::memcpy(record + D / 2 + 2 * groups + 2 * g, block + kblock_param_offset(f, D, g, t, 1), 2);
  }
}

}  // namespace accel
