// KVPredMethod::run and the analytic TTFT FLOPs (see kvpred.h).
#include "methods/kvpred.h"

#include <cstring>
#include <filesystem>
#include <memory>

#include "methods/baseline.h"
#include "methods/kvpred_predictor.h"
#include "methods/phase_timer.h"
#include "methods/ttft_flops.h"
#include "models/generation.h"

namespace accel {

KVPredFlops kvpred_ttft_flops(const ModelConfig& target, const ModelConfig& aux, size_t n_prompt) {
  KVPredFlops f;
  const double n = double(n_prompt), m = n_prompt ? n - 1 : 0;
  f.aux_prefill = forward_flops(aux, m, 0, 0);
  f.predict = 2.0 * 2.0 * m * double(aux.kv_dim()) * target.kv_dim() * target.n_layer;
  f.base_step = forward_flops(target, 1, m, 1);
  f.baseline = forward_flops(target, n, 0, 1);
  return f;
}

Outcome KVPredMethod::run(const Engine& e, const Request& r, const nlohmann::json&) const {
  const Model& target = *e.target;
  const Model& aux = e.model("aux");
  const ModelConfig &tc = target.config(), &ac = aux.config();
  // The learned maps predict one K/V row width for every layer into a linear cache; sliding-window
  // layers (rings, and gemma4's per-kind widths) have no predicted rows yet.
  for (const auto& [role, c] : {std::pair{"target", &tc}, {"aux", &ac}})
    if (has_sliding_layers(*c))
      throw std::invalid_argument(std::string("kvpred: the ") + role + " (" + c->arch_name +
                                  ") has sliding-window layers, which KV Prediction does not "
                                  "support yet");
  if (ac.n_vocab != tc.n_vocab)
    throw std::invalid_argument("kvpred: aux and target vocabularies differ (" +
                                std::to_string(ac.n_vocab) + " vs " + std::to_string(tc.n_vocab) +
                                ")");
  const size_t N = r.prompt.size();
  if (N == 0) throw std::invalid_argument("kvpred: empty prompt");
  const std::string& path = e.file("predictor");
  // Untimed setup, as a server holds its predictor in memory: load, validate, pack.
  const kvpred::Predictor file = kvpred::load_predictor(path);
  kvpred::check_compatible(file, path, tc, ac);
  const kvpred::PackedPredictor pred = kvpred::PackedPredictor::pack(file);
  const size_t n = N - 1;  // tokens the auxiliary prefills and the maps predict
  const size_t da = size_t(ac.kv_dim()), db = size_t(tc.kv_dim());

  KVCache tcache = e.make_target_cache();
  // The auxiliary's cache uses the run's storage type too: with aux = target it then computes
  // exactly what the baseline's prefill does (the identity check holds for every batch-invariant
  // type).
  KVCache acache = aux.make_cache(e.kv_dtype);
  PhaseTimer timer;
  Outcome out;

  // aux_prefill: tokens 0..N-2, keeping the pre-RoPE K/V of the layers the map reads.
  std::vector<char> used(size_t(ac.n_layer), 0);
  for (int j : pred.layer_map) used[size_t(j)] = 1;
  // (aux layer) -> [n][d_a], left uninitialised: every row is written by the capture.
  std::vector<std::unique_ptr<float[]>> ak(size_t(ac.n_layer)), av(size_t(ac.n_layer));
  for (int j = 0; j < ac.n_layer; ++j)
    if (used[size_t(j)] && n > 0)
      ak[size_t(j)].reset(new float[n * da]), av[size_t(j)].reset(new float[n * da]);
  if (n > 0) {
    acache.reserve(n);
    const std::vector<int32_t> pos = iota_positions(0, n);
    size_t chunk_start = 0;
    ForwardHooks hooks;
    hooks.on_pre_rope_kv = [&](int layer, const float* k, const float* v, size_t T, size_t ld) {
      if (!used[size_t(layer)]) return;
      float* kd = ak[size_t(layer)].get() + chunk_start * da;
      float* vd = av[size_t(layer)].get() + chunk_start * da;
      for (size_t t = 0; t < T; ++t) {
        std::memcpy(kd + t * da, k + t * ld, da * sizeof(float));
        std::memcpy(vd + t * da, v + t * ld, da * sizeof(float));
      }
    };
    const size_t chunk = std::max<size_t>(1, e.prefill_chunk);
    for (size_t s0 = 0; s0 < n; s0 += chunk) {
      const size_t len = std::min(chunk, n - s0);
      chunk_start = s0;
      aux.forward(std::span(r.prompt).subspan(s0, len), std::span(pos).subspan(s0, len), acache, {},
                  &hooks);  // no logits: the aux's predictions are not used
    }
  }
  out.stats["aux_kv_bytes"] = acache.bytes();
  acache.release();
  timer.lap("aux_prefill");

  // predict: per base layer, K̂ = W_K · K_aux[j_i] + b_K (likewise V), then the target's k-norm
  // and RoPE at positions 0..N-2, stored as cache entries 0..N-2. Blocks of kBlock tokens bound
  // the buffers; one GEMM per run of base layers sharing an aux layer, one RoPE call per block.
  tcache.reserve(N + size_t(r.max_new_tokens));  // one allocation, as the baseline does
  if (n > 0) {
    constexpr size_t kBlock = 1024;
    const size_t L = size_t(tc.n_layer), ld = L * db;
    const std::vector<int32_t> pos = iota_positions(0, n);
    std::vector<float> kb(std::min(n, kBlock) * ld), vb(std::min(n, kBlock) * ld);  // [B][L d_b]
    for (size_t t0 = 0; t0 < n; t0 += kBlock) {
      const size_t B = std::min(kBlock, n - t0);
      tcache.stage(pos.data() + t0, B);
      for (const auto& run : pred.runs) {
        const size_t j = size_t(run.aux_layer), col = size_t(run.base0) * db;
        gemm(ak[j].get() + t0 * da, B, da, run.wk, kb.data() + col, ld, run.bk.data());
        gemm(av[j].get() + t0 * da, B, da, run.wv, vb.data() + col, ld, run.bv.data());
      }
      target.store_pre_rope_kv(0, tc.n_layer, pos.data() + t0, B, kb.data(), vb.data(), ld, tcache);
      tcache.commit(B);
    }
  }
  ak.clear();
  av.clear();
  timer.lap("predict");

  // base_step: the target runs the last prompt token on the predicted cache (its own K/V for
  // position N-1 is appended) and its logits choose the first token.
  const int32_t last_pos = int32_t(n), row = 0;
  std::vector<float> last = target.forward({&r.prompt[n], 1}, {&last_pos, 1}, tcache, {&row, 1});
  timer.lap("base_step");
  out.kept_tokens = 1;  // prompt tokens the target itself ran
  const KVPredFlops fl = kvpred_ttft_flops(tc, ac, N);
  out.stats["predicted_tokens"] = n;
  out.stats["aux_layers"] = ac.n_layer;
  out.stats["layer_map"] = pred.layer_map;
  out.stats["predictor"] = std::filesystem::path(path).filename().string();
  out.stats["ttft_flops"] = fl.total();
  out.stats["ttft_flop_ratio"] = fl.ratio();
  finish_with_greedy_decode(e, r, tcache, std::move(last), int32_t(N), timer, out);
  return out;
}

}  // namespace accel
