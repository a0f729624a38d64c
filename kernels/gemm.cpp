// GEMM Y = X · Wᵀ (+ bias) for every weight DType: the packed panel layout, the register-tiled
// micro-kernel, per-panel dequantization into scratch, and the thread partition. Must never change
// the per-output reduction order with M, the row index, the thread count or the schedule
// (ARCHITECTURE.md invariant 1), so it must never split K across threads or use a different
// arithmetic sequence for edge tiles.
//
// Why hand-written intrinsics: speed, and a reduction order fixed by the code. k-quant weights take
// their own integer-dot path (gemm_intdot_part; per-output arithmetic in kquant_panel.h), and so
// do MXFP4 and q8_0 weights (mxfp4_panel.h, q8_0_panel.h), again the same for every M. Every
// other output Y[m][n] lives in one register lane and is computed as
//   acc = 0;  for k = 0..K-1: acc = fma(x[m][k], w[n][k], acc);  Y = acc (+ bias[n], one add)
// with w[n][k] the exact float value dequantize_row() gives. K-blocking stores the partial sum to
// Y and reloads it (exact), so blocking does not change the sequence. Lanes never interact, so
// zero-padded rows/columns and the number of rows in a tile cannot affect a valid lane's value.
#include "kernels/gemm.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <utility>
#include <vector>

#include <immintrin.h>

#include "kernels/check.h"
#include "kernels/fp16.h"
#include "kernels/kquant.h"
#include "kernels/kquant_panel.h"
#include "kernels/mxfp4.h"
#include "kernels/mxfp4_panel.h"
#include "kernels/q8_0_panel.h"
#include "kernels/quant.h"
#include "kernels/simd.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"

