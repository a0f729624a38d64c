// SpecPrefill importance and chunk selection (see specprefill_scoring.h). Owns only this math:
// the score micro-kernel, the per-row softmax and the reductions. It must not call the model, read
// a cache or time anything, and its result must not depend on the thread count.
#include "methods/specprefill_scoring.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

// GCC 12 reports the deliberately undefined pass-through operand inside AVX-512 intrinsics
// (_mm512_undefined_ps) as maybe-uninitialized; a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace accel::specprefill {

namespace {

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("[specprefill] " + what);
}

// ---------------------------------------------------------------------------------------------
// Score micro-kernel: S[r][j] = q_r . k_j for a block of up to kRows query rows against one tile
// of kTile keys, from a transposed key tile kt[t][jj]. Every output is the fused chain
// fma(q[d-1], k[d-1], ... fma(q[0], k[0], 0)) in ascending t, in SIMD lanes or in the scalar
// fallback alike (fma is correctly rounded), so a score never depends on the tile or block it
// was computed in.

constexpr int kRows = 8;       // rows per micro-kernel call: 8 rows x 2 vectors = 16 accumulators
constexpr int kTaskRows = 32;  // rows per task, sharing each transposed key tile

#if defined(__AVX512F__)
constexpr int kW = 16;
using vf = __m512;
inline vf vzero() {
  return _mm512_setzero_ps();
}
inline vf vload(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void vstore(float* p, vf x) {
  _mm512_storeu_ps(p, x);
}
inline vf vbcast(float x) {
  return _mm512_set1_ps(x);
}
inline vf vfma(vf a, vf b, vf c) {
  return _mm512_fmadd_ps(a, b, c);
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kW = 8;
using vf = __m256;
inline vf vzero() {
  return _mm256_setzero_ps();
}
inline vf vload(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstore(float* p, vf x) {
  _mm256_storeu_ps(p, x);
}
inline vf vbcast(float x) {
  return _mm256_set1_ps(x);
}
inline vf vfma(vf a, vf b, vf c) {
  return _mm256_fmadd_ps(a, b, c);
}
#else
constexpr int kW = 8;
#endif
constexpr int kTile = 2 * kW;  // keys per tile

// Transposed key tile: kt[t][jj] = key (j0 + jj)'s element t, for jj < kTile and t < d; keys past
// the end of the prompt read as zero rows (their scores are discarded). `row(jj)` gives key jj's
// d floats. SIMD blocks of kW keys x kW dims use in-register transposes; leftover dims are copied
// one by one. Pure data movement: values are bit-identical whichever path moved them.
#if defined(__AVX512F__)
// dst[c * ld + r] = src[r][c] for a 16 x 16 block.
inline void transpose_block(const float* const* src, float* dst, size_t ld) {
  __m512 r[16], a[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src[i]);
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // b[4q + c]: 128-bit lane k holds rows 4q..4q+3 of column c + 4k.
  __m512 b[16];
  for (int q = 0; q < 4; ++q) {
    const __m512d a0 = _mm512_castps_pd(a[4 * q]), a1 = _mm512_castps_pd(a[4 * q + 1]);
    const __m512d a2 = _mm512_castps_pd(a[4 * q + 2]), a3 = _mm512_castps_pd(a[4 * q + 3]);
    b[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 c1 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0x88);
    const __m512 c2 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0xdd);
    const __m512 c3 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0x88);
    const __m512 c4 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0xdd);
    _mm512_storeu_ps(dst + size_t(c) * ld, _mm512_shuffle_f32x4(c1, c3, 0x88));
    _mm512_storeu_ps(dst + size_t(c + 4) * ld, _mm512_shuffle_f32x4(c2, c4, 0x88));
    _mm512_storeu_ps(dst + size_t(c + 8) * ld, _mm512_shuffle_f32x4(c1, c3, 0xdd));
    _mm512_storeu_ps(dst + size_t(c + 12) * ld, _mm512_shuffle_f32x4(c2, c4, 0xdd));
  }
}
#elif defined(__AVX2__) && defined(__FMA__)
// dst[c * ld + r] = src[r][c] for an 8 x 8 block.
inline void transpose_block(const float* const* src, float* dst, size_t ld) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src[i]);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + size_t(c) * ld, _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
    _mm256_storeu_ps(dst + size_t(c + 4) * ld, _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
  }
}
#endif

