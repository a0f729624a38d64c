// GgufWriter: serialises metadata and tensors to a GGUF v3 file via `path.tmp` + rename; and
// llama_file_type, the general.file_type number other tools (llama.cpp) expect for a tensor type.
// It refuses anything the reader would refuse (bad dims, sizes, out-of-range values, strings over
// the reader's caps), so every file it writes opens again; it must never leave a partial file.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "models/gguf.h"

namespace accel {

namespace {

// Mirrors the reader's limits (gguf_reader.cpp).
constexpr uint64_t kMaxStringBytes = 1ull << 20;
constexpr uint64_t kMaxArrayElems = 1ull << 24;
constexpr uint64_t kMaxAlignment = 1ull << 30;

[[noreturn]] void writer_error(const std::string& what) {
  throw GgufError("[gguf] writer: " + what);
}

class Buffer {
 public:
  template <class T>
  void put(T v) {
    const size_t n = bytes_.size();
    bytes_.resize(n + sizeof(T));
    std::memcpy(bytes_.data() + n, &v, sizeof(T));
  }
  void put_string(const std::string& s, const std::string& field) {
    if (s.size() > kMaxStringBytes)
      writer_error(field + ": string of " + std::to_string(s.size()) +
                   " bytes exceeds the reader's limit of " + std::to_string(kMaxStringBytes));
    put<uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

void put_uint(Buffer& b, GgufType t, uint64_t u, const std::string& field) {
  uint64_t max = UINT64_MAX;
  switch (t) {
    case GgufType::BOOL:
      max = 1;
      break;
    case GgufType::UINT8:
      max = 0xff;
      break;
    case GgufType::UINT16:
      max = 0xffff;
      break;
    case GgufType::UINT32:
      max = 0xffffffffull;
      break;
    default:
      break;
  }
  if (u > max)
    writer_error(field + ": value " + std::to_string(u) + " out of range for " + gguf_type_name(t));
  switch (gguf_scalar_size(t)) {
    case 1:
      b.put<uint8_t>(uint8_t(u));
      break;
    case 2:
      b.put<uint16_t>(uint16_t(u));
      break;
    case 4:
      b.put<uint32_t>(uint32_t(u));
      break;
    default:
      b.put<uint64_t>(u);
      break;
  }
}

void put_int(Buffer& b, GgufType t, int64_t i, const std::string& field) {
  const int bits = int(gguf_scalar_size(t)) * 8;
  if (bits < 64) {
    const int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << (bits - 1)) - 1;
    if (i < lo || i > hi)
      writer_error(field + ": value " + std::to_string(i) + " out of range for " +
                   gguf_type_name(t));
  }
  switch (bits) {
    case 8:
      b.put<int8_t>(int8_t(i));
      break;
    case 16:
      b.put<int16_t>(int16_t(i));
      break;
    case 32:
      b.put<int32_t>(int32_t(i));
      break;
    default:
      b.put<int64_t>(i);
      break;
  }
}

enum class Slot { U, I, F, S };

Slot slot_of(GgufType t) {
  switch (t) {
    case GgufType::INT8:
    case GgufType::INT16:
    case GgufType::INT32:
    case GgufType::INT64:
      return Slot::I;
    case GgufType::FLOAT32:
    case GgufType::FLOAT64:
      return Slot::F;
    case GgufType::STRING:
      return Slot::S;
    default:
      return Slot::U;
  }
}

bool known_type(GgufType t) {
  return uint32_t(t) <= uint32_t(GgufType::FLOAT64);
}

void put_scalar(Buffer& b, GgufType t, uint64_t u, int64_t i, double f, const std::string* s,
                const std::string& field) {
  switch (slot_of(t)) {
    case Slot::U:
      put_uint(b, t, u, field);
      break;
    case Slot::I:
      put_int(b, t, i, field);
      break;
    case Slot::F:
      if (t == GgufType::FLOAT32)
        b.put<float>(float(f));
      else
        b.put<double>(f);
      break;
    case Slot::S:
      b.put_string(*s, field);
      break;
  }
}

void put_value(Buffer& b, const GgufValue& v, const std::string& field) {
  if (!known_type(v.type))
    writer_error(field + ": unknown value type " + std::to_string(uint32_t(v.type)));
  b.put<uint32_t>(uint32_t(v.type));
  if (v.type != GgufType::ARRAY) return put_scalar(b, v.type, v.u, v.i, v.f, &v.s, field);

  if (!known_type(v.elem) || v.elem == GgufType::ARRAY)
    writer_error(field + ": array element type " + std::to_string(uint32_t(v.elem)) +
                 " is not a scalar or string type");
  const Slot slot = slot_of(v.elem);
  // Values in a vector the element type does not read would be silently dropped.
  if ((slot != Slot::U && !v.arr_u.empty()) || (slot != Slot::I && !v.arr_i.empty()) ||
      (slot != Slot::F && !v.arr_f.empty()) || (slot != Slot::S && !v.arr_s.empty()))
    writer_error(field + ": array of " + gguf_type_name(v.elem) +
                 " has values in a vector its element type does not use");
  const size_t n = v.array_size();
  if (n > kMaxArrayElems)
    writer_error(field + ": array of " + std::to_string(n) + " elements exceeds the limit of " +
                 std::to_string(kMaxArrayElems));
  b.put<uint32_t>(uint32_t(v.elem));
  b.put<uint64_t>(n);
  for (size_t k = 0; k < n; ++k) {
    switch (slot) {
      case Slot::U:
        put_uint(b, v.elem, v.arr_u[k], field);
        break;
      case Slot::I:
        put_int(b, v.elem, v.arr_i[k], field);
        break;
      case Slot::F:
        put_scalar(b, v.elem, 0, 0, v.arr_f[k], nullptr, field);
        break;
      case Slot::S:
        b.put_string(v.arr_s[k], field);
        break;
    }
  }
}

uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

// Owns the temporary file until commit(); a destructor without commit removes it.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path), tmp_(path + ".tmp") {
    f_ = std::fopen(tmp_.c_str(), "wb");
    if (!f_) fail("cannot create " + tmp_);
  }
  ~TempFile() {
    if (f_) std::fclose(f_);
    if (!committed_) std::remove(tmp_.c_str());
  }
  void write(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) fail("write to " + tmp_ + " failed");
  }
  void zeros(size_t n) {
    static const uint8_t kZeros[256] = {};
    while (n) {
      const size_t k = std::min(n, sizeof(kZeros));
      write(kZeros, k);
      n -= k;
    }
  }
  void commit() {
    if (std::fflush(f_) != 0) fail("flush of " + tmp_ + " failed");
    if (::fsync(fileno(f_)) != 0) fail("fsync of " + tmp_ + " failed");
    FILE* f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) fail("close of " + tmp_ + " failed");
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename " + tmp_ + " failed");
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    const int e = errno;
    throw GgufError("[gguf] " + path_ + ": " + what + ": " + std::strerror(e));
  }
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  bool committed_ = false;
};

}  // namespace

