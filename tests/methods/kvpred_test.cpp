// KV Prediction: the layer maps against corenet's published lists, the identity check (aux =
// target, W = I, b = 0 reproduces the baseline bit for bit on llama, qwen2 and qwen3, f32 and f16
// caches, and the -uniform quantized caches), hostile predictor files refused naming the file and
// tensor or key, the ridge fit recovering known linear relations, and layer-pruned auxiliaries.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "methods/kvpred.h"
#include "methods/kvpred_aux.h"
#include "methods/kvpred_fit.h"
#include "methods/kvpred_predictor.h"
#include "models/generation.h"
#include "models/gguf.h"
#include "models/synthetic.h"
#include "suites/synthetic_prompt.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

using kvpred::canonical_layer_map;
using kvpred::pruned_kept_layers;
using kvpred::pruned_layer_map;
using V = std::vector<int>;

// ---------------------------------------------------------------------------------------------
// Layer maps: every auxkv_num_layers_to_basekv_num_layers list in apple/corenet@1aa3acd
// projects/kv-prediction/openelm/*.yaml, and the select_layers of its layer-pruned configs.

TEST(KVPredLayerMaps, CanonicalMatchesCorenetConfigs) {
  // openelm_1_1B_kvp_c_270M.yaml (28 <- 16), also quoted in spec §2.2.
  EXPECT_EQ(canonical_layer_map(28, 16), (V{0, 0, 1, 1, 2, 2, 3,  3,  4,  4,  5,  5,  6,  6,
                                            7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 13, 14, 15}));
  // openelm_1_1B_kvp_c_450M.yaml (28 <- 20).
  EXPECT_EQ(canonical_layer_map(28, 20), (V{0, 0, 1, 1, 2,  2,  3,  3,  4,  4,  5,  5,  6,  6,
                                            7, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  // openelm_3B_kvp_c_1_1B.yaml (36 <- 28).
  EXPECT_EQ(canonical_layer_map(36, 28),
            (V{0,  0,  1,  1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,  9,
               10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27}));
  // openelm_3B_kvp_c_450M.yaml (36 <- 20).
  EXPECT_EQ(canonical_layer_map(36, 20),
            (V{0, 0, 1,  1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,  8,
               9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 17, 18, 19}));
  // openelm_3B_kvp_c_270M.yaml (36 <- 16): n_b > 2 n_a, the first 4 aux layers feed three.
  EXPECT_EQ(canonical_layer_map(36, 16),
            (V{0, 0, 0, 1, 1, 1, 2,  2,  2,  3,  3,  3,  4,  4,  5,  5,  6,  6,
               7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15}));
}

TEST(KVPredLayerMaps, CanonicalEdgeCases) {
  EXPECT_EQ(canonical_layer_map(4, 4), (V{0, 1, 2, 3}));  // aux = base: 1:1
  EXPECT_EQ(canonical_layer_map(3, 5), (V{0, 1, 2}));     // more aux layers: the first n_b
  EXPECT_EQ(canonical_layer_map(3, 1), (V{0, 0, 0}));
  EXPECT_EQ(canonical_layer_map(3, 2), (V{0, 0, 1}));  // corenet's own unit test
  EXPECT_THROW(canonical_layer_map(0, 2), std::invalid_argument);
  EXPECT_THROW(canonical_layer_map(4, 0), std::invalid_argument);
}

TEST(KVPredLayerMaps, PrunedKeptLayersMatchCorenetSelectLayers) {
  EXPECT_EQ(pruned_kept_layers(28, 0.25), (V{0, 4, 8, 12, 16, 20, 24}));
  EXPECT_EQ(pruned_kept_layers(28, 0.75),
            (V{0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 26}));
  EXPECT_EQ(pruned_kept_layers(36, 0.25), (V{0, 4, 8, 12, 16, 20, 24, 28, 32}));
  EXPECT_EQ(pruned_kept_layers(36, 0.75), (V{0,  1,  2,  4,  5,  6,  8,  9,  10, 12, 13, 14, 16, 17,
                                             18, 20, 21, 22, 24, 25, 26, 28, 29, 30, 32, 33, 34}));
  // 0.50l: aux layer j <- base layer 2j (rename_scopes_map), 14 of 28 and 18 of 36.
  EXPECT_EQ(pruned_kept_layers(28, 0.5).size(), 14u);
  EXPECT_EQ(pruned_kept_layers(36, 0.5).back(), 34);
  EXPECT_THROW(pruned_kept_layers(28, 0.3), std::invalid_argument);
}

TEST(KVPredLayerMaps, PrunedMatchesCorenetConfigs) {
  auto lp = [](int n, double f) { return pruned_layer_map(n, pruned_kept_layers(n, f)); };
  // openelm_1_1B_kvp_lp_0_25/0_50/0_75.yaml.
  EXPECT_EQ(lp(28, 0.25), (V{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3,
                             3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6}));
  EXPECT_EQ(lp(28, 0.5), (V{0, 0, 1, 1, 2, 2, 3,  3,  4,  4,  5,  5,  6,  6,
                            7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}));
  EXPECT_EQ(lp(28, 0.75), (V{0,  1,  2,  2,  3,  4,  5,  5,  6,  7,  8,  8,  9,  10,
                             11, 11, 12, 13, 14, 14, 15, 16, 17, 17, 18, 19, 20, 20}));
  // openelm_base_3B_aux_0_25l/0_50l/0_75l.yaml.
  EXPECT_EQ(lp(36, 0.25), (V{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4,
                             4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8}));
  EXPECT_EQ(lp(36, 0.5), (V{0, 0, 1,  1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,  8,
                            9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17}));
  EXPECT_EQ(lp(36, 0.75),
            (V{0,  1,  2,  2,  3,  4,  5,  5,  6,  7,  8,  8,  9,  10, 11, 11, 12, 13,
               14, 14, 15, 16, 17, 17, 18, 19, 20, 20, 21, 22, 23, 23, 24, 25, 26, 26}));
}

TEST(KVPredLayerMaps, PrunedEdgeCasesAndBadLists) {
  const V kept{1, 3};  // layer 0 pruned: reads the first kept copy
  EXPECT_EQ(pruned_layer_map(5, kept), (V{0, 0, 0, 1, 1}));
  const V unsorted{2, 1}, out_of_range{0, 4}, empty{};
  EXPECT_THROW(pruned_layer_map(4, unsorted), std::invalid_argument);
  EXPECT_THROW(pruned_layer_map(4, out_of_range), std::invalid_argument);
  EXPECT_THROW(pruned_layer_map(4, empty), std::invalid_argument);
  EXPECT_EQ(kvpred::parse_layer_list("0,2,3", 4), (V{0, 2, 3}));
  EXPECT_EQ(kvpred::parse_layer_list("0.50l", 4), (V{0, 2}));
  EXPECT_THROW(kvpred::parse_layer_list("0,0", 4), std::invalid_argument);
  EXPECT_THROW(kvpred::parse_layer_list("0,4", 4), std::invalid_argument);
  EXPECT_THROW(kvpred::parse_layer_list("1,x", 4), std::invalid_argument);
  EXPECT_THROW(kvpred::parse_layer_list("", 4), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The method on the tiny families.

struct Family {
  std::vector<std::string> paths;
  std::unique_ptr<Model> target, draft;
};

class KVPred : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* name : {"tiny", "tiny-qwen2", "tiny-qwen3"}) {
      Family f;
      f.paths = make_synthetic_family(name, dir_->file(name), 5, DType::F32);
      f.target = Model::load(f.paths[0]);
      f.draft = Model::load(f.paths[1]);
      families_->emplace(name, std::move(f));
    }
  }
  static void TearDownTestSuite() {
    families_->clear();
    delete dir_;
  }
  static Family& fam(const std::string& name) { return families_->at(name); }
  static std::string identity_file(const std::string& name) {
    const std::string path = dir_->file(name + "-identity.gguf");
    if (!std::filesystem::exists(path)) {
      const ModelConfig& c = fam(name).target->config();
      kvpred::write_predictor(kvpred::identity_predictor(canonical_layer_map(c.n_layer, c.n_layer),
                                                         c.n_layer, c.kv_dim()),
                              path);
    }
    return path;
  }
  static Outcome run(const Method& m, const Model& target, const Model* aux,
                     const std::string& predictor, size_t n, KVDType kv = KVDType::F32,
                     size_t chunk = 64) {
    Engine e;
    e.target = &target;
    e.prefill_chunk = chunk;
    e.kv_dtype = kv;
    if (aux) e.models["aux"] = aux;
    e.files["predictor"] = predictor;
    Request r;
    r.prompt = synthetic_prompt(target.config().n_vocab, 256, {257}, n, 9);
    r.max_new_tokens = 12;
    r.keep_logits = 12;
    return m.run(e, r, resolve_params(m, {}));
  }
  static void expect_identical(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.logits.size(), b.logits.size());
    for (size_t i = 0; i < a.logits.size(); ++i)
      EXPECT_TRUE(test::bit_equal(a.logits[i], b.logits[i])) << "step " << i;
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline auto* families_ = new std::map<std::string, Family>();
  KVPredMethod kvp_;
};

TEST_F(KVPred, IdentityWithAuxEqualTargetIsBaselineBitForBit) {
  const Method& base = find_method("baseline");
  for (const char* name : {"tiny", "tiny-qwen2", "tiny-qwen3"}) {
    SCOPED_TRACE(name);
    const Model& t = *fam(name).target;
    // Every batch-invariant cache type: the quantized ones store predicted rows through
    // KVStorage::store, as forward() stores computed rows through attend().
    for (KVDType kv : {KVDType::F32, KVDType::F16, KVDType::Int4Uniform, KVDType::Q8_0Uniform}) {
      if (name != std::string("tiny") && kv != KVDType::F32 && kv != KVDType::F16) continue;
      SCOPED_TRACE(kv_dtype_name(kv));
      const Outcome b = run(base, t, nullptr, "", 300, kv);
      const Outcome k = run(kvp_, t, &t, identity_file(name), 300, kv);
      expect_identical(k, b);
      EXPECT_EQ(k.stats["predicted_tokens"], 299);
      EXPECT_EQ(k.kept_tokens, 1u);
      EXPECT_EQ(k.kv_bytes, b.kv_bytes);
    }
  }
}

TEST_F(KVPred, PredictedRowsAreWhatTheTargetAttendsTo) {
  // Not vacuous: halving the predicted values (W_V = I / 2) changes the first logits.
  const Model& t = *fam("tiny").target;
  const ModelConfig& c = t.config();
  kvpred::Predictor p = kvpred::identity_predictor({0, 1, 2, 3}, 4, c.kv_dim());
  for (auto& v : p.v)
    for (auto& w : v.w) w *= 0.5f;
  const std::string path = dir_->file("tiny-half-v.gguf");
  kvpred::write_predictor(p, path);
  const Outcome half = run(kvp_, t, &t, path, 300);
  const Outcome id = run(kvp_, t, &t, identity_file("tiny"), 300);
  EXPECT_FALSE(test::bit_equal(half.logits[0], id.logits[0]));
}

TEST_F(KVPred, StackedRunsAndTokenBlocksMatchAPlainAssembly) {
  // aux = target with map [0, 0, 2] and W = I: base layers 0 and 1 share one stacked GEMM, and
  // 1100 tokens cross the method's 1024-token blocks. The oracle assembles the same cache by hand
  // from the target's captured pre-RoPE rows, one layer and one call at a time.
  const Model& t = *fam("tiny-qwen3").target;
  const ModelConfig& c = t.config();
  const V map{0, 0, 2};
  const std::string path = dir_->file("tiny-qwen3-002.gguf");
  kvpred::write_predictor(kvpred::identity_predictor(map, 3, c.kv_dim()), path);
  const size_t N = 1100, d = size_t(c.kv_dim());
  const auto prompt = synthetic_prompt(c.n_vocab, 256, {257}, N, 9);
  std::vector<std::vector<float>> k(3), v(3);
  ForwardHooks h;
  h.on_pre_rope_kv = [&](int l, const float* kr, const float* vr, size_t T, size_t ld) {
    for (size_t i = 0; i < T; ++i) {
      k[size_t(l)].insert(k[size_t(l)].end(), kr + i * ld, kr + i * ld + d);
      v[size_t(l)].insert(v[size_t(l)].end(), vr + i * ld, vr + i * ld + d);
    }
  };
  KVCache scratch = t.make_cache();
  prefill(t, std::span(prompt).first(N - 1), iota_positions(0, N - 1), scratch, 128, nullptr, &h);
  KVCache cache = t.make_cache();
  cache.reserve(N);
  const auto pos = iota_positions(0, N - 1);
  cache.stage(pos.data(), N - 1);
  for (int i = 0; i < 3; ++i) {
    std::vector<float> kk = k[size_t(map[size_t(i)])];
    t.store_pre_rope_kv(i, 1, pos.data(), N - 1, kk.data(), v[size_t(map[size_t(i)])].data(), d,
                        cache);
  }
  cache.commit(N - 1);
  const int32_t last = int32_t(N - 1), row = 0;
  const auto want = t.forward({&prompt[N - 1], 1}, {&last, 1}, cache, {&row, 1});
  const Outcome got = run(kvp_, t, &t, path, N, KVDType::F32, 128);
  EXPECT_TRUE(test::bit_equal(got.logits[0], want));
  // And the runs themselves.
  const auto packed = kvpred::PackedPredictor::pack(kvpred::identity_predictor(map, 3, 8));
  ASSERT_EQ(packed.runs.size(), 2u);
  EXPECT_EQ(packed.runs[0].count, 2);
  EXPECT_EQ(packed.runs[0].wk.rows(), 16u);
  EXPECT_EQ(packed.runs[1].base0, 2);
  EXPECT_EQ(packed.runs[1].aux_layer, 2);
}

TEST_F(KVPred, IdentityHoldsForOtherChunkingsAndOneTokenPrompts) {
  const Method& base = find_method("baseline");
  const Model& t = *fam("tiny-qwen3").target;
  // Aux prefilled in chunks of 7, the baseline in chunks of 64 (batch invariance), and more
  // tokens than one of the method's 1024-token prediction blocks.
  expect_identical(run(kvp_, t, &t, identity_file("tiny-qwen3"), 1100, KVDType::F32, 7),
                   run(base, t, nullptr, "", 1100));
  // N = 1: nothing to predict, the target runs the only token.
  const Outcome one = run(kvp_, t, &t, identity_file("tiny-qwen3"), 1);
  expect_identical(one, run(base, t, nullptr, "", 1));
  EXPECT_EQ(one.stats["predicted_tokens"], 0);
}

TEST_F(KVPred, PhasesStatsAndFlops) {
  const Model& t = *fam("tiny").target;
  const Outcome k = run(kvp_, t, &t, identity_file("tiny"), 200);
  std::vector<std::string> names;
  for (const auto& [n, s] : k.phases) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"aux_prefill", "predict", "base_step", "first_token",
                                             "decode"}));
  EXPECT_EQ(k.stats["layer_map"], (V{0, 1, 2, 3}));
  EXPECT_EQ(k.stats["predictor"], "tiny-identity.gguf");
  // aux = target: aux prefill(N-1) + step(N) = prefill(N) minus the N-1 unused logit rows; the
  // predictor adds 2 * 2 * (N-1) * d^2 per layer.
  const ModelConfig& c = t.config();
  const KVPredFlops f = kvpred_ttft_flops(c, c, 200);
  const double head = 2.0 * c.n_embd * c.n_vocab;
  EXPECT_NEAR(f.aux_prefill + f.base_step, f.baseline, 1e-9 * f.baseline);
  EXPECT_DOUBLE_EQ(f.predict, 4.0 * 199 * c.kv_dim() * c.kv_dim() * c.n_layer);
  EXPECT_GT(f.baseline, head);
  EXPECT_DOUBLE_EQ(k.stats["ttft_flop_ratio"].get<double>(), f.ratio());
}

