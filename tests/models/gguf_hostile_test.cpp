// The GGUF reader against hostile files: hand-built corrupt headers, every truncation of a valid
// file, and seeded random byte corruption. Each must throw GgufError naming the file and field,
// never crash or read out of bounds (CI runs this under ASan/UBSan).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

#include <fcntl.h>
#include <unistd.h>

#include "models/gguf.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

// Builds GGUF bytes field by field, so tests can write exactly the corruption they mean.
class Raw {
 public:
  Raw& u8(uint8_t v) { return put(v); }
  Raw& u32(uint32_t v) { return put(v); }
  Raw& u64(uint64_t v) { return put(v); }
  Raw& str(const std::string& s) {
    u64(s.size());
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b_.insert(b_.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  Raw& kv_str(const std::string& key, const std::string& v) { return str(key).u32(8).str(v); }
  Raw& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Raw& pad(uint64_t alignment = 32) {
    while (b_.size() % alignment) b_.push_back(0);
    return *this;
  }
  Raw& zeros(size_t n) {
    b_.resize(b_.size() + n);
    return *this;
  }
  std::vector<uint8_t>& bytes() { return b_; }

 private:
  template <class T>
  Raw& put(T v) {
    const size_t n = b_.size();
    b_.resize(n + sizeof v);
    std::memcpy(b_.data() + n, &v, sizeof v);
    return *this;
  }
  std::vector<uint8_t> b_;
};

// Rewrites the file in place: truncating a file to zero first costs milliseconds on some
// filesystems, which the thousands of files below would multiply.
void save(const std::string& path, const std::vector<uint8_t>& b, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, b.data(), n, 0), ssize_t(n));
  ASSERT_EQ(::ftruncate(fd, off_t(n)), 0);
  ::close(fd);
}

std::vector<uint8_t> load(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(i), {});
}

