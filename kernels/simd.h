// The one SIMD layer of kernels/: vector types and operations at 16 lanes (AVX-512) when the
// compiler targets it, else 8 (AVX2 + FMA + F16C), and the vector math on them (exp, exp2,
// transposes, conversions). For kernels/*.cpp and their tests only. Every kernel's bits depend on
// these exact operation sequences, so an operation here must never change what it computes.
#pragma once
// Why compile-time selection and not Highway (libhwy-dev) with dynamic dispatch: the GEMM and
// attention micro-kernels are hand-tuned intrinsics whose register tiling differs per width, and
// every result is pinned bit for bit; porting them is a rewrite, not a header swap. One binary
// therefore runs one width, and CI builds the AVX2 width separately (scripts/build.sh portable).
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error \
    "kernels/simd.h needs AVX2, FMA and F16C (ACCELBENCH_NATIVE=OFF builds with -mavx2 -mfma -mf16c)"
#endif
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

// GCC 12 flags the unspecified-value operand that its own AVX-512 intrinsics build from a
// self-initialised variable (GCC bug 105593) once they are inlined here; the value is never used.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::simd {

// ---------------------------------------------------------------------------------------------
// Vector types and lane-wise operations

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
inline vf bcast(const float* p) {
  return _mm512_set1_ps(*p);
}
inline vi set1i(int32_t x) {
  return _mm512_set1_epi32(x);
}
// The 4 bytes at p (any alignment) in every 32-bit lane: one broadcast load. A memcpy into an
// int32_t then set1i made GCC 12 stage the bytes through general registers and the stack.
inline vi bcast4(const void* p) {
  return _mm512_broadcastd_epi32(_mm_loadu_si32(p));
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
// Lanes [0, n) valid, 0 <= n <= W. Masked loads and stores touch no memory outside those lanes.
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
inline vf fnmadd(vf a, vf b, vf c) {  // c - a * b, one rounding
  return _mm512_fnmadd_ps(a, b, c);
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
inline vf max(vf a, vf b) {  // x86 semantics: b where either is NaN
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
inline vmask lt(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
inline vmask and_m(vmask a, vmask b) {
  return vmask(a & b);
}
inline vf sel(vmask m, vf a, vf b) {  // m ? a : b
  return _mm512_mask_blend_ps(m, b, a);
}
inline vf round_nearest(vf x) {
  return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline vi cvt_i(vf x) {  // rounds to nearest (even); exact for integral x
  return _mm512_cvtps_epi32(x);
}
inline vf pow2i(vi n) {  // 2^n for n in [-127, 127]; n = -127 gives exactly 0
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, set1i(127)), 23));
}
inline float hmax(vf x) {  // exact: max has no rounding
  return _mm512_reduce_max_ps(x);
}
inline float lane0(vf x) {
  return _mm512_cvtss_f32(x);
}
// W halves / bf16s / int8s at p, widened exactly to floats.
inline vf from_f16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline vf from_bf16(const uint16_t* p) {
  const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}
inline vf from_i8(const int8_t* p) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
// Low / high nibbles of the W bytes at p, minus 8, as floats (q4_0 codes).
inline void from_u4(const uint8_t* p, vf& lo, vf& hi) {
  const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i eight = _mm512_set1_epi32(8);
  lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(b, _mm512_set1_epi32(15)), eight));
  hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(b, 4), eight));
}
// The W E8M0 bytes at p as halved scales 2^(e-128), bit for bit as mxfp4.h's e8m0_to_f32_half.
inline vf from_e8m0_half(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
}
// Low / high nibbles of the W bytes at p as doubled E2M1 values (mxfp4.h's kMxfp4Values), exact.
inline void from_fp4(const uint8_t* p, vf& lo, vf& hi) {
  const __m128i table = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(15);
  const __m128i l = _mm_shuffle_epi8(table, _mm_and_si128(b, m));
  const __m128i h = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(b, 4), m));
  lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(l));
  hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(h));
}
#if defined(__AVX512VNNI__)
// acc + the sums of the four products u8(u) * s8(s) per 32-bit lane (vpdpbusd), as an asm
// statement: with the intrinsic, GCC 12 copied the accumulators of an unrolled dot loop to other
// registers and back on every step and kept some on the stack (the k-quant decode and the int4
// scores loops); an in-out operand keeps each in place. The same instruction, the same integers.
inline vi dpbusd(vi acc, vi u, vi s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "vm"(s));
  return acc;
}
#endif
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
inline vf bcast(const float* p) {
  return _mm256_broadcast_ss(p);
}
inline vi set1i(int32_t x) {
  return _mm256_set1_epi32(x);
}
inline vi bcast4(const void* p) {
  return _mm256_broadcastd_epi32(_mm_loadu_si32(p));
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
inline vf fnmadd(vf a, vf b, vf c) {  // c - a * b, one rounding
  return _mm256_fnmadd_ps(a, b, c);
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
inline vmask lt(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_LT_OQ);
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
inline vf from_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline vf from_bf16(const uint16_t* p) {
  const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}
inline vf from_i8(const int8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline void from_u4(const uint8_t* p, vf& lo, vf& hi) {
  const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i eight = _mm256_set1_epi32(8);
  lo = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(b, _mm256_set1_epi32(15)), eight));
  hi = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 4), eight));
}
inline vf from_e8m0_half(const uint8_t* p) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);  // e < 2 (e is 0..255)
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, small));
}
inline void from_fp4(const uint8_t* p, vf& lo, vf& hi) {
  const __m128i table = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(15);
  const __m128i l = _mm_shuffle_epi8(table, _mm_and_si128(b, m));
  const __m128i h = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(b, 4), m));
  lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(l));
  hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(h));
}
#endif