// rows[jj] points at key jj's d floats (a zero row for padding keys).
void transpose_tile(const float* const* rows, int d, float* kt) {
  int t0 = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; t0 + kW <= d; t0 += kW)
    for (int jb = 0; jb < kTile; jb += kW) {
      const float* src[kW];
      for (int i = 0; i < kW; ++i) src[i] = rows[jb + i] + t0;
      transpose_block(src, kt + size_t(t0) * kTile + jb, kTile);
    }
#endif
  for (int t = t0; t < d; ++t)
    for (int jj = 0; jj < kTile; ++jj) kt[size_t(t) * kTile + jj] = rows[jj][t];
}

// q: NR row pointers (d floats each); kt: [d][kTile]; out: NR rows of kTile, stride ldo.
template <int NR>
void score_tile(const float* const* q, const float* kt, int d, float* out, size_t ldo) {
#if defined(__AVX2__) && defined(__FMA__)
  vf acc0[NR], acc1[NR];
  for (int r = 0; r < NR; ++r) acc0[r] = acc1[r] = vzero();
  for (int t = 0; t < d; ++t) {
    const vf k0 = vload(kt + size_t(t) * kTile);
    const vf k1 = vload(kt + size_t(t) * kTile + kW);
    for (int r = 0; r < NR; ++r) {
      const vf qb = vbcast(q[r][t]);
      acc0[r] = vfma(qb, k0, acc0[r]);
      acc1[r] = vfma(qb, k1, acc1[r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    vstore(out + size_t(r) * ldo, acc0[r]);
    vstore(out + size_t(r) * ldo + kW, acc1[r]);
  }
#else
  for (int r = 0; r < NR; ++r) {
    float acc[kTile] = {};
    for (int t = 0; t < d; ++t)
      for (int jj = 0; jj < kTile; ++jj)
        acc[jj] = std::fma(q[r][t], kt[size_t(t) * kTile + jj], acc[jj]);
    std::memcpy(out + size_t(r) * ldo, acc, sizeof acc);
  }
#endif
}

void score_tile_n(int nr, const float* const* q, const float* kt, int d, float* out, size_t ldo) {
  switch (nr) {
    case 1:
      return score_tile<1>(q, kt, d, out, ldo);
    case 2:
      return score_tile<2>(q, kt, d, out, ldo);
    case 3:
      return score_tile<3>(q, kt, d, out, ldo);
    case 4:
      return score_tile<4>(q, kt, d, out, ldo);
    case 5:
      return score_tile<5>(q, kt, d, out, ldo);
    case 6:
      return score_tile<6>(q, kt, d, out, ldo);
    case 7:
      return score_tile<7>(q, kt, d, out, ldo);
    default:
      return score_tile<8>(q, kt, d, out, ldo);
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax row. A local exp because kernels/elementwise's softmax calls scalar std::exp, which
// would cost more than the score FMAs here (L*H*A*N exps).

// e^x for x <= 0 (softmax arguments after max subtraction): Cephes expf polynomial after
// Cody-Waite reduction, ~1-2 ulp; 0 below -87 (where e^x would be subnormal). The scalar and SIMD
// versions below are the same operation sequence, so they agree bit for bit.
constexpr float kExpLo = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: (x + M) - M rounds to nearest even
constexpr float kLn2Hi = -0.693359375f, kLn2Lo = 2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

inline float exp_nonpos(float x) {
  const bool under = x < kExpLo;
  x = under ? kExpLo : x;
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

#if defined(__AVX512F__)
inline vf vexp_nonpos(vf x) {
  const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpLo), _CMP_LT_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(kExpLo));
  const vf magic = _mm512_set1_ps(kRoundMagic);
  const vf n = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), magic), magic);
  vf r = _mm512_fmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  vf p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mov_ps(__mmask16(~under), _mm512_mul_ps(p, _mm512_castsi512_ps(e)));
}
inline vf vmax(vf a, vf b) {
  return _mm512_max_ps(a, b);
}
inline vf vsub(vf a, vf b) {
  return _mm512_sub_ps(a, b);
}
inline vf vmul(vf a, vf b) {
  return _mm512_mul_ps(a, b);
}
inline float hmax(vf x) {
  return _mm512_reduce_max_ps(x);
}
// Adds the 16 floats at e (= positions j..j+15) to the double lanes acc[0..1] (lanes j mod 16).
inline void add_lanes16(const float* e, __m512d* acc) {
  acc[0] = _mm512_add_pd(acc[0], _mm512_cvtps_pd(_mm256_loadu_ps(e)));
  acc[1] = _mm512_add_pd(acc[1], _mm512_cvtps_pd(_mm256_loadu_ps(e + 8)));
}
using vlanes = __m512d[2];
inline void lanes_zero(vlanes acc) {
  acc[0] = acc[1] = _mm512_setzero_pd();
}
inline void lanes_store(double* out, const vlanes acc) {
  _mm512_storeu_pd(out, acc[0]);
  _mm512_storeu_pd(out + 8, acc[1]);
}
#elif defined(__AVX2__) && defined(__FMA__)
inline vf vexp_nonpos(vf x) {
  const vf under = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_LT_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(kExpLo));
  const vf magic = _mm256_set1_ps(kRoundMagic);
  const vf n = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), magic), magic);
  vf r = _mm256_fmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  vf p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}