class GgufHostile : public ::testing::Test {
 protected:
  // Opens `bytes` as a file and expects GgufError naming the file and every fragment.
  void expect_refused(std::vector<uint8_t> bytes, std::initializer_list<std::string> fragments) {
    const std::string path = dir_.file("h.gguf");
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
  void expect_refused(Raw& r, std::initializer_list<std::string> fragments) {
    expect_refused(r.bytes(), fragments);
  }
  test::TempDir dir_;
};

TEST_F(GgufHostile, MagicAndVersion) {
  Raw bad_magic;
  bad_magic.header(0, 0).bytes()[0] = 'X';
  expect_refused(bad_magic, {"magic", "XGUF", "at byte offset 0"});
  expect_refused(std::vector<uint8_t>{}, {"magic", "truncated"});
  expect_refused(std::vector<uint8_t>{'G', 'G'}, {"magic", "truncated"});
  for (uint32_t v : {0u, 1u, 4u, 0xffffffffu}) {
    Raw r;
    r.header(0, 0, v);
    expect_refused(r, {"version", std::to_string(v) + " unsupported", "at byte offset 4"});
  }
  Raw be;
  be.header(0, 0, 0x03000000u);
  expect_refused(be, {"version", "big-endian"});
  Raw v2;  // v2 shares v3's layout
  v2.header(0, 1, 2).kv_u32("a", 7);
  save(dir_.file("v2.gguf"), v2.bytes(), v2.bytes().size());
  EXPECT_EQ(GgufFile::open(dir_.file("v2.gguf")).version(), 2u);
}

TEST_F(GgufHostile, NotAFile) {
  for (const std::string& p : {dir_.file("absent.gguf"), dir_.path().string()}) {
    try {
      GgufFile::open(p);
      ADD_FAILURE() << p << " was accepted";
    } catch (const GgufError& e) {
      EXPECT_NE(std::string(e.what()).find("[gguf] " + p + ": "), std::string::npos) << e.what();
    }
  }
}

TEST_F(GgufHostile, HugeCounts) {
  Raw t;
  t.header(1ull << 62, 0);
  expect_refused(t, {"tensor_count", std::to_string(1ull << 62), "at byte offset 8"});
  Raw k;
  k.header(0, UINT64_MAX);
  expect_refused(k, {"kv_count", std::to_string(UINT64_MAX), "at byte offset 16"});
  Raw k2;  // plausible count, not enough bytes for it
  k2.header(0, 3).kv_u32("a", 1);
  expect_refused(k2, {"kv_count"});
}

TEST_F(GgufHostile, StringLengths) {
  Raw key;
  key.header(0, 1).u64(1ull << 40).u32(4).u32(0);
  expect_refused(key, {"key #0", "name", "string length 1099511627776", "at byte offset 24"});
  Raw val;
  val.header(0, 1).str("general.name").u32(8).u64(UINT64_MAX);
  expect_refused(val, {"key 'general.name'", "string length", "left in file"});
  Raw cap;  // fits in the file but exceeds the per-string cap
  cap.header(0, 1).str("k").u32(8).u64((1ull << 20) + 1).zeros((1ull << 20) + 1);
  expect_refused(cap, {"key 'k'", "limit"});
  Raw name;
  name.header(1, 0).u64(1000).zeros(40);
  expect_refused(name, {"tensor #0", "name", "string length 1000"});
  Raw empty_key;
  empty_key.header(0, 1).kv_u32("", 1);
  expect_refused(empty_key, {"key #0", "empty"});
}

TEST_F(GgufHostile, ValueTypes) {
  Raw unknown;
  unknown.header(0, 1).str("k").u32(13).u32(0);
  expect_refused(unknown, {"key 'k'", "unknown value type 13", "at byte offset 33"});
  Raw nested;
  nested.header(0, 1).str("tokenizer.ggml.merges").u32(9).u32(9).u64(1).u32(4).u64(0);
  expect_refused(nested, {"key 'tokenizer.ggml.merges'", "arrays of arrays"});
  Raw bad_elem;
  bad_elem.header(0, 1).str("k").u32(9).u32(77).u64(0);
  expect_refused(bad_elem, {"key 'k'", "unknown value type 77"});
  Raw huge_array;
  huge_array.header(0, 1).str("k").u32(9).u32(4).u64(1ull << 40);
  expect_refused(huge_array, {"key 'k'", "array count"});
  Raw long_array;  // under the cap, more than the file holds
  long_array.header(0, 1).str("k").u32(9).u32(8).u64(1000).str("a");
  expect_refused(long_array, {"key 'k'", "array of 1000 string"});
  Raw bad_elem_str;
  bad_elem_str.header(0, 1).str("tok").u32(9).u32(8).u64(2).str("a").u64(999);
  expect_refused(bad_elem_str, {"key 'tok'[1]", "string length 999"});
  Raw bad_bool;
  bad_bool.header(0, 1).str("b").u32(7).u8(2);
  expect_refused(bad_bool, {"key 'b'", "bool value 2"});
  Raw dup;
  dup.header(0, 2).kv_u32("a.b", 1).kv_str("a.b", "x");
  expect_refused(dup, {"key 'a.b'", "duplicate key", "first at byte offset 24"});
}

TEST_F(GgufHostile, Alignment) {
  for (uint32_t a : {0u, 3u, 48u, 0x80000000u}) {
    Raw r;
    r.header(0, 1).kv_u32("general.alignment", a);
    expect_refused(r, {"key 'general.alignment'", "alignment " + std::to_string(a)});
  }
  Raw s;
  s.header(0, 1).kv_str("general.alignment", "32");
  expect_refused(s, {"key 'general.alignment'", "string"});
}

TEST_F(GgufHostile, TensorInfo) {
  auto one = [](std::vector<uint64_t> dims, uint32_t type, uint64_t off = 0) {
    Raw r;
    r.header(1, 0).tensor("blk.3.attn_q.weight", dims, type, off).pad().zeros(4096);
    return r;
  };
  const std::string t = "tensor 'blk.3.attn_q.weight'";
  {
    Raw r = one({1ull << 62}, 0);
    expect_refused(r, {t, "overflows"});
  }
  {
    Raw r = one({1ull << 32, 1ull << 32}, 0);
    expect_refused(r, {t, "dims[1]", "overflows int64"});
  }
  {
    Raw r = one({1ull << 63}, 0);
    expect_refused(r, {t, "dims[0]", "exceeds"});
  }
  {
    Raw r = one({4, 0}, 0);
    expect_refused(r, {t, "dims[1] is 0"});
  }
  {
    Raw r = one({1, 1, 1, 1, 1}, 0);
    expect_refused(r, {t, "n_dims 5"});
  }
  {
    Raw r = one({}, 0);
    expect_refused(r, {t, "n_dims 0"});
  }
  {
    Raw r = one({32}, 99);
    expect_refused(r, {t, "type id 99"});
  }
  {
    Raw r = one({32}, 3);  // q4_1: a real ggml type the engine does not support
    expect_refused(r, {t, "type id 3"});
  }
  {
    Raw r = one({33, 2}, 8);
    expect_refused(r, {t, "row length", "33", "block size 32"});
  }
  {
    Raw r = one({48, 2}, 39);  // mxfp4 rows must be whole 32-element blocks
    expect_refused(r, {t, "row length", "48", "mxfp4 block size 32"});
  }
  {
    Raw r = one({256, 16}, 39);  // 16 rows x 8 blocks x 17 bytes = 2176: present
    save(dir_.file("mx.gguf"), r.bytes(), r.bytes().size());
    const GgufFile f = GgufFile::open(dir_.file("mx.gguf"));
    EXPECT_EQ(f.tensors()[0].n_bytes, 16u * 8 * 17);
  }
  {
    Raw r = one({1024, 16}, 39);  // 16 x 32 x 17 = 8704 bytes, 4096 present
    expect_refused(r, {t, "past end of file"});
  }
  {
    Raw r = one({4}, 0, 16);
    expect_refused(r, {t, "offset 16", "alignment 32"});
  }
  {
    Raw r = one({4}, 0, 1ull << 60);
    expect_refused(r, {t, "past end of file"});
  }
  {
    Raw r = one({1025}, 0);  // 4100 bytes, 4096 present
    expect_refused(r, {t, "data [", "past end of file (size"});
  }
  {
    Raw r = one({1ull << 20, 1ull << 20}, 0);  // fits int64 and u64, not the file
    expect_refused(r, {t, "past end of file"});
  }
  {
    Raw r = one({1ull << 40, 1ull << 21}, 0);  // 2^61 f32 elements: 2^63 bytes
    expect_refused(r, {t, "past end of file"});
  }
}

TEST_F(GgufHostile, TensorLayout) {
  Raw overlap;
  overlap.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).pad().zeros(128);
  expect_refused(overlap, {"tensor 'b'", "overlaps tensor 'a'"});
  Raw same;
  same.header(2, 0).tensor("a", {4}, 0, 64).tensor("b", {4}, 0, 64).pad().zeros(128);
  expect_refused(same, {"overlaps"});
  Raw dup;
  dup.header(2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).pad().zeros(64);
  expect_refused(dup, {"tensor 'w'", "duplicate tensor name"});
  Raw no_data;  // infos end right at the file end: the data section is missing
  no_data.header(1, 0).tensor("x", {4}, 0, 0);
  expect_refused(no_data, {"past end of file"});
  Raw ok;  // adjacent tensors are fine, including out of file order
  ok.header(2, 0).tensor("a", {8}, 0, 32).tensor("b", {8}, 0, 0).pad().zeros(64);
  save(dir_.file("ok.gguf"), ok.bytes(), ok.bytes().size());
  EXPECT_EQ(GgufFile::open(dir_.file("ok.gguf")).tensors().size(), 2u);
}

