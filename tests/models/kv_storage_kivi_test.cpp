// The KIVI storage types (models/kv_storage_kivi.h): what a batch attends over (quantized complete
// blocks, the exact residual, its own exact rows) checked against a double-precision attention over
// K/V assembled here from the format functions; a trimmed cache reopening its block; a one-batch
// prompt equal to the f32 cache; decode on a model close to f32, kivi2 further than kivi4; the
// fused decode's logits against the dequantize-then-attend path's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "kernels/kv_quant_kivi.h"
#include "models/generation.h"
#include "models/kv_storage_kivi.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr int kHeads = 2, kD = 64, kQHeads = 4;
constexpr size_t kKvDim = size_t(kHeads) * kD;

// Rows [0, n) as KIVI keeps them after they were stored one by one: blocks complete before
// `exact_from` through their codes, the rest exact.
void assemble(const std::vector<float>& k, const std::vector<float>& v, size_t n, size_t exact_from,
              int bits, std::vector<float>& ko, std::vector<float>& vo) {
  ko.assign(k.begin(), k.begin() + long(n * kKvDim));
  vo.assign(v.begin(), v.begin() + long(n * kKvDim));
  std::vector<uint8_t> block(kivi_key_block_bytes(bits, kD)),
      rec(kivi_value_record_bytes(bits, kD));
  for (size_t b = 0; b < exact_from / 32; ++b)
    for (size_t g = 0; g < kHeads; ++g) {
      kivi_quantize_key_block(&k[b * 32 * kKvDim + g * kD], kKvDim, kD, bits, block.data());
      kivi_dequantize_key_block(block.data(), kD, bits, 32, &ko[b * 32 * kKvDim + g * kD], kKvDim);
      for (size_t t = b * 32; t < b * 32 + 32; ++t) {
        kivi_quantize_value(&v[t * kKvDim + g * kD], kD, bits, rec.data());
        kivi_dequantize_value(rec.data(), kD, bits, &vo[t * kKvDim + g * kD]);
      }
    }
}

// Plain causal GQA attention in double for one query row at position `pos` over rows [0, n).
std::vector<double> attend_ref(const std::vector<float>& q, const std::vector<float>& k,
                               const std::vector<float>& v, size_t n, float scale) {
  std::vector<double> out(size_t(kQHeads) * kD, 0.0);
  for (int h = 0; h < kQHeads; ++h) {
    const size_t g = size_t(h / (kQHeads / kHeads));
    std::vector<double> s(n);
    double mx = -INFINITY;
    for (size_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int d = 0; d < kD; ++d)
        acc += double(q[size_t(h) * kD + size_t(d)]) * double(k[j * kKvDim + g * kD + size_t(d)]);
      s[j] = acc * scale;
      mx = std::max(mx, s[j]);
    }
    double l = 0;
    for (size_t j = 0; j < n; ++j) l += (s[j] = std::exp(s[j] - mx));
    for (size_t j = 0; j < n; ++j)
      for (int d = 0; d < kD; ++d)
        out[size_t(h) * kD + size_t(d)] += s[j] / l * double(v[j * kKvDim + g * kD + size_t(d)]);
  }
  return out;
}

struct Rows {
  std::vector<float> k, v, q;
  std::vector<int32_t> pos;
};

Rows random_rows(size_t n, uint64_t seed) {
  return {test::random_normal(n * kKvDim, seed), test::random_normal(n * kKvDim, seed + 1),
          test::random_normal(size_t(kQHeads) * kD, seed + 2), iota_positions(0, n)};
}

// One query at position n - 1 attending through the storage after rows [0, n - 1) were stored.
std::vector<float> decode_through(KVStorage& st, const Rows& r, size_t n,
                                  size_t stored_in_batches) {
  const AttentionShape shape{kQHeads, kHeads, kD, 0.125f};
  for (size_t r0 = 0; r0 < n - 1; r0 += stored_in_batches)
    st.store(0, &r.k[r0 * kKvDim], &r.v[r0 * kKvDim], kKvDim,
             std::min(stored_in_batches, n - 1 - r0), r0);
  std::vector<float> out(size_t(kQHeads) * kD);
  AttendBatch b{r.q.data(),
                size_t(kQHeads) * kD,
                &r.pos[n - 1],
                &r.k[(n - 1) * kKvDim],
                &r.v[(n - 1) * kKvDim],
                kKvDim,
                1,
                out.data(),
                size_t(kQHeads) * kD};
  st.attend(0, shape, b, n - 1, r.pos.data());
  return out;
}