inline vf vmax(vf a, vf b) {
  return _mm256_max_ps(a, b);
}
inline vf vsub(vf a, vf b) {
  return _mm256_sub_ps(a, b);
}
inline vf vmul(vf a, vf b) {
  return _mm256_mul_ps(a, b);
}
inline float hmax(vf x) {
  alignas(32) float t[8];
  _mm256_store_ps(t, x);
  float m = t[0];
  for (int i = 1; i < 8; ++i) m = t[i] > m ? t[i] : m;
  return m;
}
inline void add_lanes16(const float* e, __m256d* acc) {
  for (int i = 0; i < 4; ++i)
    acc[i] = _mm256_add_pd(acc[i], _mm256_cvtps_pd(_mm_loadu_ps(e + 4 * i)));
}
using vlanes = __m256d[4];
inline void lanes_zero(vlanes acc) {
  for (int i = 0; i < 4; ++i) acc[i] = _mm256_setzero_pd();
}
inline void lanes_store(double* out, const vlanes acc) {
  for (int i = 0; i < 4; ++i) _mm256_storeu_pd(out + 4 * i, acc[i]);
}
#endif

// P[j] = softmax_j(s[j] * scale) over n > 0 entries, in place. The maximum is exact in any order;
// the normaliser is summed in double over 16 fixed lanes (j mod 16), then the lanes in order, so
// SIMD width and tail handling do not change the result.
void softmax_scaled(float* s, size_t n, float scale) {
  size_t j = 0;
  float m = s[0];
#if defined(__AVX2__) && defined(__FMA__)
  if (n >= size_t(kW)) {
    vf vm = vload(s);
    for (j = kW; j + kW <= n; j += kW) vm = vmax(vm, vload(s + j));
    m = hmax(vm);
  }
#endif
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;

  double lane[16] = {};
  j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  {
    vlanes acc;
    lanes_zero(acc);
    const vf vmx = vbcast(m), vsc = vbcast(scale);
    for (; j + 16 <= n; j += 16) {
      for (int u = 0; u < 16; u += kW)
        vstore(s + j + u, vexp_nonpos(vmul(vsub(vload(s + j + u), vmx), vsc)));
      add_lanes16(s + j, acc);
    }
    lanes_store(lane, acc);
  }
#endif
  for (; j < n; ++j) {
    const float e = exp_nonpos((s[j] - m) * scale);
    s[j] = e;
    lane[j % 16] += double(e);
  }
  double sum = 0;
  for (double v : lane) sum += v;
  const float inv = float(1.0 / sum);
  for (size_t i = 0; i < n; ++i) s[i] *= inv;
}