// A small valid file with arrays, strings and tensors of several types (mxfp4 included), whose last
// tensor ends exactly at the end of the file (so every strict prefix is invalid).
std::vector<uint8_t> small_valid_file(const std::string& path, uint64_t* data_start) {
  GgufWriter w(32);
  w.set("general.architecture", GgufValue::of_string("llama"));
  w.set("llama.block_count", GgufValue::of_u32(2));
  w.set("llama.rope.freq_base", GgufValue::of_f32(10000.f));
  w.set("tokenizer.ggml.tokens", GgufValue::of_string_array({"<s>", "</s>", "a", ""}));
  w.set("tokenizer.ggml.scores", GgufValue::of_f32_array({0.f, -1.f, 2.f, 3.f}));
  w.set("tokenizer.ggml.token_type", GgufValue::of_i32_array({3, 3, 1, 1}));
  w.set("tokenizer.ggml.add_bos_token", GgufValue::of_bool(true));
  const std::vector<uint8_t> d(1024, 0x3c);
  w.add_tensor("m", {64, 1}, DType::MXFP4, d.data(), 34);
  w.add_tensor("q", {32, 2}, DType::Q8_0, d.data(), 68);
  w.add_tensor("h", {4, 3}, DType::F16, d.data(), 24);
  w.add_tensor("w", {8, 2}, DType::F32, d.data(), 64);
  w.write(path);
  const GgufFile f = GgufFile::open(path);
  *data_start = f.file_size() - (64 + 96 + 32 + 64);
  return load(path);
}

