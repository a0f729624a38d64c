// The GGUF reader and writer on k-quant tensors (q4_K, q5_K, q6_K): type ids and byte sizes as
// ggml defines them, written tensors read back bit for bit, and hostile files (row lengths that are
// not whole super-blocks, truncated data, every truncation of a small file) refused with a
// GgufError naming the file and tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/quant.h"
#include "models/gguf.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

constexpr DType kKTypes[] = {DType::Q4_K, DType::Q5_K, DType::Q6_K};

// A minimal GGUF v3 byte stream with one tensor info, built field by field.
struct Raw {
  std::vector<uint8_t> b;
  template <class T>
  Raw& put(T v) {
    const size_t n = b.size();
    b.resize(n + sizeof v);
    std::memcpy(b.data() + n, &v, sizeof v);
    return *this;
  }
  Raw& str(const std::string& s) {
    put(uint64_t(s.size()));
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& one_tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    put(uint32_t(3)).put(uint64_t(1)).put(uint64_t(0));
    str(name).put(uint32_t(dims.size()));
    for (auto d : dims) put(d);
    put(type).put(uint64_t(0));
    while (b.size() % 32) b.push_back(0);
    return *this;
  }
  Raw& zeros(size_t n) {
    b.resize(b.size() + n);
    return *this;
  }
};

void save(const std::string& path, const std::vector<uint8_t>& b, size_t n) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(n));
}

// Expects GgufError starting with "[gguf] <path>: " and containing every fragment.
void expect_refused(const std::string& path, const std::vector<uint8_t>& bytes,
                    std::initializer_list<std::string> fragments) {
  save(path, bytes, bytes.size());
  try {
    GgufFile::open(path);
    ADD_FAILURE() << "file was accepted";
  } catch (const GgufError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[gguf] " + path + ": ", 0), 0u) << msg;
    for (const auto& f : fragments)
      EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

TEST(GgufKQuant, TypeIdsAndBlockGeometryAreGgmls) {
  // ggml.h: GGML_TYPE_Q4_K = 12, Q5_K = 13, Q6_K = 14; QK_K = 256; sizeof(block_q4_K) = 144,
  // block_q5_K = 176, block_q6_K = 210.
  EXPECT_EQ(dtype_from_ggml(12), DType::Q4_K);
  EXPECT_EQ(dtype_from_ggml(13), DType::Q5_K);
  EXPECT_EQ(dtype_from_ggml(14), DType::Q6_K);
  EXPECT_FALSE(dtype_from_ggml(10).has_value());  // q2_K: not supported
  EXPECT_FALSE(dtype_from_ggml(11).has_value());  // q3_K
  EXPECT_FALSE(dtype_from_ggml(15).has_value());  // q8_K (activations only in ggml)
  for (DType t : kKTypes) EXPECT_EQ(dtype_block_elems(t), 256u);
  EXPECT_EQ(dtype_block_bytes(DType::Q4_K), 144u);
  EXPECT_EQ(dtype_block_bytes(DType::Q5_K), 176u);
  EXPECT_EQ(dtype_block_bytes(DType::Q6_K), 210u);
  EXPECT_EQ(dtype_from_name("q4_k"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("q6_k"), DType::Q6_K);
  EXPECT_EQ(llama_file_type(DType::Q4_K), 14u);  // LLAMA_FTYPE_MOSTLY_Q4_K_S
  EXPECT_EQ(llama_file_type(DType::Q6_K), 18u);  // LLAMA_FTYPE_MOSTLY_Q6_K
}

TEST(GgufKQuant, WrittenTensorsReadBackBitForBit) {
  test::TempDir dir;
  for (DType t : kKTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const size_t rows = 3, cols = 512;
    const std::vector<float> x = test::random_normal(rows * cols, 9, 0.02f);
    std::vector<uint8_t> q(dtype_row_bytes(t, cols) * rows);
    quantize_row(t, x.data(), q.data(), rows * cols);
    GgufWriter w;
    w.set("general.architecture", GgufValue::of_string("llama"));
    w.add_tensor("w", {cols, rows}, t, q.data(), q.size());
    const std::string path = dir.file(std::string(dtype_name(t)) + ".gguf");
    w.write(path);
    const GgufFile f = GgufFile::open(path);
    const GgufTensorInfo& ti = *f.find_tensor("w");
    EXPECT_EQ(ti.type, t);
    ASSERT_EQ(ti.n_bytes, q.size());
    EXPECT_EQ(std::memcmp(f.tensor_data(ti), q.data(), q.size()), 0);
  }
}

TEST(GgufKQuant, HostileTensorsRefusedNamingTensor) {
  test::TempDir dir;
  const std::string path = dir.file("h.gguf");
  for (DType t : kKTypes) {
    const uint32_t id = uint32_t(t);
    const std::string name = "blk.0.ffn_down.weight";
    const std::string tn = "tensor '" + name + "'";
    SCOPED_TRACE(std::string(dtype_name(t)));
    {  // row of 288 = 9 q8_0 blocks but not a whole super-block
      Raw r;
      r.one_tensor(name, {288, 2}, id).zeros(4096);
      expect_refused(path, r.b, {tn, "row length", "288", "block size 256"});
    }
    {  // 4 rows of 256 need 4 blocks; the data section holds one byte less
      Raw r;
      r.one_tensor(name, {256, 4}, id).zeros(4 * dtype_block_bytes(t) - 1);
      expect_refused(path, r.b, {tn, "past end of file"});
    }
    {  // block count x block bytes overflowing 64 bits
      Raw r;
      r.one_tensor(name, {256ull << 40, 1ull << 14}, id).zeros(64);
      expect_refused(path, r.b, {tn});
    }
    {  // exactly enough data: accepted, and the byte size is the ggml one
      Raw r;
      r.one_tensor(name, {256, 4}, id).zeros(4 * dtype_block_bytes(t));
      save(path, r.b, r.b.size());
      const GgufFile f = GgufFile::open(path);
      EXPECT_EQ(f.find_tensor(name)->n_bytes, 4 * dtype_block_bytes(t));
    }
  }
}

// Every strict prefix of a file whose last tensor is a k-quant tensor ending at the end of the
// file is refused with a GgufError (never a crash or an out-of-bounds read; run under ASan).
TEST(GgufKQuant, EveryTruncationRefused) {
  test::TempDir dir;
  for (DType t : kKTypes) {
    const std::string path = dir.file("t.gguf");
    Raw r;
    r.one_tensor("output.weight", {256, 2}, uint32_t(t)).zeros(2 * dtype_block_bytes(t));
    save(path, r.b, r.b.size());
    ASSERT_NO_THROW(GgufFile::open(path));
    for (size_t n = 0; n < r.b.size(); ++n) {
      save(path, r.b, n);
      EXPECT_THROW(GgufFile::open(path), GgufError) << dtype_name(t) << " prefix " << n;
    }
  }
}

}  // namespace
}  // namespace accel
