// Internal to kernels/attention*.cpp: the handful of SIMD operations the attention kernel needs,
// over AVX-512 (16 lanes) when compiled in, else AVX2+FMA (8 lanes), plus one vectorised exp2.
// Must not be included by anything outside the attention kernel: every result the kernel produces
// depends on these exact operation sequences (batch invariance), so they are not a general library.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace accel::attn_simd {

#if defined(__AVX512F__)
constexpr int W = 16;
using vf = __m512;
using vi = __m512i;
using vmask = __mmask16;

inline vf zero() {
  return _mm512_setzero_ps();
}
inline vf set1(float x) {
  return _mm512_set1_ps(x);
}
inline vi set1i(int32_t x) {
  return _mm512_set1_epi32(x);
}
inline vf load(const float* p) {
  return _mm512_loadu_ps(p);
}
inline vi loadi(const int32_t* p) {
  return _mm512_loadu_si512(p);
}
inline void store(float* p, vf x) {
  _mm512_storeu_ps(p, x);
}
// Lanes [0, n) valid, 0 < n <= W.
inline vmask first(int n) {
  return vmask((1u << n) - 1u);
}
inline vf load_n(const float* p, vmask m) {
  return _mm512_maskz_loadu_ps(m, p);
}
inline vi loadi_n(const int32_t* p, vmask m) {
  return _mm512_maskz_loadu_epi32(m, p);
}
inline void store_n(float* p, vf x, vmask m) {
  _mm512_mask_storeu_ps(p, m, x);
}
inline vf fma(vf a, vf b, vf c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline vf mul(vf a, vf b) {
  return _mm512_mul_ps(a, b);
}
inline vf add(vf a, vf b) {
  return _mm512_add_ps(a, b);
}
inline vf sub(vf a, vf b) {
  return _mm512_sub_ps(a, b);
}
inline vf div(vf a, vf b) {
  return _mm512_div_ps(a, b);
}
inline vf max(vf a, vf b) {
  return _mm512_max_ps(a, b);
}
inline vf min(vf a, vf b) {
  return _mm512_min_ps(a, b);
}
inline vmask le_i(vi a, vi b) {
  return _mm512_cmple_epi32_mask(a, b);
}
inline vmask gt(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ);
}
inline vmask and_m(vmask a, vmask b) {
  return vmask(a & b);
}
inline vf sel(vmask m, vf a, vf b) {
  return _mm512_mask_blend_ps(m, b, a);
}  // m ? a : b
inline vf round_nearest(vf x) {
  return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline vi cvt_i(vf x) {
  return _mm512_cvtps_epi32(x);
}
inline vf pow2i(vi n) {  // 2^n for n in [-127, 0]; n = -127 gives exactly 0
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, set1i(127)), 23));
}
inline float hmax(vf x) {
  return _mm512_reduce_max_ps(x);
}  // exact: max has no rounding
inline float lane0(vf x) {
  return _mm512_cvtss_f32(x);
}
#else
constexpr int W = 8;
using vf = __m256;
using vi = __m256i;
using vmask = __m256;  // all-ones / all-zeros lanes

inline vf zero() {
  return _mm256_setzero_ps();
}
inline vf set1(float x) {
  return _mm256_set1_ps(x);
}
inline vi set1i(int32_t x) {
  return _mm256_set1_epi32(x);
}
inline vf load(const float* p) {
  return _mm256_loadu_ps(p);
}
inline vi loadi(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline void store(float* p, vf x) {
  _mm256_storeu_ps(p, x);
}
inline vmask first(int n) {
  const vi idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(set1i(n), idx));
}
inline vf load_n(const float* p, vmask m) {
  return _mm256_maskload_ps(p, _mm256_castps_si256(m));
}
inline vi loadi_n(const int32_t* p, vmask m) {
  return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), _mm256_castps_si256(m));
}
inline void store_n(float* p, vf x, vmask m) {
  _mm256_maskstore_ps(p, _mm256_castps_si256(m), x);
}
inline vf fma(vf a, vf b, vf c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline vf mul(vf a, vf b) {
  return _mm256_mul_ps(a, b);
}
inline vf add(vf a, vf b) {
  return _mm256_add_ps(a, b);
}
inline vf sub(vf a, vf b) {
  return _mm256_sub_ps(a, b);
}
inline vf div(vf a, vf b) {
  return _mm256_div_ps(a, b);
}
inline vf max(vf a, vf b) {
  return _mm256_max_ps(a, b);
}
inline vf min(vf a, vf b) {
  return _mm256_min_ps(a, b);
}
inline vmask le_i(vi a, vi b) {  // a <= b  <=>  !(a > b)
  return _mm256_castsi256_ps(_mm256_xor_si256(_mm256_cmpgt_epi32(a, b), set1i(-1)));
}
inline vmask gt(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_GT_OQ);
}
inline vmask and_m(vmask a, vmask b) {
  return _mm256_and_ps(a, b);
}
inline vf sel(vmask m, vf a, vf b) {
  return _mm256_blendv_ps(b, a, m);
}
inline vf round_nearest(vf x) {
  return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline vi cvt_i(vf x) {
  return _mm256_cvtps_epi32(x);
}
inline vf pow2i(vi n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, set1i(127)), 23));
}
inline float hmax(vf x) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
inline float lane0(vf x) {
  return _mm256_cvtss_f32(x);
}
#endif

// 2^x for x <= 0 (the only arguments the online softmax produces: score minus running max).
// Cephes exp2f polynomial on the reduced argument in [-0.5, 0.5]: relative error ~2e-7. Results
// below 2^-126.5 flush to exactly 0. Elementwise, so a key gets the same bits in any lane.
inline vf exp2(vf x) {
  x = min(max(x, set1(-127.f)), zero());
  const vf n = round_nearest(x);
  const vf f = sub(x, n);
  vf p = set1(1.535336188319500e-4f);
  p = fma(p, f, set1(1.339887440266574e-3f));
  p = fma(p, f, set1(9.618437357674640e-3f));
  p = fma(p, f, set1(5.550332471162809e-2f));
  p = fma(p, f, set1(2.402264791363012e-1f));
  p = fma(p, f, set1(6.931472028550421e-1f));
  p = fma(p, f, set1(1.f));
  return mul(p, pow2i(cvt_i(n)));
}

// dst[c * ldd + r] = src[r * lds + c] for a W x W tile (in-register transpose).
#if defined(__AVX512F__)
inline void transpose_tile(const float* src, size_t lds, float* dst, size_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]),
                  c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#else
inline void transpose_tile(const float* src, size_t lds, float* dst, size_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * ldd, t[i]);
}
#endif

}  // namespace accel::attn_simd
