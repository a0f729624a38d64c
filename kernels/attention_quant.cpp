// Fused attention over a quantized KV cache (attention_quant.h). Must not make any operation's
// order depend on the batch, the thread count or which thread runs a chunk: the numerics are the
// fixed sequence described in the header.
//
// Design. One work item is (query row, kv head, chunk) for decode-sized batches (split-K, then a
// separate merge pass) or (query row, kv head) for large batches (the item runs its chunks in
// order and merges them itself); both evaluate the same per-chunk sequence and the same merge, so
// they give the same bits. All query heads of a kv group share each K/V block they read (GQA by
// index: nothing is repeated in memory). Scores come from the key codes directly: with the
// query rounded to int8 the per-group dot is an exact integer, 4 elements per vpdpbusd (the float
// path it replaced spent 9 vector operations per key element and 32 keys on dequantizing, against
// 2 FMAs per query head).
// An int4 value block's codes feed the P.V FMAs straight from its lines as c - z, each key's
// weight p * s computed once per group (attention_pv_codes.h; dequantizing the block into an f32
// tile first cost 1.2-1.4x as much at the seed and `small` shapes, 2026-11-29); 32 q8_0 value
// records are dequantized into a 32 x head_dim f32 tile that stays in L1. Hand-written with the
// simd.h layer because the reduction order is part of the result and the loop is the whole cost of
// long-context decode.
#include "kernels/attention_quant.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <immintrin.h>

#include "kernels/attention_block.h"
#include "kernels/attention_pv8.h"
#include "kernels/attention_pv_codes.h"
#include "kernels/check.h"
#include "kernels/quant.h"
#include "kernels/simd.h"
#include "kernels/threading.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace accel {

namespace {

using namespace simd;

using namespace attention_block;  // kBlk keys per block, kBV score vectors per block
constexpr int kMaxD = 256;
constexpr int kMaxRun = 4;       // blocks per run (run_blocks)
constexpr int kRunMaxHeads = 4;  // the largest kv group that takes its blocks in runs
constexpr float kLog2e = 1.4426950408889634f;

// Tile position k of an int4 head holds element int4_lane_element(k): dequantizing W bytes gives
// W low nibbles (even elements) then W high nibbles (odd elements).
int int4_lane_element(int k) {
  const int base = k / (2 * W) * (2 * W), r = k % (2 * W);
  return r < W ? base + 2 * r : base + 2 * (r - W) + 1;
}

int lane_element(KVQuant f, int k) {
  return f == KVQuant::Int4 ? int4_lane_element(k) : k;
}

float half_to_float(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);  // exact, like fp16_to_f32
}

#if defined(__AVX512F__)
inline void nibbles(const uint8_t* p, vf& lo, vf& hi) {
  const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  lo = _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(15)));
  hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
}
#else
inline void nibbles(const uint8_t* p, vf& lo, vf& hi) {
  const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  lo = _mm256_cvtepi32_ps(_mm256_and_si256(b, _mm256_set1_epi32(15)));
  hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 4));
}
#endif

// q8_0 values are in element order in both the tile and the rows: one definition for both.
void dequant_q8_natural(const uint8_t* rec, int D, float* x) {
  for (int g = 0; g < D / kKVQuantGroup; ++g) {
    const uint8_t* blk = rec + g * sizeof(BlockQ8_0);
    const vf d = set1(half_to_float(blk));
    const int8_t* qs = reinterpret_cast<const int8_t*>(blk + 2);
    for (int h = 0; h < kKVQuantGroup / W; ++h)
      store(x + g * kKVQuantGroup + h * W, mul(from_i8(qs + h * W), d));
  }
}

template <int D>
inline void dequant_q8(const uint8_t* rec, float* t) {
  dequant_q8_natural(rec, D, t);
}

// The visible q8_0 records (bit t of `bits`, t < nb) of the 32 starting at `values` into tile
// rows t.
template <int D>
inline void dequant_values(const uint8_t* values, size_t rec, int nb, uint32_t bits, float* tile) {
  for (int t = 0; t < nb; ++t)
    if (bits >> t & 1u) dequant_q8<D>(values + size_t(t) * rec, tile + size_t(t) * D);
}

// The same values in element order (for the dequantize-then-attend path): the lane-order vectors
// interleaved, which moves values without changing them.
void dequant_int4_natural(const uint8_t* rec, int D, float* x) {
  const uint8_t* sc = rec + D / 2;
  const uint8_t* zc = sc + 2 * (D / kKVQuantGroup);
  for (int g = 0; g < D / kKVQuantGroup; ++g) {
    const vf s = set1(half_to_float(sc + 2 * g)), z = set1(half_to_float(zc + 2 * g));
    for (int h = 0; h < kKVQuantGroup / (2 * W); ++h) {
      vf lo, hi;
      nibbles(rec + g * (kKVQuantGroup / 2) + h * W, lo, hi);
      lo = mul(sub(lo, z), s);
      hi = mul(sub(hi, z), s);
      float* dst = x + g * kKVQuantGroup + h * 2 * W;
#if defined(__AVX512F__)
      const __m512i first =
          _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const __m512i second =
          _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      store(dst, _mm512_permutex2var_ps(lo, first, hi));
      store(dst + W, _mm512_permutex2var_ps(lo, second, hi));
#else
      const __m256 a = _mm256_unpacklo_ps(lo, hi), b = _mm256_unpackhi_ps(lo, hi);
      store(dst, _mm256_permute2f128_ps(a, b, 0x20));
      store(dst + W, _mm256_permute2f128_ps(a, b, 0x31));
#endif
    }
  }
}

