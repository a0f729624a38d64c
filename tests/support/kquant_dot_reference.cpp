// The scalar model of the k-quant integer dot (kquant_dot_reference.h), from ggml's block layouts:
// q4_K d, dmin, scales[12], qs[128]; q5_K d, dmin, scales[12], qh[32], qs[128]; q6_K ql[128],
// qh[64], scales[16] (int8), d (last).
#include "tests/support/kquant_dot_reference.h"

#include <cmath>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/kquant.h"
#include "kernels/mxfp4.h"

namespace accel::test {

namespace {

float half_at(const uint8_t* p) {
  return fp16_to_f32(uint16_t(p[0] | (p[1] << 8)));
}

// The 6-bit code of element e (0..255) of a q6_K block and its scale index.
int q6_code(const uint8_t* blk, int e) {
  const int h = e / 128, p = e % 128 / 32, l = e % 32;
  const int lo = (blk[64 * h + (p & 1) * 32 + l] >> ((p >> 1) * 4)) & 0xF;
  const int hi = (blk[128 + 32 * h + l] >> (2 * p)) & 3;
  return lo | hi << 4;
}

// The 4- or 5-bit code of element e of a q4_K / q5_K block (sub-block s = e / 32).
int q45_code(DType t, const uint8_t* blk, int e) {
  const int s = e / 32, l = e % 32;
  const uint8_t* qs = blk + (t == DType::Q5_K ? 48 : 16);
  const int nib = (qs[32 * (s / 2) + l] >> ((s & 1) * 4)) & 0xF;
  if (t == DType::Q4_K) return nib;
  return nib | ((blk[16 + l] >> s) & 1) << 4;
}

// MXFP4 against q8_0 activations, per 32-block: A = sum of value * code (doubled E2M1 values,
// read from the block bytes: e, then qs[16] with element j low and j + 16 high), one fma.
// x rounded to q8_0 (codes and per-32 scales), as both 32-block paths see it.
struct Q8_0Acts {
  std::vector<int8_t> q;
  std::vector<float> dx;
};
Q8_0Acts q8_0_acts(const float* x, size_t K) {
  Q8_0Acts a{std::vector<int8_t>(K), std::vector<float>(K / 32)};
  std::vector<int32_t> s32(K / 32);
  quantize_activations_q8_0(x, K, a.q.data(), a.dx.data(), s32.data());
  return a;
}

// One block's term of the model: one fma of the rounded scale product, and its exact twin.
void add_block(KDotReference& r, float dx, float dw, int64_t A) {
  r.model = std::fma(dx * dw, float(int32_t(A)), r.model);
  r.exact += double(dx) * double(dw) * double(A);
  r.magnitude += std::fabs(double(dx) * double(dw) * double(A));
}

KDotReference mxfp4_dot_reference(const uint8_t* w, const float* x, size_t K) {
  const auto [q, dx] = q8_0_acts(x, K);
  KDotReference r{0.f, 0.0, 0.0};
  for (size_t b = 0; b < K / 32; ++b) {
    const uint8_t* blk = w + b * 17;
    const int8_t* xq = q.data() + b * 32;
    int64_t A = 0;
    for (int j = 0; j < 16; ++j) {
      A += int64_t(kMxfp4Values[blk[1 + j] & 0xF]) * xq[j];
      A += int64_t(kMxfp4Values[blk[1 + j] >> 4]) * xq[j + 16];
    }
    add_block(r, dx[b], e8m0_to_f32_half(blk[0]), A);
  }
  return r;
}

// q8_0 against q8_0 activations, per 32-block: A = sum of code * code (d as fp16, then qs[32]),
// one fma, as ggml's vec_dot_q8_0_q8_0 per block.
KDotReference q8_0_dot_reference(const uint8_t* w, const float* x, size_t K) {
  const auto [q, dx] = q8_0_acts(x, K);
  KDotReference r{0.f, 0.0, 0.0};
  for (size_t b = 0; b < K / 32; ++b) {
    const uint8_t* blk = w + b * 34;
    int64_t A = 0;
    for (int j = 0; j < 32; ++j) A += int64_t(int8_t(blk[2 + j])) * q[b * 32 + size_t(j)];
    add_block(r, dx[b], half_at(blk), A);
  }
  return r;
}

}  // namespace

void ggml_scale_min(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

KDotReference kquant_dot_reference(DType t, const uint8_t* w, const float* x, size_t K,
                                   const float* bias) {
  if (t == DType::MXFP4 || t == DType::Q8_0) {
    KDotReference r =
        t == DType::MXFP4 ? mxfp4_dot_reference(w, x, K) : q8_0_dot_reference(w, x, K);
    if (bias) {
      r.model = r.model + *bias;
      r.exact += *bias;
      r.magnitude += std::fabs(*bias);
    }
    return r;
  }
  std::vector<int8_t> q(K);
  std::vector<float> dx(K / 256);
  std::vector<int32_t> s16(K / 16);
  quantize_activations_q8_K(x, K, q.data(), dx.data(), s16.data());
  const size_t bb = dtype_block_bytes(t);
  KDotReference r{0.f, 0.0, 0.0};
  for (size_t b = 0; b < K / 256; ++b) {
    const uint8_t* blk = w + b * bb;
    const int8_t* xq = q.data() + b * 256;
    int64_t A = 0, B = 0;
    if (t == DType::Q6_K) {
      for (int g = 0; g < 16; ++g) {
        int64_t dot = 0, sum = 0;
        for (int e = 16 * g; e < 16 * g + 16; ++e) {
          dot += int64_t(q6_code(blk, e)) * xq[e];
          sum += xq[e];
        }
        const int h = g / 8, p = g % 8 / 2, half = g % 2;
        A += int64_t(int8_t(blk[192 + 8 * h + 2 * p + half])) * (dot - 32 * sum);
      }
      const float d = half_at(blk + 208), t1 = dx[b] * d;
      r.model = std::fma(t1, float(int32_t(A)), r.model);
      r.exact += double(dx[b]) * double(d) * double(A);
      r.magnitude += std::fabs(double(dx[b]) * double(d) * double(A));
      continue;
    }
    for (int s = 0; s < 8; ++s) {
      int sc, m;
      ggml_scale_min(s, blk + 4, sc, m);
      int64_t dot = 0, sum = 0;
      for (int e = 32 * s; e < 32 * s + 32; ++e) {
        dot += int64_t(q45_code(t, blk, e)) * xq[e];
        sum += xq[e];
      }
      A += sc * dot;
      B += m * sum;
    }
    const float d = half_at(blk), dmin = half_at(blk + 2);
    const float t1 = dx[b] * d, t2 = dx[b] * dmin;
    r.model = std::fma(t1, float(int32_t(A)), r.model);
    r.model = std::fma(-t2, float(int32_t(B)), r.model);
    r.exact += double(dx[b]) * (double(d) * double(A) - double(dmin) * double(B));
    r.magnitude += std::fabs(double(dx[b]) * double(d) * double(A)) +
                   std::fabs(double(dx[b]) * double(dmin) * double(B));
  }
  if (bias) {
    r.model = r.model + *bias;
    r.exact += *bias;
    r.magnitude += std::fabs(*bias);
  }
  return r;
}

}  // namespace accel::test
