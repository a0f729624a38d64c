// import_llama2c (see llama2c_import.h): validates the checkpoint header and exact file size and
// the tokenizer file's bounds, then maps llama2.c tensors to llama.cpp names. It must not
// permute weights: llama2.c rotates adjacent pairs, which is already llama.cpp's `llama` layout.
#include "models/llama2c_import.h"

#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "models/gguf.h"
#include "models/tokenizer.h"
#include "models/tokenizer_metadata.h"

namespace accel {

static_assert(std::endian::native == std::endian::little, "llama2.c files are little-endian");

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw Llama2cError("[llama2c] " + file + ": " + what);
}

std::vector<uint8_t> read_all(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read: " + ec.message());
  if (size > max_bytes)
    fail(path, "file is " + std::to_string(size) + " bytes, more than the limit of " +
                   std::to_string(max_bytes));
  std::vector<uint8_t> buf(size);
  std::ifstream f(path, std::ios::binary);
  if (!f || !f.read(reinterpret_cast<char*>(buf.data()), std::streamsize(size)))
    fail(path, "cannot read " + std::to_string(size) + " bytes");
  return buf;
}

struct Header {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

// Bounds far above any llama2.c model (Llama 2 70B: dim 8192, hidden 28672, 80 layers) yet small
// enough that every size below fits in 64 bits without overflow.
void check_header(const std::string& file, const Header& h) {
  const auto field = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      fail(file, std::string("header field ") + name + " = " + std::to_string(v) + " is outside [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  field("dim", h.dim, 1, 1 << 16);
  field("hidden_dim", h.hidden_dim, 1, 1 << 18);
  field("n_layers", h.n_layers, 1, 1 << 10);
  field("n_heads", h.n_heads, 1, 1 << 10);
  field("n_kv_heads", h.n_kv_heads, 1, h.n_heads);
  field("vocab_size", h.vocab_size < 0 ? -int64_t(h.vocab_size) : h.vocab_size, 1,
        int64_t(kMaxVocabSize));
  field("seq_len", h.seq_len, 1, 1 << 20);
  if (h.dim % h.n_heads != 0)
    fail(file, "header field n_heads = " + std::to_string(h.n_heads) +
                   " does not divide dim = " + std::to_string(h.dim));
  if (h.n_heads % h.n_kv_heads != 0)
    fail(file, "header field n_kv_heads = " + std::to_string(h.n_kv_heads) +
                   " does not divide n_heads = " + std::to_string(h.n_heads));
  if ((h.dim / h.n_heads) % 2 != 0)
    fail(file, "header field n_heads = " + std::to_string(h.n_heads) + " gives an odd head size " +
                   std::to_string(h.dim / h.n_heads) + " (RoPE rotates pairs)");
}

struct VocabEntry {
  std::string text;
  float score;
};

std::vector<VocabEntry> read_tokenizer(const std::string& file, size_t n_vocab) {
  // 4 + n * (8 + kMaxTokenBytes) bounds any valid file.
  const std::vector<uint8_t> buf = read_all(file, 4 + uint64_t(n_vocab) * (8 + kMaxTokenBytes));
  size_t pos = 0;
  const auto need = [&](size_t n, const std::string& what) {
    if (buf.size() - pos < n)
      fail(file, what + ": needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos) +
                     " but the file ends at " + std::to_string(buf.size()));
  };
  const auto i32 = [&] {
    int32_t v;
    std::memcpy(&v, buf.data() + pos, 4);
    pos += 4;
    return v;
  };
  need(4, "max_token_length");
  const int32_t max_len = i32();
  if (max_len < 1 || size_t(max_len) > kMaxTokenBytes)
    fail(file, "max_token_length = " + std::to_string(max_len) + " is outside [1, " +
                   std::to_string(kMaxTokenBytes) + "]");
  std::vector<VocabEntry> v(n_vocab);
  for (size_t i = 0; i < n_vocab; ++i) {
    const std::string tok = "token " + std::to_string(i);
    need(8, tok + " score and length");
    std::memcpy(&v[i].score, buf.data() + pos, 4);
    pos += 4;
    if (!std::isfinite(v[i].score)) fail(file, tok + ": score is not finite");
    const int32_t len = i32();
    if (len < 0 || len > max_len)
      fail(file, tok + ": length " + std::to_string(len) +
                     " is outside [0, max_token_length = " + std::to_string(max_len) + "]");
    need(size_t(len), tok + " bytes");
    v[i].text.assign(reinterpret_cast<const char*>(buf.data() + pos), size_t(len));
    pos += size_t(len);
  }
  if (pos != buf.size())
    fail(file, std::to_string(buf.size() - pos) + " bytes follow the last of " +
                   std::to_string(n_vocab) + " tokens (vocab_size from the checkpoint)");
  return v;
}

bool is_byte_token(const std::string& s) {
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  return s.size() == 6 && s.compare(0, 3, "<0x") == 0 && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

// The llama tokenizer spec of a llama2.c vocabulary, as the converter builds it: ids 0/1/2 are
// <unk>/<s>/</s> whatever their stored text (llama2.c stores "\n<s>\n"), spaces go back to U+2581.
TokenizerSpec tokenizer_spec(const std::vector<VocabEntry>& vocab) {
  TokenizerSpec s;
  s.model = "llama";
  s.pre = "";  // no pre-tokenizer for SentencePiece; nothing written
  for (size_t i = 0; i < vocab.size(); ++i) {
    std::string text = vocab[i].text;
    TokenType type = TokenType::Normal;
    if (i == 0) {
      text = "<unk>", type = TokenType::Unknown;
    } else if (i == 1) {
      text = "<s>", type = TokenType::Control;
    } else if (i == 2) {
      text = "</s>", type = TokenType::Control;
    } else if (text.empty()) {
      type = TokenType::Control;  // as the converter: an empty piece cannot be produced by text
    } else if (is_byte_token(text)) {
      type = TokenType::Byte;
    }
    std::string escaped;
    for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
    s.tokens.push_back(std::move(escaped));
    s.scores.push_back(vocab[i].score);
    s.types.push_back(int32_t(type));
  }
  s.unk = vocab.size() > 0 ? 0 : -1;
  s.bos = vocab.size() > 1 ? 1 : -1;
  s.eos = vocab.size() > 2 ? 2 : -1;
  s.add_bos = s.bos >= 0;
  s.add_eos = false;
  s.add_space_prefix = true;
  return s;
}

}  // namespace

void import_llama2c(const std::string& checkpoint, const std::string& tokenizer,
                    const std::string& out_gguf) {
  std::ifstream f(checkpoint, std::ios::binary);
  if (!f) fail(checkpoint, "cannot open");
  Header h;
  int32_t raw[7];
  if (!f.read(reinterpret_cast<char*>(raw), sizeof raw))
    fail(checkpoint, "shorter than the 28-byte header");
  h = {raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6]};
  check_header(checkpoint, h);

  const bool shared = h.vocab_size > 0;
  const uint64_t D = uint64_t(h.dim), F = uint64_t(h.hidden_dim), L = uint64_t(h.n_layers),
                 V = uint64_t(shared ? h.vocab_size : -int64_t(h.vocab_size)),
                 hd = D / uint64_t(h.n_heads), KV = hd * uint64_t(h.n_kv_heads),
                 S = uint64_t(h.seq_len);
  // Floats after the header, in file order (llama2.c run.c memory_map_weights).
  const uint64_t n_floats = V * D + L * D + L * D * D + 2 * L * D * KV + L * D * D + L * D +
                            3 * L * D * F + D + 2 * S * hd / 2 + (shared ? 0 : V * D);
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(checkpoint, ec);
  if (ec) fail(checkpoint, "cannot stat: " + ec.message());
  if (size != 28 + 4 * n_floats)
    fail(checkpoint, "file is " + std::to_string(size) + " bytes but the header (dim " +
                         std::to_string(D) + ", hidden_dim " + std::to_string(F) + ", n_layers " +
                         std::to_string(L) + ", n_heads " + std::to_string(h.n_heads) +
                         ", n_kv_heads " + std::to_string(h.n_kv_heads) + ", vocab_size " +
                         std::to_string(h.vocab_size) + ", seq_len " + std::to_string(S) +
                         ") implies " + std::to_string(28 + 4 * n_floats));

  const std::vector<VocabEntry> vocab = read_tokenizer(tokenizer, size_t(V));
  TokenizerSpec tok = tokenizer_spec(vocab);
  try {
    tok.validate(tokenizer);
  } catch (const TokenizerError& e) {
    throw Llama2cError(std::string("[llama2c] ") + e.what());
  }

  // (rows, cols) row-major in llama2.c = ggml dims {cols, rows}; per layer for stacked ones.
  const auto read_floats = [&](uint64_t n, const char* what) {
    std::vector<float> v(n);
    if (!f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4)))
      fail(checkpoint, std::string("short read in ") + what);
    return v;
  };
  const std::vector<float> embd = read_floats(V * D, "token_embedding_table");  // (V, D)
  const std::vector<float> rms_att = read_floats(L * D, "rms_att_weight");      // (L, D)
  const std::vector<float> wq = read_floats(L * D * D, "wq");                   // (L, D, D)
  const std::vector<float> wk = read_floats(L * KV * D, "wk");                  // (L, KV, D)
  const std::vector<float> wv = read_floats(L * KV * D, "wv");                  // (L, KV, D)
  const std::vector<float> wo = read_floats(L * D * D, "wo");                   // (L, D, D)
  const std::vector<float> rms_ffn = read_floats(L * D, "rms_ffn_weight");      // (L, D)
  const std::vector<float> w1 = read_floats(L * F * D, "w1");                   // (L, F, D)
  const std::vector<float> w2 = read_floats(L * D * F, "w2");                   // (L, D, F)
  const std::vector<float> w3 = read_floats(L * F * D, "w3");                   // (L, F, D)
  const std::vector<float> rms_final = read_floats(D, "rms_final_weight");      // (D)
  read_floats(S * hd, "freq_cis_real/imag");  // unused: RoPE is computed, not tabulated
  const std::vector<float> wcls = shared ? embd : read_floats(V * D, "wcls");  // (V, D)

  GgufWriter w;
  w.set("general.architecture", GgufValue::of_string("llama"));
  w.set("general.name", GgufValue::of_string(std::filesystem::path(checkpoint).stem().string()));
  w.set("general.file_type", GgufValue::of_u32(llama_file_type(DType::F32)));
  w.set("llama.context_length", GgufValue::of_u32(uint32_t(S)));
  w.set("llama.embedding_length", GgufValue::of_u32(uint32_t(D)));
  w.set("llama.block_count", GgufValue::of_u32(uint32_t(L)));
  w.set("llama.feed_forward_length", GgufValue::of_u32(uint32_t(F)));
  w.set("llama.attention.head_count", GgufValue::of_u32(uint32_t(h.n_heads)));
  w.set("llama.attention.head_count_kv", GgufValue::of_u32(uint32_t(h.n_kv_heads)));
  w.set("llama.attention.layer_norm_rms_epsilon", GgufValue::of_f32(1e-5f));
  w.set("llama.rope.dimension_count", GgufValue::of_u32(uint32_t(hd)));
  w.set("llama.rope.freq_base", GgufValue::of_f32(10000.f));
  write_tokenizer_metadata(w, tok);

  const auto add = [&](const std::string& name, const std::vector<float>& src, uint64_t offset,
                       std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    w.add_tensor(name, std::move(dims), DType::F32, src.data() + offset, n * 4);
  };
  // Same order as llama.cpp's converter writes them.
  add("token_embd.weight", embd, 0, {D, V});
  add("output_norm.weight", rms_final, 0, {D});
  // The converter writes output.weight for a shared classifier too (a copy of the embedding);
  // so do we, which keeps the file loadable by readers that do not tie weights.
  add("output.weight", wcls, 0, {D, V});
  for (uint64_t l = 0; l < L; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_q.weight", wq, l * D * D, {D, D});
    add(p + "attn_k.weight", wk, l * KV * D, {D, KV});
    add(p + "attn_v.weight", wv, l * KV * D, {D, KV});
    add(p + "attn_output.weight", wo, l * D * D, {D, D});
    add(p + "attn_norm.weight", rms_att, l * D, {D});
    add(p + "ffn_gate.weight", w1, l * F * D, {D, F});
    add(p + "ffn_down.weight", w2, l * D * F, {F, D});
    add(p + "ffn_up.weight", w3, l * F * D, {D, F});
    add(p + "ffn_norm.weight", rms_ffn, l * D, {D});
  }
  w.write(out_gguf);
}

}  // namespace accel