struct Problem {
  const float* q;
  size_t ldq;
  const int32_t* q_pos;
  size_t n_q;
  QuantKV kv;
  const int32_t* kv_pos;
  size_t n_kv;
  float* out;
  size_t ldo;
  int D, G, Hkv;
  size_t rec;     // value record bytes
  size_t kblock;  // key block bytes (kKBlockTokens records)
  size_t chunk, n_chunks;
  float c;             // scale * log2(e)
  bool float_scores;   // QuantScorePath::Float
  bool pv8;            // QuantPV::Int8
  int window;          // AttentionShape::window
  const float* sinks;  // AttentionShape::sinks
};

// Per-slot scratch: the K and V tiles, the group's queries in lane order, the block's p.
// Zeroed floats on a 64-byte boundary: every tile row, query and partial output starts a cache
// line, so no vector load or store splits one (with std::vector's 16-byte alignment every zmm
// access to a tile split two lines).
class AlignedFloats {
 public:
  void assign(size_t n) {
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    p_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    if (!p_) throw std::bad_alloc();
    std::memset(p_.get(), 0, bytes);
    n_ = n;
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  float* data() { return p_.get(); }
  float& operator[](size_t i) { return p_.get()[i]; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> p_;
  size_t n_ = 0;
};

// Query heads rounded to int8 per group of 32 elements (quantize_queries): the codes as int8 (the
// VNNI path) and as floats (the float path, where every product and sum of codes is an exact
// integer below 2^24), and per (head, group) the step dq and the codes' sum S as floats.
struct QuantQueries {
  std::vector<int8_t> codes;  // [heads][D]
  AlignedFloats fcodes;       // [heads][D]
  AlignedFloats step, sum;    // [heads][D / 32]
  void fit(size_t heads, int D) {
    codes.assign(heads * size_t(D), 0);
    fcodes.assign(heads * size_t(D));
    step.assign(heads * size_t(D / kKVQuantGroup));
    sum.assign(heads * size_t(D / kKVQuantGroup));
  }
};

// Heads from `head` on of a QuantQueries: head h's codes at codes + h * D, its groups' step and
// sum at step + h * D / 32 and sum + h * D / 32.
struct QueryView {
  const int8_t* codes;
  const float* fcodes;
  const float* step;
  const float* sum;
};

QueryView view_of(QuantQueries& q, size_t head, int D) {
  const size_t groups = size_t(D / kKVQuantGroup);
  return {q.codes.data() + head * size_t(D), q.fcodes.data() + head * size_t(D),
          q.step.data() + head * groups, q.sum.data() + head * groups};
}

QueryView advance(const QueryView& q, int heads, int D) {
  const size_t groups = size_t(D / kKVQuantGroup);
  return {q.codes + size_t(heads) * size_t(D), q.fcodes + size_t(heads) * size_t(D),
          q.step + size_t(heads) * groups, q.sum + size_t(heads) * groups};
}

// Rounds `heads` query heads (natural element order, row stride D) to int8 per group of 32
// elements (quantize_query_group) into heads [at, at + heads) of out, with each group's step and
// code sum.
void quantize_queries(const float* q, int heads, int D, QuantQueries& out, size_t at) {
  const int groups = D / kKVQuantGroup;
  for (int h = 0; h < heads; ++h)
    for (int g = 0; g < groups; ++g) {
      const size_t e0 = (at + size_t(h)) * size_t(D) + size_t(g) * kKVQuantGroup;
      int8_t* codes = out.codes.data() + e0;
      const float step = quantize_query_group(q + size_t(h) * size_t(D) + g * kKVQuantGroup, codes);
      int32_t sum = 0;
      for (int e = 0; e < kKVQuantGroup; ++e) {
        out.fcodes[e0 + size_t(e)] = float(codes[e]);
        sum += codes[e];
      }
      const size_t pg = (at + size_t(h)) * size_t(groups) + size_t(g);
      out.step[pg] = step;
      out.sum[pg] = float(sum);
    }
}

struct Scratch {
  AlignedFloats vt, p, alpha;  // vt: q8_0's value tile
  AlignedFloats w, z;  // int4 exact P.V: the block's weights and zeros (attention_pv_codes.h)
  QuantQueries q;      // the item's G heads (when they are not rounded ahead of the items)
  // QuantPV::Int8: per block of a run (run_blocks), its parameters and weights
  std::unique_ptr<attention_pv8::Scratch> pv8[kMaxRun];
  int D = 0, G = 0;  // the shape it was fitted to
  void fit(const Problem& pr) {
    const int blocks = pr.G <= kRunMaxHeads ? kMaxRun : 1;  // the longest run it will take
    for (int b = 0; b < blocks; ++b)
      if (pr.pv8 && !pv8[b]) pv8[b] = std::make_unique<attention_pv8::Scratch>();
    if (D == pr.D && G == pr.G) return;
    vt.assign(size_t(kBlk) * size_t(pr.D));
    w.assign(size_t(pr.D / kKVQuantGroup) * size_t(pr.G) * kBlk);
    z.assign(size_t(pr.D / kKVQuantGroup) * kBlk);
    p.assign(size_t(blocks) * size_t(pr.G) * kBlk);  // a run's blocks (run_blocks)
    alpha.assign(size_t(blocks) * size_t(pr.G));
    q.fit(size_t(pr.G), pr.D);
    D = pr.D;
    G = pr.G;
  }
};

// What a call needs beyond its inputs, kept per calling thread and reused by its later calls:
// decode calls the kernel once per layer and token, and allocating and zeroing the split-K
// partials afresh (2.4 MB at a 32K seed-shape cache) took 440 us per call on average (fresh pages
// each time: glibc maps an allocation that large; 2026-11-28, Zen 5), against ~5 ms for the
// kernel. Nothing in it carries over between calls: every partial is written before it is read,
// and every Scratch is refitted to the call's shape.
struct Workspace {
  std::vector<Scratch> scratch;      // per parallel slot
  std::vector<AlignedFloats> parts;  // per slot: one row's chunk partials (per-row items)
  AlignedFloats part;                // split-K: every item's partial
  void fit_slots(size_t slots) {
    if (scratch.size() < slots) scratch.resize(slots);
    if (parts.size() < slots) parts.resize(slots);
  }
};

Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

// A chunk's partial result per query head of the group: m at [0], l at [1], o[D] (lane order)
// from [kPartO] so that it starts a cache line.
constexpr size_t kPartO = 16;
size_t part_stride(const Problem& pr) {
  return size_t(pr.D) + kPartO;
}

// Element e of the block's 32 keys as codes (exact small integers as floats): kBV vectors of W
// keys in key order.
template <KVQuant F>
inline void kblock_codes(const uint8_t* codes, int e, vf* x) {
  if constexpr (F == KVQuant::Int4) {
#if defined(__AVX512F__)
    const __m512i b =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + e * 16)));
    x[0] = _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(15)));
    x[1] = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