namespace accel {

namespace {

// ---------------------------------------------------------------------------------------------
// The same micro-kernel and dequantizers are written once over kernels/simd.h's operations.
// AVX-512: 6 rows x 64 columns: 24 zmm accumulators + 4 weight vectors + 1 broadcast of the 32
// registers; 4 weight loads + 6 broadcasts per 24 FMAs. Measured on Zen 4 (1 thread, CPU time,
// M=2048 f32): 6x64 ~10% faster than 12x32, 14x32, 8x48 or 4x96 at the same K-block.
// AVX2: 6 rows x 16 columns: 12 ymm accumulators + 2 weight vectors + 1 broadcast of the 16.
// ---------------------------------------------------------------------------------------------
using simd::vf;
constexpr int kMR = 6;
constexpr int kNV = simd::W == 16 ? 4 : 2;

constexpr int kW = simd::W;
constexpr int kNR = kNV * kW;  // columns per weight panel
// K-block. Measured on Zen 4 (M=2048, f32): whole-K micro-panels streamed from L2 (the packed X
// micro-panel kMR x kKC stays in L1) beat L1-sized weight slices: kKC 128/256/512/1024 gave
// 0.80/0.82/0.90/1.00 of the best rate. Multiple of 256 so quantized blocks never straddle it.
constexpr size_t kKC = 1024;
constexpr size_t kMC = 16 * kMR;  // rows per packed X block: kMC x kKC floats = 384 KB (L2)
constexpr size_t kNCP = 4;        // panels per N chunk: dequantized scratch kNCP*kNR x kKC = 1 MB
static_assert(kKC % kQK_K == 0 && kNR % 16 == 0);  // k-quant super-blocks never straddle it

}  // namespace

// Packed layout (all types): the N columns are cut into panels of kNR (zero-padded at the end);
// within a panel the data is K-major so the micro-kernel streams it sequentially.
//   F32        float    [panels][K][kNR]
//   F16, BF16  uint16_t [panels][K][kNR]   (converted to f32 in the kernel's scratch)
//   Q8_0       per panel, per 32-block of K: see q8_0_panel.h (34 bytes per 32 elements, as ggml)
//   Q4_0       per panel, per 32-block of K: uint16_t d[kNR] (fp16), uint8_t q[16][kNR] where
//              byte (j, n) holds column n's element j in the low nibble and j+16 in the high one
//              (ggml's split-halves order, transposed)
//   MXFP4      per panel, per 32-block of K: see mxfp4_panel.h (17 bytes per 32 elements, as ggml)
//   Q4_K, Q5_K, Q6_K  per panel, per 256-super-block of K: see kquant_panel.h
struct PackedWeight::Storage {
  void* data = nullptr;  // from stream_alloc: 64-byte aligned at least
  size_t panel_bytes = 0;
  ~Storage() { stream_free(data); }
  const uint8_t* panel(size_t p) const {
    return static_cast<const uint8_t*>(data) + p * panel_bytes;
  }
};

namespace {

size_t panel_bytes_for(DType t, size_t K) {
  switch (t) {
    case DType::F32:
      return K * kNR * 4;
    case DType::F16:
    case DType::BF16:
      return K * kNR * 2;
    case DType::Q8_0:
      return K / 32 * q8::block_bytes<kNR>();
    case DType::Q4_0:
      return K / 32 * kNR * (2 + 16);
    case DType::MXFP4:
      return K / 32 * mx::block_bytes<kNR>();
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      return K / kQK_K * kq::sb_bytes<kNR>(t);
    case DType::Q5_0:
      break;  // packed as q8_0 (PackedWeight::pack)
  }
  ACCEL_FAIL("type %d has no panel layout of its own", int(t));
}

// ---------------------------------------------------------------------------------------------
// Micro-kernel: R rows (R <= kMR) x kNR columns. a is packed X [kc][kMR] (row r at a[k*kMR+r]).
// The weights come from `pan`, a panel in the layout of type WT (see Storage), K rows [k0, k0+kc):
// WT = F32 also serves the dequantized scratch [kc][kNR] (with k0 = 0). Other types are converted
// in registers to exactly the floats dequant_slice() would write, so the FMA sequence per lane is
// the same for every WT and every R. c points at Y[row0][col0]; `ncols` columns are valid. When
// `accum` the partial sums of earlier K-blocks are reloaded from c; bias (or null) is added last.
// ---------------------------------------------------------------------------------------------
// Q4_0 panels: per 32-block of K a per-column fp16 scale, then 16 rows of nibble pairs.
struct NibbleBlock {
  static constexpr size_t kHead = 2;  // fp16 d
  static vf scale(const uint8_t* p) { return simd::from_f16(reinterpret_cast<const uint16_t*>(p)); }
  static void codes(const uint8_t* q, vf& lo, vf& hi) { simd::from_u4(q, lo, hi); }
};

struct Tile {
  float* c;
  size_t ldc;
  int ncols;
  bool accum;
  const float* bias;
};

#define ACCEL_INLINE inline __attribute__((always_inline))

template <int R>
ACCEL_INLINE void fma_row(vf (&acc)[R][kNV], const float* a, const vf (&bv)[kNV]) {
  for (int r = 0; r < R; ++r) {
    const vf av = simd::bcast(a + r);
    for (int j = 0; j < kNV; ++j) acc[r][j] = simd::fma(av, bv[j], acc[r][j]);
  }
}

template <int R, DType WT>
void ukernel(size_t kc, const float* __restrict a, const uint8_t* __restrict pan, size_t k0,
             const Tile& t) {
  using T = vf;
  T acc[R][kNV];
  const bool full = t.ncols == kNR;
  auto lanes = [&](int j) { return std::clamp(t.ncols - j * kW, 0, kW); };
  if (t.accum) {
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < kNV; ++j)
        acc[r][j] = full ? simd::load(t.c + r * t.ldc + j * kW)
                         : simd::load_n(t.c + r * t.ldc + j * kW, simd::first(lanes(j)));
  } else {
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < kNV; ++j) acc[r][j] = simd::zero();
  }
  T bv[kNV];
  if constexpr (WT == DType::F32 || WT == DType::F16 || WT == DType::BF16) {
    for (size_t k = 0; k < kc; ++k) {
      for (int j = 0; j < kNV; ++j) {
        const size_t off = (k0 + k) * kNR + j * kW;
        if constexpr (WT == DType::F32)
          bv[j] = simd::load(reinterpret_cast<const float*>(pan) + off);
        else if constexpr (WT == DType::F16)
          bv[j] = simd::from_f16(reinterpret_cast<const uint16_t*>(pan) + off);
        else
          bv[j] = simd::from_bf16(reinterpret_cast<const uint16_t*>(pan) + off);
      }
      fma_row<R>(acc, a + k * kMR, bv);
    }
  } else if constexpr (WT == DType::Q4_0) {
    // K rows 0..15 are the low nibbles, 16..31 the high ones (kept in K order)
    using NB = NibbleBlock;
    for (size_t kb = 0; kb < kc / 32; ++kb) {
      const uint8_t* p = pan + (k0 / 32 + kb) * kNR * (NB::kHead + 16);
      const uint8_t* q = p + kNR * NB::kHead;
      T sc[kNV];
      for (int j = 0; j < kNV; ++j) sc[j] = NB::scale(p + j * kW * NB::kHead);
      for (int half = 0; half < 2; ++half)
        for (int k = 0; k < 16; ++k) {
          for (int j = 0; j < kNV; ++j) {
            T lo, hi;
            NB::codes(q + k * kNR + j * kW, lo, hi);
            bv[j] = simd::mul(half ? hi : lo, sc[j]);
          }
          fma_row<R>(acc, a + (kb * 32 + half * 16 + k) * kMR, bv);
        }
    }
  }
  if (t.bias) {
    for (int j = 0; j < kNV; ++j) {
      const T bj =
          full ? simd::load(t.bias + j * kW) : simd::load_n(t.bias + j * kW, simd::first(lanes(j)));
      for (int r = 0; r < R; ++r) acc[r][j] = simd::add(acc[r][j], bj);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kNV; ++j) {
      if (full)
        simd::store(t.c + r * t.ldc + j * kW, acc[r][j]);
      else
        simd::store_n(t.c + r * t.ldc + j * kW, acc[r][j], simd::first(lanes(j)));
    }
}

using UKernel = void (*)(size_t, const float*, const uint8_t*, size_t, const Tile&);

template <DType WT, int... Rs>
constexpr std::array<UKernel, kMR> make_table(std::integer_sequence<int, Rs...>) {
  return {&ukernel<Rs + 1, WT>...};
}
template <DType WT>
constexpr auto kKernels = make_table<WT>(std::make_integer_sequence<int, kMR>{});

const std::array<UKernel, kMR>& kernels_for(DType t) {
  switch (t) {
    case DType::F16:
      return kKernels<DType::F16>;
    case DType::BF16:
      return kKernels<DType::BF16>;
    case DType::Q4_0:
      return kKernels<DType::Q4_0>;
    default:  // F32, and the dequantized scratch; k-quants, MXFP4, q8_0 take gemm_intdot_part
      return kKernels<DType::F32>;
  }
}

// ---------------------------------------------------------------------------------------------
// Weight slice -> f32 scratch [kc][kNR] for panel `pan`, K range [k0, k0+kc). The values are the
// exact floats dequantize_row() produces (int8/int4 code converted exactly, one multiply by the
// fp16 scale converted exactly; F16C and the bf16 shift are exact conversions).
// ---------------------------------------------------------------------------------------------
void dequant_nibble_slice(const uint8_t* pan, size_t k0, size_t kc, float* __restrict out) {
  using NB = NibbleBlock;
  constexpr size_t blk = kNR * (NB::kHead + 16);
  for (size_t kb = 0; kb < kc / 32; ++kb) {
    const uint8_t* p = pan + (k0 / 32 + kb) * blk;
    const uint8_t* q = p + kNR * NB::kHead;
    vf sc[kNV];
    for (int j = 0; j < kNV; ++j) sc[j] = NB::scale(p + j * kW * NB::kHead);
    float* o = out + kb * 32 * kNR;
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < kNV; ++j) {
        vf lo, hi;
        NB::codes(q + k * kNR + j * kW, lo, hi);
        simd::store(o + k * kNR + j * kW, simd::mul(lo, sc[j]));
        simd::store(o + (k + 16) * kNR + j * kW, simd::mul(hi, sc[j]));
      }
  }
}

