// The quantized-KV decode attention table (issue 11): one query row per head against a cache of
// n_kv keys, for every cache representation, warm and with the same GQA handling (by index):
//   f32            the engine's decode attention over an f32 cache
//   f16            the same kernel over an f16 cache (widened in the kernel)
//   dequant_int4   int4 records dequantized into an f32 scratch inside the timed region, then f32
//   fused_int4     attention_quant on the int4 cache (key blocks, value blocks: the fused kernel)
//   fused_int4_pv8 the same with P.V on 8-bit probabilities (QuantPV::Int8)
//   fused_q8_0     attention_quant on q8_0 records
//   seed_naive     the Open-TQ-Metal benchmark's baseline shape: dequantized data precomputed
//                  outside the clock, GQA materialised by repeating K/V per query head, plain
//                  matmul / softmax / matmul, one cold iteration (n_kv <= 32K: the repeat of a
//                  128K seed-shape cache would take 8 GiB)
//   stream_int4    a plain SIMD read of as many bytes as the int4 records hold (bandwidth floor)
//   fused_kivi4 / fused_kivi2    attention_kivi on KIVI key blocks and value records as the kivi
//                  storage holds them at decode: complete blocks quantized, a 31-row f32
//                  residual and the new row (keys and values from the same random rows)
//   dequant_kivi4  the path it replaced: attention_kivi_dequantized (every block into f32 scratch,
//                  then the f32 kernel), inside the timed region
// plus the machine's read bandwidth (dram_read), f32 FMA peak (fma_peak), int8 dot-product peak
// (int8_peak) and how much those two share ports (fma_int8_overlap) in the same run
// (machine_rates.h).
// Shapes: "seed" (64 query heads, 8 kv heads, D 128: Llama-3.1-70B) and "small" (12, 4, 64: the
// small family). Names are kv_attention/<variant>/<shape>/<n_kv>, the form
// `accelbench bench-table` reads. Measures only; correctness is in tests/kernels.
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_kivi.h"
#include "kernels/attention_quant.h"
#include "kernels/fp16.h"
#include "kernels/kv_quant.h"
#include "kernels/kv_quant_kivi.h"
#include "kernels/stream_memory.h"
#include "kernels/threading.h"
#include "tests/bench/machine_rates.h"
#include "tests/support/test_support.h"