#else
    // bytes 0-7: keys 0-7 and 16-23; bytes 8-15: keys 8-15 and 24-31
    nibbles(codes + e * 16, x[0], x[2]);
    nibbles(codes + e * 16 + 8, x[1], x[3]);
#endif
  } else {
    const int8_t* row = reinterpret_cast<const int8_t*>(codes + e * 32);
    for (int r = 0; r < kBV; ++r) x[r] = from_i8(row + r * W);
  }
}

// Folds one group's exact integer dots I (lanes over keys) into the scores:
// sc = fma(fnmadd(z, S, I), s * dq, sc) -- for q8_0 (no zero) sc = fma(I, s * dq, sc) -- where
// s, z are the keys' group scale and zero and dq, S the head's query step and code sum.
template <KVQuant F, int HN>
inline void fold_group(const vf (*I)[kBV], const vf* s, const vf* z, const QueryView& q, int groups,
                       int g, vf (*sc)[kBV]) {
  for (int h = 0; h < HN; ++h) {
    const vf dq = set1(q.step[h * groups + g]);
    const vf S = set1(q.sum[h * groups + g]);
    for (int r = 0; r < kBV; ++r) {
      const vf t = F == KVQuant::Int4 ? fnmadd(z[r], S, I[h][r]) : I[h][r];
      sc[h][r] = fma(t, mul(s[r], dq), sc[h][r]);
    }
  }
}

template <KVQuant F, int D>
inline void group_params(const uint8_t* block, int g, vf* s, vf* z) {
  const uint8_t* params = block + (F == KVQuant::Int4 ? D * 16 : D * 32);
  constexpr size_t kParamBytes = size_t(D / kKVQuantGroup) * kKBlockTokens * 2;
  const auto* sh = reinterpret_cast<const uint16_t*>(params + size_t(g) * kKBlockTokens * 2);
  const auto* zh =
      reinterpret_cast<const uint16_t*>(params + kParamBytes + size_t(g) * kKBlockTokens * 2);
  for (int r = 0; r < kBV; ++r) {
    s[r] = from_f16(sh + r * W);
    if constexpr (F == KVQuant::Int4) z[r] = from_f16(zh + r * W);
  }
}