// A one-row batch attends with the fused kernel (kernels/attention_kivi.h), larger ones through the
// dequantized rows and the f32 kernel. The fused kernel's derived worst-case bound
// (attention_kivi_test.cpp: max|v| (2.2 eta + 2 (560 + 2 chunks) u), eta <= scale (D + 8) u 3
// ||q||_1 max|k| + 8u) is below 2e-3 here (D 64, scale 1/8, ||q||_1 <= 64 * 4, |k|, |v| <= 5); the
// f32 kernel's sums over <= 100 O(1) keys stay within 1e-5. A misplaced block or an unquantized one
// moves the output by >= 1e-2.
TEST(KiviStorage, DecodeAttendsOverQuantizedBlocksAndTheExactResidual) {
  const size_t n = 71;  // blocks [0, 32), [32, 64) quantized; rows 64..69 residual; row 70 new
  const Rows r = random_rows(n, 40);
  for (int bits : {4, 2})
    for (size_t batch : {1, 5, 70}) {
      SCOPED_TRACE("bits " + std::to_string(bits) + " batch " + std::to_string(batch));
      auto st = make_kivi_storage(bits, 1, kHeads, kD);
      st->resize(80);
      const auto got = decode_through(*st, r, n, batch);
      std::vector<float> ko, vo;
      assemble(r.k, r.v, n, 64, bits, ko, vo);
      EXPECT_TRUE(test::near_all(got, attend_ref(r.q, ko, vo, n, 0.125f), 2e-3, 0));
      // The same rows all exact: quantization really happened.
      const auto exact = attend_ref(r.q, r.k, r.v, n, 0.125f);
      double diff = 0;
      for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, std::fabs(got[i] - exact[i]));
      EXPECT_GT(diff, 1e-3);
    }
}

// Rows 40.. rewritten after a trim: block [32, 64) was quantized, so its rows 32..39 come back
// from their codes (as lossy as before) and the block is quantized again with the new rows.
TEST(KiviStorage, WritingBelowTheQuantizedRowsReopensTheirBlock) {
  const size_t n = 71;
  const Rows a = random_rows(n, 50), b = random_rows(n, 60);
  auto st = make_kivi_storage(4, 1, kHeads, kD);
  st->resize(80);
  st->store(0, a.k.data(), a.v.data(), kKvDim, 70, 0);
  st->store(0, &b.k[40 * kKvDim], &b.v[40 * kKvDim], kKvDim, 30, 40);  // rows 40..69 replaced
  std::vector<float> out(size_t(kQHeads) * kD);
  AttendBatch q{
      a.q.data(), size_t(kQHeads) * kD, &a.pos[70], &b.k[70 * kKvDim], &b.v[70 * kKvDim], kKvDim, 1,
      out.data(), size_t(kQHeads) * kD};
  st->attend(0, {kQHeads, kHeads, kD, 0.125f}, q, 70, a.pos.data());
  // Expected rows: 0..39 of `a` through their first quantization, 40..70 of `b`; then block
  // [32, 64) quantized once more (rows 32..39 a second time: from their decoded values).
  std::vector<float> k1, v1;
  assemble(a.k, a.v, n, 64, 4, k1, v1);
  std::vector<float> k(b.k), v(b.v);
  std::copy(k1.begin(), k1.begin() + 40 * long(kKvDim), k.begin());
  std::copy(v1.begin(), v1.begin() + 40 * long(kKvDim), v.begin());
  std::vector<float> k2, v2;
  assemble(k, v, n, 64, 4, k2, v2);
  // Block [0, 32) was never reopened: it keeps its first quantization.
  std::copy(k1.begin(), k1.begin() + 32 * long(kKvDim), k2.begin());
  std::copy(v1.begin(), v1.begin() + 32 * long(kKvDim), v2.begin());
  EXPECT_TRUE(test::near_all(out, attend_ref(a.q, k2, v2, n, 0.125f), 2e-3, 0));
}

