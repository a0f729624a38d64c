// Gated DeltaNet recurrence: exp(g) per (token, head) first, then parallel items of (value head,
// 8 state rows) that walk the tokens in order, block by block (recurrent_rows.h). Per token an item
// makes two passes over its rows: decay + dot with k (giving d), then the rank-1 update + dot with
// q (giving o).
#include "kernels/gated_delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/check.h"
#include "kernels/recurrent_rows.h"
#include "kernels/recurrent_simd.h"
#include "kernels/simd.h"
#include "kernels/ssm_scan.h"

namespace accel {
namespace {

using namespace simd;

using recurrent::kRows;

struct DeltaArgs {
  const GatedDeltaShape& s;
  const GatedDeltaInputs& in;
  size_t n;
  const float* decay;  // [n][n_v_heads]: exp(g)
  float* o;
  size_t ldo;
};

int key_head(const GatedDeltaShape& s, int h) {
  return s.map == DeltaHeadMap::Tiled ? h % s.n_k_heads : h / (s.n_v_heads / s.n_k_heads);
}

// One pass over the rows: st[r] <- upd(st[r]) and acc[r] += st[r] * w, chunk by chunk.
template <class Update>
inline void pass(float* st, int dk, const float* w, vf (&acc)[kRows], Update upd) {
  const int full = dk / W * W, tail = dk - full;
  for (int r = 0; r < kRows; ++r) acc[r] = zero();
  for (int i = 0; i < full; i += W) {
    const vf wv = load(w + i);
    for (int r = 0; r < kRows; ++r) {
      float* p = st + size_t(r) * dk + i;
      const vf v = upd(load(p), r, i, false);
      store(p, v);
      acc[r] = fma(v, wv, acc[r]);
    }
  }
  if (tail) {
    const vmask m = first(tail);
    const vf wv = load_n(w + full, m);
    for (int r = 0; r < kRows; ++r) {
      float* p = st + size_t(r) * dk + full;
      const vf v = upd(load_n(p, m), r, full, true);
      store_n(p, v, m);
      acc[r] = fma(v, wv, acc[r]);
    }
  }
}

// Rows j0 .. j0 + 8 of value head h over all tokens; rows >= nr are zero padding with v = 0, which
// keeps them zero and leaves the real rows' bits alone.
void delta_rows(const DeltaArgs& a, int h, int j0, int nr, float* st, size_t t0, size_t t1) {
  const int dk = a.s.head_k_dim, dv = a.s.head_v_dim, nh = a.s.n_v_heads;
  const size_t koff = size_t(key_head(a.s, h)) * dk;
  const int tail = dk % W;
  const vmask m = first(tail);
  for (size_t t = t0; t < t1; ++t) {
    const float* q = a.in.q + t * a.in.ldq + koff;
    const float* k = a.in.k + t * a.in.ldk + koff;
    const float* v = a.in.v + t * a.in.ldv + size_t(h) * dv + j0;
    const float beta = a.in.beta[t * a.in.ldgate + h];
    const vf e = set1(a.decay[t * nh + h]);
    vf acc[kRows];
    pass(st, dk, k, acc, [&](vf x, int, int, bool) { return mul(x, e); });
    float dot[kRows], d[kRows];
    hsum8(acc, dot);
    for (int r = 0; r < kRows; ++r) d[r] = r < nr ? (v[r] - dot[r]) * beta : 0.f;
    pass(st, dk, q, acc, [&](vf x, int r, int i, bool masked) {
      return fma(masked ? load_n(k + i, m) : load(k + i), set1(d[r]), x);
    });
    hsum8(acc, dot);
    float* out = a.o + t * a.ldo + size_t(h) * dv + j0;
    for (int r = 0; r < nr; ++r) out[r] = dot[r] * a.in.q_scale;
  }
}

void check_shape(const GatedDeltaShape& s) {
  ACCEL_CHECK(s.n_k_heads >= 1 && s.n_v_heads >= 1 && s.n_v_heads % s.n_k_heads == 0 &&
                  s.head_k_dim >= 1 && s.head_v_dim >= 1,
              "gated_delta_rule shape: n_k_heads %d, n_v_heads %d, head_k_dim %d, head_v_dim %d",
              s.n_k_heads, s.n_v_heads, s.head_k_dim, s.head_v_dim);
}

}  // namespace

size_t gated_delta_state_elements(const GatedDeltaShape& s) {
  return size_t(s.n_v_heads) * size_t(s.head_v_dim) * size_t(s.head_k_dim);
}

void gated_delta_rule(const GatedDeltaShape& s, const GatedDeltaInputs& in, size_t n_tokens,
                      float* state, float* o, size_t ldo) {
  check_shape(s);
  if (n_tokens == 0) return;
  const size_t nv = size_t(s.n_v_heads), dv = size_t(s.head_v_dim), dk = size_t(s.head_k_dim);
  const size_t wk = size_t(s.n_k_heads) * dk;
  ACCEL_CHECK(
      in.ldq >= wk && in.ldk >= wk && in.ldv >= nv * dv && in.ldgate >= nv && ldo >= nv * dv,
      "gated_delta_rule strides: ldq %zu, ldk %zu, ldv %zu, ldgate %zu, ldo %zu", in.ldq, in.ldk,
      in.ldv, in.ldgate, ldo);
  std::vector<float> decay(n_tokens * nv);
  for (size_t t = 0; t < n_tokens; ++t)
    for (size_t h = 0; h < nv; ++h) decay[t * nv + h] = std::exp(in.g[t * in.ldgate + h]);
  const DeltaArgs a{s, in, n_tokens, decay.data(), o, ldo};
  recurrent::for_each_row_group(n_tokens, s.n_v_heads, s.head_v_dim, dk, state, 8.0 * double(dk),
                                [&](int h, int r0, int nr, float* st, size_t t0, size_t t1) {
                                  delta_rows(a, h, r0, nr, st, t0, t1);
                                });
}

void l2_normalize_heads(float* x, size_t n_rows, size_t ld, int n_heads, int head_dim, float eps) {
  for (size_t r = 0; r < n_rows; ++r)
    for (int h = 0; h < n_heads; ++h) {
      float* p = x + r * ld + size_t(h) * head_dim;
      double ss = 0.0;
      for (int i = 0; i < head_dim; ++i) ss += double(p[i]) * double(p[i]);
      const float inv = 1.f / std::max(float(std::sqrt(ss)), eps);
      for (int i = 0; i < head_dim; ++i) p[i] *= inv;
    }
}

void delta_net_gates(const float* alpha, const float* b, size_t ld, size_t n_tokens, int n_heads,
                     const float* dt_bias, const float* A, float* g, float* beta) {
  for (size_t t = 0; t < n_tokens; ++t)
    for (int h = 0; h < n_heads; ++h) {
      const size_t i = t * ld + size_t(h), j = t * size_t(n_heads) + size_t(h);
      g[j] = softplus(alpha[i] + dt_bias[h]) * A[h];
      beta[j] = 1.f / (1.f + std::exp(-b[i]));
    }
}

}  // namespace accel
