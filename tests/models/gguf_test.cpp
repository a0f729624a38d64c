// GGUF reader and writer on well-formed files: a round trip of every metadata type and tensor type,
// typed getters, writer validation and failure atomicity, moves, and the real files in shared/data.
// Hostile files are in gguf_hostile_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "models/gguf.h"
#include "tests/support/test_support.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

GgufValue scalar_u(GgufType t, uint64_t u) {
  GgufValue v;
  v.type = t;
  v.u = u;
  return v;
}
GgufValue scalar_i(GgufType t, int64_t i) {
  GgufValue v;
  v.type = t;
  v.i = i;
  return v;
}
GgufValue scalar_f(GgufType t, double f) {
  GgufValue v;
  v.type = t;
  v.f = f;
  return v;
}
GgufValue array_of(GgufType elem) {
  GgufValue v;
  v.type = GgufType::ARRAY;
  v.elem = elem;
  return v;
}

// Values compare by the fields their type uses; floats bit for bit (NaN included).
::testing::AssertionResult same_value(const GgufValue& a, const GgufValue& b) {
  auto fail = [&](const std::string& what) { return ::testing::AssertionFailure() << what; };
  if (a.type != b.type)
    return fail(std::string("type ") + gguf_type_name(a.type) + " vs " + gguf_type_name(b.type));
  auto same_f = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  switch (a.type) {
    case GgufType::STRING:
      if (a.s != b.s) return fail("string '" + a.s + "' vs '" + b.s + "'");
      break;
    case GgufType::FLOAT32:
    case GgufType::FLOAT64:
      if (!same_f(a.f, b.f)) return fail(std::to_string(a.f) + " vs " + std::to_string(b.f));
      break;
    case GgufType::INT8:
    case GgufType::INT16:
    case GgufType::INT32:
    case GgufType::INT64:
      if (a.i != b.i) return fail(std::to_string(a.i) + " vs " + std::to_string(b.i));
      break;
    case GgufType::ARRAY:
      if (a.elem != b.elem) return fail("element type differs");
      if (a.array_size() != b.array_size()) return fail("array size differs");
      if (a.arr_u != b.arr_u || a.arr_i != b.arr_i || a.arr_s != b.arr_s)
        return fail("array elements differ");
      for (size_t k = 0; k < a.arr_f.size(); ++k)
        if (!same_f(a.arr_f[k], b.arr_f[k])) return fail("float element " + std::to_string(k));
      break;
    default:
      if (a.u != b.u) return fail(std::to_string(a.u) + " vs " + std::to_string(b.u));
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::pair<std::string, GgufValue>> every_type_metadata() {
  std::vector<std::pair<std::string, GgufValue>> kv;
  kv.emplace_back("t.u8", scalar_u(GgufType::UINT8, 250));
  kv.emplace_back("t.i8", scalar_i(GgufType::INT8, -128));
  kv.emplace_back("t.u16", scalar_u(GgufType::UINT16, 65535));
  kv.emplace_back("t.i16", scalar_i(GgufType::INT16, -32768));
  kv.emplace_back("t.u32", GgufValue::of_u32(4000000000u));
  kv.emplace_back("t.i32", GgufValue::of_i32(-2000000000));
  kv.emplace_back("t.f32", GgufValue::of_f32(0.1f));
  kv.emplace_back("t.f32_nan", GgufValue::of_f32(std::nanf("")));
  kv.emplace_back("t.bool_t", GgufValue::of_bool(true));
  kv.emplace_back("t.bool_f", GgufValue::of_bool(false));
  kv.emplace_back("t.str", GgufValue::of_string("héllo ▁world"));
  kv.emplace_back("t.str_empty", GgufValue::of_string(""));
  kv.emplace_back("t.str_nul", GgufValue::of_string(std::string("a\0b", 3)));
  kv.emplace_back("t.u64", GgufValue::of_u64(UINT64_MAX));
  kv.emplace_back("t.i64", scalar_i(GgufType::INT64, INT64_MIN));
  kv.emplace_back("t.f64", scalar_f(GgufType::FLOAT64, 1.0 / 3.0));

  auto a_u8 = array_of(GgufType::UINT8);
  a_u8.arr_u = {0, 1, 255};
  auto a_i8 = array_of(GgufType::INT8);
  a_i8.arr_i = {-128, 0, 127};
  auto a_u16 = array_of(GgufType::UINT16);
  a_u16.arr_u = {65535, 7};
  auto a_i16 = array_of(GgufType::INT16);
  a_i16.arr_i = {-32768, 32767};
  auto a_u32 = array_of(GgufType::UINT32);
  a_u32.arr_u = {0, 4294967295u};
  auto a_u64 = array_of(GgufType::UINT64);
  a_u64.arr_u = {UINT64_MAX, 1};
  auto a_i64 = array_of(GgufType::INT64);
  a_i64.arr_i = {INT64_MIN, INT64_MAX};
  auto a_f64 = array_of(GgufType::FLOAT64);
  a_f64.arr_f = {-0.0, 1e300, 2.5};
  auto a_bool = array_of(GgufType::BOOL);
  a_bool.arr_u = {1, 0, 1};
  kv.emplace_back("a.u8", a_u8);
  kv.emplace_back("a.i8", a_i8);
  kv.emplace_back("a.u16", a_u16);
  kv.emplace_back("a.i16", a_i16);
  kv.emplace_back("a.u32", a_u32);
  kv.emplace_back("a.i32", GgufValue::of_i32_array({-1, 0, 1, INT32_MAX}));
  kv.emplace_back("a.f32", GgufValue::of_f32_array({0.5f, -1e-30f, 3.25f}));
  kv.emplace_back("a.bool", a_bool);
  kv.emplace_back("a.str", GgufValue::of_string_array({"a", "", "<0x0A>", "▁the"}));
  kv.emplace_back("a.u64", a_u64);
  kv.emplace_back("a.i64", a_i64);
  kv.emplace_back("a.f64", a_f64);
  kv.emplace_back("a.empty_str", GgufValue::of_string_array({}));
  kv.emplace_back("a.empty_f32", GgufValue::of_f32_array({}));
  kv.emplace_back("a.empty_u8", array_of(GgufType::UINT8));
  kv.emplace_back("a.empty_i64", array_of(GgufType::INT64));
  return kv;
}

struct TensorCase {
  std::string name;
  std::vector<uint64_t> dims;
  DType type;
};

// Every supported type, 1 to 4 dims, sizes that are and are not multiples of the alignment.
std::vector<TensorCase> every_type_tensors() {
  return {
      {"f32.vec", {7}, DType::F32},
      {"f16.mat", {3, 5}, DType::F16},
      {"bf16.cube", {2, 3, 4}, DType::BF16},
      {"q8_0.mat", {64, 3}, DType::Q8_0},
      {"q4_0.4d", {32, 2, 2, 2}, DType::Q4_0},
      {"f32.ones", {1, 1, 1, 1}, DType::F32},
      {"q4_0.row", {96}, DType::Q4_0},
  };
}

size_t bytes_of(const TensorCase& t) {
  uint64_t n = 1;
  for (auto d : t.dims) n *= d;
  return dtype_row_bytes(t.type, t.dims[0]) * (n / t.dims[0]);
}

std::vector<uint8_t> seeded_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

TEST(GgufRoundTrip, EveryMetadataAndTensorType) {
  test::TempDir dir;
  const std::string path = dir.file("all.gguf");
  const uint64_t alignment = 64;
  const auto kv = every_type_metadata();
  const auto tcs = every_type_tensors();
  std::vector<std::vector<uint8_t>> data;
  GgufWriter w(alignment);
  for (const auto& [k, v] : kv) w.set(k, v);
  for (size_t i = 0; i < tcs.size(); ++i) {
    data.push_back(seeded_bytes(bytes_of(tcs[i]), 100 + i));
    w.add_tensor(tcs[i].name, tcs[i].dims, tcs[i].type, data.back().data(), data.back().size());
  }
  w.write(path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.path(), path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.file_size(), fs::file_size(path));
  EXPECT_EQ(f.file_size() % alignment, 0u);

  // general.alignment comes first because the alignment is not the default.
  ASSERT_EQ(f.metadata().size(), kv.size() + 1);
  EXPECT_EQ(f.metadata()[0].first, "general.alignment");
  EXPECT_EQ(f.metadata()[0].second.type, GgufType::UINT32);
  EXPECT_EQ(f.get_uint("general.alignment"), alignment);
  for (size_t i = 0; i < kv.size(); ++i) {
    SCOPED_TRACE(kv[i].first);
    EXPECT_EQ(f.metadata()[i + 1].first, kv[i].first);
    EXPECT_TRUE(same_value(f.metadata()[i + 1].second, kv[i].second));
    ASSERT_NE(f.find(kv[i].first), nullptr);
    EXPECT_EQ(f.find(kv[i].first), &f.metadata()[i + 1].second);
  }
  EXPECT_EQ(f.find("no.such.key"), nullptr);
  EXPECT_FALSE(f.has("no.such.key"));

  ASSERT_EQ(f.tensors().size(), tcs.size());
  const uint8_t* prev_end = nullptr;
  for (size_t i = 0; i < tcs.size(); ++i) {
    SCOPED_TRACE(tcs[i].name);
    const GgufTensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, tcs[i].name);
    EXPECT_EQ(t.dims, tcs[i].dims);
    EXPECT_EQ(t.type, tcs[i].type);
    EXPECT_EQ(t.n_bytes, data[i].size());
    uint64_t n = 1;
    for (auto d : t.dims) n *= d;
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ(f.find_tensor(t.name), &t);
    const uint8_t* p = f.tensor_data(t);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);  // the mapping is page-aligned
    if (prev_end) {
      EXPECT_GE(p, prev_end);
    }
    prev_end = p + t.n_bytes;
    EXPECT_EQ(std::memcmp(p, data[i].data(), data[i].size()), 0);
    // Padding after a tensor is zeros.
    const uint64_t padded = (t.n_bytes + alignment - 1) / alignment * alignment;
    for (uint64_t k = t.n_bytes; k < padded; ++k) ASSERT_EQ(p[k], 0) << "padding byte " << k;
  }
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(GgufRoundTrip, DefaultAlignmentWritesNoKeyAndMetadataOnlyFiles) {
  test::TempDir dir;
  GgufWriter w;
  w.set("general.alignment", GgufValue::of_u32(128));  // ignored: the writer's alignment wins
  w.set("general.architecture", GgufValue::of_string("llama"));
  const std::vector<float> x(5, 1.5f);
  w.add_tensor("x", {5}, DType::F32, x.data(), x.size() * 4);
  w.write(dir.file("a.gguf"));
  const GgufFile f = GgufFile::open(dir.file("a.gguf"));
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_FALSE(f.has("general.alignment"));
  EXPECT_EQ(f.metadata().size(), 1u);
  EXPECT_EQ(f.file_size() % 32, 0u);

  GgufWriter empty;
  empty.write(dir.file("empty.gguf"));
  const GgufFile e = GgufFile::open(dir.file("empty.gguf"));
  EXPECT_EQ(e.file_size(), 24u);  // header only
  EXPECT_TRUE(e.metadata().empty());
  EXPECT_TRUE(e.tensors().empty());
}

TEST(GgufRoundTrip, AlignmentOneAndLarge) {
  test::TempDir dir;
  for (uint64_t a : {1ull, 2ull, 4096ull}) {
    SCOPED_TRACE(a);
    GgufWriter w(a);
    const auto b1 = seeded_bytes(6, 1), b2 = seeded_bytes(34, 2);
    w.add_tensor("h", {3}, DType::F16, b1.data(), b1.size());
    w.add_tensor("q", {32}, DType::Q8_0, b2.data(), b2.size());
    w.write(dir.file("a.gguf"));
    const GgufFile f = GgufFile::open(dir.file("a.gguf"));
    EXPECT_EQ(f.alignment(), a);
    EXPECT_EQ(f.file_size() % a, 0u);
    EXPECT_EQ(std::memcmp(f.tensor_data(f.tensors()[0]), b1.data(), b1.size()), 0);
    EXPECT_EQ(std::memcmp(f.tensor_data(f.tensors()[1]), b2.data(), b2.size()), 0);
  }
}

TEST(GgufFileMove, TensorPointersSurviveMoves) {
  test::TempDir dir;
  const std::vector<float> x = {1, 2, 3, 4};
  GgufWriter w;
  w.add_tensor("x", {4}, DType::F32, x.data(), 16);
  w.write(dir.file("m.gguf"));
  GgufFile a = GgufFile::open(dir.file("m.gguf"));
  const uint8_t* p = a.tensor_data(a.tensors()[0]);
  GgufFile b(std::move(a));
  EXPECT_EQ(b.tensor_data(b.tensors()[0]), p);
  GgufFile c = GgufFile::open(dir.file("m.gguf"));
  c = std::move(b);
  EXPECT_EQ(c.tensor_data(*c.find_tensor("x")), p);
  float y[4];
  std::memcpy(y, p, 16);
  EXPECT_EQ(y[3], 4.f);
}

// Expects `fn` to throw GgufError whose message contains every fragment.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no GgufError thrown";
  } catch (const GgufError& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "'" << frag << "' not in: " << msg;
  }
}

