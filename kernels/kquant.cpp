// k-quant block dequantization (ggml's reference formulas, same operations in the same order), our
// straightforward quantizer, and the q8_K activation quantizer of the integer GEMM path (see
// kquant.h). Must not change the dequantized values: tests pin them to ggml's formulas.
#include "kernels/kquant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "kernels/fp16.h"

// GCC 12's bug 105593 (see simd.h): its AVX-512 intrinsics warn once inlined into the q8_K
// quantizer.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace accel {

void dequantize_row_q4_K(const BlockQ4_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* q = x[i].qs;
    const float d = fp16_to_f32(x[i].d);
    const float min = fp16_to_f32(x[i].dmin);
    int is = 0;
    uint8_t sc, m;
    for (size_t j = 0; j < kQK_K; j += 64) {
      kquant_scale_min(is + 0, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = min * m;
      kquant_scale_min(is + 1, x[i].scales, sc, m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

void dequantize_row_q5_K(const BlockQ5_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    const float d = fp16_to_f32(x[i].d);
    const float min = fp16_to_f32(x[i].dmin);
    int is = 0;
    uint8_t sc, m;
    uint8_t u1 = 1, u2 = 2;
    for (size_t j = 0; j < kQK_K; j += 64) {
      kquant_scale_min(is + 0, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = min * m;
      kquant_scale_min(is + 1, x[i].scales, sc, m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      ql += 32;
      is += 2;
      u1 = uint8_t(u1 << 2);
      u2 = uint8_t(u2 << 2);
    }
  }
}

void dequantize_row_q6_K(const BlockQ6_K* x, float* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (size_t h = 0; h < kQK_K; h += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int8_t q1 = int8_t((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int8_t q2 = int8_t((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int8_t q3 = int8_t((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int8_t q4 = int8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

namespace {

int nearest(float v) {
  return int(std::lrint(v));  // ties to even (default rounding mode)
}

// The fp16 super-block scale for sub-block parameters whose largest value is `max_param`, coded
// on `levels` steps; returns the fp16 bits and sets `used` to the exact float it decodes to.
uint16_t super_scale(float max_param, int levels, float& used) {
  const uint16_t h = f32_to_fp16(max_param / float(levels));
  used = fp16_to_f32(h);
  return h;
}

// Shared by q4_K (nmax 15) and q5_K (nmax 31): per 32-element sub-block, an affine grid from
// min(0, min x) to max x; the 6-bit scale and min codes; then the codes L[256] against the
// rounded parameters. Writes d, dmin, the packed scales, and L.
void quantize_affine(const float* x, int nmax, uint16_t& d_out, uint16_t& dmin_out,
                     uint8_t scales[12], uint8_t L[kQK_K]) {
  float scale[8], minv[8], max_scale = 0, max_min = 0;
  for (int s = 0; s < 8; ++s) {
    float lo = 0, hi = -INFINITY;
    for (int i = 0; i < 32; ++i) {
      lo = std::min(lo, x[32 * s + i]);
      hi = std::max(hi, x[32 * s + i]);
    }
    scale[s] = std::max(0.f, hi - lo) / float(nmax);
    minv[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, minv[s]);
  }
  float d, dmin;
  d_out = super_scale(max_scale, 63, d);
  dmin_out = super_scale(max_min, 63, dmin);
  std::memset(scales, 0, 12);
  for (int s = 0; s < 8; ++s) {
    const uint8_t ls = uint8_t(d > 0 ? std::clamp(nearest(scale[s] / d), 0, 63) : 0);
    const uint8_t lm = uint8_t(dmin > 0 ? std::clamp(nearest(minv[s] / dmin), 0, 63) : 0);
    if (s < 4) {  // ggml's packing, the inverse of kquant_scale_min
      scales[s] = ls;
      scales[s + 4] = lm;
    } else {
      scales[s + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      scales[s - 4] |= uint8_t((ls >> 4) << 6);
      scales[s - 0] |= uint8_t((lm >> 4) << 6);
    }
    const float d1 = d * ls, m1 = dmin * lm;
    for (int i = 0; i < 32; ++i)
      L[32 * s + i] = uint8_t(d1 > 0 ? std::clamp(nearest((x[32 * s + i] + m1) / d1), 0, nmax) : 0);
  }
}

}  // namespace

void quantize_row_q4_K(const float* x, BlockQ4_K* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    uint8_t L[kQK_K];
    quantize_affine(x, 15, y[i].d, y[i].dmin, y[i].scales, L);
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l)
        y[i].qs[32 * g + l] = uint8_t(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
  }
}

void quantize_row_q5_K(const float* x, BlockQ5_K* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    uint8_t L[kQK_K];
    quantize_affine(x, 31, y[i].d, y[i].dmin, y[i].scales, L);
    std::memset(y[i].qh, 0, sizeof y[i].qh);
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l) {
        const uint8_t a = L[64 * g + l], b = L[64 * g + 32 + l];
        y[i].qs[32 * g + l] = uint8_t((a & 0xF) | ((b & 0xF) << 4));
        y[i].qh[l] |= uint8_t(((a >> 4) << (2 * g)) | ((b >> 4) << (2 * g + 1)));
      }
  }
}

void quantize_row_q6_K(const float* x, BlockQ6_K* y, size_t n) {
  for (size_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    // Symmetric per 16: scale = absmax / 31 so codes span [-31, 31] (no clipping before the
    // scale's own rounding to the int8 grid).
    float scale[16], max_scale = 0;
    for (int g = 0; g < 16; ++g) {
      float amax = 0;
      for (int k = 0; k < 16; ++k) amax = std::max(amax, std::fabs(x[16 * g + k]));
      scale[g] = amax / 31.f;
      max_scale = std::max(max_scale, scale[g]);
    }
    float d;
    y[i].d = super_scale(max_scale, 127, d);
    uint8_t L[kQK_K];
    for (int g = 0; g < 16; ++g) {
      const int sc = d > 0 ? std::clamp(nearest(scale[g] / d), 0, 127) : 0;
      y[i].scales[g] = int8_t(sc);
      const float ds = d * float(sc);
      for (int k = 0; k < 16; ++k)
        L[16 * g + k] =
            uint8_t((ds > 0 ? std::clamp(nearest(x[16 * g + k] / ds), -32, 31) : 0) + 32);
    }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l) {
        const uint8_t* Lh = L + 128 * h;
        const uint8_t q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
        y[i].ql[64 * h + l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
        y[i].ql[64 * h + l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
        y[i].qh[32 * h + l] =
            uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
  }
}

void quantize_activations_q8_K_reference(const float* x, size_t n, int8_t* q, float* d,
                                         int32_t* sums16) {
  for (size_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    int8_t* qb = q + b * kQK_K;
    float amax = 0;
    bool finite = true;
    for (size_t i = 0; i < kQK_K; ++i) {
      finite &= std::isfinite(xb[i]);
      amax = std::max(amax, std::fabs(xb[i]));
    }
    if (!finite || amax == 0) {
      std::memset(qb, 0, kQK_K);
      d[b] = finite ? 0.f : NAN;
    } else {
      const float iscale = 127.f / amax;
      for (size_t i = 0; i < kQK_K; ++i)
        qb[i] = int8_t(std::clamp(std::nearbyint(xb[i] * iscale), -127.f, 127.f));
      d[b] = 1.f / iscale;
    }
    for (size_t g = 0; g < kQK_K / 16; ++g) {
      int32_t s = 0;
      for (size_t i = 0; i < 16; ++i) s += qb[16 * g + i];
      sums16[b * 16 + g] = s;
    }
  }
}

#if defined(__AVX512F__)
// The reference's operations 16 lanes at a time (one lane vector is one 16-element group): the
// same product x * iscale, rounded to nearest even, clamped, and exact integer sums; max is exact
// in any order. A block whose iscale overflows (amax below 127 / FLT_MAX) takes the reference.
// The scalar loop was a tenth of a k-quant MoE prefill on a Zen 5 (2026-11-28).
void quantize_activations_q8_K(const float* x, size_t n, int8_t* q, float* d, int32_t* sums16) {
  constexpr int kGroups = int(kQK_K / 16);
  for (size_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    int8_t* qb = q + b * kQK_K;
    __m512 v[kGroups];
    __m512 vmax = _mm512_setzero_ps();
    __mmask16 bad = 0;
    for (int g = 0; g < kGroups; ++g) {
      v[g] = _mm512_loadu_ps(xb + 16 * g);
      vmax = _mm512_max_ps(vmax, _mm512_abs_ps(v[g]));
      bad |= _mm512_fpclass_ps_mask(v[g], 0x01 | 0x08 | 0x10 | 0x80);  // NaN or +-Inf
    }
    const float amax = _mm512_reduce_max_ps(vmax);
    const float iscale = 127.f / amax;
    if (bad || amax == 0 || !std::isfinite(iscale)) {
      quantize_activations_q8_K_reference(xb, kQK_K, qb, d + b, sums16 + b * 16);
      continue;
    }
    const __m512 vi = _mm512_set1_ps(iscale), lo = _mm512_set1_ps(-127.f),
                 hi = _mm512_set1_ps(127.f);
    for (int g = 0; g < kGroups; ++g) {
      __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(v[g], vi),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
      const __m512i c = _mm512_cvtps_epi32(r);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qb + 16 * g), _mm512_cvtepi32_epi8(c));
      sums16[b * 16 + size_t(g)] = _mm512_reduce_add_epi32(c);
    }
    d[b] = 1.f / iscale;
  }
}
#else
void quantize_activations_q8_K(const float* x, size_t n, int8_t* q, float* d, int32_t* sums16) {
  quantize_activations_q8_K_reference(x, n, q, d, sums16);
}
#endif

}  // namespace accel