#if defined(__AVX512VBMI__) && defined(__AVX512VNNI__)
// One group's integer dots I (lanes over keys) from int4 codes by vpdpbusd (u8 key codes x s8
// query codes, 4 elements per lane, 4 elements per instruction instead of 1 per FMA).
template <int D, int HN>
inline void group_dots_int4_vnni(const QueryView& q, const uint8_t* block, int g, vf (*I)[kBV]) {
  // Rows are 16 bytes apart in the key block, so kQuadIndex gathers byte k of rows e0..e0+3.
  const __m512i idx = _mm512_load_si512(kQuadIndex);
  const __m512i low4 = _mm512_set1_epi8(15);
  __m512i acc[HN][kBV];
  for (auto& a : acc)
    for (auto& x : a) x = _mm512_setzero_si512();
  for (int u = 0; u < kKVQuantGroup / 4; ++u) {
    const int e0 = g * kKVQuantGroup + 4 * u;
    const __m512i p = _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(block + e0 * 16));
    const __m512i lo = _mm512_and_si512(p, low4);                        // keys 0-15
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(p, 4), low4);  // keys 16-31
    for (int h = 0; h < HN; ++h) {
      const __m512i qb = simd::bcast4(q.codes + size_t(h) * D + size_t(e0));
      acc[h][0] = simd::dpbusd(acc[h][0], lo, qb);
      acc[h][1] = simd::dpbusd(acc[h][1], hi, qb);
    }
  }
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) I[h][r] = _mm512_cvtepi32_ps(acc[h][r]);
}
#endif

// One group's integer dots I by float FMAs on the codes: every product and partial sum is an
// integer below 2^24 (int4: 15 * 127 * 32; q8_0: 127 * 127 * 32), so I is exact and equals the
// VNNI path's.
template <KVQuant F, int D, int HN>
inline void group_dots_float(const QueryView& q, const uint8_t* block, int g, vf (*I)[kBV]) {
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) I[h][r] = zero();
  for (int e = g * kKVQuantGroup; e < (g + 1) * kKVQuantGroup; ++e) {
    vf x[kBV];
    kblock_codes<F>(block, e, x);
    for (int h = 0; h < HN; ++h) {
      const vf qe = bcast(q.fcodes + size_t(h) * D + size_t(e));
      for (int r = 0; r < kBV; ++r) I[h][r] = fma(qe, x[r], I[h][r]);
    }
  }
}

// Scores of HN heads (the rounded queries of heads [0, HN) in q) against a key block, lanes over
// keys: per group the exact integer dots I of query and key codes (vpdpbusd for int4 where the CPU
// has AVX-512 VBMI + VNNI and float_scores is off, exact float FMAs otherwise), then fold_group.
template <KVQuant F, int D, int HN>
void block_scores(const QueryView& q, const uint8_t* block, vf (*sc)[kBV], bool float_scores) {
  constexpr int kGroups = D / kKVQuantGroup;
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < kBV; ++r) sc[h][r] = zero();
  for (int g = 0; g < kGroups; ++g) {
    vf I[HN][kBV];
#if defined(__AVX512VBMI__) && defined(__AVX512VNNI__)
    if (F == KVQuant::Int4 && !float_scores)
      group_dots_int4_vnni<D, HN>(q, block, g, I);
    else
      group_dots_float<F, D, HN>(q, block, g, I);
#else
    (void)float_scores;  // the float path is the only one built
    group_dots_float<F, D, HN>(q, block, g, I);
#endif
    vf s[kBV], z[kBV];
    group_params<F, D>(block, g, s, z);
    fold_group<F, HN>(I, s, z, q, kGroups, g, sc);
  }
}

// Heads per P.V pass: as many as keep HN x NV accumulators within the registers (AVX-512: 24 of
// the 32; AVX2: 16 ymm, so pairs up to NV = 8 as before), at most 4.
template <int NV>
constexpr int pv_heads_per_pass() {
#if defined(__AVX512F__)
  return std::clamp(24 / NV, 1, 4);
#else
  return NV <= 8 ? 2 : 1;
#endif
}

#if defined(__AVX512F__)
constexpr int kHeadsPerPass = 8;  // 8 heads x 2 key vectors = 16 accumulators
#else
constexpr int kHeadsPerPass = 2;  // 2 heads x 4 key vectors of the 16 ymm registers
#endif

template <KVQuant F, int D>
void scores_dispatch(int hn, const QueryView& q, const uint8_t* block, vf (*s)[kBV],
                     bool float_scores) {
  switch (hn) {
    case 1:
      return block_scores<F, D, 1>(q, block, s, float_scores);
    case 2:
      return block_scores<F, D, 2>(q, block, s, float_scores);
#if defined(__AVX512F__)
    case 3:
      return block_scores<F, D, 3>(q, block, s, float_scores);
    case 4:
      return block_scores<F, D, 4>(q, block, s, float_scores);
    case 5:
      return block_scores<F, D, 5>(q, block, s, float_scores);
    case 6:
      return block_scores<F, D, 6>(q, block, s, float_scores);
    case 7:
      return block_scores<F, D, 7>(q, block, s, float_scores);
    case 8:
      return block_scores<F, D, 8>(q, block, s, float_scores);
#endif
  }
  ACCEL_FAIL("%d heads per pass (1..%d instantiated)", hn, kHeadsPerPass);
}

// The next block's key block and values, a cache line at a time: the work per block is
// long enough (G heads of scores, softmax and P.V) for them to arrive before they are needed,
// which the hardware prefetcher alone did not achieve (profile: loads of the block's first key
// codes, scales and value scales were the hottest instructions). Always inlined: GCC 12 counts a
// function of prefetches alone as free of side effects and drops calls to it that it has not
// inlined first (all of them, once run_chunk_nv called it through a lambda, 2026-11-29).
[[gnu::always_inline]] inline void prefetch_block(const uint8_t* kblock, const uint8_t* values,
                                                  const Problem& pr) {
  for (size_t b = 0; b < pr.kblock; b += 64) prefetch(kblock + b);
  for (size_t b = 0; b < size_t(kBlk) * pr.rec; b += 64) prefetch(values + b);
}