// Rows are written in order: a store that starts past the residual's end (it would leave rows
// of the block unwritten) aborts instead of decoding codes that were never sealed.
TEST(KiviStorage, AWritePastTheResidualsEndAborts) {
  const auto st = make_kivi_storage(4, 1, 1, 32);
  st->resize(64);
  const std::vector<float> row(32, 1.f);
  st->store(0, row.data(), row.data(), 32, 1, 0);
  EXPECT_DEATH(st->store(0, row.data(), row.data(), 32, 1, 5), "the residual ends at 1");
}

TEST(KiviStorage, BytesPerRowFollowTheFormats) {
  // Per head: keys D * bits / 8 codes + a block's D fp16 scales and mins over 32 tokens;
  // values D * bits / 8 codes + D / 32 fp16 scales and mins.
  EXPECT_EQ(kivi_bytes_per_row(4, 8, 128), 8 * ((64 + 128 * 4 / 32) + (64 + 4 * 4)));
  EXPECT_EQ(kivi_bytes_per_row(2, 8, 128), 8 * ((32 + 16) + (32 + 16)));
  EXPECT_EQ(kv_row_bytes(KVDType::Kivi4, 8, 128), kivi_bytes_per_row(4, 8, 128));
  EXPECT_THROW(make_kivi_storage(3, 1, 1, 32), std::invalid_argument);
  EXPECT_THROW(KVCache(2, 2, 48, KVDType::Kivi4), std::invalid_argument);
}

// A prompt prefilled in one batch attends over its own exact rows: the f32 cache's logits bit for
// bit. Decode afterwards goes through the quantized blocks: logits move by quantization-sized
// amounts (0.5 absolute catches garbage on these O(1)-logit models), 2 bits more than 4.
TEST(KiviStorage, OneBatchPromptEqualsF32AndDecodeStaysCloseKivi2FurtherThanKivi4) {
  test::TempDir dir;
  const auto m = Model::load(make_synthetic_family("tiny", dir.path().string(), 3, DType::F32)[0]);
  const size_t n = 160, steps = 24;
  const auto toks = test::seeded_tokens(n + steps, m->config().n_vocab, 9);
  std::map<KVDType, double> mean_diff;
  std::vector<float> a;
  KVCache c32 = m->make_cache(KVDType::F32);
  prefill(*m, std::span(toks).first(n), iota_positions(0, n), c32, n, &a);
  std::vector<std::vector<float>> ref;
  for (size_t i = 0; i < steps; ++i) {
    const int32_t p = int32_t(n + i), row = 0;
    ref.push_back(m->forward({&toks[n + i], 1}, {&p, 1}, c32, {&row, 1}));
  }
  for (KVDType t : {KVDType::Kivi4, KVDType::Kivi2}) {
    SCOPED_TRACE(kv_dtype_name(t));
    KVCache c = m->make_cache(t);
    std::vector<float> b;
    prefill(*m, std::span(toks).first(n), iota_positions(0, n), c, n, &b);
    EXPECT_TRUE(test::bit_equal(a, b));
    double sum = 0;
    size_t count = 0;
    for (size_t i = 0; i < steps; ++i) {
      const int32_t p = int32_t(n + i), row = 0;
      const auto d = m->forward({&toks[n + i], 1}, {&p, 1}, c, {&row, 1});
      EXPECT_TRUE(test::near_all(d, std::vector<double>(ref[i].begin(), ref[i].end()), 0.5, 0));
      for (size_t j = 0; j < d.size(); ++j, ++count) sum += std::fabs(d[j] - ref[i][j]);
    }
    mean_diff[t] = sum / double(count);
  }
  EXPECT_GT(mean_diff[KVDType::Kivi4], 0.0);
  EXPECT_GT(mean_diff[KVDType::Kivi2], mean_diff[KVDType::Kivi4]);
}

// A fresh cache of type t: the first n tokens prefilled in chunks of `chunk` (their logits into
// *prompt_logits when given), then `steps` single-token decode steps; each step's logits.
std::vector<std::vector<float>> prefill_then_decode(const Model& m,
                                                    const std::vector<int32_t>& toks, size_t n,
                                                    size_t steps, KVDType t, size_t chunk,
                                                    std::vector<float>* prompt_logits) {
  KVCache c = m.make_cache(t);
  prefill(m, std::span(toks).first(n), iota_positions(0, n), c, chunk, prompt_logits);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < steps; ++i) {
    const int32_t p = int32_t(n + i), row = 0;
    out.push_back(m.forward({&toks[n + i], 1}, {&p, 1}, c, {&row, 1}));
  }
  return out;
}