inline void max_into(float* acc, const float* x, size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] = x[j] > acc[j] ? x[j] : acc[j];
}

void validate(std::span<const LayerQK> layers, const DraftShape& sh, const ScoringOptions& o) {
  if (layers.empty()) bad("layers: at least one draft layer is required");
  if (sh.n_heads < 1) bad("n_heads must be >= 1, got " + std::to_string(sh.n_heads));
  if (sh.n_kv_heads < 1 || sh.n_heads % sh.n_kv_heads != 0)
    bad("n_kv_heads must be >= 1 and divide n_heads (" + std::to_string(sh.n_heads) + "), got " +
        std::to_string(sh.n_kv_heads));
  if (sh.head_dim < 1) bad("head_dim must be >= 1, got " + std::to_string(sh.head_dim));
  if (sh.n_queries < 1) bad("n_queries must be >= 1, got " + std::to_string(sh.n_queries));
  if (o.pool_kernel < 0 || (o.pool_kernel > 1 && o.pool_kernel % 2 == 0))
    bad("pool_kernel must be odd (or 0/1 = off), got " + std::to_string(o.pool_kernel));
  const size_t qd = size_t(sh.n_heads) * size_t(sh.head_dim);
  const size_t kd = size_t(sh.n_kv_heads) * size_t(sh.head_dim);
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerQK& x = layers[l];
    const std::string at = "layer " + std::to_string(l) + ": ";
    if (!x.q) bad(at + "q is null");
    if (sh.n_keys > 0 && !x.k) bad(at + "k is null");
    if (x.q_stride != 0 && x.q_stride < qd)
      bad(at + "q_stride " + std::to_string(x.q_stride) + " < n_heads * head_dim " +
          std::to_string(qd));
    if (x.k_stride != 0 && x.k_stride < kd)
      bad(at + "k_stride " + std::to_string(x.k_stride) + " < n_kv_heads * head_dim " +
          std::to_string(kd));
  }
}

}  // namespace