void dequant_slice(DType t, const uint8_t* pan, size_t k0, size_t kc, float* __restrict out) {
  switch (t) {
    case DType::F32:
      std::memcpy(out, pan + k0 * kNR * 4, kc * kNR * 4);
      return;
    case DType::F16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(pan) + k0 * kNR;
      for (size_t i = 0; i < kc * kNR; i += kW) simd::store(out + i, simd::from_f16(s + i));
      return;
    }
    case DType::BF16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(pan) + k0 * kNR;
      for (size_t i = 0; i < kc * kNR; i += kW) simd::store(out + i, simd::from_bf16(s + i));
      return;
    }
    case DType::Q4_0:
      dequant_nibble_slice(pan, k0, kc, out);
      return;
    case DType::Q8_0:
    case DType::Q5_0:
    case DType::MXFP4:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      ACCEL_FAIL("type %d: integer-dot types never use the f32 scratch (gemm_intdot_part)", int(t));
  }
}

// Per-thread scratch, grown on demand and reused across calls (64-byte aligned).
struct Scratch {
  float* p = nullptr;
  size_t n = 0;
  float* get(size_t want) {
    if (want > n) {
      std::free(p);
      n = want;
      p = static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64));
      if (!p) throw std::bad_alloc();
    }
    return p;
  }
  ~Scratch() { std::free(p); }
};

// X rows [0, mc) of the block at x (stride ldx), columns [k0, k0+kc) -> [tiles][kc][kMR]. A last
// partial tile of R rows leaves lanes R..kMR-1 unset: ukernel<R> never reads them.
#if defined(__AVX512F__)
static_assert(kMR == 6, "pack6x16 interleaves 6 rows");
// Lane tables of pack6x16: output vector j lane i is element q = 16 j + i of the interleaved run,
// i.e. row q % 6 at column q / 6; idx[j][p] picks it from rows 2p, 2p + 1 (permutex2var's
// numbering: column, or 16 + column for the second row), in[j][p] marks the lanes rows 2p, 2p + 1
// own.
struct Pack6Tables {
  alignas(64) int32_t idx[6][3][16];
  uint16_t in[6][3];
};
const Pack6Tables& pack6_tables() {
  static const Pack6Tables t = [] {
    Pack6Tables v{};
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 16; ++i) {
        const int q = 16 * j + i, r = q % 6, k = q / 6;
        v.idx[j][r / 2][i] = k + 16 * (r % 2);
        v.in[j][r / 2] = uint16_t(v.in[j][r / 2] | (1u << i));
      }
    return v;
  }();
  return t;
}
// Columns [0, 16) of six rows into out[k * 6 + r]: three two-row permutes and two blends per output
// vector instead of 96 scalar loads and stores (the scalar transposition was ~4% of an f32
// prefill on a Zen 5, 2026-11-28).
inline void pack6x16(const float* x, size_t ldx, float* out) {
  const Pack6Tables& t = pack6_tables();
  __m512 r[6];
  for (int i = 0; i < 6; ++i) r[i] = _mm512_loadu_ps(x + size_t(i) * ldx);
  for (int j = 0; j < 6; ++j) {
    __m512 o = _mm512_permutex2var_ps(r[0], _mm512_load_si512(t.idx[j][0]), r[1]);
    o = _mm512_mask_blend_ps(t.in[j][1], o,
                             _mm512_permutex2var_ps(r[2], _mm512_load_si512(t.idx[j][1]), r[3]));
    o = _mm512_mask_blend_ps(t.in[j][2], o,
                             _mm512_permutex2var_ps(r[4], _mm512_load_si512(t.idx[j][2]), r[5]));
    _mm512_storeu_ps(out + 16 * j, o);
  }
}
#endif