TEST_F(GgufHostile, EveryTruncation) {
  uint64_t data_start = 0;
  const std::vector<uint8_t> full = small_valid_file(dir_.file("full.gguf"), &data_start);
  ASSERT_GT(full.size(), data_start);
  const std::string path = dir_.file("t.gguf");
  save(path, full, full.size());
  for (size_t n = full.size(); n-- > 0;) {  // shrinking a byte at a time is cheap
    ASSERT_EQ(::truncate(path.c_str(), off_t(n)), 0);
    try {
      GgufFile::open(path);
      ADD_FAILURE() << "prefix of " << n << " bytes was accepted";
    } catch (const GgufError& e) {
      const std::string msg = e.what();
      ASSERT_EQ(msg.rfind("[gguf] " + path + ": ", 0), 0u) << msg;
      ASSERT_TRUE(msg.find("truncated") != std::string::npos ||
                  msg.find("left in file") != std::string::npos ||
                  msg.find("past end of file") != std::string::npos ||
                  msg.find("cannot fit") != std::string::npos)
          << "prefix " << n << ": " << msg;
    }
  }
  save(path, full, full.size());
  EXPECT_EQ(GgufFile::open(path).tensors().size(), 4u);  // the intact file still loads
}

TEST_F(GgufHostile, RandomCorruptionNeverCrashes) {
  uint64_t data_start = 0;
  const std::vector<uint8_t> full = small_valid_file(dir_.file("full.gguf"), &data_start);
  const std::string path = dir_.file("c.gguf");
  std::mt19937_64 rng(20240601);
  int loaded = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = full;
    const int flips = 1 + int(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const size_t at = size_t(rng() % data_start);
      switch (rng() % 3) {
        case 0:
          b[at] ^= uint8_t(1u << (rng() % 8));
          break;
        case 1:
          b[at] = uint8_t(rng());
          break;
        default:
          b[at] = (rng() & 1) ? 0xff : 0x00;
          break;
      }
    }
    save(path, b, b.size());
    try {
      const GgufFile f = GgufFile::open(path);
      // Whatever loaded must be usable: touch every value and every tensor byte.
      size_t sink = 0;
      for (const auto& [k, v] : f.metadata()) sink += k.size() + v.s.size() + v.array_size();
      for (const auto& t : f.tensors()) {
        const uint8_t* p = f.tensor_data(t);
        for (uint64_t i = 0; i < t.n_bytes; ++i) sink += p[i];
      }
      EXPECT_GT(sink + 1, 0u);
      ++loaded;
    } catch (const GgufError& e) {
      ASSERT_EQ(std::string(e.what()).rfind("[gguf] " + path + ": ", 0), 0u) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  RecordProperty("loaded", loaded);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace accel
