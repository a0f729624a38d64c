// SpecPrefill importance and chunk selection (see specprefill_scoring.h). Owns the orchestration
// only: which query rows meet which keys, in what tasks, and how the rows are aggregated. The
// numerics (dot products, softmax, pooling, row reductions) are kernels/ building blocks; this
// file must not hold intrinsics, call the model, read a cache or time anything, and its result
// must not depend on the thread count.
#include "methods/specprefill_scoring.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/score_rows.h"
#include "kernels/threading.h"

namespace accel::specprefill {

namespace {

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("[specprefill] " + what);
}

// Query rows per task: they share each transposed key tile inside dot_scores, so K is read
// ceil(G*A / kTaskRows) times per layer, while the task's score rows (kTaskRows x N floats) stay
// small enough to keep per thread.
constexpr int kTaskRows = 32;

void validate(std::span<const LayerQK> layers, const DraftShape& sh, const ScoringOptions& o) {
  if (layers.empty()) bad("layers: at least one draft layer is required");
  if (sh.n_heads < 1) bad("n_heads must be >= 1, got " + std::to_string(sh.n_heads));
  if (sh.n_kv_heads < 1 || sh.n_heads % sh.n_kv_heads != 0)
    bad("n_kv_heads must be >= 1 and divide n_heads (" + std::to_string(sh.n_heads) + "), got " +
        std::to_string(sh.n_kv_heads));
  if (sh.head_dim < 1) bad("head_dim must be >= 1, got " + std::to_string(sh.head_dim));
  if (sh.n_queries < 1) bad("n_queries must be >= 1, got " + std::to_string(sh.n_queries));
  if (o.causal_tail && size_t(sh.n_queries) > sh.n_keys)
    bad("causal_tail needs n_queries (" + std::to_string(sh.n_queries) + ") <= n_keys (" +
        std::to_string(sh.n_keys) + ")");
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
  const float scale = sh.scale > 0 ? sh.scale : float(1.0 / std::sqrt(double(d)));

  // Tasks: (layer, kv head, block of up to kTaskRows of that kv head's G*A query rows). Row r
  // of the group is (head g*G + r / A, lookahead a = r % A).
  const int rows_per_group = G * A;
  const int blocks = (rows_per_group + kTaskRows - 1) / kTaskRows;
  const int n_tasks = L * Hkv * blocks;
  const size_t ldS = dot_scores_row_stride(N);

  // raw[a][j] = max over (l, h) of the (pooled) probabilities; merged across threads by max.
  std::vector<float> raw(size_t(A) * N, -std::numeric_limits<float>::infinity());

  // Per-thread buffers, made by the first task a slot runs; merged into raw by max below, which
  // is exact, so neither the thread count nor the merge order can change a bit.
  struct SlotBuffers {
    std::vector<float> local, S, pooled;
  };
  std::vector<SlotBuffers> slots(static_cast<size_t>(parallel_slots()));
  parallel_for(size_t(n_tasks), [&](size_t task_index, int slot) {
    SlotBuffers& buf = slots[size_t(slot)];
    if (buf.local.empty()) {
      buf.local.assign(size_t(A) * N, -std::numeric_limits<float>::infinity());
      buf.S.resize(size_t(std::min(kTaskRows, rows_per_group)) * ldS);  // [rows][ldS]
      buf.pooled.resize(pool_rows ? N : 0);
    }
    std::vector<float>& local = buf.local;
    std::vector<float>& S = buf.S;
    std::vector<float>& pooled = buf.pooled;
    {  // one task (the loop body this replaced, kept as it was)
      const int task = int(task_index);
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
      dot_scores(qrow, nr, x.k + size_t(g) * d, ks, N, d, S.data(), ldS);
      for (int i = 0; i < nr; ++i) {
        const int a = (r0 + i) % A;
        float* p = S.data() + size_t(i) * ldS;
        // Causal tail: query a sits at key position N - A + a and sees keys up to it.
        const size_t visible = opt.causal_tail ? N - size_t(A - 1 - a) : N;
        softmax_scaled(p, visible, scale);
        std::fill(p + visible, p + N, 0.f);
        if (pool_rows) {
          avg_pool1d(p, N, pool_k, opt.pool_edge, pooled.data());
          p = pooled.data();
        }
        max_accumulate(local.data() + size_t(a) * N, p, N);
      }
    }
  });
  for (const SlotBuffers& buf : slots)
    if (!buf.local.empty()) max_accumulate(raw.data(), buf.local.data(), size_t(A) * N);

  // Mean over a in ascending a (the one order-dependent reduction), then the pflash pool.
  if (pool_k && !pool_rows) {
    std::vector<float> unpooled(N);
    mean_of_rows(raw.data(), size_t(A), N, unpooled.data());
    avg_pool1d(unpooled.data(), N, pool_k, opt.pool_edge, imp);
  } else {
    mean_of_rows(raw.data(), size_t(A), N, imp);
  }
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
  if (options.head_chunks < 0 || options.tail_chunks < 0)
    bad("head_chunks and tail_chunks must be >= 0, got " + std::to_string(options.head_chunks) +
        " and " + std::to_string(options.tail_chunks));
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

  // Forced chunks: those intersecting the last T positions (tail floor), then the head/tail
  // chunks, scaled down when they alone would fill the budget (see SelectOptions).
  std::vector<char> forced(nc, 0);
  const size_t T = std::min(size_t(options.force_tail_tokens), n);
  if (T > 0)
    for (size_t c = (n - T) / C; c < nc; ++c) forced[c] = 1;
  size_t head = size_t(options.head_chunks), tail = size_t(options.tail_chunks);
  if (head + tail > 0 && head + tail >= budget) {
    const size_t F = std::max<size_t>(1, budget / 2);
    const size_t h = head * F / (head + tail);
    head = h;
    tail = F - h;
  }
  sel.head_chunks = int32_t(head);
  sel.tail_chunks = int32_t(tail);
  for (size_t c = 0; c < head; ++c) forced[c] = 1;
  for (size_t c = nc - tail; c < nc; ++c) forced[c] = 1;
  const size_t n_forced = size_t(std::count(forced.begin(), forced.end(), char(1)));
  sel.forced_chunks = int32_t(n_forced);
  sel.tail_exceeded_budget = n_forced > budget;

  std::vector<char> anchor(nc, 0);
  for (int32_t a : options.anchor_chunks) {
    if (a < 0 || size_t(a) >= nc)
      bad("anchor chunk " + std::to_string(a) + " outside [0, " + std::to_string(nc) + ")");
    anchor[size_t(a)] = 1;
  }

  std::vector<size_t> chosen;
  chosen.reserve(std::max(budget, n_forced));
  for (size_t c = 0; c < nc; ++c)
    if (forced[c]) chosen.push_back(c);
  if (n_forced < budget) {
    std::vector<double> score(nc, 0.0);
    std::vector<size_t> order;
    order.reserve(nc - n_forced);
    for (size_t c = 0; c < nc; ++c) {
      if (forced[c]) continue;
      const size_t a = c * C, b = std::min(a + C, n);
      double s = 0;
      for (size_t j = a; j < b; ++j) s += double(imp[j]);
      score[c] = s / double(b - a);
      if (std::isnan(score[c])) score[c] = -std::numeric_limits<double>::infinity();
      order.push_back(c);
    }
    // Anchors first, then by score, ties to the lower index. NaN was mapped to -inf; a NaN chunk
    // still loses ties with a real -inf chunk by index only, which is acceptable (both are
    // meaningless scores).
    const size_t take = budget - n_forced;
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(take), order.end(),
                      [&](size_t x, size_t y) {
                        if (anchor[x] != anchor[y]) return anchor[x] > anchor[y];
                        return score[x] != score[y] ? score[x] > score[y] : x < y;
                      });
    for (size_t i = 0; i < take; ++i) {
      sel.anchor_chunks += anchor[order[i]] ? 1 : 0;
      chosen.push_back(order[i]);
    }
  }
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