void pack_x(const float* x, size_t ldx, size_t mc, size_t k0, size_t kc, float* __restrict out) {
  for (size_t t = 0; t * kMR < mc; ++t) {
    const size_t rows = std::min<size_t>(kMR, mc - t * kMR);
    float* o = out + t * kc * kMR;
    size_t k_done = 0;
#if defined(__AVX512F__)
    if (rows == kMR)
      for (; k_done + 16 <= kc; k_done += 16)
        pack6x16(x + t * kMR * ldx + k0 + k_done, ldx, o + k_done * kMR);
#endif
    for (size_t r = 0; r < rows; ++r) {
      const float* src = x + (t * kMR + r) * ldx + k0;
      for (size_t k = k_done; k < kc; ++k) o[k * kMR + r] = src[k];
    }
  }
}

// X packed once for a whole GEMM, shared by the items: K-slice s (columns [s kKC, s kKC + kc))
// at s * kKC * m_pad, row tile t of it at t * kc * kMR (pack_x's layout), m_pad = M rounded up
// to kMR. Items used to pack their own rows per panel group, i.e. every row once per group
// (~8% of an f32 prefill of 512 tokens on a 2-core Zen 5, 2026-11-28).
struct PackedX {
  const float* p;
  size_t m_pad;
  const float* tile(size_t k0, size_t kc, size_t row) const {  // row: a multiple of kMR
    return p + k0 * m_pad + row * kc;
  }
};

PackedX pack_all_x(const float* X, size_t M, size_t ldx, size_t K, Scratch& buf) {
  const size_t m_pad = (M + kMR - 1) / kMR * kMR, tiles = m_pad / kMR;
  float* out = buf.get(m_pad * K);
  parallel_for(tiles, 2.0 * double(m_pad) * double(K), [&](size_t t, int) {
    const size_t rows = std::min<size_t>(kMR, M - t * kMR);
    for (size_t k0 = 0; k0 < K; k0 += kKC) {
      const size_t kc = std::min(kKC, K - k0);
      pack_x(X + t * kMR * ldx, ldx, rows, k0, kc, out + k0 * m_pad + t * kMR * kc);
    }
  });
  return {out, m_pad};
}

// One thread's share: rows [m0, m1) x panels [p0, p1), the whole of K. With few rows (at most
// kDirectTiles row tiles) the kernels read the packed weights and convert in registers; with
// more, each K-slice of an N chunk is dequantized once into scratch and reused by every row tile.
constexpr size_t kDirectTiles = 2;

void gemm_part(const PackedX& xp, size_t m0, size_t m1, const PackedWeight& W, size_t p0, size_t p1,
               float* Y, size_t ldy, const float* bias) {
  static thread_local Scratch ws;
  const DType t = W.type();
  const size_t N = W.rows(), K = W.cols();
  const PackedWeight::Storage* st = W.storage();
  const bool direct = t == DType::F32 || m1 - m0 <= kDirectTiles * kMR;
  const auto& kern = kernels_for(direct ? t : DType::F32);
  float* wbuf = direct ? nullptr : ws.get(kNCP * kNR * kKC);
  for (size_t jc = p0; jc < p1; jc += kNCP) {
    const size_t je = std::min(p1, jc + kNCP);
    for (size_t k0 = 0; k0 < K; k0 += kKC) {
      const size_t kc = std::min(kKC, K - k0);
      const bool last = k0 + kc == K;
      if (wbuf)  // dequantize this N chunk's K-slice once; reused by every row block below
        for (size_t p = jc; p < je; ++p)
          dequant_slice(t, st->panel(p), k0, kc, wbuf + (p - jc) * kKC * kNR);
      for (size_t i0 = m0; i0 < m1; i0 += kMC) {
        const size_t mc = std::min(kMC, m1 - i0);
        const float* xblock = xp.tile(k0, kc, i0);
        for (size_t p = jc; p < je; ++p) {
          const uint8_t* b =
              wbuf ? reinterpret_cast<const uint8_t*>(wbuf + (p - jc) * kKC * kNR) : st->panel(p);
          const size_t bk0 = wbuf ? 0 : k0;
          const size_t n0 = p * kNR;
          const int ncols = int(std::min<size_t>(kNR, N - n0));
          const float* bs = last && bias ? bias + n0 : nullptr;
          for (size_t i = 0; i < mc; i += kMR) {
            const size_t tile_rows = std::min<size_t>(kMR, mc - i);
            const Tile tile{Y + (i0 + i) * ldy + n0, ldy, ncols, k0 > 0, bs};
            kern[tile_rows - 1](kc, xblock + i * kc, b, bk0, tile);
          }
        }
      }
    }
  }
}

}  // namespace

PackedWeight PackedWeight::pack(DType t, const void* src, size_t rows, size_t cols) {
  return pack(t, std::vector<RowSource>{{src, rows}}, cols);
}

namespace {

// q5_0 rows as q8_0 rows (q5_0_as_q8_0, exact), in one buffer the caller packs: ggml's q5_0 x q8_0
// dot and its q8_0 x q8_0 dot compute the same integers with the same scales, so the q8_0
// integer-dot path gives q5_0's products; the packed weight takes 8.5 bits per value, not 5.5.
std::vector<uint8_t> q5_0_rows_as_q8_0(const std::vector<PackedWeight::RowSource>& parts,
                                       size_t cols) {
  const size_t blocks = cols / 32;
  size_t rows = 0;
  for (const auto& p : parts) rows += p.rows;
  std::vector<uint8_t> out(rows * blocks * sizeof(BlockQ8_0));
  uint8_t* o = out.data();
  for (const auto& p : parts)
    for (size_t i = 0; i < p.rows * blocks; ++i, o += sizeof(BlockQ8_0)) {
      BlockQ5_0 b;
      std::memcpy(&b, static_cast<const uint8_t*>(p.data) + i * sizeof(BlockQ5_0), sizeof b);
      const BlockQ8_0 q = q5_0_as_q8_0(b);
      std::memcpy(o, &q, sizeof q);
    }
  return out;
}

}  // namespace