// The exact P.V of one block (keys j0..j0 + nb - 1, bit t of `bits` visible) for the kv group's
// heads: o_h = o_h * alpha[h] + P_h . V with head h's probabilities at p + h * kBlk. The 8-bit
// P.V (QuantPV::Int8) is run_blocks' own two passes, not this.
template <KVQuant F, int NV>
void block_values(const Problem& pr, Scratch& sc, float* part, const uint8_t* values, int nb,
                  uint32_t bits, const float* p, const float* alpha) {
  constexpr int D = NV * W;
  const size_t stride = part_stride(pr);
  if constexpr (F == KVQuant::Int4) {
    (void)nb;
    attention_pv_codes::block_weights(pr.G, D, p, bits, values, sc.w.data(), sc.z.data());
    attention_pv_codes::pv_heads(pr.G, D, part, stride, kPartO, alpha, sc.w.data(), sc.z.data(),
                                 bits, values);
  } else {
    dequant_values<D>(values, pr.rec, nb, bits, sc.vt.data());
    pv_heads<NV, pv_heads_per_pass<NV>()>(pr.G, part, stride, kPartO, alpha, p, bits, sc.vt.data());
  }
}

// Kv groups of up to kRunMaxHeads heads take their blocks four (or, where four are not left,
// two) at a time: every block's scores, then one softmax update over all of them
// (block_softmax_blocks: the same operations as one update per block in a row, with their latency
// chains overlapped), then each block's P.V. With few heads a block's work is too short for the
// core to overlap one block's chains with the next's on its own (the softmax was a quarter of the
// time at the `small` shape, 3 heads per group, 2026-11-29). Runs of two: 0.95x / 0.96x the time
// of single blocks at `small` 4K / 32K keys; runs of four against runs of two: int4-pv8 0.94x /
// 0.97x / 0.96x at 4K / 32K / 128K keys, int4 0.95x / 0.97x / 0.96x (2 threads, Zen 5, medians of
// 6-8 alternated rounds, 2026-11-30). Eight-head groups gain nothing from runs (1.28x / 1.47x
// slower at the seed shape's 32K keys in runs of two).
//
// Blocks j0, j0 + 32, ..., NB of them, each with a key the query sees (bits[b] != 0; nb[b] keys):
// their scores, one softmax update over all, then each block's P.V. With 8-bit P.V every block's
// weights are rounded before any block's integer dots: the roundings (horizontal reductions, a
// division, their stores) are independent chains the core can overlap (0.96-0.98x the time of one
// block after the other at `small`, 2026-11-29; the exact kernel's weights gained nothing that
// way). The block NB places after each block is prefetched just before that block's scores:
// issued all at once for a run of four, the prefetches made `small` at 128K keys 1.3-1.5x slower.
template <KVQuant F, int NV, int NB>
void run_blocks(const Problem& pr, Scratch& sc, float* part, const QueryView& qg,
                const uint8_t* kbase, const uint8_t* vbase, size_t j0, const int* nb,
                const uint32_t* bits) {
  constexpr int D = NV * W;
  constexpr int kPass = std::min(kHeadsPerPass, W / NB);  // one softmax lane per head and block
  const size_t stride = part_stride(pr);
  float* p[NB];
  float* alpha[NB];
  const uint8_t* values[NB];
  for (int b = 0; b < NB; ++b) {
    p[b] = sc.p.data() + size_t(b) * size_t(pr.G) * kBlk;
    alpha[b] = sc.alpha.data() + size_t(b) * size_t(pr.G);
    values[b] = vbase + (j0 + size_t(b) * kBlk) * pr.rec;
  }
  for (int h0 = 0; h0 < pr.G; h0 += kPass) {
    const int hn = std::min(kPass, pr.G - h0);
    vf s[NB][kPass][kBV];
    const vf(*scores[NB])[kBV];
    float* ph[NB];
    float* ah[NB];
    for (int b = 0; b < NB; ++b) {
      // Past the chunk's end too: the head's next chunk is usually this thread's next item.
      const size_t ahead = j0 + size_t(b + NB) * kBlk;
      if (h0 == 0 && ahead < pr.n_kv)
        prefetch_block(kbase + ahead / kKBlockTokens * pr.kblock, vbase + ahead * pr.rec, pr);
      const size_t jb = j0 + size_t(b) * kBlk;
      scores_dispatch<F, D>(hn, advance(qg, h0, D), kbase + jb / kKBlockTokens * pr.kblock, s[b],
                            pr.float_scores);
      scores[b] = s[b];
      ph[b] = p[b] + size_t(h0) * kBlk;
      ah[b] = alpha[b] + h0;
    }
    softmax_blocks_n<kPass, NB>(hn, scores, pr.c, bits, part + size_t(h0) * stride, stride, ph, ah);
  }
  if (F == KVQuant::Int4 && pr.pv8) {
    for (int b = 0; b < NB; ++b)
      attention_pv8::pv8_weights(pr.G, D, p[b], bits[b], values[b], *sc.pv8[b]);
    for (int b = 0; b < NB; ++b)
      attention_pv8::pv8_update(pr.G, D, part, stride, kPartO, alpha[b], values[b], *sc.pv8[b]);
  } else {
    for (int b = 0; b < NB; ++b)
      block_values<F, NV>(pr, sc, part, values[b], nb[b], bits[b], p[b], alpha[b]);
  }
}