void token_importance(std::span<const LayerQK> layers, const DraftShape& sh,
                      const ScoringOptions& opt, float* imp) {
  validate(layers, sh, opt);
  const size_t N = sh.n_keys;
  if (N == 0) return;
  const int L = int(layers.size()), H = sh.n_heads, Hkv = sh.n_kv_heads, d = sh.head_dim;
  const int A = sh.n_queries, G = H / Hkv;
  const int pool_k = opt.pool_kernel > 1 ? opt.pool_kernel : 0;
  const bool pool_rows = pool_k && opt.order == AggregationOrder::PoolMaxMean;
  const float scale = float(1.0 / std::sqrt(double(d)));

  // Tasks: (layer, kv head, block of up to kTaskRows of that kv head's G*A query rows). Row r
  // of the group is (head g*G + r / A, lookahead a = r % A). Each key tile is transposed once per
  // task and used by all its rows, so K is read ceil(G*A / kTaskRows) times per layer.
  const int rows_per_group = G * A;
  const int blocks = (rows_per_group + kTaskRows - 1) / kTaskRows;
  const int n_tasks = L * Hkv * blocks;
  const size_t n_tiles = (N + kTile - 1) / kTile;
  const size_t ldS = n_tiles * kTile;  // S rows padded to whole tiles
  const std::vector<float> zero_row(size_t(d), 0.f);

  // raw[a][j] = max over (l, h) of the (pooled) probabilities; merged across threads by max.
  std::vector<float> raw(size_t(A) * N, -std::numeric_limits<float>::infinity());

#pragma omp parallel
  {
    std::vector<float> local(size_t(A) * N, -std::numeric_limits<float>::infinity());
    std::vector<float> S(size_t(std::min(kTaskRows, rows_per_group)) * ldS);  // [rows][ldS]
    std::vector<float> pooled(pool_rows ? N : 0);
    std::vector<float> kt(size_t(d) * kTile);  // [d][kTile] transposed key tile
    bool any = false;

#pragma omp for schedule(dynamic, 1) nowait
    for (int task = 0; task < n_tasks; ++task) {
      any = true;
      const int blk = task % blocks;
      const int g = (task / blocks) % Hkv;
      const int l = task / (blocks * Hkv);
      const LayerQK& x = layers[size_t(l)];
      const size_t qs = x.q_stride ? x.q_stride : size_t(H) * d;
      const size_t ks = x.k_stride ? x.k_stride : size_t(Hkv) * d;
      const int r0 = blk * kTaskRows, nr = std::min(kTaskRows, rows_per_group - r0);
      const float* qrow[kTaskRows];
      for (int i = 0; i < nr; ++i) {
        const int r = r0 + i, h = g * G + r / A, a = r % A;
        qrow[i] = x.q + size_t(a) * qs + size_t(h) * d;
      }
      const float* kbase = x.k + size_t(g) * d;
      const float* krow[kTile];
      for (size_t tile = 0; tile < n_tiles; ++tile) {
        const size_t j0 = tile * kTile;
        for (size_t jj = 0; jj < size_t(kTile); ++jj)
          krow[jj] = j0 + jj < N ? kbase + (j0 + jj) * ks : zero_row.data();
#if defined(__AVX2__)
        // K streams from memory once per task; ask for the tile after next ahead of time.
        if (j0 + 3 * size_t(kTile) <= N)
          for (size_t jj = 0; jj < size_t(kTile); ++jj)
            for (int t = 0; t < d; t += 16)
              _mm_prefetch(reinterpret_cast<const char*>(kbase + (j0 + 2 * kTile + jj) * ks + t),
                           _MM_HINT_T0);
#endif
        transpose_tile(krow, d, kt.data());
        for (int i = 0; i < nr; i += kRows)
          score_tile_n(std::min(kRows, nr - i), qrow + i, kt.data(), d,
                       S.data() + size_t(i) * ldS + j0, ldS);
      }
      for (int i = 0; i < nr; ++i) {
        const int a = (r0 + i) % A;
        float* p = S.data() + size_t(i) * ldS;
        softmax_scaled(p, N, scale);
        if (pool_rows) {
          avg_pool1d(p, N, pool_k, opt.pool_edge, pooled.data());
          p = pooled.data();
        }
        max_into(local.data() + size_t(a) * N, p, N);
      }
    }
    if (any) {
#pragma omp critical(specprefill_raw_merge)
      max_into(raw.data(), local.data(), size_t(A) * N);
    }
  }

  // Mean over a in ascending a (the one order-dependent reduction), then the pflash pool.
  float* mean_out = imp;
  std::vector<float> unpooled;
  if (pool_k && !pool_rows) {
    unpooled.resize(N);
    mean_out = unpooled.data();
  }
  const float fA = float(A);
#pragma omp parallel for schedule(static) if (N >= 4096)
  for (size_t j = 0; j < N; ++j) {
    float s = 0.f;
    for (int a = 0; a < A; ++a) s += raw[size_t(a) * N + j];
    mean_out[j] = s / fA;
  }
  if (pool_k && !pool_rows) avg_pool1d(unpooled.data(), N, pool_k, opt.pool_edge, imp);
}

std::vector<float> token_importance(std::span<const LayerQK> layers, const DraftShape& shape,
                                    const ScoringOptions& options) {
  std::vector<float> imp(shape.n_keys);
  token_importance(layers, shape, options, imp.data());
  return imp;
}

// ---------------------------------------------------------------------------------------------
// Selection