TEST(GgufGetters, TypedAccessAndErrorsNameFileAndKey) {
  test::TempDir dir;
  const std::string path = dir.file("g.gguf");
  GgufWriter w;
  for (const auto& [k, v] : every_type_metadata()) w.set(k, v);
  w.write(path);
  const GgufFile f = GgufFile::open(path);

  EXPECT_EQ(f.get_uint("t.u8"), 250u);
  EXPECT_EQ(f.get_uint("t.u16"), 65535u);
  EXPECT_EQ(f.get_uint("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_uint("t.u64"), UINT64_MAX);
  EXPECT_EQ(f.get_int("t.i8"), -128);
  EXPECT_EQ(f.get_int("t.u32"), 4000000000);
  EXPECT_EQ(f.get_int("t.i64"), INT64_MIN);
  EXPECT_EQ(f.get_float("t.f32"), double(0.1f));
  EXPECT_EQ(f.get_float("t.f64"), 1.0 / 3.0);
  EXPECT_TRUE(f.get_bool("t.bool_t"));
  EXPECT_FALSE(f.get_bool("t.bool_f"));
  EXPECT_EQ(f.get_string("t.str"), "héllo ▁world");
  EXPECT_EQ(f.get_string_array("a.str").size(), 4u);
  EXPECT_EQ(f.get_string_array("a.str")[3], "▁the");
  EXPECT_EQ(f.get_float_array("a.f32"), (std::vector<double>{0.5, double(-1e-30f), 3.25}));
  EXPECT_EQ(f.get_float_array("a.f64").size(), 3u);
  EXPECT_EQ(f.get_int_array("a.i32"), (std::vector<int64_t>{-1, 0, 1, INT32_MAX}));
  EXPECT_EQ(f.get_int_array("a.u16"), (std::vector<int64_t>{65535, 7}));
  EXPECT_TRUE(f.get_int_array("a.empty_u8").empty());
  EXPECT_EQ(f.get_uint_opt("t.u8"), 250u);
  EXPECT_EQ(f.get_uint_opt("missing"), std::nullopt);
  EXPECT_EQ(f.get_float_opt("missing"), std::nullopt);
  EXPECT_EQ(f.get_string_opt("missing"), std::nullopt);
  EXPECT_EQ(f.get_string_opt("t.str_empty"), std::string());
  EXPECT_EQ(f.find("a.str")->array_size(), 4u);
  EXPECT_EQ(f.find("t.u8")->array_size(), 0u);

  const std::string where = "[gguf] " + path + ": key ";
  expect_error([&] { f.get_uint("missing.key"); }, {where + "'missing.key'", "missing"});
  expect_error([&] { f.get_uint("t.i8"); }, {where + "'t.i8'", "negative"});
  expect_error([&] { f.get_uint("t.str"); }, {where + "'t.str'", "string"});
  expect_error([&] { f.get_uint("t.bool_t"); }, {where + "'t.bool_t'", "bool"});
  expect_error([&] { f.get_int("t.u64"); }, {where + "'t.u64'", "int64"});
  expect_error([&] { f.get_float("t.u32"); }, {where + "'t.u32'", "uint32"});
  expect_error([&] { f.get_bool("t.u8"); }, {where + "'t.u8'"});
  expect_error([&] { f.get_string("t.f32"); }, {where + "'t.f32'", "float32"});
  expect_error([&] { f.get_string_array("a.f32"); }, {where + "'a.f32'", "array of float32"});
  expect_error([&] { f.get_float_array("a.i32"); }, {where + "'a.i32'"});
  expect_error([&] { f.get_int_array("a.str"); }, {where + "'a.str'"});
  expect_error([&] { f.get_int_array("a.u64"); }, {where + "'a.u64'", "element 0"});
  // Present with the wrong type is an error for the optional getters too.
  expect_error([&] { f.get_float_opt("t.str"); }, {where + "'t.str'"});
  expect_error([&] { f.get_string_opt("t.u8"); }, {where + "'t.u8'"});
  expect_error([&] { f.get_uint_opt("t.f64"); }, {where + "'t.f64'"});
}

TEST(GgufWriter, SetReplacesInPlace) {
  test::TempDir dir;
  GgufWriter w;
  w.set("a", GgufValue::of_u32(1));
  w.set("b", GgufValue::of_u32(2));
  w.set("a", GgufValue::of_string("x"));
  w.write(dir.file("s.gguf"));
  const GgufFile f = GgufFile::open(dir.file("s.gguf"));
  ASSERT_EQ(f.metadata().size(), 2u);
  EXPECT_EQ(f.metadata()[0].first, "a");
  EXPECT_EQ(f.get_string("a"), "x");
}

TEST(GgufWriter, RefusesWhatTheReaderWouldRefuse) {
  const std::vector<uint8_t> buf(4096);
  expect_error([] { GgufWriter w(48); }, {"alignment 48"});
  expect_error([] { GgufWriter w(0); }, {"alignment 0"});
  GgufWriter w;
  w.add_tensor("ok", {4}, DType::F32, buf.data(), 16);
  expect_error([&] { w.add_tensor("ok", {4}, DType::F32, buf.data(), 16); },
               {"tensor 'ok'", "duplicate"});
  expect_error([&] { w.add_tensor("n", {4}, DType::F32, buf.data(), 12); },
               {"tensor 'n'", "12 bytes", "16"});
  expect_error(
      [&] {
        w.add_tensor("z", {4, 0}, DType::F32, buf.data(), 0);
      },
      {"tensor 'z'", "zero"});
  expect_error(
      [&] {
        w.add_tensor("d", {1, 1, 1, 1, 1}, DType::F32, buf.data(), 4);
      },
      {"tensor 'd'", "5 dims"});
  expect_error([&] { w.add_tensor("d", {}, DType::F32, buf.data(), 0); }, {"tensor 'd'"});
  expect_error([&] { w.add_tensor("q", {33}, DType::Q8_0, buf.data(), 34); },
               {"tensor 'q'", "block size 32"});
  expect_error(
      [&] {
        w.add_tensor("o", {1ull << 40, 1ull << 40}, DType::F32, buf.data(), 0);
      },
      {"tensor 'o'", "overflow"});

  test::TempDir dir;
  GgufWriter bad;
  bad.set("k", scalar_u(GgufType::UINT8, 300));
  expect_error([&] { bad.write(dir.file("bad.gguf")); }, {"key 'k'", "300", "uint8"});
  GgufValue mixed = array_of(GgufType::UINT8);
  mixed.arr_i = {1};
  GgufWriter bad2;
  bad2.set("m", mixed);
  expect_error([&] { bad2.write(dir.file("bad.gguf")); }, {"key 'm'"});
  GgufValue nested = array_of(GgufType::ARRAY);
  GgufWriter bad3;
  bad3.set("n", nested);
  expect_error([&] { bad3.write(dir.file("bad.gguf")); }, {"key 'n'"});
  EXPECT_FALSE(fs::exists(dir.file("bad.gguf")));
  EXPECT_FALSE(fs::exists(dir.file("bad.gguf.tmp")));
}

TEST(GgufWriter, FailedWriteLeavesNoFile) {
  test::TempDir dir;
  GgufWriter w;
  w.set("k", GgufValue::of_u32(1));
  const std::string missing_dir = dir.file("no/such/dir/x.gguf");
  expect_error([&] { w.write(missing_dir); }, {"[gguf] " + missing_dir});
  EXPECT_FALSE(fs::exists(missing_dir + ".tmp"));

  // The rename fails when the target is a non-empty directory; the temporary must go too.
  const std::string target = dir.file("target.gguf");
  fs::create_directories(fs::path(target) / "child");
  expect_error([&] { w.write(target); }, {"[gguf] " + target, "rename"});
  EXPECT_FALSE(fs::exists(target + ".tmp"));
  EXPECT_TRUE(fs::is_directory(target));

  // An existing file is replaced atomically.
  const std::string out = dir.file("out.gguf");
  { std::ofstream(out) << "old contents"; }
  w.write(out);
  EXPECT_EQ(GgufFile::open(out).get_uint("k"), 1u);
}

// ---- real files ---------------------------------------------------------------------------------

// Rewrites every key and tensor of `f` with GgufWriter and checks the copy reads back equal.
void expect_rewrite_equal(const GgufFile& f, const std::string& out) {
  GgufWriter w(f.alignment());
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& t : f.tensors())
    w.add_tensor(t.name, t.dims, t.type, f.tensor_data(t), t.n_bytes);
  w.write(out);
  const GgufFile g = GgufFile::open(out);
  ASSERT_EQ(g.metadata().size(), f.metadata().size());
  for (const auto& [k, v] : f.metadata()) {
    ASSERT_TRUE(g.has(k)) << k;
    EXPECT_TRUE(same_value(*g.find(k), v)) << k;
  }
  ASSERT_EQ(g.tensors().size(), f.tensors().size());
  for (const auto& t : f.tensors()) {
    const GgufTensorInfo* u = g.find_tensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(u->dims, t.dims);
    EXPECT_EQ(u->type, t.type);
    EXPECT_EQ(std::memcmp(g.tensor_data(*u), f.tensor_data(t), t.n_bytes), 0) << t.name;
  }
}

TEST(GgufRealFiles, Stories260K) {
  const auto p = test::shared_data("stories260K/stories260K.gguf");
  if (!p) GTEST_SKIP() << test::missing_shared_data("stories260K/stories260K.gguf");
  const GgufFile f = GgufFile::open(p->string());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  uint64_t total = 0;
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.offset % f.alignment(), 0u) << t.name;
    total += t.n_bytes;
  }
  EXPECT_LE(total, f.file_size());
  EXPECT_NE(f.find_tensor("token_embd.weight"), nullptr);
  test::TempDir dir;
  expect_rewrite_equal(f, dir.file("copy.gguf"));
}

TEST(GgufRealFiles, VocabFiles) {
  struct Case {
    const char* rel;
    size_t n_tokens;
  };
  for (const Case c : {Case{"llama.cpp-vocab/ggml-vocab-llama-spm.gguf", 32000},
                       Case{"llama.cpp-vocab/ggml-vocab-gpt-2.gguf", 50257}}) {
    SCOPED_TRACE(c.rel);
    const auto p = test::shared_data(c.rel);
    if (!p) GTEST_SKIP() << test::missing_shared_data(c.rel);
    const GgufFile f = GgufFile::open(p->string());
    EXPECT_TRUE(f.tensors().empty());
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), c.n_tokens);
    EXPECT_EQ(f.find("tokenizer.ggml.tokens")->array_size(), c.n_tokens);
    EXPECT_FALSE(f.get_string("tokenizer.ggml.model").empty());
    if (f.has("tokenizer.ggml.token_type")) {
      EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type").size(), c.n_tokens);
    }
    test::TempDir dir;
    expect_rewrite_equal(f, dir.file("copy.gguf"));
  }
}

}  // namespace
}  // namespace accel