template <KVQuant F, int NV>
void run_chunk_nv(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part,
                  const QueryView& qg) {
  const size_t stride = part_stride(pr);
  for (int h = 0; h < pr.G; ++h) {
    float* P = part + size_t(h) * stride;
    P[0] = -INFINITY;
    std::fill(P + 1, P + stride, 0.f);
  }
  const int32_t qp = pr.q_pos[i], ql = attention_window_lo(qp, pr.window);
  const uint8_t* kbase = pr.kv.k + size_t(g) * pr.kv.k_head_stride;
  // The values of keys j0..j0+31 (j0 a multiple of 32: a value block, or 32 records) start at
  // vbase + j0 * rec either way (QuantKV).
  const uint8_t* vbase = pr.kv.v + size_t(g) * pr.kv.v_head_stride;
  const int max_run = pr.G <= kRunMaxHeads ? kMaxRun : 1;
  const size_t j_end = std::min(pr.n_kv, (ch + 1) * pr.chunk);
  for (size_t j0 = ch * pr.chunk; j0 < j_end;) {
    // The longest run from j0 (4, 2 or 1 blocks) whose every block has a visible key.
    int nb[kMaxRun];
    uint32_t bits[kMaxRun];
    int run = 0;
    for (; run < max_run; ++run) {
      const size_t jb = j0 + size_t(run) * kBlk;
      if (jb >= j_end) break;
      nb[run] = int(std::min<size_t>(kBlk, j_end - jb));
      bits[run] = visible_bits(pr.kv_pos + jb, nb[run], qp, ql);
      if (!bits[run]) break;
    }
    const int used = run >= 4 ? 4 : run >= 2 ? 2 : run;
    if (used == 4)
      run_blocks<F, NV, 4>(pr, sc, part, qg, kbase, vbase, j0, nb, bits);
    else if (used == 2)
      run_blocks<F, NV, 2>(pr, sc, part, qg, kbase, vbase, j0, nb, bits);
    else if (used == 1)
      run_blocks<F, NV, 1>(pr, sc, part, qg, kbase, vbase, j0, nb, bits);
    j0 += size_t(std::max(used, 1)) * kBlk;  // a block without a visible key is skipped
  }
}

template <KVQuant F>
void run_chunk_f(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part,
                 const QueryView& qg) {
  switch (pr.D) {  // head_dim is a multiple of 32 up to 256
    case 32:
      return run_chunk_nv<F, 32 / W>(pr, i, g, ch, sc, part, qg);
    case 64:
      return run_chunk_nv<F, 64 / W>(pr, i, g, ch, sc, part, qg);
    case 96:
      return run_chunk_nv<F, 96 / W>(pr, i, g, ch, sc, part, qg);
    case 128:
      return run_chunk_nv<F, 128 / W>(pr, i, g, ch, sc, part, qg);
    case 160:
      return run_chunk_nv<F, 160 / W>(pr, i, g, ch, sc, part, qg);
    case 192:
      return run_chunk_nv<F, 192 / W>(pr, i, g, ch, sc, part, qg);
    case 224:
      return run_chunk_nv<F, 224 / W>(pr, i, g, ch, sc, part, qg);
    case 256:
      return run_chunk_nv<F, 256 / W>(pr, i, g, ch, sc, part, qg);
  }
  // attention_quant checks head_dim on entry; reaching here would leave `part` unwritten.
  ACCEL_FAIL("head_dim %d not instantiated (multiples of 32 up to 256)", pr.D);
}

// Chunk ch of query row i against kv head g; qg: the row's G query heads of that group, rounded.
void run_chunk(const Problem& pr, size_t i, int g, size_t ch, Scratch& sc, float* part,
               const QueryView& qg) {
  if (pr.kv.format == KVQuant::Int4)
    run_chunk_f<KVQuant::Int4>(pr, i, g, ch, sc, part, qg);
  else
    run_chunk_f<KVQuant::Q8_0>(pr, i, g, ch, sc, part, qg);
}

