// llama2.c import: stories260K.bin + tok512.bin against the GGUF llama.cpp's own converter made
// from them (every tensor bit for bit, tokenizer arrays, hyper-parameters), an end-to-end greedy
// sample, and hostile checkpoints/tokenizers refused with the file and field named.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "models/generation.h"
#include "models/gguf.h"
#include "models/llama2c_import.h"
#include "models/model.h"
#include "models/tokenizer.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

struct Inputs {
  std::string bin, tok, ref;
};

std::optional<Inputs> inputs() {
  const auto bin = test::shared_data("stories260K/stories260K.bin");
  const auto tok = test::shared_data("stories260K/tok512.bin");
  const auto ref = test::shared_data("stories260K/stories260K.gguf");
  if (!bin || !tok || !ref) return std::nullopt;
  return Inputs{bin->string(), tok->string(), ref->string()};
}

TEST(Llama2cImport, MatchesLlamaCppConverter) {
  const auto in = inputs();
  if (!in)
    GTEST_SKIP() << test::missing_shared_data(
        "stories260K/{stories260K.bin,tok512.bin,stories260K.gguf}");
  test::TempDir dir;
  const std::string out = dir.file("stories260K.gguf");
  import_llama2c(in->bin, in->tok, out);
  const GgufFile ours = GgufFile::open(out), ref = GgufFile::open(in->ref);

  // Tensors: same names, shapes, types, and bytes.
  std::set<std::string> names_ours, names_ref;
  for (const auto& t : ours.tensors()) names_ours.insert(t.name);
  for (const auto& t : ref.tensors()) names_ref.insert(t.name);
  EXPECT_EQ(names_ours, names_ref);
  EXPECT_EQ(ref.tensors().size(), 48u);
  for (const auto& rt : ref.tensors()) {
    const GgufTensorInfo* ot = ours.find_tensor(rt.name);
    if (!ot) continue;
    EXPECT_EQ(ot->dims, rt.dims) << rt.name;
    ASSERT_EQ(ot->type, DType::F32) << rt.name;
    ASSERT_EQ(rt.type, DType::F32) << rt.name << ": the converter kept f32";
    ASSERT_EQ(ot->n_elements, rt.n_elements) << rt.name;
    const auto* a = reinterpret_cast<const float*>(ours.tensor_data(*ot));
    const auto* b = reinterpret_cast<const float*>(ref.tensor_data(rt));
    EXPECT_TRUE(test::bit_equal({a, ot->n_elements}, {b, rt.n_elements})) << rt.name;
  }

  // Hyper-parameters: equal except context_length, where the converter writes its --ctx default
  // (128) instead of the checkpoint's seq_len (512); and rope.freq_base, which it leaves out (the
  // llama default 10000 applies, which is what we write).
  for (const char* k :
       {"llama.embedding_length", "llama.feed_forward_length", "llama.attention.head_count",
        "llama.attention.head_count_kv", "llama.block_count", "llama.rope.dimension_count"})
    EXPECT_EQ(ours.get_uint(k), ref.get_uint(k)) << k;
  EXPECT_EQ(ours.get_float("llama.attention.layer_norm_rms_epsilon"),
            ref.get_float("llama.attention.layer_norm_rms_epsilon"));
  EXPECT_EQ(ref.get_uint("llama.context_length"), 128u);
  EXPECT_EQ(ours.get_uint("llama.context_length"), 512u);
  EXPECT_FALSE(ref.has("llama.rope.freq_base"));
  EXPECT_EQ(ours.get_float("llama.rope.freq_base"), 10000.0);
  EXPECT_EQ(ours.get_string("general.architecture"), "llama");

  // Tokenizer arrays and ids.
  const TokenizerSpec so = TokenizerSpec::from_gguf(ours), sr = TokenizerSpec::from_gguf(ref);
  EXPECT_EQ(so.model, "llama");
  EXPECT_EQ(so.tokens, sr.tokens);
  ASSERT_EQ(so.scores.size(), sr.scores.size());
  EXPECT_TRUE(test::bit_equal(so.scores, sr.scores));
  EXPECT_EQ(so.types, sr.types);
  EXPECT_EQ(so.bos, 1);
  EXPECT_EQ(so.eos, 2);
  EXPECT_EQ(so.unk, 0);
  EXPECT_EQ(std::tie(so.bos, so.eos, so.unk, so.add_bos, so.add_eos, so.add_space_prefix),
            std::tie(sr.bos, sr.eos, sr.unk, sr.add_bos, sr.add_eos, sr.add_space_prefix));
}