TEST_F(KVPred, RefusesMismatchedInputs) {
  const Model& t = *fam("tiny").target;
  const Model& d = *fam("tiny").draft;
  // An identity predictor for the 4-layer target does not fit the 2-layer draft as aux.
  try {
    run(kvp_, t, &d, identity_file("tiny"), 50);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tiny-identity.gguf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kvpred.aux.block_count"), std::string::npos) << e.what();
  }
  // A missing file names itself.
  EXPECT_THROW(run(kvp_, t, &t, dir_->file("nope.gguf"), 50), GgufError);
  // No aux model: the role is named.
  EXPECT_THROW(run(kvp_, t, nullptr, identity_file("tiny"), 50), std::exception);
  // Sliding-window architectures are refused naming the role and the architecture.
  const auto g3 = make_synthetic_family("tiny-gemma3", dir_->file("g3"), 5, DType::F32);
  const auto gemma = Model::load(g3[0]);
  try {
    run(kvp_, *gemma, gemma.get(), identity_file("tiny"), 50);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the target (gemma3) has sliding-window layers"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile predictor files: each is the good identity file with one thing broken.

struct Broken {
  std::string label, tensor_or_key;
  std::function<void(GgufWriter&, int /*layer*/, int /*kv_dim*/)> write;
};

std::string write_broken(const std::string& path, const Broken& b) {
  GgufWriter w;
  const int L = 2, d = 4;
  w.set("general.architecture", GgufValue::of_string("kvpred"));
  w.set("kvpred.format_version", GgufValue::of_u32(1));
  w.set("kvpred.base.block_count", GgufValue::of_u32(L));
  w.set("kvpred.aux.block_count", GgufValue::of_u32(L));
  w.set("kvpred.base.kv_dim", GgufValue::of_u32(d));
  w.set("kvpred.aux.kv_dim", GgufValue::of_u32(d));
  w.set("kvpred.layer_map", GgufValue::of_i32_array({0, 1}));
  b.write(w, L, d);
  w.write(path);
  return path;
}

void add_layer(GgufWriter& w, int i, int d, bool skip_v_bias = false) {
  const std::vector<float> W(size_t(d * d), 0.f), bias(size_t(d), 0.f);
  const std::string p = "blk." + std::to_string(i) + ".";
  for (const char* kv : {"kvpred_k", "kvpred_v"}) {
    w.add_tensor(p + kv + ".weight", {uint64_t(d), uint64_t(d)}, DType::F32, W.data(),
                 W.size() * 4);
    if (!(skip_v_bias && kv[7] == 'v'))
      w.add_tensor(p + kv + ".bias", {uint64_t(d)}, DType::F32, bias.data(), bias.size() * 4);
  }
}

TEST(KVPredFile, HostileFilesAreRefusedNamingFileAndTensor) {
  test::TempDir dir;
  const auto all_layers = [](GgufWriter& w, int L, int d) {
    for (int i = 0; i < L; ++i) add_layer(w, i, d);
  };
  // The good file loads.
  const auto good =
      kvpred::load_predictor(write_broken(dir.file("good.gguf"), {"", "", all_layers}));
  EXPECT_EQ(good.layer_map, (V{0, 1}));
  ASSERT_EQ(good.k.size(), 2u);

  const std::vector<Broken> cases = {
      {"missing bias", "blk.1.kvpred_v.bias",
       [](GgufWriter& w, int, int d) {
         add_layer(w, 0, d);
         add_layer(w, 1, d, true);
       }},
      {"missing layer", "blk.1.kvpred_k.weight",
       [](GgufWriter& w, int, int d) { add_layer(w, 0, d); }},
      {"wrong shape", "blk.0.kvpred_k.weight",
       [](GgufWriter& w, int, int d) {
         const std::vector<float> W(size_t(d * (d + 1)), 0.f);
         w.add_tensor("blk.0.kvpred_k.weight", {uint64_t(d), uint64_t(d + 1)}, DType::F32, W.data(),
                      W.size() * 4);
       }},
      {"quantized type", "blk.0.kvpred_k.weight",
       [](GgufWriter& w, int, int) {
         w.set("kvpred.base.kv_dim", GgufValue::of_u32(32));
         w.set("kvpred.aux.kv_dim", GgufValue::of_u32(32));
         const std::vector<uint8_t> q(34 * 32, 0);  // q8_0 [32, 32]: 32 rows of one block
         w.add_tensor("blk.0.kvpred_k.weight", {32, 32}, DType::Q8_0, q.data(), q.size());
       }},
      {"not finite", "blk.1.kvpred_v.weight",
       [](GgufWriter& w, int, int d) {
         add_layer(w, 0, d);
         std::vector<float> W(size_t(d * d), 0.f), b(size_t(d), 0.f);
         w.add_tensor("blk.1.kvpred_k.weight", {uint64_t(d), uint64_t(d)}, DType::F32, W.data(),
                      W.size() * 4);
         w.add_tensor("blk.1.kvpred_k.bias", {uint64_t(d)}, DType::F32, b.data(), b.size() * 4);
         W[5] = NAN;
         w.add_tensor("blk.1.kvpred_v.weight", {uint64_t(d), uint64_t(d)}, DType::F32, W.data(),
                      W.size() * 4);
         w.add_tensor("blk.1.kvpred_v.bias", {uint64_t(d)}, DType::F32, b.data(), b.size() * 4);
       }},
      {"extra tensor", "blk.2.kvpred_k.weight",
       [](GgufWriter& w, int L, int d) {
         for (int i = 0; i < L + 1; ++i) add_layer(w, i, d);
       }},
      {"map out of range", "kvpred.layer_map",
       [](GgufWriter& w, int L, int d) {
         w.set("kvpred.layer_map", GgufValue::of_i32_array({0, 2}));
         for (int i = 0; i < L; ++i) add_layer(w, i, d);
       }},
      {"map too short", "kvpred.layer_map",
       [](GgufWriter& w, int L, int d) {
         w.set("kvpred.layer_map", GgufValue::of_i32_array({0}));
         for (int i = 0; i < L; ++i) add_layer(w, i, d);
       }},
      {"absurd layer count", "kvpred.base.block_count",
       [](GgufWriter& w, int, int) {
         w.set("kvpred.base.block_count", GgufValue::of_u64(uint64_t(1) << 40));
       }},
      {"zero kv dim", "kvpred.aux.kv_dim",
       [](GgufWriter& w, int, int) { w.set("kvpred.aux.kv_dim", GgufValue::of_u32(0)); }},
      {"not a predictor", "general.architecture",
       [](GgufWriter& w, int L, int d) {
         w.set("general.architecture", GgufValue::of_string("llama"));
         for (int i = 0; i < L; ++i) add_layer(w, i, d);
       }},
      {"newer format", "kvpred.format_version",
       [](GgufWriter& w, int L, int d) {
         w.set("kvpred.format_version", GgufValue::of_u32(2));
         for (int i = 0; i < L; ++i) add_layer(w, i, d);
       }},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(cases[c].label);
    const std::string path = write_broken(dir.file("bad" + std::to_string(c) + ".gguf"), cases[c]);
    try {
      kvpred::load_predictor(path);
      ADD_FAILURE() << "accepted";
    } catch (const GgufError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find("'" + cases[c].tensor_or_key + "'"), std::string::npos) << msg;
    }
  }
}

TEST(KVPredFile, RoundTripKeepsWeightsAndFitMetadata) {
  test::TempDir dir;
  kvpred::Predictor p = kvpred::identity_predictor({0, 0, 1}, 2, 8);
  p.k[1].w[3] = 0.25f;
  p.v[2].b[7] = -1.5f;
  p.fit = {{"ridge", 0.5},
           {"train_rows", uint64_t(7)},
           {"text", "cal.txt"},
           {"heldout_rel_err_k", std::vector<float>{0.1f, 0.2f, 0.3f}}};
  kvpred::write_predictor(p, dir.file("p.gguf"));
  const kvpred::Predictor q = kvpred::load_predictor(dir.file("p.gguf"));
  EXPECT_EQ(q.layer_map, p.layer_map);
  EXPECT_EQ(q.k[1].w, p.k[1].w);
  EXPECT_EQ(q.v[2].b, p.v[2].b);
  EXPECT_EQ(q.fit["train_rows"], 7);
  EXPECT_EQ(q.fit["text"], "cal.txt");
  EXPECT_NEAR(q.fit["heldout_rel_err_k"][2].get<double>(), 0.3, 1e-7);
  // Identity needs square maps.
  EXPECT_THROW(kvpred::identity_predictor({0, 3}, 2, 8), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The ridge fit.

TEST(KVPredRidge, RecoversAKnownAffineMap) {
  const int in = 24, out = 16;
  const size_t n = 500;
  const auto A = test::random_normal(size_t(out * in), 1, 0.5f);
  const auto b = test::random_normal(size_t(out), 2);
  auto x = test::random_normal(n * size_t(in), 3, 2.f);
  for (size_t t = 0; t < n; ++t) x[t * in] += 3.f;  // a non-centred feature
  std::vector<float> y(n * size_t(out));
  for (size_t t = 0; t < n; ++t)
    for (int o = 0; o < out; ++o) {
      double acc = b[size_t(o)];
      for (int i = 0; i < in; ++i) acc += double(A[size_t(o * in + i)]) * x[t * in + size_t(i)];
      y[t * out + size_t(o)] = float(acc);
    }
  kvpred::RidgeFit fit(in, out);
  fit.add(x.data(), in, y.data(), out, 200);  // streamed in two parts
  fit.add(x.data() + 200 * in, in, y.data() + 200 * out, out, n - 200);
  for (double ridge : {0.0, 1e-9}) {
    const kvpred::LinearMap m = fit.solve(ridge);
    std::vector<double> want(A.begin(), A.end());
    EXPECT_TRUE(test::near_all(m.w, want, 2e-5, 0)) << "ridge " << ridge;
    EXPECT_TRUE(test::near_all(m.b, std::vector<double>(b.begin(), b.end()), 2e-5, 0));
    EXPECT_LT(fit.relative_error(m), 1e-6);
    EXPECT_LT(kvpred::relative_error(m, x.data(), in, y.data(), out, n), 1e-6);
  }
  // A large ridge shrinks W towards 0 and the error grows; the statistics-based error agrees
  // with the explicit one.
  const kvpred::LinearMap shrunk = fit.solve(10.0);
  const double e_stats = fit.relative_error(shrunk);
  EXPECT_GT(e_stats, 0.1);
  EXPECT_NEAR(e_stats, kvpred::relative_error(shrunk, x.data(), in, y.data(), out, n), 1e-6);
}

TEST_F(KVPred, FitWithAuxEqualTargetRecoversIdentity) {
  const Model& t = *fam("tiny-qwen3").target;
  const auto tokens = synthetic_prompt(t.config().n_vocab, 256, {257}, 900, 3);
  kvpred::FitOptions opt;
  opt.ridge = 1e-9;
  opt.context = 300;
  opt.chunk = 64;
  kvpred::FitReport rep;
  const kvpred::Predictor p = kvpred::fit_predictor(t, t, tokens, opt, &rep);
  EXPECT_EQ(rep.map_rule, "kvp-c");
  EXPECT_EQ(p.layer_map, (V{0, 1, 2}));
  EXPECT_EQ(rep.train_rows, 810u);
  EXPECT_EQ(rep.heldout_rows, 90u);
  // Tolerance: K and V are exact copies, so the only error is the solve's rounding (double
  // normal equations on float rows) and the 1e-9 relative ridge: |W - I| and |b| below 1e-3,
  // held-out relative error below 1e-4.
  const int d = t.config().kv_dim();
  std::vector<double> eye(size_t(d * d), 0.0);
  for (int i = 0; i < d; ++i) eye[size_t(i * d + i)] = 1.0;
  const std::vector<double> zero(size_t(d), 0.0);
  for (int i = 0; i < t.config().n_layer; ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(test::near_all(p.k[size_t(i)].w, eye, 1e-3, 0));
    EXPECT_TRUE(test::near_all(p.v[size_t(i)].w, eye, 1e-3, 0));
    EXPECT_TRUE(test::near_all(p.k[size_t(i)].b, zero, 1e-3, 0));
    EXPECT_LT(rep.layers[size_t(i)].heldout_k, 1e-4);
    EXPECT_LT(rep.layers[size_t(i)].heldout_v, 1e-4);
  }
}

TEST_F(KVPred, LayerPrunedAuxFitAndRun) {
  Family& f = fam("tiny");
  const std::string aux_path = dir_->file("tiny-lp50.gguf");
  kvpred::make_layer_pruned_aux(f.paths[0], kvpred::parse_layer_list("0.50l", 4), aux_path);
  const auto aux = Model::load(aux_path);
  EXPECT_EQ(aux->config().n_layer, 2);
  EXPECT_EQ(aux->file().get_int_array("kvpred.aux.source_layers"), (std::vector<int64_t>{0, 2}));
  const auto tokens = synthetic_prompt(f.target->config().n_vocab, 256, {257}, 600, 4);
  kvpred::FitOptions opt;
  opt.context = 300;
  opt.chunk = 64;
  kvpred::FitReport rep;
  const kvpred::Predictor p = kvpred::fit_predictor(*f.target, *aux, tokens, opt, &rep);
  EXPECT_EQ(rep.map_rule, "kvp-lp");
  EXPECT_EQ(p.layer_map, (V{0, 0, 1, 1}));
  // Base layer 0 and aux layer 0 are the same block on the same embeddings: an exact relation.
  EXPECT_LT(rep.layers[0].heldout_k, 1e-3);
  EXPECT_LT(rep.layers[0].heldout_v, 1e-3);
  // Base layer 2 reads a copy of itself that skipped layer 1: a real (nonzero) prediction error.
  EXPECT_GT(rep.layers[2].heldout_k, 1e-3);
  for (const auto& e : rep.layers) EXPECT_LT(e.heldout_k, 1.0);
  const std::string pred = dir_->file("tiny-lp50-pred.gguf");
  kvpred::write_predictor(p, pred);
  const Outcome k = run(kvp_, *f.target, aux.get(), pred, 400);
  EXPECT_EQ(k.tokens.size(), 12u);
  EXPECT_EQ(k.stats["aux_layers"], 2);
  EXPECT_LT(k.stats["ttft_flop_ratio"].get<double>(), 0.7);
}

TEST_F(KVPred, MakeAuxWithEveryLayerIsTheSameModel) {
  Family& f = fam("tiny-qwen2");
  const std::string path = dir_->file("tiny-qwen2-all.gguf");
  std::vector<int> every;
  for (int l = 0; l < f.target->config().n_layer; ++l) every.push_back(l);
  kvpred::make_layer_pruned_aux(f.paths[0], every, path);
  const auto copy = Model::load(path);
  const auto tokens = synthetic_prompt(f.target->config().n_vocab, 256, {257}, 40, 4);
  KVCache c1 = f.target->make_cache(), c2 = copy->make_cache();
  const auto l1 = prefill(*f.target, tokens, iota_positions(0, 40), c1, 16);
  const auto l2 = prefill(*copy, tokens, iota_positions(0, 40), c2, 16);
  EXPECT_TRUE(test::bit_equal(l1, l2));
  EXPECT_EQ(copy->file().get_string("general.name"),
            f.target->file().get_string("general.name") + "-lp");
  const std::vector<int> repeated{1, 1};
  EXPECT_THROW(kvpred::make_layer_pruned_aux(f.paths[0], repeated, dir_->file("x.gguf")),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir_->file("x.gguf")));
}

}  // namespace
}  // namespace accel