PackedWeight PackedWeight::pack(DType t, const std::vector<RowSource>& parts, size_t cols) {
  if (t == DType::Q5_0) {
    ACCEL_CHECK(cols % 32 == 0,
                "q5_0 weight: %zu columns is not a whole number of 32-element blocks", cols);
    size_t rows = 0;
    for (const RowSource& p : parts) rows += p.rows;
    const std::vector<uint8_t> q8 = q5_0_rows_as_q8_0(parts, cols);
    return pack(DType::Q8_0, q8.data(), rows, cols);
  }
  ACCEL_CHECK(cols % dtype_block_elems(t) == 0,
              "%.*s weight: %zu columns is not a whole number of %zu-element blocks",
              int(dtype_name(t).size()), dtype_name(t).data(), cols, dtype_block_elems(t));
  size_t rows = 0;
  for (const RowSource& p : parts) rows += p.rows;
  PackedWeight pw;
  pw.type_ = t;
  pw.rows_ = rows;
  pw.cols_ = cols;
  if (rows == 0) return pw;
  auto st = std::make_shared<Storage>();
  const size_t panels = (rows + kNR - 1) / kNR;
  st->panel_bytes = panel_bytes_for(t, cols);
  const size_t total = std::max<size_t>(64, (panels * st->panel_bytes + 63) / 64 * 64);
  st->data = stream_alloc(total);   // streamed whole by every decode step
  std::memset(st->data, 0, total);  // padded columns: zero weights / zero scales
  const size_t rb = dtype_row_bytes(t, cols);
  size_t part = 0, part_row0 = 0;  // the source holding row n, and its first row's index
  for (size_t n = 0; n < rows; ++n) {
    while (n - part_row0 >= parts[part].rows) part_row0 += parts[part++].rows;
    uint8_t* pan = static_cast<uint8_t*>(st->data) + (n / kNR) * st->panel_bytes;
    const size_t c = n % kNR;
    const uint8_t* row = static_cast<const uint8_t*>(parts[part].data) + (n - part_row0) * rb;
    switch (t) {
      case DType::F32: {
        float* o = reinterpret_cast<float*>(pan);
        for (size_t k = 0; k < cols; ++k) std::memcpy(&o[k * kNR + c], row + k * 4, 4);
        break;
      }
      case DType::F16:
      case DType::BF16: {
        uint16_t* o = reinterpret_cast<uint16_t*>(pan);
        for (size_t k = 0; k < cols; ++k) std::memcpy(&o[k * kNR + c], row + k * 2, 2);
        break;
      }
      case DType::Q8_0:
        for (size_t kb = 0; kb < cols / 32; ++kb) {
          BlockQ8_0 b;
          std::memcpy(&b, row + kb * sizeof(BlockQ8_0), sizeof b);
          q8::pack_block<kNR>(b, pan + kb * q8::block_bytes<kNR>(), c);
        }
        break;
      case DType::Q4_0:
        for (size_t kb = 0; kb < cols / 32; ++kb) {
          BlockQ4_0 b;
          std::memcpy(&b, row + kb * sizeof(BlockQ4_0), sizeof b);
          uint8_t* o = pan + kb * kNR * 18;
          std::memcpy(o + c * 2, &b.d, 2);
          for (int k = 0; k < 16; ++k) o[kNR * 2 + k * kNR + c] = b.qs[k];
        }
        break;
      case DType::MXFP4:
        for (size_t kb = 0; kb < cols / 32; ++kb) {
          BlockMXFP4 b;
          std::memcpy(&b, row + kb * sizeof(BlockMXFP4), sizeof b);
          mx::pack_block<kNR>(b, pan + kb * mx::block_bytes<kNR>(), c);
        }
        break;
      case DType::Q5_0:
        ACCEL_FAIL("q5_0 rows are repacked as q8_0 before this point");
      case DType::Q4_K:
      case DType::Q5_K:
      case DType::Q6_K: {
        const size_t bb = dtype_block_bytes(t), sbb = kq::sb_bytes<kNR>(t);
        for (size_t kb = 0; kb < cols / kQK_K; ++kb)
          kq::pack_block<kNR>(t, row + kb * bb, pan + kb * sbb, c);
        break;
      }
    }
  }
  pw.bytes_ = panels * st->panel_bytes;
  pw.storage_ = std::move(st);
  return pw;
}

PackedWeight PackedWeight::pack_mixed(const std::vector<TypedRowSource>& parts, size_t cols) {
  ACCEL_CHECK(!parts.empty(), "a mixed weight needs at least one part");
  PackedWeight pw;
  pw.cols_ = cols;
  for (const TypedRowSource& p : parts) {
    pw.segments_.push_back(pack(p.type, p.rows.data, p.rows.rows, cols));
    pw.rows_ += p.rows.rows;
    pw.bytes_ += pw.segments_.back().bytes();
  }
  pw.type_ = pw.segments_.front().type();  // as packed (a q5_0 part is q8_0)
  return pw;
}