struct Gap {
  double worst = 0, mean = 0;
};

// Expects every step's logits within tol (absolute) of ref's; the worst and mean absolute gaps.
Gap decode_gap(const std::vector<std::vector<float>>& got,
               const std::vector<std::vector<float>>& ref, double tol) {
  Gap g;
  size_t count = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(test::near_all(got[i], std::vector<double>(ref[i].begin(), ref[i].end()), tol, 0))
        << "step " << i;
    for (size_t j = 0; j < got[i].size(); ++j, ++count) {
      g.mean += std::fabs(got[i][j] - ref[i][j]);
      g.worst = std::max(g.worst, double(std::fabs(got[i][j] - ref[i][j])));
    }
  }
  g.mean /= double(std::max<size_t>(count, 1));
  return g;
}

// KIVI on the sliding-window families (window 32: every ring wraps): after a 160-token prompt in
// chunks of 32 and 24 decode steps, logits stay near the f32 cache's and kivi2 moves them more
// than kivi4. Both layer kinds hold KIVI (full layers linearly, sliding ones in rings). Measured
// worst gaps (2026-11-28): kivi4 0.09 / 0.06 / 0.31, kivi2 0.44 / 0.29 / 0.82 on gemma3 / gemma4
// / gpt-oss, whose top-2 experts flip on a few steps. 0.75 and 1.5 leave room for that; a ring
// that reads its sealed blocks unrotated (a deliberate break) is off by 0.8-0.9 at kivi4 on every
// family. The exactness of the ring itself is kv_cache_ring_test.cpp's (against a linear KIVI
// cache).
class KiviSliding : public ::testing::TestWithParam<const char*> {};

TEST_P(KiviSliding, DecodeStaysCloseToF32Kivi2FurtherThanKivi4) {
  test::TempDir dir;
  const auto m =
      Model::load(make_synthetic_family(GetParam(), dir.path().string(), 3, DType::F32)[0]);
  const size_t n = 160, steps = 24;
  const auto toks = test::seeded_tokens(n + steps, m->config().n_vocab, 29);
  EXPECT_GT(m->make_cache(KVDType::Kivi4).ring_slots(), 0u);
  const auto ref = prefill_then_decode(*m, toks, n, steps, KVDType::F32, 32, nullptr);
  std::map<KVDType, double> mean_diff;
  for (auto [t, tol] : {std::pair{KVDType::Kivi4, 0.75}, std::pair{KVDType::Kivi2, 1.5}}) {
    SCOPED_TRACE(kv_dtype_name(t));
    const Gap g = decode_gap(prefill_then_decode(*m, toks, n, steps, t, 32, nullptr), ref, tol);
    EXPECT_GT(g.worst, 0.0);
    mean_diff[t] = g.mean;
  }
  EXPECT_GT(mean_diff[KVDType::Kivi4], 0.0);
  EXPECT_GT(mean_diff[KVDType::Kivi2], mean_diff[KVDType::Kivi4]);
}

INSTANTIATE_TEST_SUITE_P(Families, KiviSliding,
                         ::testing::Values("tiny-gemma3", "tiny-gemma4", "tiny-gpt-oss"),
                         test::NameWithUnderscores());

// KIVI on the hybrids: only their attention layers hold K/V, so only those take the KIVI storage;
// the recurrent layers keep their f32 conv window and state whatever the KV type. A prompt
// prefilled in one batch attends over its own exact rows, so its logits equal the f32 cache's bit
// for bit; 24 decode steps after it go through the quantized blocks and stay near the f32 cache's,
// kivi2 further than kivi4. Measured worst gaps (2026-11-28), kivi4 / kivi2: tiny-qwen35 0.007 /
// 0.037, tiny-qwen35-moe 0.047 / 0.060 (its experts flip on a step), tiny-nemotron-h 0.0008 /
// 0.003 and tiny-nemotron-h-moe 0.0009 / 0.004 (2 of their 8 blocks attend). 0.25 and 0.5 leave
// about 5x room over the worst and still catch attention over garbage rows, which moves these O(1)
// logits by O(1).
class KiviHybrid : public ::testing::TestWithParam<const char*> {};