// Greedy decoding from BOS reproduces the sample Karpathy published for this model (see
// shared/data/SOURCES.md), through our import, tokenizer and forward pass.
TEST(Llama2cImport, GreedySampleFromBos) {
  const auto in = inputs();
  if (!in)
    GTEST_SKIP() << test::missing_shared_data(
        "stories260K/{stories260K.bin,tok512.bin,stories260K.gguf}");
  test::TempDir dir;
  const std::string out = dir.file("s.gguf");
  import_llama2c(in->bin, in->tok, out);
  const auto model = Model::load(out);
  const auto tok = Tokenizer::create(TokenizerSpec::from_gguf(model->file()));
  const std::vector<int32_t> prompt = tok->encode("", true, false);
  ASSERT_EQ(prompt, std::vector<int32_t>{1});
  KVCache cache = model->make_cache();
  auto logits = prefill(*model, prompt, iota_positions(0, 1), cache, 1);
  DecodeOptions opt;
  opt.max_tokens = 40;
  opt.eos = tok->eos();
  const auto gen = greedy_decode(*model, cache, logits, 1, opt);
  const std::string text = tok->decode(gen);
  EXPECT_EQ(text.rfind("Once upon a time, there was a little girl named Lily. She loved to play "
                       "outside in the park.",
                       0),
            0u)
      << text;
}

// ---- hostile inputs ---------------------------------------------------------------------------

std::vector<char> slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void spit(const std::string& p, const std::vector<char>& b) {
  std::ofstream(p, std::ios::binary).write(b.data(), std::streamsize(b.size()));
}

void expect_refused(const std::string& bin, const std::string& tok, const std::string& out,
                    const std::vector<std::string>& needles) {
  try {
    import_llama2c(bin, tok, out);
    ADD_FAILURE() << "accepted";
  } catch (const Llama2cError& e) {
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nlacks: " << n;
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused import left " << out;
}

TEST(Llama2cImport, HostileCheckpointRefused) {
  const auto in = inputs();
  if (!in)
    GTEST_SKIP() << test::missing_shared_data(
        "stories260K/{stories260K.bin,tok512.bin,stories260K.gguf}");
  test::TempDir dir;
  const std::vector<char> good = slurp(in->bin);
  const std::string bad = dir.file("stories260K.bin"), out = dir.file("o.gguf");
  const auto with_field = [&](int idx, int32_t v) {
    std::vector<char> b = good;
    std::memcpy(b.data() + 4 * idx, &v, 4);
    spit(bad, b);
  };
  with_field(3, 0);  // n_heads
  expect_refused(bad, in->tok, out, {"stories260K.bin", "header field n_heads = 0"});
  with_field(3, 7);  // does not divide dim 64
  expect_refused(bad, in->tok, out, {"stories260K.bin", "n_heads = 7"});
  with_field(0, -64);  // dim
  expect_refused(bad, in->tok, out, {"header field dim = -64"});
  with_field(4, 16);  // n_kv_heads > n_heads
  expect_refused(bad, in->tok, out, {"header field n_kv_heads = 16"});
  with_field(6, 1 << 30);  // seq_len
  expect_refused(bad, in->tok, out, {"header field seq_len"});
  with_field(5, -512);  // unshared classifier: the file is then too short
  expect_refused(bad, in->tok, out, {"implies"});
  {
    std::vector<char> b(good.begin(), good.end() - 4);  // truncated
    spit(bad, b);
    expect_refused(bad, in->tok, out, {"stories260K.bin", "1056536 bytes", "implies 1056540"});
    b = good;
    b.push_back(0);  // one byte too many
    spit(bad, b);
    expect_refused(bad, in->tok, out, {"1056541 bytes"});
    spit(bad, std::vector<char>(good.begin(), good.begin() + 10));
    expect_refused(bad, in->tok, out, {"header"});
  }
}

TEST(Llama2cImport, HostileTokenizerRefused) {
  const auto in = inputs();
  if (!in)
    GTEST_SKIP() << test::missing_shared_data(
        "stories260K/{stories260K.bin,tok512.bin,stories260K.gguf}");
  test::TempDir dir;
  const std::vector<char> good = slurp(in->tok);
  const std::string bad = dir.file("tok512.bin"), out = dir.file("o.gguf");
  {
    std::vector<char> b = good;
    const int32_t huge = 1 << 30;
    std::memcpy(b.data(), &huge, 4);  // max_token_length
    spit(bad, b);
    expect_refused(in->bin, bad, out, {"tok512.bin", "max_token_length"});
  }
  {
    std::vector<char> b = good;
    const int32_t len = 1000;  // token 0's length, beyond max_token_length
    std::memcpy(b.data() + 8, &len, 4);
    spit(bad, b);
    expect_refused(in->bin, bad, out, {"tok512.bin", "token 0", "length 1000"});
  }
  {
    spit(bad, std::vector<char>(good.begin(), good.end() - 3));  // last token cut
    expect_refused(in->bin, bad, out, {"tok512.bin", "token 511"});
    std::vector<char> b = good;
    b.push_back('x');
    spit(bad, b);
    expect_refused(in->bin, bad, out, {"tok512.bin", "1 bytes follow"});
  }
}

}  // namespace
}  // namespace accel
