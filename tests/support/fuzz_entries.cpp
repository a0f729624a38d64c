// The fuzz entry points and their seeds (fuzz_entries.h). Inputs reach the code under test through
// a per-process scratch file (the readers take paths, as a downloaded file arrives): /dev/shm
// when present, so the file never touches a disk.
#include "tests/support/fuzz_entries.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/plan.h"
#include "kernels/dtype.h"
#include "kernels/kquant.h"
#include "kernels/quant.h"
#include "models/gguf.h"
#include "models/llama2c_import.h"
#include "models/model_config.h"
#include "models/synthetic.h"
#include "models/tokenizer.h"
#include "models/tokenizer_metadata.h"

namespace accel::fuzz {

namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path d = base / ("accelbench-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return (dir / name).string();
}

void write_bytes(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!out) throw std::logic_error("fuzz: cannot write the scratch file " + path);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs f, swallowing the documented bad-input errors only.
template <class F>
void tolerate_bad_input(F&& f) {
  try {
    f();
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
}

void exercise_tokenizer(const GgufFile& f) {
  tolerate_bad_input([&] {
    const TokenizerSpec spec = TokenizerSpec::from_gguf(f);
    const auto tok = Tokenizer::create(spec);
    for (const char* text : {"Hello, world! 12345", " \n\t", "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87",
                             "\xff\xfe invalid \xc3"}) {
      const std::vector<int32_t> ids = tok->encode(text, true, true);
      (void)tok->decode(ids, true);
    }
    (void)tokenizer_detail::special_tokens_by_length(spec);
  });
}

// What a loader does with each tensor it accepted: decode a row. The reader has bounded the
// tensor's bytes within the file, so one row of it is in bounds.
void dequantize_first_rows(const GgufFile& f) {
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.dims.empty() || t.dims[0] == 0 || t.n_elements == 0) continue;
    const size_t cols = size_t(t.dims[0]);
    if (cols % dtype_block_elems(t.type) != 0) continue;
    std::vector<float> row(cols);
    dequantize_row(t.type, f.tensor_data(t), row.data(), cols);
  }
}

}  // namespace

int gguf(const uint8_t* data, size_t size) {
  const std::string path = scratch("in.gguf");
  write_bytes(path, data, size);
  tolerate_bad_input([&] {
    const GgufFile f = GgufFile::open(path);
    dequantize_first_rows(f);
    tolerate_bad_input([&] { (void)ModelConfig::from_gguf(f); });
    exercise_tokenizer(f);
  });
  return 0;
}

int tokenizer_metadata(const uint8_t* data, size_t size) {
  const std::string path = scratch("tok.gguf");
  write_bytes(path, data, size);
  tolerate_bad_input([&] { exercise_tokenizer(GgufFile::open(path)); });
  return 0;
}

int llama2c(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t n = 0;
  std::memcpy(&n, data, 4);
  const size_t ckpt = std::min<size_t>(n, size - 4);
  const std::string c = scratch("ckpt.bin"), t = scratch("tokenizer.bin"),
                    out = scratch("l2c.gguf");
  write_bytes(c, data + 4, ckpt);
  write_bytes(t, data + 4 + ckpt, size - 4 - ckpt);
  tolerate_bad_input([&] { import_llama2c(c, t, out); });
  return 0;
}

int plan(const uint8_t* data, size_t size) {
  const std::string path = scratch("plan.json");
  write_bytes(path, data, size);
  tolerate_bad_input([&] {
    const Plan p = load_plan(path, scratch("models"));
    (void)expand_plan(p);
  });
  return 0;
}

const std::vector<std::string>& targets() {
  static const std::vector<std::string> t = {"gguf", "tokenizer_metadata", "llama2c", "plan"};
  return t;
}

int run(const std::string& target, const uint8_t* data, size_t size) {
  if (target == "gguf") return gguf(data, size);
  if (target == "tokenizer_metadata") return tokenizer_metadata(data, size);
  if (target == "llama2c") return llama2c(data, size);
  if (target == "plan") return plan(data, size);
  throw std::logic_error("fuzz: unknown target " + target);
}