// Ask for the cache line holding p ahead of its use (a hint: no fault, no effect on values).
inline void prefetch(const void* p) {
  _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
}

// ---------------------------------------------------------------------------------------------
// exp2 and exp over non-positive arguments

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

// e^x for x <= 0 (softmax arguments after max subtraction): Cephes expf polynomial after
// Cody-Waite reduction, ~1-2 ulp; exactly 0 below -87 (where e^x would be near the subnormals).
// The scalar and vector versions are the same operation sequence, so they agree bit for bit and a
// vectorised loop may finish its tail with the scalar one.
namespace exp_detail {
constexpr float kLo = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: (x + M) - M rounds to nearest even
constexpr float kLn2Hi = -0.693359375f, kLn2Lo = 2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
}  // namespace exp_detail

inline float exp_nonpos(float x) {
  using namespace exp_detail;
  const bool under = x < kLo;
  x = under ? kLo : x;
  const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;
  float r = std::fma(n, kLn2Hi, x);
  r = std::fma(n, kLn2Lo, r);
  float p = kP0;
  p = std::fma(p, r, kP1);
  p = std::fma(p, r, kP2);
  p = std::fma(p, r, kP3);
  p = std::fma(p, r, kP4);
  p = std::fma(p, r, kP5);
  p = std::fma(p * r, r, r) + 1.0f;
  const float y = p * std::bit_cast<float>((int32_t(n) + 127) << 23);
  return under ? 0.0f : y;
}

inline vf exp_nonpos(vf x) {
  using namespace exp_detail;
  const vmask under = lt(x, set1(kLo));
  x = max(x, set1(kLo));
  const vf magic = set1(kRoundMagic);
  const vf n = sub(add(mul(x, set1(kLog2e)), magic), magic);
  vf r = fma(n, set1(kLn2Hi), x);
  r = fma(n, set1(kLn2Lo), r);
  vf p = set1(kP0);
  p = fma(p, r, set1(kP1));
  p = fma(p, r, set1(kP2));
  p = fma(p, r, set1(kP3));
  p = fma(p, r, set1(kP4));
  p = fma(p, r, set1(kP5));
  p = add(fma(mul(p, r), r, r), set1(1.0f));
  // n is integral, so rounding conversion equals the scalar truncating one.
  return sel(under, zero(), mul(p, pow2i(cvt_i(n))));
}

// ---------------------------------------------------------------------------------------------
// Sixteen double accumulators (lane i sums the floats at positions = i mod 16), for sums whose
// order must not depend on the vector width: the 8- and 16-lane builds add the same values into
// the same lanes in the same order.

#if defined(__AVX512F__)
struct Lanes16d {
  __m512d v[2];
};
inline Lanes16d lanes16d_zero() {
  return {{_mm512_setzero_pd(), _mm512_setzero_pd()}};
}
inline void lanes16d_add(Lanes16d& acc, const float* e) {  // acc[i] += double(e[i]), i < 16
  acc.v[0] = _mm512_add_pd(acc.v[0], _mm512_cvtps_pd(_mm256_loadu_ps(e)));
  acc.v[1] = _mm512_add_pd(acc.v[1], _mm512_cvtps_pd(_mm256_loadu_ps(e + 8)));
}
inline void lanes16d_store(double* out, const Lanes16d& acc) {
  _mm512_storeu_pd(out, acc.v[0]);
  _mm512_storeu_pd(out + 8, acc.v[1]);
}
#else
struct Lanes16d {
  __m256d v[4];
};
inline Lanes16d lanes16d_zero() {
  Lanes16d z;
  for (__m256d& x : z.v) x = _mm256_setzero_pd();
  return z;
}
inline void lanes16d_add(Lanes16d& acc, const float* e) {
  for (int i = 0; i < 4; ++i)
    acc.v[i] = _mm256_add_pd(acc.v[i], _mm256_cvtps_pd(_mm_loadu_ps(e + 4 * i)));
}
inline void lanes16d_store(double* out, const Lanes16d& acc) {
  for (int i = 0; i < 4; ++i) _mm256_storeu_pd(out + 4 * i, acc.v[i]);
}
#endif

// ---------------------------------------------------------------------------------------------
// Transposes (pure data movement: the values are the same bits whichever path moved them)

// dst[c * ldd + r] = row(r)[c] for a W x W block, where row(r) gives the address of row r's W
// floats. A template over the row accessor, always inlined, so that strided tiles compute their
// addresses in place (measured: an out-of-line copy, or an array of row pointers, made 1-thread
// decode attention over 4096 keys 3-7% slower).
#if defined(__AVX512F__)
template <class Row>
[[gnu::always_inline]] inline void transpose_block(Row row, float* dst, size_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(row(i));
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
template <class Row>
[[gnu::always_inline]] inline void transpose_block(Row row, float* dst, size_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(row(i));
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

// dst[c * ldd + r] = src[r][c] for W row pointers of W floats each.
[[gnu::always_inline]] inline void transpose_rows(const float* const* src, float* dst, size_t ldd) {
  transpose_block([src](int i) { return src[i]; }, dst, ldd);
}

// dst[c * ldd + r] = src[r * lds + c] for a W x W tile.
[[gnu::always_inline]] inline void transpose_tile(const float* src, size_t lds, float* dst,
                                                  size_t ldd) {
  transpose_block([src, lds](int i) { return src + size_t(i) * lds; }, dst, ldd);
}

}  // namespace accel::simd

#pragma GCC diagnostic pop