namespace {

// Rows per tile: each row's codes are unpacked once per tile, so more rows share that work. AVX2
// with 3 rows spills a little yet beats 2 (bench_kquant M = 256, one thread, interleaved medians of
// 4 on a Zen 3, 2026-11-28: q4_K 139 -> 122 ms, q5_K 220 -> 180, q6_K 401 -> 311, mxfp4 139 ->
// 131).
constexpr int kKR = simd::W == 16 ? 4 : 3;

// The work split: items are (row block, panel group) pairs, handed to whichever thread asks next.
// Threads only change which outputs a thread computes, never how: every item covers whole panels
// and whole kMR row tiles, and gemm_part's per-output sequence is the same for any such range.
// About kItemsPerThread items per thread: enough that a thread the machine has descheduled holds
// up little (the others take the rest), few enough that claiming (one contended atomic per item)
// stays far below an item's time. With more than one kMC row block a group is kNCP panels, the
// unit whose weights (or dequantized scratch) the row blocks reuse; with at most one row block
// there is no such reuse, and panels are grouped only as far as the item count allows. (Grouping
// by kNCP up to kMC rows left a 768-column weight at 16 rows, a speculative verify batch, with 3
// items for 2 threads.) Chosen, not swept.
constexpr size_t kItemsPerThread = 8;

// Row blocks are cut in whole units of both kernels' row tiles (kMR for the float kernel, kKR
// for the integer-dot one), as evenly as the units allow. Whole kMC blocks left a short last
// block (512 rows: five of 96 and one of 32): the last items of a region were uneven, and on two
// threads one sat idle for most of an item (f32 prefill GEMMs of `small` at 512 tokens: 95-96% of
// an even schedule in three of its four weights, by simulating the claim order).
constexpr size_t kRowUnit = std::lcm(size_t(kMR), size_t(kKR));

struct GemmSplit {
  size_t panels_per_item, n_groups, n_row_blocks, row_units;
  size_t items() const { return n_groups * n_row_blocks; }
  // Row block r is [row_begin(r, M), row_begin(r + 1, M)): whole units, sizes within one unit.
  size_t row_begin(size_t r, size_t M) const {
    return std::min(M, r * row_units / n_row_blocks * kRowUnit);
  }
};

GemmSplit split_gemm(size_t M, size_t panels, int threads) {
  GemmSplit s{};
  const size_t want = kItemsPerThread * size_t(threads);
  s.panels_per_item = M <= kMC ? std::max<size_t>(1, panels / want) : kNCP;
  s.n_groups = (panels + s.panels_per_item - 1) / s.panels_per_item;
  const size_t mblocks = (M + kMC - 1) / kMC;  // at most one row block per kMC rows
  s.row_units = (M + kRowUnit - 1) / kRowUnit;
  s.n_row_blocks = std::clamp<size_t>((want + s.n_groups - 1) / s.n_groups, 1, mblocks);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Integer dot products on quantized activations, for every M: k-quants on q8_K activations
// (kquant_panel.h's dot_tile), MXFP4 and q8_0 on q8_0 (mxfp4_panel.h's, q8_0_panel.h's).
// ---------------------------------------------------------------------------------------------

// Every row of X quantized once per call (row by row, so a row's codes never depend on M): q8_K
// for the k-quants (a scale per 256, code sums per 16), q8_0 for MXFP4 and q8_0 weights (scale and
// sum per 32).
struct ActBuffer {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> sums;
  kq::ActRow krow(size_t m, size_t K) const {
    return {q.data() + m * K, d.data() + m * (K / kQK_K), sums.data() + m * (K / 16)};
  }
  mx::ActRow mrow(size_t m, size_t K) const {
    const size_t nb = K / kQK_MXFP4;
    return {q.data() + m * K, d.data() + m * nb, sums.data() + m * nb};
  }
};

// acc[jj][r] (+ bias) into Y: NJ vectors of W columns from y, R rows, ncols valid columns.
template <int R, int NJ>
void store_tile(vf (&acc)[NJ][R], float* y, size_t ldy, int ncols, const float* bias) {
  for (int jj = 0; jj < NJ; ++jj) {
    const int n = std::clamp(ncols - jj * kW, 0, kW);
    if (n == 0) break;
    const auto mask = simd::first(n);
    float* yj = y + jj * kW;
    if (bias) {
      const float* bj = bias + jj * kW;
      const vf b = n == kW ? simd::load(bj) : simd::load_n(bj, mask);
      for (int r = 0; r < R; ++r) acc[jj][r] = simd::add(acc[jj][r], b);
    }
    for (int r = 0; r < R; ++r) {
      if (n == kW)
        simd::store(yj + size_t(r) * ldy, acc[jj][r]);
      else
        simd::store_n(yj + size_t(r) * ldy, acc[jj][r], mask);
    }
  }
}

// R rows x NJ column vectors (from vector j0) of one panel; ncols valid columns from the first.
template <DType T, int R, int NJ>
void intdot_tile(const uint8_t* pan, size_t n_blocks, int j0, const ActBuffer& acts, size_t row0,
                 size_t K, float* y, size_t ldy, int ncols, const float* bias) {
  vf acc[NJ][R];
  if constexpr (T == DType::MXFP4 || T == DType::Q8_0) {
    mx::ActRow x[R];
    for (int r = 0; r < R; ++r) x[r] = acts.mrow(row0 + size_t(r), K);
    if constexpr (T == DType::MXFP4)
      mx::dot_tile<kNR, R, NJ>(pan, n_blocks, j0, x, acc);
    else
      q8::dot_tile<kNR, R, NJ>(pan, n_blocks, j0, x, acc);
  } else {
    kq::ActRow x[R];
    for (int r = 0; r < R; ++r) x[r] = acts.krow(row0 + size_t(r), K);
    kq::dot_tile<kNR, T, R, NJ>(pan, n_blocks, j0, x, acc);
  }
  store_tile<R, NJ>(acc, y, ldy, ncols, bias);
}

using KTile = void (*)(const uint8_t*, size_t, int, const ActBuffer&, size_t, size_t, float*,
                       size_t, int, const float*);

template <DType T, int... Rs>
constexpr std::array<KTile, kKR> make_ktable(std::integer_sequence<int, Rs...>) {
  return {&intdot_tile<T, Rs + 1, 1>...};
}
template <DType T>
constexpr auto kKTiles = make_ktable<T>(std::make_integer_sequence<int, kKR>{});

// A type's integer-dot kernels: row tiles of 1..kKR rows x one vector, and one row x a whole panel
// (decode's streaming order); blocks of K per dot product.
struct IntDot {
  const std::array<KTile, kKR>* tiles;
  KTile row_panel;
  size_t block;
};

template <DType T>
constexpr IntDot kIntDot = {&kKTiles<T>, &intdot_tile<T, 1, kNV>,
                            T == DType::MXFP4 || T == DType::Q8_0 ? size_t(32) : kQK_K};

bool is_intdot(DType t) {
  return kq::is_kquant(t) || t == DType::MXFP4 || t == DType::Q8_0;
}

const IntDot& intdot_for(DType t) {
  switch (t) {
    case DType::Q4_K:
      return kIntDot<DType::Q4_K>;
    case DType::Q5_K:
      return kIntDot<DType::Q5_K>;
    case DType::Q6_K:
      return kIntDot<DType::Q6_K>;
    case DType::MXFP4:
      return kIntDot<DType::MXFP4>;
    case DType::Q8_0:
      return kIntDot<DType::Q8_0>;
    default:
      ACCEL_FAIL("type %d has no integer-dot kernels", int(t));
  }
}

// Rows [m0, m1) x panels [p0, p1): per panel, per column vector, every row tile over the whole K
// (the vector's weights stay in L1/L2 across row tiles); one row streams the panel once.
void gemm_intdot_part(const ActBuffer& acts, size_t m0, size_t m1, const PackedWeight& W, size_t p0,
                      size_t p1, float* Y, size_t ldy, const float* bias) {
  const size_t N = W.rows(), K = W.cols();
  const IntDot& kd = intdot_for(W.type());
  const size_t n_blocks = K / kd.block;
  for (size_t p = p0; p < p1; ++p) {
    const uint8_t* pan = W.storage()->panel(p);
    if (m1 - m0 == 1) {  // decode: stream the panel once, all vectors per block
      const size_t n0 = p * kNR;
      kd.row_panel(pan, n_blocks, 0, acts, m0, K, Y + m0 * ldy + n0, ldy,
                   int(std::min<size_t>(kNR, N - n0)), bias ? bias + n0 : nullptr);
      continue;
    }
    for (int j = 0; j < kNV; ++j) {
      const size_t n0 = p * kNR + size_t(j) * kW;
      if (n0 >= N) break;
      const int ncols = int(std::min<size_t>(kW, N - n0));
      for (size_t i = m0; i < m1; i += kKR) {
        const int rows = int(std::min<size_t>(kKR, m1 - i));
        (*kd.tiles)[size_t(rows) - 1](pan, n_blocks, j, acts, i, K, Y + i * ldy + n0, ldy, ncols,
                                      bias ? bias + n0 : nullptr);
      }
    }
  }
}

void quantize_rows(DType t, const float* X, size_t M, size_t ldx, size_t K, ActBuffer& a) {
  const bool q8_0_acts = t == DType::MXFP4 || t == DType::Q8_0;  // q8_0 activations
  const size_t n_d = q8_0_acts ? K / kQK_MXFP4 : K / kQK_K,
               n_sums = q8_0_acts ? K / kQK_MXFP4 : K / 16;
  a.q.resize(M * K);
  a.d.resize(M * n_d);
  a.sums.resize(M * n_sums);
  const auto one = [&](size_t m, int) {
    if (q8_0_acts)
      quantize_activations_q8_0(X + m * ldx, K, a.q.data() + m * K, a.d.data() + m * n_d,
                                a.sums.data() + m * n_sums);
    else
      quantize_activations_q8_K(X + m * ldx, K, a.q.data() + m * K, a.d.data() + m * n_d,
                                a.sums.data() + m * n_sums);
  };
  if (M <= 2 * kMR) {
    for (size_t m = 0; m < M; ++m) one(m, 0);
  } else {
    parallel_for(M, 8.0 * double(M) * double(K), one);
  }
}

// One part of a call: a packed weight whose outputs are Y's columns [col0, col0 + rows), its
// split, and where its items start in the call's item numbering.
struct GemmPart {
  const PackedWeight* w;
  size_t col0, panels, first_item;
  GemmSplit split;
};

// The activations a call's parts read, each made once per call whatever the number of parts
// that read it: q8_K rows for k-quant parts, q8_0 rows for MXFP4 and q8_0 parts, packed X for the
// float types. The caller's buffers, named by local references: inside the workers' lambda a
// thread_local itself would name each worker's own (empty) instance.
struct CallActivations {
  const ActBuffer* kquant = nullptr;
  const ActBuffer* block = nullptr;
  PackedX xp{nullptr, 0};
};

CallActivations make_activations(const float* X, size_t M, size_t ldx, size_t K,
                                 const std::vector<GemmPart>& parts) {
  static thread_local ActBuffer caller_kquant_acts, caller_block_acts;
  static thread_local Scratch caller_xpack;
  CallActivations a;
  for (const GemmPart& p : parts) {
    const DType t = p.w->type();
    if (kq::is_kquant(t) && !a.kquant) {
      quantize_rows(t, X, M, ldx, K, caller_kquant_acts);
      a.kquant = &caller_kquant_acts;
    } else if ((t == DType::MXFP4 || t == DType::Q8_0) && !a.block) {
      quantize_rows(t, X, M, ldx, K, caller_block_acts);
      a.block = &caller_block_acts;
    } else if (!is_intdot(t) && !a.xp.p) {
      a.xp = pack_all_x(X, M, ldx, K, caller_xpack);
    }
  }
  return a;
}

// Every part of W (W itself, or a mixed weight's segments, whose outputs sit side by side in Y)
// in one parallel region: part i's items follow part i - 1's, each part split as if it were alone,
// so each output is computed exactly as that part alone would compute it. One region rather than
// one per part: a Q4_K_M layer's K and V parts (256 rows each at hidden 2048) cost about a
// region's hand-out each, and with a few rows (M = 16) each was a single item that one thread ran
// while the other waited (bench_gemm BM_GemmMixedQKV, 2 threads, Zen 5, medians of 5 interleaved
// runs: M = 1 46.9 -> 41.1 us, M = 16 301 -> 233 us; 2026-11-29).
void run_gemm_items(const float* X, size_t M, size_t ldx, const PackedWeight& W, float* Y,
                    size_t ldy, const float* bias) {
  // Kept per calling thread, so a warm call allocates nothing (decode makes four per layer).
  static thread_local std::vector<GemmPart> caller_parts;
  std::vector<GemmPart>& parts = caller_parts;
  parts.clear();
  size_t col0 = 0, items = 0;
  const auto add = [&](const PackedWeight& w) {
    const size_t panels = (w.rows() + kNR - 1) / kNR;
    parts.push_back({&w, col0, panels, items, split_gemm(M, panels, num_threads())});
    col0 += w.rows();
    items += parts.back().split.items();
  };
  if (W.is_mixed())
    for (const PackedWeight& seg : W.segments()) add(seg);
  else
    add(W);
  const CallActivations acts = make_activations(X, M, ldx, W.cols(), parts);
  const double flops = 2.0 * double(M) * double(W.rows()) * double(W.cols());
  parallel_for(items, flops, [&](size_t item, int) {
    size_t pi = 0;
    while (pi + 1 < parts.size() && parts[pi + 1].first_item <= item) ++pi;
    const GemmPart& pt = parts[pi];
    const GemmSplit& s = pt.split;
    const size_t local = item - pt.first_item;
    const size_t g = local / s.n_row_blocks, r = local % s.n_row_blocks;
    const size_t p0 = g * s.panels_per_item, p1 = std::min(pt.panels, p0 + s.panels_per_item);
    const size_t m0 = s.row_begin(r, M), m1 = s.row_begin(r + 1, M);
    float* y = Y + pt.col0;
    const float* b = bias ? bias + pt.col0 : nullptr;
    const DType t = pt.w->type();
    if (kq::is_kquant(t))
      gemm_intdot_part(*acts.kquant, m0, m1, *pt.w, p0, p1, y, ldy, b);
    else if (is_intdot(t))
      gemm_intdot_part(*acts.block, m0, m1, *pt.w, p0, p1, y, ldy, b);
    else
      gemm_part(acts.xp, m0, m1, *pt.w, p0, p1, y, ldy, b);
  });
}

}  // namespace

void gemm(const float* X, size_t M, size_t ldx, const PackedWeight& W, float* Y, size_t ldy,
          const float* bias) {
  const size_t N = W.rows(), K = W.cols();
  if (M == 0 || N == 0) return;
  // Overlapping rows would be read or written without any fault: wrong numbers, no crash.
  ACCEL_CHECK(M == 1 || (ldx >= K && ldy >= N),
              "%zu rows: row strides ldx %zu / ldy %zu are shorter than the rows (%zu / %zu)", M,
              ldx, ldy, K, N);
  if (K == 0) {  // empty sum: Y = 0 (+ bias)
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n) Y[m * ldy + n] = bias ? 0.f + bias[n] : 0.f;
    return;
  }
  run_gemm_items(X, M, ldx, W, Y, ldy, bias);
}

GemmBlocking gemm_blocking() {
  return {kMR, kNR, kKC, kMC, kNCP, kKR};
}

void gemm_reference(const float* X, size_t M, size_t ldx, DType t, const void* W, size_t rows,
                    size_t cols, double* Y, size_t ldy, const float* bias) {
  std::vector<float> row(cols);
  const size_t rb = dtype_row_bytes(t, cols);
  for (size_t n = 0; n < rows; ++n) {
    dequantize_row(t, static_cast<const uint8_t*>(W) + n * rb, row.data(), cols);
    for (size_t m = 0; m < M; ++m) {
      double acc = 0;
      for (size_t k = 0; k < cols; ++k) acc += double(X[m * ldx + k]) * double(row[k]);
      Y[m * ldy + n] = bias ? acc + bias[n] : acc;
    }
  }
}

}  // namespace accel