TEST_P(KiviHybrid, OneBatchPromptEqualsF32AndDecodeStaysCloseKivi2FurtherThanKivi4) {
  test::TempDir dir;
  const auto m =
      Model::load(make_synthetic_family(GetParam(), dir.path().string(), 3, DType::F32)[0]);
  const size_t n = 160, steps = 24;
  const auto toks = test::seeded_tokens(n + steps, m->config().n_vocab, 31);
  std::vector<float> a;
  const auto ref = prefill_then_decode(*m, toks, n, steps, KVDType::F32, n, &a);
  std::map<KVDType, double> mean_diff;
  for (auto [t, tol] : {std::pair{KVDType::Kivi4, 0.25}, std::pair{KVDType::Kivi2, 0.5}}) {
    SCOPED_TRACE(kv_dtype_name(t));
    std::vector<float> b;
    const Gap g = decode_gap(prefill_then_decode(*m, toks, n, steps, t, n, &b), ref, tol);
    EXPECT_TRUE(test::bit_equal(a, b));
    std::printf("[kivi hybrid %s %s] worst %.3g mean %.3g\n", GetParam(), kv_dtype_name(t).c_str(),
                g.worst, g.mean);
    EXPECT_GT(g.worst, 0.0);
    mean_diff[t] = g.mean;
  }
  EXPECT_GT(mean_diff[KVDType::Kivi2], mean_diff[KVDType::Kivi4]);
}

INSTANTIATE_TEST_SUITE_P(Families, KiviHybrid,
                         ::testing::Values("tiny-qwen35", "tiny-qwen35-moe", "tiny-nemotron-h",
                                           "tiny-nemotron-h-moe"),
                         test::NameWithUnderscores());

// The fused decode against the path it replaced, on a model: after the same prompt, 17 tokens as
// one batch (the dequantize-then-attend path: row r attends over the blocks, the residual and the
// batch's rows up to r) and the same tokens one at a time (the fused kernel; the residual grows
// from 0 to 16 rows, so no block is sealed in between and both see the same quantized blocks). The
// logits differ only by the two paths' rounding, propagated through the layers: not a derived
// bound, so the check is relative to what KIVI itself changes: the gap stays below 1e-3 absolute
// and below 1% of the kivi4-vs-f32 gap on the same steps.
TEST(KiviStorage, FusedDecodeLogitsMatchTheDequantizePath) {
  test::TempDir dir;
  const auto m = Model::load(make_synthetic_family("tiny", dir.path().string(), 3, DType::F32)[0]);
  const size_t n = 160, steps = 17;
  const size_t V = size_t(m->config().n_vocab);
  const auto toks = test::seeded_tokens(n + steps, m->config().n_vocab, 19);
  const auto pos = iota_positions(0, n + steps);
  std::vector<int32_t> rows(steps);
  for (size_t i = 0; i < steps; ++i) rows[i] = int32_t(i);
  auto after_prompt = [&](KVDType t) {
    KVCache c = m->make_cache(t);
    prefill(*m, std::span(toks).first(n), std::span(pos).first(n), c, n, nullptr);
    return c;
  };
  KVCache batch_cache = after_prompt(KVDType::Kivi4), step_cache = after_prompt(KVDType::Kivi4),
          f32_cache = after_prompt(KVDType::F32);
  const auto tail = std::span(toks).subspan(n, steps);
  const auto tail_pos = std::span(pos).subspan(n, steps);
  const auto batched = m->forward(tail, tail_pos, batch_cache, rows);
  const auto f32 = m->forward(tail, tail_pos, f32_cache, rows);
  double gap = 0, kivi_gap = 0;
  for (size_t i = 0; i < steps; ++i) {
    const int32_t row = 0;
    const auto one = m->forward({&toks[n + i], 1}, {&pos[n + i], 1}, step_cache, {&row, 1});
    for (size_t j = 0; j < V; ++j) {
      gap = std::max(gap, double(std::fabs(one[j] - batched[i * V + j])));
      kivi_gap = std::max(kivi_gap, double(std::fabs(batched[i * V + j] - f32[i * V + j])));
    }
  }
  EXPECT_GT(kivi_gap, 0.0);
  EXPECT_LT(gap, 1e-3);
  EXPECT_LT(gap, 0.01 * kivi_gap);
}

}  // namespace
}  // namespace accel