Selection select_chunks(const float* imp, size_t n, int chunk, double keep,
                        const SelectOptions& options) {
  // `!(keep > 0)` also rejects NaN.
  if (!(keep > 0.0 && keep <= 1.0)) bad("keep must be in (0, 1], got " + std::to_string(keep));
  if (chunk < 1) bad("chunk must be >= 1, got " + std::to_string(chunk));
  if (options.force_tail_tokens < 0)
    bad("force_tail_tokens must be >= 0, got " + std::to_string(options.force_tail_tokens));
  if (n > size_t(std::numeric_limits<int32_t>::max()))
    bad("prompt length " + std::to_string(n) + " does not fit int32 positions");
  Selection sel;
  if (n == 0) return sel;
  if (!imp) bad("imp is null");

  const size_t C = size_t(chunk);
  const size_t nc = (n + C - 1) / C;
  sel.n_chunks = int32_t(nc);
  // Same double product as Python's math.ceil(n_chunks * p) (see header).
  const double want = double(nc) * keep;
  size_t budget = options.keep_rounding == KeepRounding::Ceil
                      ? size_t(std::ceil(want))
                      : std::max<size_t>(1, size_t(std::floor(want)));
  budget = std::clamp<size_t>(budget, 1, nc);
  sel.budget_chunks = int32_t(budget);

  // Forced tail: chunks intersecting the last T positions.
  const size_t T = std::min(size_t(options.force_tail_tokens), n);
  const size_t first_forced = T > 0 ? (n - T) / C : nc;
  const size_t forced = nc - first_forced;
  sel.forced_chunks = int32_t(forced);
  sel.tail_exceeded_budget = forced > budget;

  std::vector<size_t> chosen;
  chosen.reserve(std::max(budget, forced));
  if (forced < budget) {
    std::vector<double> score(first_forced);
    for (size_t c = 0; c < first_forced; ++c) {
      const size_t a = c * C, b = std::min(a + C, n);
      double s = 0;
      for (size_t j = a; j < b; ++j) s += double(imp[j]);
      score[c] = s / double(b - a);
      if (std::isnan(score[c])) score[c] = -std::numeric_limits<double>::infinity();
    }
    std::vector<size_t> order(first_forced);
    for (size_t c = 0; c < first_forced; ++c) order[c] = c;
    // NaN was mapped to -inf; a NaN chunk still loses ties with a real -inf chunk by index only,
    // which is acceptable (both are meaningless scores).
    const size_t take = budget - forced;
    std::partial_sort(
        order.begin(), order.begin() + std::ptrdiff_t(take), order.end(),
        [&](size_t x, size_t y) { return score[x] != score[y] ? score[x] > score[y] : x < y; });
    chosen.assign(order.begin(), order.begin() + std::ptrdiff_t(take));
  }
  for (size_t c = first_forced; c < nc; ++c) chosen.push_back(c);
  std::sort(chosen.begin(), chosen.end());

  sel.kept_chunks.reserve(chosen.size());
  for (size_t c : chosen) {
    sel.kept_chunks.push_back(int32_t(c));
    for (size_t j = c * C, b = std::min(c * C + C, n); j < b; ++j)
      sel.kept_positions.push_back(int32_t(j));
  }
  return sel;
}

Selection select_chunks_after_prefix(const float* imp_suffix, size_t n_suffix, size_t prefix_len,
                                     int chunk, double keep, const SelectOptions& options) {
  if (prefix_len > size_t(std::numeric_limits<int32_t>::max()) ||
      n_suffix > size_t(std::numeric_limits<int32_t>::max()) - prefix_len)
    bad("prefix_len " + std::to_string(prefix_len) + " + n_suffix " + std::to_string(n_suffix) +
        " does not fit int32 positions");
  Selection sel = select_chunks(imp_suffix, n_suffix, chunk, keep, options);
  for (int32_t& p : sel.kept_positions) p += int32_t(prefix_len);
  return sel;
}

}  // namespace accel::specprefill
