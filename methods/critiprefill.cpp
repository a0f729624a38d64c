// CritiPrefillMethod::run and the sparse prefill (see critiprefill.h). Phases: prefill (the sparse
// prefill, or the baseline's on the declared below_threshold fallback), first_token, decode.
#include "methods/critiprefill.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "kernels/attention.h"
#include "kernels/block_sparse_attention.h"
#include "kernels/quant.h"
#include "methods/baseline.h"
#include "methods/phase_timer.h"
#include "methods/ttft_flops.h"
#include "models/generation.h"

namespace accel {

std::vector<ParamSpec> CritiPrefillMethod::params() const {
  using K = ParamSpec::Kind;
  return {
      {"segment", K::Int, 512, 1, 1 << 20, false, {}, "query segment length (multiple of block)"},
      {"block", K::Int, 32, 1, 1 << 20, false, {}, "key block length"},
      {"budget",
       K::Int,
       2048,
       0,
       1 << 24,
       false,
       {},
       "past key tokens per pruned segment (budget / block blocks, at most the eligible ones)"},
      {"threshold",
       K::Int,
       4096,
       0,
       1 << 24,
       false,
       {},
       "segments starting before this position are dense (keep it >= budget)"},
      {"layer_skip", K::Int, 1, 0, 1 << 16, false, {}, "layers [0, layer_skip) are dense"},
      {"layer_fusion",
       K::Bool,
       true,
       0,
       0,
       false,
       {},
       "EMA of block scores through depth: 0.25 previous + 0.75 current, reset at layer <= 1"},
  };
}

namespace critiprefill {

Config config_from_params(const nlohmann::json& p) {
  Config c;
  c.segment = p["segment"].get<int>();
  c.block = p["block"].get<int>();
  c.budget = p["budget"].get<int>();
  c.threshold = p["threshold"].get<int>();
  c.layer_skip = p["layer_skip"].get<int>();
  c.layer_fusion = p["layer_fusion"].get<bool>();
  return c;
}

void count_pairs(const Config& c, int n_layer, int n_heads, size_t n, double* dense, double* kept) {
  count_pairs(c, std::vector<int>(size_t(n_layer), 0), n_heads, n, dense, kept);
}

void count_pairs(const Config& c, std::span<const int> windows, int n_heads, size_t n,
                 double* dense, double* kept) {
  const size_t S = size_t(c.segment), B = size_t(c.block);
  double d = 0, k = 0;
  for (size_t start = 0; start < n; start += S) {
    const size_t len = std::min(S, n - start);
    // Causal: the query at position p sees p + 1 keys.
    const double seg_dense = double(len) * double(start) + double(len) * double(len + 1) / 2;
    double seg_sparse = seg_dense;
    if (c.segment_pruned(start, n)) {
      const size_t blocks = std::min(size_t(std::max(c.top_k(), 0)), start / B);
      seg_sparse = double(len) * double(blocks * B) + double(len) * double(len + 1) / 2;
    }
    for (size_t l = 0; l < windows.size(); ++l) {
      if (windows[l] < 0) continue;  // a layer without attention
      if (windows[l] > 0) {          // sum over the segment's queries of min(p + 1, window)
        double w = 0;
        for (size_t p = start; p < start + len; ++p)
          w += double(std::min(p + 1, size_t(windows[l])));
        d += w;
        k += w;
        continue;
      }
      d += seg_dense;
      k += c.layer_pruned(int(l)) ? seg_sparse : seg_dense;
    }
  }
  *dense = d * n_heads;
  *kept = k * n_heads;
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A pruned layer's prompt rows in the cache's format, and its key-block representatives.
struct LayerRows {
  std::vector<float> k32, v32;     // [n][kv_dim] (f32 caches)
  std::vector<uint16_t> k16, v16;  // [n][kv_dim] (f16 caches)
  KeyBlocks blocks;
};

}  // namespace

std::vector<float> sparse_prefill(const Model& m, std::span<const int32_t> tokens, KVCache& cache,
                                  const Config& c, size_t chunk, PrefillStats* stats,
                                  const Observer* obs) {
  c.validate();
  const ModelConfig& mc = m.config();
  const size_t N = tokens.size();
  if (N == 0) throw std::invalid_argument("critiprefill: empty prompt");
  if (cache.size() != 0)
    throw std::invalid_argument("critiprefill: the prompt must start an empty cache");
  KVFormat fmt;
  if (cache.dtype() == KVDType::F32)
    fmt = KVFormat::F32;
  else if (cache.dtype() == KVDType::F16)
    fmt = KVFormat::F16;
  else
    throw std::invalid_argument(
        "critiprefill: kv_dtype " + kv_dtype_name(cache.dtype()) +
        " is not supported (the block-sparse kernel reads f32 or f16 rows)");
  // The pruned (full) layers' geometry: gemma4's sliding layers have another.
  const LayerAttention fa = full_layer_attention(mc);
  const Heads heads{mc.n_head, fa.n_head_kv, fa.head_dim};
  const AttentionShape shape{mc.n_head, fa.n_head_kv, fa.head_dim, attention_scale(mc)};
  const size_t S = size_t(c.segment), B = size_t(c.block);
  const size_t kvd = size_t(fa.n_head_kv) * size_t(fa.head_dim);
  const size_t batch = S * std::max<size_t>(1, chunk / S);
  const size_t pool_rows = c.pool_blocks(N) * B;
  const std::vector<int32_t> pos = iota_positions(0, N);

  // Sinks add a term to every softmax, which the block-sparse kernel does not have.
  if (mc.attn_sinks)
    throw std::invalid_argument("critiprefill: " + mc.arch_name +
                                " layers have attention sinks, which the block-sparse attention "
                                "does not implement (run the baseline for a dense prefill)");
  // Only full-attention layers are pruned: a sliding layer already attends to its window only,
  // and a hybrid's recurrent and FFN-only blocks (window -1) do not attend.
  std::vector<int> windows(size_t(mc.n_layer));
  std::vector<bool> pruned(size_t(mc.n_layer));
  for (int l = 0; l < mc.n_layer; ++l) {
    windows[size_t(l)] = is_attention_layer(mc, l) ? layer_attention(mc, l).window : -1;
    pruned[size_t(l)] = c.layer_pruned(l) && windows[size_t(l)] == 0;
  }
  PrefillStats st;
  count_pairs(c, windows, mc.n_head, N, &st.pairs_dense, &st.pairs_kept);
  st.pruned_segments = c.pruned_segments(N);
  std::vector<LayerRows> rows(size_t(mc.n_layer));
  for (int l = 0; l < mc.n_layer; ++l) {
    if (!pruned[size_t(l)]) continue;
    ++st.pruned_layers;
    LayerRows& lr = rows[size_t(l)];
    if (fmt == KVFormat::F32) {
      lr.k32.resize(N * kvd);
      lr.v32.resize(N * kvd);
    } else {
      lr.k16.resize(N * kvd);
      lr.v16.resize(N * kvd);
    }
    lr.blocks = KeyBlocks(heads, c.block, pool_rows / B);
  }

  size_t row0 = 0;                          // prompt position of the batch's first row
  std::vector<std::vector<float>> fusion;   // (segment of the batch) -> previous pruned layer's P
  std::vector<std::vector<int32_t>> lists;  // (pruned segment of the batch) -> its blocks
  std::vector<SparseSegment> sparse;
  std::vector<std::pair<size_t, size_t>> dense;  // batch rows [a, b) attended densely
  ForwardHooks hooks;
  hooks.profile = obs ? obs->profile : nullptr;
  hooks.attend = [&](int l, const AttendBatch& b) -> bool {
    if (!pruned[size_t(l)]) return false;
    LayerRows& lr = rows[size_t(l)];
    const size_t T = b.n;
    // The rows exactly as the cache stores them (f16: rounded by the same conversion).
    for (size_t t = 0; t < T; ++t) {
      const size_t at = (row0 + t) * kvd;
      if (fmt == KVFormat::F32) {
        std::memcpy(&lr.k32[at], b.k_new + t * b.ld_new, kvd * sizeof(float));
        std::memcpy(&lr.v32[at], b.v_new + t * b.ld_new, kvd * sizeof(float));
      } else {
        quantize_row(DType::F16, b.k_new + t * b.ld_new, &lr.k16[at], kvd);
        quantize_row(DType::F16, b.v_new + t * b.ld_new, &lr.v16[at], kvd);
      }
    }
    // Representatives of the keys as computed (f32), for the blocks any segment can select.
    if (row0 < pool_rows) lr.blocks.append(b.k_new, b.ld_new, std::min(T, pool_rows - row0));

    const auto t_sel = Clock::now();
    lists.clear();
    sparse.clear();
    dense.clear();
    for (size_t a = 0; a < T; a += S) {
      const size_t start = row0 + a, len = std::min(S, T - a);
      if (!c.segment_pruned(start, N)) {
        dense.emplace_back(a, a + len);
        continue;
      }
      lists.push_back(select_blocks(c, heads, l, b.q + a * b.ldq, b.ldq, len, lr.blocks, start / B,
                                    fusion[a / S]));
      if (obs && obs->on_selection) obs->on_selection(l, start / S, lists.back());
      sparse.push_back(
          {a, a + len, start, start + len, nullptr, lists.back().size() / size_t(fa.n_head_kv)});
    }
    st.select_s += since(t_sel);
    if (sparse.empty()) {
      if (obs && obs->on_layer) {
        // The cache attends after this hook returns; the observer sees the rows, not the output.
        obs->on_layer(l, row0, b, false);
      }
      return false;
    }
    for (size_t i = 0; i < sparse.size(); ++i) sparse[i].blocks = lists[i].data();
    const auto t_att = Clock::now();
    const KVRows kv = fmt == KVFormat::F32
                          ? KVRows{lr.k32.data(), lr.v32.data(), kvd, KVFormat::F32}
                          : KVRows{lr.k16.data(), lr.v16.data(), kvd, KVFormat::F16};
    const size_t n_kv = row0 + T;
    for (const auto& [a, e] : dense)
      attention_causal(shape, b.q + a * b.ldq, b.ldq, b.q_pos + a, e - a, kv, pos.data(), n_kv,
                       b.out + a * b.ldo, b.ldo);
    attention_block_sparse(shape, B, b.q, b.ldq, b.q_pos, T, kv, pos.data(), n_kv, sparse, b.out,
                           b.ldo);
    st.sparse_attention_s += since(t_att);
    if (obs && obs->on_layer) obs->on_layer(l, row0, b, true);
    return true;
  };

  std::vector<float> last;
  for (row0 = 0; row0 < N; row0 += batch) {
    const size_t T = std::min(batch, N - row0);
    const bool is_last = row0 + T == N;
    fusion.assign((T + S - 1) / S, {});
    const int32_t last_row = int32_t(T - 1);
    const std::span<const int32_t> rows_out =
        is_last ? std::span<const int32_t>(&last_row, 1) : std::span<const int32_t>();
    std::vector<float> lg = m.forward(tokens.subspan(row0, T), std::span(pos).subspan(row0, T),
                                      cache, rows_out, &hooks);
    if (is_last) last = std::move(lg);
  }
  if (stats) *stats = st;
  return last;
}

}  // namespace critiprefill

Outcome CritiPrefillMethod::run(const Engine& e, const Request& r, const nlohmann::json& p) const {
  const Model& m = *e.target;
  const critiprefill::Config c = critiprefill::config_from_params(p);
  c.validate();
  const size_t N = r.prompt.size();
  PhaseTimer timer;
  Outcome out;
  KVCache cache = e.make_target_cache();
  // One allocation for the prompt and the decode, inside the clock, as the baseline does.
  cache.reserve(N + size_t(r.max_new_tokens));
  std::vector<float> last;
  if (c.pruned_segments(N) == 0) {
    out.stats["fallback"] = "below_threshold";
    last = prefill(m, r.prompt, iota_positions(0, N), cache, e.prefill_chunk);
    out.stats["ttft_flops"] = forward_flops(m.config(), double(N), 0, 1);
  } else {
    critiprefill::PrefillStats st;
    last = critiprefill::sparse_prefill(m, r.prompt, cache, c, e.prefill_chunk, &st);
    out.stats["pruned_segments"] = st.pruned_segments;
    out.stats["pruned_layers"] = st.pruned_layers;
    out.stats["attention_pairs_dense"] = st.pairs_dense;
    out.stats["attention_pairs_kept"] = st.pairs_kept;
    out.stats["attention_skipped"] = 1.0 - st.pairs_kept / st.pairs_dense;
    out.stats["select_s"] = st.select_s;
    out.stats["sparse_attention_s"] = st.sparse_attention_s;
    // The dense count with the skipped attention pairs taken out (pairs count query heads and
    // layers already); selection's representatives and scores are not counted.
    out.stats["ttft_flops"] = forward_flops(m.config(), double(N), 0, 1) -
                              (st.pairs_dense - st.pairs_kept) * attention_pair_flops(m.config());
  }
  timer.lap("prefill");
  out.kept_tokens = N;  // every prompt row is in the cache; only attention was sparse
  finish_with_greedy_decode(e, r, cache, std::move(last), int32_t(N), timer, out);
  return out;
}

}  // namespace accel
