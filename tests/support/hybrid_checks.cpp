// Hybrid-model test checks (see hybrid_checks.h).
#include "tests/support/hybrid_checks.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/threading.h"
#include "models/generation.h"
#include "tests/support/prefill_logits.h"
#include "tests/support/reference_forward.h"
#include "tests/support/test_support.h"

namespace accel::test {

::testing::AssertionResult same_states(const KVCache& a, const KVCache& b, int n_layer) {
  for (int l = 0; l < n_layer; ++l) {
    if (!a.is_recurrent(l)) continue;
    const RecurrentState &x = a.recurrent_state(l), &y = b.recurrent_state(l);
    const RecurrentStateShape& s = x.shape();
    const size_t conv = size_t(s.d_conv - 1) * size_t(s.conv_channels);
    if (x.tokens() != y.tokens())
      return ::testing::AssertionFailure()
             << "layer " << l << " tokens " << x.tokens() << " vs " << y.tokens();
    auto r = bit_equal({x.conv_window(), conv}, {y.conv_window(), conv});
    if (r) r = bit_equal({x.scan_state(), s.scan_elements}, {y.scan_state(), s.scan_elements});
    if (!r) return r << " (layer " << l << ")";
  }
  return ::testing::AssertionSuccess();
}

std::string with_keys(const std::string& src, const std::string& dst,
                      const std::vector<std::pair<std::string, GgufValue>>& keys) {
  const GgufFile f = GgufFile::open(src);
  GgufWriter w;
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& [k, v] : keys) w.set(k, v);
  for (const auto& t : f.tensors())
    w.add_tensor(t.name, t.dims, t.type, f.tensor_data(t), size_t(t.n_bytes));
  w.write(dst);
  return dst;
}

std::string with_tensors(const std::string& src, const std::string& dst,
                         const std::vector<std::string>& drop,
                         const std::vector<TensorBytes>& add) {
  const GgufFile f = GgufFile::open(src);
  GgufWriter w;
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& t : f.tensors())
    if (std::find(drop.begin(), drop.end(), t.name) == drop.end())
      w.add_tensor(t.name, t.dims, t.type, f.tensor_data(t), size_t(t.n_bytes));
  for (const TensorBytes& t : add)
    w.add_tensor(t.name, t.dims, t.type, t.bytes.data(), t.bytes.size());
  w.write(dst);
  return dst;
}

void expect_chunk_and_thread_invariance(const Model& m, uint64_t seed) {
  const auto toks = seeded_tokens(300, m.config().n_vocab, seed);
  const int saved = num_threads();
  set_num_threads(1);
  const auto whole = all_logits(m, toks, 300);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (size_t chunk : {1, 13, 64, 300}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, chunk " + std::to_string(chunk));
      EXPECT_TRUE(bit_equal(all_logits(m, toks, chunk), whole));
    }
  }
  set_num_threads(saved);
}

void expect_members_match_reference(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto m = Model::load(path);
    const auto toks = seeded_tokens(37, m->config().n_vocab, 3);
    EXPECT_TRUE(near_all(all_logits(*m, toks, 16), reference_forward(path, toks), 1e-4, 1e-4))
        << path;
  }
}

void expect_sparse_positions_match_reference(const Model& m, const std::string& path,
                                             uint64_t seed) {
  const auto toks = seeded_tokens(24, m.config().n_vocab, seed);
  std::vector<int32_t> pos;
  for (int32_t i = 0; i < 24; ++i) pos.push_back(i * 2 + (i % 2));  // 0, 3, 4, 7, 8, ...
  KVCache cache = m.make_cache();
  std::vector<float> got;
  prefill(m, toks, pos, cache, 7, &got);
  EXPECT_TRUE(near_all(got, reference_forward(path, toks, pos), 1e-4, 1e-4));
}