// Merges the chunks of query row i, head g*G + h, in chunk order; `parts` points at chunk 0's
// partial of that head, successive chunks `chunk_stride` floats apart.
void merge(const Problem& pr, size_t i, int head, const float* parts, size_t chunk_stride) {
  float* out = pr.out + i * pr.ldo + size_t(head) * size_t(pr.D);
  float M = -INFINITY;
  for (size_t ch = 0; ch < pr.n_chunks; ++ch) {
    const float* P = parts + ch * chunk_stride;
    if (P[1] > 0) M = std::max(M, P[0]);
  }
  if (M == -INFINITY) {
    std::fill(out, out + pr.D, 0.f);
    return;
  }
  // A sink (attention.h) is one more logit, t in the log2 domain, with a zero value row.
  const float t = pr.sinks ? pr.sinks[head] * kLog2e : -INFINITY;
  if (pr.sinks) M = std::max(M, t);
  float l = 0, o[kMaxD];
  std::fill(o, o + pr.D, 0.f);
  for (size_t ch = 0; ch < pr.n_chunks; ++ch) {
    const float* P = parts + ch * chunk_stride;
    if (!(P[1] > 0)) continue;  // an empty chunk contributes nothing
    const float w = exp2_scalar(P[0] - M);
    l = l + P[1] * w;
    const vf wv = set1(w);
    for (int d = 0; d < pr.D; d += W) store(o + d, fma(load(P + kPartO + d), wv, load(o + d)));
  }
  if (pr.sinks) l = l + exp2_scalar(t - M);
  const vf lv = set1(l);
  for (int d = 0; d < pr.D; d += W) store(o + d, div(load(o + d), lv));
  for (int k = 0; k < pr.D; ++k) out[lane_element(pr.kv.format, k)] = o[k];
}

double quant_attention_work(const AttentionShape& s, size_t n_q, size_t n_kv) {
  return 4.0 * double(n_q) * double(n_kv) * double(s.n_heads) * double(s.head_dim);
}

}  // namespace

float quantize_query_group(const float* x, int8_t* codes) {
  float amax = 0.f;
  bool finite = true;
  for (int e = 0; e < kKVQuantGroup; ++e) {
    finite = finite && std::isfinite(x[e]);
    amax = std::max(amax, std::fabs(x[e]));
  }
  if (!finite) {  // x * id would be NaN, whose conversion to an integer is undefined
    std::memset(codes, 0, kKVQuantGroup);
    return NAN;
  }
  // 127 / amax overflows to inf for amax below ~3.7e-37 (subnormals included): such a group is
  // scaled by 2^100 first, exactly, so that every group is rounded by the same rule.
  const float up = amax < 0x1p-100f ? 0x1p100f : 1.f;
  const float id = amax > 0.f ? 127.f / (amax * up) : 0.f;
  for (int e = 0; e < kKVQuantGroup; ++e)
    codes[e] = int8_t(std::clamp(std::nearbyint(x[e] * up * id), -127.f, 127.f));
  return amax / 127.f;
}

void attention_quant(const AttentionShape& s, const float* q, size_t ldq, const int32_t* q_pos,
                     size_t n_q, const QuantKV& kv, const int32_t* kv_pos, size_t n_kv, float* out,
                     size_t ldo, size_t chunk, QuantScorePath path, QuantPV pv) {
  ACCEL_CHECK(s.n_kv_heads > 0 && s.n_heads % s.n_kv_heads == 0, "shape: %d heads, %d kv heads",
              s.n_heads, s.n_kv_heads);
  ACCEL_CHECK(s.head_dim > 0 && s.head_dim % kKVQuantGroup == 0 && s.head_dim <= kMaxD,
              "head_dim %d is not instantiated (multiples of %d up to %d)", s.head_dim,
              kKVQuantGroup, kMaxD);
  ACCEL_CHECK(chunk > 0 && chunk % kBlk == 0, "chunk %zu must be a positive multiple of %d", chunk,
              kBlk);
  check_mask_options(s);
  ACCEL_CHECK(pv == QuantPV::Exact || kv.format == KVQuant::Int4,
              "8-bit P.V (QuantPV::Int8) is defined for int4 caches only, not q8_0");
  ACCEL_CHECK(s.softcap == 0.f,
              "attention soft-cap %g: the quantized attention kernels do not implement it",
              double(s.softcap));
  ACCEL_CHECK(n_q <= 1 || ldq >= size_t(s.n_heads) * size_t(s.head_dim),
              "%zu query rows: stride ldq %zu is shorter than a row (%d x %d)", n_q, ldq, s.n_heads,
              s.head_dim);
  ACCEL_CHECK(n_q <= 1 || ldo >= size_t(s.n_heads) * size_t(s.head_dim),
              "%zu output rows: stride ldo %zu is shorter than a row (%d x %d)", n_q, ldo,
              s.n_heads, s.head_dim);
  if (n_q == 0) return;
  Problem pr{q,
             ldq,
             q_pos,
             n_q,
             kv,
             kv_pos,
             n_kv,
             out,
             ldo,
             s.head_dim,
             s.n_heads / s.n_kv_heads,
             s.n_kv_heads,
             kv_quant_record_bytes(kv.format, s.head_dim),
             kv_quant_kblock_bytes(kv.format, s.head_dim),
             chunk,
             std::max<size_t>(1, (n_kv + chunk - 1) / chunk),
             s.scale * kLog2e,
             path == QuantScorePath::Float,
             pv == QuantPV::Int8,
             s.window,
             s.sinks};
  const size_t stride = part_stride(pr), G = size_t(pr.G);
  const size_t rows = n_q * size_t(pr.Hkv);
  Workspace& ws = workspace();
  ws.fit_slots(static_cast<size_t>(parallel_slots()));
  std::vector<Scratch>& scratch = ws.scratch;
  const double work = quant_attention_work(s, n_q, n_kv);
  if (rows >= size_t(2 * num_threads()) || pr.n_chunks == 1) {
    // Enough (row, kv head) items: each runs its chunks in order and merges them itself.
    std::vector<AlignedFloats>& parts = ws.parts;
    parallel_for(rows, work, [&](size_t it, int slot) {
      Scratch& sc = scratch[size_t(slot)];
      sc.fit(pr);
      AlignedFloats& part = parts[size_t(slot)];
      if (part.size() < pr.n_chunks * G * stride) part.assign(pr.n_chunks * G * stride);
      const size_t i = it / size_t(pr.Hkv);
      const int g = int(it % size_t(pr.Hkv));
      quantize_queries(pr.q + i * pr.ldq + size_t(g * pr.G) * size_t(pr.D), pr.G, pr.D, sc.q, 0);
      const QueryView qg = view_of(sc.q, 0, pr.D);
      for (size_t ch = 0; ch < pr.n_chunks; ++ch)
        run_chunk(pr, i, g, ch, sc, &part[ch * G * stride], qg);
      for (size_t h = 0; h < G; ++h) merge(pr, i, g * pr.G + int(h), &part[h * stride], G * stride);
    });
    return;
  }
  // Split-K: one item per (row, kv head, chunk), then the merge as a separate pass.
  AlignedFloats& part = ws.part;
  if (part.size() < rows * pr.n_chunks * G * stride) part.assign(rows * pr.n_chunks * G * stride);
  // Few rows here: every row's heads are rounded once, ahead of the chunk items that share them.
  QuantQueries qq;
  qq.fit(n_q * size_t(s.n_heads), pr.D);
  for (size_t i = 0; i < n_q; ++i)
    quantize_queries(q + i * ldq, s.n_heads, pr.D, qq, i * size_t(s.n_heads));
  parallel_for(rows * pr.n_chunks, work, [&](size_t it, int slot) {
    Scratch& sc = scratch[size_t(slot)];
    sc.fit(pr);
    const size_t row = it / pr.n_chunks, ch = it % pr.n_chunks;
    const size_t i = row / size_t(pr.Hkv);
    const int g = int(row % size_t(pr.Hkv));
    run_chunk(pr, i, g, ch, sc, &part[(row * pr.n_chunks + ch) * G * stride],
              view_of(qq, i * size_t(s.n_heads) + size_t(g * pr.G), pr.D));
  });
  parallel_for(
      n_q * size_t(s.n_heads), double(n_q) * s.n_heads * pr.n_chunks * pr.D, [&](size_t it, int) {
        const size_t i = it / size_t(s.n_heads);
        const int head = int(it % size_t(s.n_heads));
        const size_t row = i * size_t(pr.Hkv) + size_t(head / pr.G);
        merge(pr, i, head, &part[row * pr.n_chunks * G * stride + size_t(head % pr.G) * stride],
              G * stride);
      });
}