namespace {

struct ShapeDef {
  const char* name;
  int heads, kv_heads, D;
};
constexpr ShapeDef kShapes[] = {{"seed", 64, 8, 128}, {"small", 12, 4, 64}};

template <class T>
using Stream = accel::StreamVector<T>;

// Every representation of one random cache; the quantized ones hold the same keys and values.
struct Cache {
  const ShapeDef* sh = nullptr;
  size_t n = 0;
  // The caches come from the allocator of the engine's KV caches (kernels/stream_memory.h), whose
  // page size the read-bandwidth rates they are held against use too.
  std::vector<float> q, out;
  Stream<float> k, v;
  Stream<uint16_t> k16, v16;
  Stream<uint8_t> k4, v4, k8, v8;  // head-major key blocks / value records
  Stream<uint8_t> k4rec;           // int4 keys as plain records (dequantize-then-attend)
  Stream<uint8_t> v4blk;           // int4 values as value blocks (the fused kernel's)
  std::vector<int32_t> pos;
  Stream<float> kd, vd;  // dequantized int4, token-major (the seed baseline's input)
  accel::AttentionShape shape() const {
    return {sh->heads, sh->kv_heads, sh->D, float(1.0 / std::sqrt(double(sh->D)))};
  }
  size_t kv_dim() const { return size_t(sh->kv_heads) * size_t(sh->D); }
  accel::QuantKV view(accel::KVQuant f) const {
    const size_t kh = accel::kv_quant_khead_bytes(f, sh->D, n);
    const size_t vh = accel::kv_quant_vhead_bytes(f, sh->D, n);
    return f == accel::KVQuant::Int4 ? accel::QuantKV{f, k4.data(), v4blk.data(), kh, vh}
                                     : accel::QuantKV{f, k8.data(), v8.data(), kh, vh};
  }
};

// Key blocks for the fused kernel, value records, (krec) the keys as plain records and (vblk) the
// values as int4 value blocks.
void quantize_all(Cache& c, accel::KVQuant f, Stream<uint8_t>& kq, Stream<uint8_t>& vq,
                  Stream<uint8_t>* krec, Stream<uint8_t>* vblk = nullptr) {
  const int D = c.sh->D;
  const size_t rec = accel::kv_quant_record_bytes(f, D);
  const size_t kh = accel::kv_quant_khead_bytes(f, D, c.n);
  const size_t kbb = accel::kv_quant_kblock_bytes(f, D);
  kq.assign(size_t(c.sh->kv_heads) * kh, 0);
  vq.resize(size_t(c.sh->kv_heads) * c.n * rec);
  if (krec) krec->resize(vq.size());
  if (vblk) vblk->assign(size_t(c.sh->kv_heads) * kh, 0);
  std::vector<uint8_t> r(rec);
  for (size_t j = 0; j < c.n; ++j)
    for (int g = 0; g < c.sh->kv_heads; ++g) {
      const size_t off = size_t(g) * c.n * rec + j * rec, col = j * c.kv_dim() + size_t(g) * D;
      accel::kv_quantize_head(f, &c.k[col], D, r.data());
      accel::kblock_put(f, D, r.data(), &kq[size_t(g) * kh + j / 32 * kbb], int(j % 32));
      if (krec) std::copy(r.begin(), r.end(), krec->begin() + std::ptrdiff_t(off));
      accel::kv_quantize_head(f, &c.v[col], D, &vq[off]);
      if (vblk)
        accel::vblock_put(f, D, &vq[off], &(*vblk)[size_t(g) * kh + j / 32 * kbb], int(j % 32));
    }
}

// Every cache built stays (about 5 GiB for all lengths of both shapes, most of it the 64K and
// 128K seed-shape f32 rows) so that randomly interleaved repetitions do not rebuild them.
Cache& cache(int shape, size_t n) {
  static std::map<std::pair<int, size_t>, std::unique_ptr<Cache>> all;
  auto& c = all[{shape, n}];
  if (c) return *c;
  c = std::make_unique<Cache>();
  c->sh = &kShapes[shape];
  c->n = n;
  const size_t qd = size_t(c->sh->heads) * c->sh->D, kvd = c->kv_dim();
  c->q = accel::test::random_normal(qd, 1);
  const std::vector<float> k = accel::test::random_normal(n * kvd, 2);
  const std::vector<float> v = accel::test::random_normal(n * kvd, 3);
  c->k.assign(k.begin(), k.end());
  c->v.assign(v.begin(), v.end());
  c->out.assign(qd, 0.f);
  c->k16.resize(n * kvd);
  c->v16.resize(n * kvd);
  for (size_t i = 0; i < n * kvd; ++i) {
    c->k16[i] = accel::f32_to_fp16(c->k[i]);
    c->v16[i] = accel::f32_to_fp16(c->v[i]);
  }
  quantize_all(*c, accel::KVQuant::Int4, c->k4, c->v4, &c->k4rec, &c->v4blk);
  quantize_all(*c, accel::KVQuant::Q8_0, c->k8, c->v8, nullptr);
  c->pos.resize(n);
  for (size_t j = 0; j < n; ++j) c->pos[j] = int32_t(j);
  return *c;
}

// kv_bytes: what the variant reads; pv_fmas: the multiply-adds of P.V (n_kv x query heads x
// head_dim), the same for every variant, which bench-table turns into an arithmetic floor;
// fma_flops: the f32 arithmetic of scores and P.V (2 x 2 x pv_fmas; absent for a plain read), the
// compute term of the variant's roofline bound.
void set_counters(benchmark::State& st, const Cache& c, double bytes, bool computes = true) {
  st.counters["kv_bytes"] = bytes;
  st.counters["pv_fmas"] = double(c.n) * c.sh->heads * c.sh->D;
  // Not set for a plain read: a counter 0 in every repetition gets a NaN cv aggregate, which
  // Google Benchmark's JSON writer prints unquoted (not JSON).
  if (computes) st.counters["fma_flops"] = 4.0 * double(c.n) * c.sh->heads * c.sh->D;
  st.counters["GB/s"] =
      benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = accel::num_threads();
}

void attend_rows(Cache& c, const accel::KVRows& rows) {
  const int32_t qp = int32_t(c.n - 1);
  const size_t qd = size_t(c.sh->heads) * c.sh->D;
  accel::attention_causal(c.shape(), c.q.data(), qd, &qp, 1, rows, c.pos.data(), c.n, c.out.data(),
                          qd);
}

void BM_F32(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  for (auto _ : st) attend_rows(c, {c.k.data(), c.v.data(), c.kv_dim(), accel::KVFormat::F32});
  set_counters(st, c, double(c.k.size() + c.v.size()) * 4);
}

void BM_F16(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  for (auto _ : st) attend_rows(c, {c.k16.data(), c.v16.data(), c.kv_dim(), accel::KVFormat::F16});
  set_counters(st, c, double(c.k16.size() + c.v16.size()) * 2);
}

void BM_DequantInt4(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  std::vector<float> ks(n * c.kv_dim()), vs(n * c.kv_dim());
  const size_t stride = n * accel::kv_quant_record_bytes(accel::KVQuant::Int4, c.sh->D);
  for (auto _ : st) {
    // Per-token records, the layout a dequantize-then-attend design stores.
    accel::dequantize_record_rows(accel::KVQuant::Int4, c.sh->kv_heads, c.sh->D, c.k4rec.data(),
                                  stride, 0, n, ks.data(), c.kv_dim());
    accel::dequantize_record_rows(accel::KVQuant::Int4, c.sh->kv_heads, c.sh->D, c.v4.data(),
                                  stride, 0, n, vs.data(), c.kv_dim());
    attend_rows(c, {ks.data(), vs.data(), c.kv_dim(), accel::KVFormat::F32});
  }
  set_counters(st, c, double(c.k4.size() + c.v4.size()));
}

// Which of the fused int4 kernel's multiply-adds run as u8 x s8 dot products in this build: the
// scores where AVX-512 VBMI + VNNI exist (attention_quant.h), P.V with QuantPV::Int8 on every
// build. The rest are f32 FMAs. The roofline bound takes each kind at its own measured peak.
#if defined(__AVX512VBMI__) && defined(__AVX512VNNI__)
constexpr bool kInt8Scores = true;
#else
constexpr bool kInt8Scores = false;
#endif

void fused(benchmark::State& st, int shape, size_t n, accel::KVQuant f,
           accel::QuantPV pv = accel::QuantPV::Exact) {
  Cache& c = cache(shape, n);
  const int32_t qp = int32_t(n - 1);
  const size_t qd = size_t(c.sh->heads) * c.sh->D;
  for (auto _ : st)
    accel::attention_quant(c.shape(), c.q.data(), qd, &qp, 1, c.view(f), c.pos.data(), n,
                           c.out.data(), qd, accel::kSplitKChunk, accel::QuantScorePath::Auto, pv);
  const auto& kq = f == accel::KVQuant::Int4 ? c.k4 : c.k8;
  set_counters(st, c, double(kq.size()) * 2);
  if (f != accel::KVQuant::Int4) return;
  const double macs = double(n) * c.sh->heads * c.sh->D;  // per product: scores, or P.V
  const double int8 = (kInt8Scores ? macs : 0) + (pv == accel::QuantPV::Int8 ? macs : 0);
  // Only nonzero counters are set (see set_counters).
  if (int8 > 0) st.counters["int8_macs"] = int8;
  if (int8 < 2 * macs)
    st.counters["fma_flops"] = 2 * (2 * macs - int8);
  else
    st.counters.erase("fma_flops");
}

// The KIVI layout of a cache's rows (kv_storage_kivi.cpp): rows [0, n_quant) quantized
// (head-major key blocks, value records), the rest f32: a residual of up to 31 rows and the new
// row.
struct KiviCache {
  int bits = 4;
  size_t n_quant = 0;
  Stream<uint8_t> k, v;
  accel::KiviKV view(const Cache& c) const {
    const size_t kbb = accel::kivi_key_block_bytes(bits, c.sh->D);
    const size_t vrb = accel::kivi_value_record_bytes(bits, c.sh->D);
    accel::KiviKV kv{bits, k.data(), v.data(), n_quant / 32 * kbb, n_quant * vrb, n_quant,
                     0,    0,        {}};
    const size_t res = c.n - 1 - n_quant;
    kv.rows[0] = {&c.k[n_quant * c.kv_dim()], &c.v[n_quant * c.kv_dim()], c.kv_dim(), res};
    kv.rows[1] = {&c.k[(c.n - 1) * c.kv_dim()], &c.v[(c.n - 1) * c.kv_dim()], c.kv_dim(), 1};
    return kv;
  }
};

KiviCache& kivi_cache(int shape, size_t n, int bits) {
  static std::map<std::tuple<int, size_t, int>, std::unique_ptr<KiviCache>> all;
  auto& kc = all[{shape, n, bits}];
  if (kc) return *kc;
  const Cache& c = cache(shape, n);
  kc = std::make_unique<KiviCache>();
  kc->bits = bits;
  kc->n_quant = (n - 1) / 32 * 32;  // n - 1 rows stored before the decode step
  const int D = c.sh->D;
  const size_t kbb = accel::kivi_key_block_bytes(bits, D),
               vrb = accel::kivi_value_record_bytes(bits, D);
  const size_t blocks = kc->n_quant / 32, kvd = c.kv_dim();
  kc->k.resize(size_t(c.sh->kv_heads) * blocks * kbb);
  kc->v.resize(size_t(c.sh->kv_heads) * kc->n_quant * vrb);
  for (size_t g = 0; g < size_t(c.sh->kv_heads); ++g)
    for (size_t b = 0; b < blocks; ++b) {
      accel::kivi_quantize_key_block(&c.k[b * 32 * kvd + g * size_t(D)], kvd, D, bits,
                                     &kc->k[(g * blocks + b) * kbb]);
      for (size_t t = b * 32; t < b * 32 + 32; ++t)
        accel::kivi_quantize_value(&c.v[t * kvd + g * size_t(D)], D, bits,
                                   &kc->v[(g * kc->n_quant + t) * vrb]);
    }
  return *kc;
}

void kivi(benchmark::State& st, int shape, size_t n, int bits, bool fused_kernel) {
  Cache& c = cache(shape, n);
  const KiviCache& kc = kivi_cache(shape, n, bits);
  const accel::KiviKV kv = kc.view(c);
  const int32_t qp = int32_t(n - 1);
  const size_t qd = size_t(c.sh->heads) * c.sh->D;
  std::vector<float> kf, vf;
  for (auto _ : st) {
    if (fused_kernel)
      accel::attention_kivi(c.shape(), c.q.data(), qd, &qp, 1, kv, c.pos.data(), n, c.out.data(),
                            qd);
    else
      accel::attention_kivi_dequantized(c.shape(), c.q.data(), qd, &qp, 1, kv, c.pos.data(), n,
                                        c.out.data(), qd, kf, vf);
  }
  set_counters(st, c, double(kc.k.size() + kc.v.size() + (n - kc.n_quant) * c.kv_dim() * 8));
}

// The fused int4 kernel on a sliding-window layer with gpt-oss sinks: a window of 128 over the
// whole cache (the cost the ring buffer's capacity bounds: blocks outside the window are skipped).
void fused_window(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  const int32_t qp = int32_t(n - 1);
  const size_t qd = size_t(c.sh->heads) * c.sh->D;
  const std::vector<float> sinks = accel::test::random_normal(size_t(c.sh->heads), 3);
  accel::AttentionShape s = c.shape();
  s.window = 128;
  s.sinks = sinks.data();
  for (auto _ : st)
    accel::attention_quant(s, c.q.data(), qd, &qp, 1, c.view(accel::KVQuant::Int4), c.pos.data(), n,
                           c.out.data(), qd);
}

// The seed benchmark's reference, on CPU: repeat K and V to every query head (materialised),
// scores = q . K^T * scale, softmax (max, exp, sum), out = p . V. Loops vectorised along D only,
// as a straightforward implementation would be; GQA expansion and allocation are in the clock.
void seed_naive(const Cache& c, float* out) {
  const int H = c.sh->heads, D = c.sh->D, G = H / c.sh->kv_heads;
  const size_t n = c.n;
  std::vector<float> kr(size_t(H) * n * D), vr(kr.size());
  for (int h = 0; h < H; ++h)
    for (size_t j = 0; j < n; ++j) {
      const float* ks = &c.kd[j * c.kv_dim() + size_t(h / G) * D];
      const float* vs = &c.vd[j * c.kv_dim() + size_t(h / G) * D];
      std::copy(ks, ks + D, &kr[(size_t(h) * n + j) * D]);
      std::copy(vs, vs + D, &vr[(size_t(h) * n + j) * D]);
    }
  std::vector<float> s(n);
  const float scale = c.shape().scale;
  for (int h = 0; h < H; ++h) {
    const float* q = &c.q[size_t(h) * D];
    float m = -INFINITY;
    for (size_t j = 0; j < n; ++j) {
      const float* k = &kr[(size_t(h) * n + j) * D];
      __m256 acc = _mm256_setzero_ps();
      for (int d = 0; d < D; d += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(k + d), acc);
      alignas(32) float t[8];
      _mm256_store_ps(t, acc);
      s[j] = (t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7]) * scale;
      m = std::max(m, s[j]);
    }
    float l = 0;
    for (size_t j = 0; j < n; ++j) l += (s[j] = std::exp(s[j] - m));
    float* o = out + size_t(h) * D;
    std::fill(o, o + D, 0.f);
    for (size_t j = 0; j < n; ++j) {
      const float* v = &vr[(size_t(h) * n + j) * D];
      const float p = s[j] / l;
      for (int d = 0; d < D; ++d) o[d] += p * v[d];
    }
  }
}