void expect_decode_equals_verify_and_prefill(const Model& m, uint64_t seed) {
  const size_t V = size_t(m.config().n_vocab), n = 120, k = 9;
  const auto toks = seeded_tokens(n + k, m.config().n_vocab, seed);
  const auto whole = all_logits(m, toks, 64);
  KVCache batch = m.make_cache(), single = m.make_cache();
  prefill(m, std::span(toks).first(n), iota_positions(0, n), batch, 64);
  prefill(m, std::span(toks).first(n), iota_positions(0, n), single, 64);
  std::vector<int32_t> rows(k);
  for (size_t i = 0; i < k; ++i) rows[i] = int32_t(i);
  const auto pos = iota_positions(int32_t(n), k);
  const auto verify = m.forward(std::span(toks).subspan(n, k), pos, batch, rows);
  for (size_t i = 0; i < k; ++i) {
    const int32_t row = 0;
    const auto step = m.forward({&toks[n + i], 1}, {&pos[i], 1}, single, {&row, 1});
    EXPECT_TRUE(bit_equal(step, std::span(verify).subspan(i * V, V))) << "token " << i;
    EXPECT_TRUE(bit_equal(step, std::span(whole).subspan((n + i) * V, V))) << "token " << i;
  }
}

void expect_trim_replay_equals_plain_decode(const Model& m, uint64_t seed) {
  const int n_layer = m.config().n_layer;
  const size_t n = 80, k = 6, after = 5;
  const auto toks = seeded_tokens(n + k + after, m.config().n_vocab, seed);
  // Plain decoding of every token after the prefix, one at a time.
  KVCache plain = m.make_cache();
  prefill(m, std::span(toks).first(n), iota_positions(0, n), plain, 32);
  std::vector<std::vector<float>> plain_logits;
  const int32_t row0 = 0;
  for (size_t t = n; t < toks.size(); ++t) {
    const int32_t pos = int32_t(t);
    plain_logits.push_back(m.forward({&toks[t], 1}, {&pos, 1}, plain, {&row0, 1}));
  }
  for (size_t keep = 1; keep <= k + 1; ++keep) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    KVCache c = m.make_cache(), ref = m.make_cache();
    prefill(m, std::span(toks).first(n), iota_positions(0, n), c, 32);
    prefill(m, std::span(toks).first(n + keep), iota_positions(0, n + keep), ref, 32);
    // A verify batch of k + 1 tokens, trimmed to `keep` twice (the second trim replays again).
    const auto pos = iota_positions(int32_t(n), k + 1);
    m.forward(std::span(toks).subspan(n, k + 1), pos, c, {});
    const size_t first = std::min(keep + 1, k + 1);
    c.trim(k + 1 - first);
    c.trim(first - keep);
    ASSERT_EQ(c.size(), n + keep);
    // The replayed state is the state of prefilling exactly the kept tokens.
    EXPECT_TRUE(same_states(c, ref, n_layer));
    for (size_t t = n + keep; t < toks.size(); ++t) {
      const int32_t p = int32_t(t);
      const auto got = m.forward({&toks[t], 1}, {&p, 1}, c, {&row0, 1});
      ASSERT_TRUE(bit_equal(got, plain_logits[t - n])) << "token " << t;
    }
  }
}

void expect_trim_beyond_last_batch_refused(const Model& m, uint64_t seed) {
  const auto toks = seeded_tokens(40, m.config().n_vocab, seed);
  KVCache c = m.make_cache();
  prefill(m, toks, iota_positions(0, 40), c, 16);  // batches of 16, 16, 8
  std::vector<int> rec;
  for (int l = 0; l < m.config().n_layer; ++l)
    if (c.is_recurrent(l)) rec.push_back(l);
  ASSERT_FALSE(rec.empty());
  EXPECT_THROW(c.trim(9), std::logic_error);
  EXPECT_EQ(c.size(), 40u);
  for (int l : rec) EXPECT_EQ(c.recurrent_state(l).tokens(), 40u) << "layer " << l;
  EXPECT_NO_THROW(c.trim(8));
  for (int l : rec) EXPECT_EQ(c.recurrent_state(l).tokens(), 32u) << "layer " << l;
  c.trim(100);
  EXPECT_EQ(c.size(), 0u);
  for (int l : rec) EXPECT_EQ(c.recurrent_state(l).tokens(), 0u) << "layer " << l;
  // After clearing, a fresh prefill gives the fresh cache's logits.
  std::vector<float> again;
  prefill(m, toks, iota_positions(0, 40), c, 40, &again);
  EXPECT_TRUE(bit_equal(again, all_logits(m, toks, 40)));
}

void expect_kv_prediction_refused(const Model& m, int layer) {
  KVCache c = m.make_cache();
  std::vector<float> k(64), v(64);
  const int32_t pos = 0;
  try {
    m.store_pre_rope_kv(layer, 1, &pos, 1, k.data(), v.data(), 64, c);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(m.config().arch_name), std::string::npos) << e.what();
  }
}

}  // namespace accel::test