void dequantize_record_rows(KVQuant f, int n_kv_heads, int head_dim, const uint8_t* records,
                            size_t head_stride, size_t j0, size_t n, float* out, size_t ld) {
  const size_t rec = kv_quant_record_bytes(f, head_dim);  // checks head_dim
  const auto dq = f == KVQuant::Int4 ? &dequant_int4_natural : &dequant_q8_natural;
  parallel_ranges(n, double(n) * n_kv_heads * head_dim * 2.0, [&](size_t b, size_t e, int) {
    for (size_t j = b; j < e; ++j)
      for (int g = 0; g < n_kv_heads; ++g)
        dq(records + size_t(g) * head_stride + (j0 + j) * rec, head_dim,
           out + j * ld + size_t(g) * size_t(head_dim));
  });
}

void dequantize_kv_rows(const QuantKV& kv, int n_kv_heads, int head_dim, size_t j0, size_t n,
                        float* k_out, float* v_out, size_t ld) {
  const bool vblocks = kv.format == KVQuant::Int4;  // int4 values are value blocks
  if (!vblocks)
    dequantize_record_rows(kv.format, n_kv_heads, head_dim, kv.v, kv.v_head_stride, j0, n, v_out,
                           ld);
  const size_t kbb = kv_quant_kblock_bytes(kv.format, head_dim);
  parallel_ranges(n, double(n) * n_kv_heads * head_dim * 8.0, [&](size_t b, size_t e, int) {
    std::vector<uint8_t> rec(kv_quant_record_bytes(kv.format, head_dim));
    for (size_t j = b; j < e; ++j)
      for (int g = 0; g < n_kv_heads; ++g) {
        const size_t t = j0 + j, blk = t / kKBlockTokens * kbb;
        const int slot = int(t % kKBlockTokens);
        const size_t col = j * ld + size_t(g) * size_t(head_dim);
        kblock_get(kv.format, head_dim, kv.k + size_t(g) * kv.k_head_stride + blk, slot,
                   rec.data());
        kv_dequantize_head(kv.format, rec.data(), head_dim, k_out + col);
        if (!vblocks) continue;
        vblock_get(kv.format, head_dim, kv.v + size_t(g) * kv.v_head_stride + blk, slot,
                   rec.data());
        kv_dequantize_head(kv.format, rec.data(), head_dim, v_out + col);
      }
  });
}

}  // namespace accel