uint32_t llama_file_type(DType t) {
  // LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_Q8_0 = 7, MOSTLY_BF16 = 32,
  // MOSTLY_MXFP4_MOE = 38;
  // for the k-quants, the "_S" (small) file types, which are mostly that one type: MOSTLY_Q4_K_S =
  // 14, MOSTLY_Q5_K_S = 16, MOSTLY_Q6_K = 18.
  switch (t) {
    case DType::F32:
      return 0;
    case DType::F16:
      return 1;
    case DType::Q4_0:
      return 2;
    case DType::Q8_0:
      return 7;
    case DType::BF16:
      return 32;
    case DType::Q4_K:
      return 14;
    case DType::Q5_K:
      return 16;
    case DType::Q6_K:
      return 18;
    case DType::MXFP4:
      return 38;  // MOSTLY_MXFP4_MOE: the experts in mxfp4, the rest as written
    case DType::Q5_0:
      return 8;  // MOSTLY_Q5_0
  }
  writer_error("no llama.cpp file type for tensor type " + std::to_string(uint32_t(t)));
}

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
    writer_error("alignment " + std::to_string(alignment) + " is not a power of two in [1, 2^30]");
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  if (key.empty()) writer_error("empty metadata key");
  for (auto& [k, v] : kv_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> dims, DType type,
                            const void* data, size_t n_bytes) {
  const std::string field = "tensor '" + name + "'";
  if (name.empty()) writer_error("empty tensor name");
  for (const auto& t : tensors_)
    if (t.name == name) writer_error(field + ": duplicate tensor name");
  if (dims.empty() || dims.size() > 4)
    writer_error(field + ": " + std::to_string(dims.size()) + " dims, expected 1 to 4");
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d == 0) writer_error(field + ": zero dimension");
    if (__builtin_mul_overflow(n, d, &n) || n > uint64_t(std::numeric_limits<int64_t>::max()))
      writer_error(field + ": element count overflows int64");
  }
  const uint64_t block = dtype_block_elems(type);
  if (dims[0] % block != 0)
    writer_error(field + ": row length " + std::to_string(dims[0]) + " is not a multiple of the " +
                 std::string(dtype_name(type)) + " block size " + std::to_string(block));
  uint64_t want = 0;
  if (__builtin_mul_overflow(n / block, uint64_t(dtype_block_bytes(type)), &want))
    writer_error(field + ": byte size overflows");
  if (want != n_bytes)
    writer_error(field + ": " + std::to_string(n_bytes) + " bytes given, dims and type need " +
                 std::to_string(want));
  if (n_bytes && !data) writer_error(field + ": null data");
  const auto* p = static_cast<const uint8_t*>(data);
  tensors_.push_back(
      PendingTensor{name, std::move(dims), type, std::vector<uint8_t>(p, p + n_bytes)});
}

void GgufWriter::write(const std::string& path) const {
  // general.alignment always reflects this writer's alignment, whatever set() was given.
  std::vector<const std::pair<std::string, GgufValue>*> kv;
  std::pair<std::string, GgufValue> align_kv{"general.alignment",
                                             GgufValue::of_u32(uint32_t(alignment_))};
  if (alignment_ != 32) kv.push_back(&align_kv);
  for (const auto& e : kv_)
    if (e.first != "general.alignment") kv.push_back(&e);

  Buffer b;
  b.put<uint32_t>(0x46554747);  // "GGUF" read as little-endian u32
  b.put<uint32_t>(3);
  b.put<uint64_t>(tensors_.size());
  b.put<uint64_t>(kv.size());
  for (const auto* e : kv) {
    const std::string field = "key '" + e->first + "'";
    b.put_string(e->first, field);
    put_value(b, e->second, field);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    const std::string field = "tensor '" + t.name + "'";
    b.put_string(t.name, field);
    b.put<uint32_t>(uint32_t(t.dims.size()));
    for (uint64_t d : t.dims) b.put<uint64_t>(d);
    b.put<uint32_t>(uint32_t(t.type));
    b.put<uint64_t>(offset);
    offset += align_up(t.data.size(), alignment_);
  }

  TempFile f(path);
  f.write(b.bytes().data(), b.bytes().size());
  if (!tensors_.empty()) {
    f.zeros(align_up(b.bytes().size(), alignment_) - b.bytes().size());
    for (const auto& t : tensors_) {
      f.write(t.data.data(), t.data.size());
      f.zeros(align_up(t.data.size(), alignment_) - t.data.size());
    }
  }
  f.commit();
}

}  // namespace accel