namespace {

// One row of every weight type the reader knows, each from the same values, plus the keys a model
// config reads for the family's architecture (llama; gemma3's and gpt-oss's sliding-window
// window, pattern, RoPE and soft-cap keys; qwen35moe's ssm.*, M-RoPE, layer-kind and shared-expert
// keys; nemotron_h's ssm.* keys and per-layer head_count_kv / feed_forward_length kind arrays,
// nemotron_h_moe's expert, norm, scale and latent keys) and the byte-level tokenizer: small
// enough for fast mutation.
std::vector<uint8_t> gguf_seed(const std::string& family = "tiny") {
  GgufWriter w;
  SyntheticMemberSpec m = find_synthetic_family(family).members.at(0);
  set_synthetic_metadata(w, m, family, 0, DType::F32);
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 17) - 8) / 8.f;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K,
                  DType::Q5_K, DType::Q6_K, DType::MXFP4}) {
    std::vector<uint8_t> raw(dtype_row_bytes(t, x.size()));
    quantize_row(t, x.data(), raw.data(), x.size());
    w.add_tensor(std::string("w.") + std::string(dtype_name(t)), {x.size(), 1}, t, raw.data(),
                 raw.size());
  }
  const std::string path = scratch("seed.gguf");
  w.write(path);
  return read_bytes(path);
}

std::vector<uint8_t> tokenizer_seed(const TokenizerSpec& s) {
  GgufWriter w;
  write_tokenizer_metadata(w, s);
  const std::string path = scratch("seed-tok.gguf");
  w.write(path);
  return read_bytes(path);
}

// A llama2.c model of dim 8, hidden 16, 1 layer, 2 heads, vocab 4, seq 8 (shared classifier) and
// its tokenizer.bin, in the entry's framing.
std::vector<uint8_t> llama2c_seed() {
  const int32_t dim = 8, hidden = 16, layers = 1, heads = 2, kv = 2, vocab = 4, seq = 8;
  std::vector<uint8_t> ckpt;
  auto put = [](std::vector<uint8_t>& v, const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    v.insert(v.end(), b, b + n);
  };
  for (int32_t h : {dim, hidden, layers, heads, kv, vocab, seq}) put(ckpt, &h, 4);
  const size_t head = size_t(dim / heads);
  const size_t floats = size_t(vocab) * dim +
                        layers * (dim + 4 * dim * dim + dim + 3 * dim * hidden) + dim +
                        size_t(seq) * head;  // embeddings, layers, final norm, freq tables
  for (size_t i = 0; i < floats; ++i) {
    const float f = float(int(i % 7) - 3) / 10.f;
    put(ckpt, &f, 4);
  }
  std::vector<uint8_t> tok;
  const int32_t max_len = 5;  // the longest token, "<unk>"
  put(tok, &max_len, 4);
  for (const char* s : {"<unk>", "<s>", "</s>", "a"}) {
    const float score = 0;
    const int32_t len = int32_t(std::strlen(s));
    put(tok, &score, 4);
    put(tok, &len, 4);
    put(tok, s, size_t(len));
  }
  std::vector<uint8_t> in;
  const uint32_t n = uint32_t(ckpt.size());
  put(in, &n, 4);
  put(in, ckpt.data(), ckpt.size());
  put(in, tok.data(), tok.size());
  return in;
}

std::vector<uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

}  // namespace

std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds(const std::string& target) {
  if (target == "gguf")
    return {{"weights-and-tokenizer.gguf", gguf_seed()},
            {"gemma3-sliding-keys.gguf", gguf_seed("tiny-gemma3")},
            {"gpt-oss-sliding-keys.gguf", gguf_seed("tiny-gpt-oss")},
            {"qwen35-hybrid-keys.gguf", gguf_seed("tiny-qwen35-moe")},
            {"qwen3next-hybrid-keys.gguf", gguf_seed("tiny-qwen3next")},
            {"nemotron-h-hybrid-keys.gguf", gguf_seed("tiny-nemotron-h")},
            {"nemotron-h-moe-hybrid-keys.gguf", gguf_seed("tiny-nemotron-h-moe")}};
  if (target == "tokenizer_metadata") {
    TokenizerSpec spm = byte_level_tokenizer_spec();
    spm.model = "llama";
    spm.scores.assign(spm.tokens.size(), 0.f);
    return {{"byte-level.gguf", tokenizer_seed(byte_level_tokenizer_spec())},
            {"byte-level-as-spm.gguf", tokenizer_seed(spm)}};
  }
  if (target == "llama2c") return {{"tiny.l2c", llama2c_seed()}};
  if (target == "plan") {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> out = {
        {"default.json", bytes_of(default_plan_json().dump())}};
    const fs::path dir = fs::path(ACCELBENCH_SOURCE_DIR) / "plans";
    if (fs::exists(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json")
          out.push_back({e.path().filename().string(), read_bytes(e.path().string())});
    return out;
  }
  throw std::logic_error("fuzz: unknown target " + target);
}

}  // namespace accel::fuzz