void BM_SeedNaive(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  if (c.kd.empty()) {  // precomputed outside the clock, as the seed does
    c.kd.resize(n * c.kv_dim());
    c.vd.resize(n * c.kv_dim());
    accel::dequantize_kv_rows(c.view(accel::KVQuant::Int4), c.sh->kv_heads, c.sh->D, 0, n,
                              c.kd.data(), c.vd.data(), c.kv_dim());
  }
  for (auto _ : st) seed_naive(c, c.out.data());
  set_counters(st, c, double(c.k4.size() + c.v4.size()));
}

// Reads `bytes` bytes (the int4 records' size) with a SIMD sum split over the engine's threads:
// the time the fused kernel would take if it did nothing but read its inputs once.
void BM_StreamInt4(benchmark::State& st, int shape, size_t n) {
  Cache& c = cache(shape, n);
  const size_t bytes = c.k4.size() + c.v4.size();
  static std::vector<float> buf;
  buf.assign(bytes / 4 + 16, 1.f);
  const size_t nf = bytes / 4 / 64 * 64;
  std::vector<float> partial(size_t(accel::parallel_slots()) * 16);
  for (auto _ : st) accel::bench::simd_sum_read(buf.data(), nf, partial, 1e9);
  set_counters(st, c, double(nf) * 4, /*computes=*/false);
}

