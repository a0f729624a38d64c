// Vector helpers shared by the recurrent-layer kernels (causal_conv1d, ssm_scan,
// gated_delta_rule): SiLU over any argument and the horizontal sums of eight accumulators. For
// those kernels' .cpp files only; like simd.h, an operation here must never change what it
// computes, because the kernels' bit-for-bit contracts rest on these exact sequences.
#pragma once
#include "kernels/simd.h"

// GCC 12's bug 105593 (see simd.h): hsum8's AVX-512 permutes warn once inlined into a kernel.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::simd {

// x * sigmoid(x) for any finite x, with e = e^-|x| from exp_nonpos (so no overflow):
// sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0. Lane-wise.
inline vf silu(vf x) {
  const vf e = exp_nonpos(min(x, sub(zero(), x)));
  const vf den = add(set1(1.f), e);
  const vf sig = sel(lt(x, zero()), div(e, den), div(set1(1.f), den));
  return mul(x, sig);
}

// out[r] = the sum of acc[r]'s lanes, r < 8, each in a fixed tree that depends on acc[r] alone
// (pairs of adjacent lanes, then pairs of pairs, ...), so a row's sum does not depend on what
// the other seven accumulators hold.
inline void hsum8(const vf (&acc)[8], float* out) {
#if defined(__AVX512F__)
  // Each level adds every lane to its partner (lane ^ 1, ^ 2, ^ 4, ^ 8): lane 0 then holds the
  // tree's pair sums level by level (a + b and b + a are the same float), in registers. A scalar
  // tree through a stack array was about half of small-nemotron-h's scan time (Zen 5, 2026-11-28).
  for (int r = 0; r < 8; ++r) {
    __m512 x = acc[r];
    x = _mm512_add_ps(x, _mm512_permute_ps(x, 0xB1));
    x = _mm512_add_ps(x, _mm512_permute_ps(x, 0x4E));
    x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));
    x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0x4E));
    out[r] = _mm512_cvtss_f32(x);
  }
#else
  // hadd(a, b) = [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7, b4+b5, b6+b7]: lanes of one source
  // only ever meet lanes of the same source.
  const __m256 t0 = _mm256_hadd_ps(acc[0], acc[1]), t1 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 t2 = _mm256_hadd_ps(acc[4], acc[5]), t3 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  // u0 = [r0 lo, r1 lo, r2 lo, r3 lo | r0 hi, r1 hi, r2 hi, r3 hi]; add the 128-bit halves.
  const __m256 lo = _mm256_permute2f128_ps(u0, u1, 0x20), hi = _mm256_permute2f128_ps(u0, u1, 0x31);
  _mm256_storeu_ps(out, _mm256_add_ps(lo, hi));
#endif
}

}  // namespace accel::simd

#pragma GCC diagnostic pop