void register_all() {
  accel::bench::register_machine_rates("kv_attention");
  const size_t lengths[] = {1024, 4096, 16384, 32768, 65536, 131072};
  for (int shape = 0; shape < 2; ++shape)
    for (size_t n : lengths) {
      const std::string tail = std::string("/") + kShapes[shape].name + "/" + std::to_string(n);
      auto reg = [&](const char* variant, auto fn) {
        return benchmark::RegisterBenchmark(("kv_attention/" + std::string(variant) + tail).c_str(),
                                            fn, shape, n)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      };
      reg("f32", BM_F32);
      reg("f16", BM_F16);
      reg("dequant_int4", BM_DequantInt4);
      reg("fused_int4",
          [](benchmark::State& st, int s, size_t k) { fused(st, s, k, accel::KVQuant::Int4); });
      reg("fused_int4_pv8", [](benchmark::State& st, int s, size_t k) {
        fused(st, s, k, accel::KVQuant::Int4, accel::QuantPV::Int8);
      });
      reg("fused_q8_0",
          [](benchmark::State& st, int s, size_t k) { fused(st, s, k, accel::KVQuant::Q8_0); });
      reg("stream_int4", BM_StreamInt4);
      reg("fused_kivi4", [](benchmark::State& st, int s, size_t k) { kivi(st, s, k, 4, true); });
      reg("fused_kivi2", [](benchmark::State& st, int s, size_t k) { kivi(st, s, k, 2, true); });
      if (n <= 32768)
        reg("dequant_kivi4",
            [](benchmark::State& st, int s, size_t k) { kivi(st, s, k, 4, false); });
      if (n <= 4096) reg("fused_int4_window128_sinks", fused_window);
      if (n <= 32768) reg("seed_naive", BM_SeedNaive)->Iterations(1)->Repetitions(1);
    }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Every entry at the thread count it names (threading.h's back-off would run regions on one).
  const accel::ScopedParallelBackoff all_threads(false);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
