// GgufFile: maps a GGUF v2/v3 file read-only and validates all of it before anyone sees it.
// The file is hostile: every read goes through Cursor, which bounds it against the mapping, and
// every size is overflow-checked before use. It must never trust a count to size an allocation
// before checking that the remaining bytes could hold that many items.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "models/gguf.h"

namespace accel {

namespace {

// Caps beyond "fits in the file": they keep a crafted file from making us allocate absurd
// amounts (a 16M-element array of 8-byte strings already needs a 128 MiB file).
constexpr uint64_t kMaxStringBytes = 1ull << 20;
constexpr uint64_t kMaxArrayElems = 1ull << 24;
constexpr uint64_t kMaxCount = 1ull << 24;  // tensors and keys
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxAlignment = 1ull << 30;
constexpr uint64_t kDefaultAlignment = 32;
// Smallest possible encodings, used to bound counts by the bytes left before allocating.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, one dim

std::string quoted_name(std::string_view s) {
  // Names come from the file; cap them so an error message stays readable.
  std::string out = "'";
  out.append(s.substr(0, 200));
  if (s.size() > 200) out += "...";
  return out + "'";
}

bool is_integer(GgufType t) {
  switch (t) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::UINT16:
    case GgufType::INT16:
    case GgufType::UINT32:
    case GgufType::INT32:
    case GgufType::UINT64:
    case GgufType::INT64:
      return true;
    default:
      return false;
  }
}

bool is_signed(GgufType t) {
  return t == GgufType::INT8 || t == GgufType::INT16 || t == GgufType::INT32 ||
         t == GgufType::INT64;
}

bool is_float(GgufType t) {
  return t == GgufType::FLOAT32 || t == GgufType::FLOAT64;
}

// The one place that reads bytes out of the mapping. `ctx` names the field being parsed
// ("tensor 'x'", "key #3") and `elem` the array element, so errors need no string building
// on the success path.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, const std::string& path)
      : data_(data), size_(size), path_(path) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  void set_ctx(std::string ctx) {
    ctx_ = std::move(ctx);
    elem_ = -1;
  }
  void set_elem(int64_t i) { elem_ = i; }

  [[noreturn]] void fail(const std::string& what, uint64_t at) const {
    std::string field = ctx_;
    if (elem_ >= 0) field += "[" + std::to_string(elem_) + "]";
    throw GgufError("[gguf] " + path_ + ": " + field + ": " + what + " (at byte offset " +
                    std::to_string(at) + ")");
  }

  void need(uint64_t n, const char* item) const {
    if (n > remaining())
      fail(std::string(item) + ": truncated: needs " + std::to_string(n) + " bytes, " +
               std::to_string(remaining()) + " left in file",
           pos_);
  }

  template <class T>
  T get(const char* item) {
    need(sizeof(T), item);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view str(const char* item, uint64_t max_len) {
    const uint64_t at = pos_;
    const uint64_t len = get<uint64_t>(item);
    if (len > remaining())
      fail(std::string(item) + ": string length " + std::to_string(len) + " exceeds the " +
               std::to_string(remaining()) + " bytes left in file",
           at);
    if (len > max_len)
      fail(std::string(item) + ": string length " + std::to_string(len) + " exceeds the limit of " +
               std::to_string(max_len),
           at);
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), size_t(len));
    pos_ += len;
    return s;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& path_;
  std::string ctx_;
  int64_t elem_ = -1;
};

GgufType read_type(Cursor& c, const char* item, bool allow_array) {
  const uint64_t at = c.pos();
  const uint32_t id = c.get<uint32_t>(item);
  if (id > uint32_t(GgufType::FLOAT64))
    c.fail(std::string(item) + ": unknown value type " + std::to_string(id), at);
  const auto t = GgufType(id);
  if (t == GgufType::ARRAY && !allow_array) c.fail("arrays of arrays are not supported", at);
  return t;
}

// Reads one scalar or string of type t into the matching field (u / i / f / s).
void read_scalar(Cursor& c, GgufType t, uint64_t& u, int64_t& i, double& f, std::string& s) {
  const uint64_t at = c.pos();
  switch (t) {
    case GgufType::UINT8:
      u = c.get<uint8_t>("value");
      break;
    case GgufType::UINT16:
      u = c.get<uint16_t>("value");
      break;
    case GgufType::UINT32:
      u = c.get<uint32_t>("value");
      break;
    case GgufType::UINT64:
      u = c.get<uint64_t>("value");
      break;
    case GgufType::INT8:
      i = c.get<int8_t>("value");
      break;
    case GgufType::INT16:
      i = c.get<int16_t>("value");
      break;
    case GgufType::INT32:
      i = c.get<int32_t>("value");
      break;
    case GgufType::INT64:
      i = c.get<int64_t>("value");
      break;
    case GgufType::FLOAT32:
      f = c.get<float>("value");
      break;
    case GgufType::FLOAT64:
      f = c.get<double>("value");
      break;
    case GgufType::BOOL:
      u = c.get<uint8_t>("value");
      if (u > 1) c.fail("bool value " + std::to_string(u) + " is neither 0 nor 1", at);
      break;
    case GgufType::STRING:
      s = std::string(c.str("value", kMaxStringBytes));
      break;
    case GgufType::ARRAY:
      c.fail("internal: array passed to read_scalar", at);
  }
}

GgufValue read_value(Cursor& c) {
  GgufValue v;
  v.type = read_type(c, "value type", true);
  if (v.type != GgufType::ARRAY) {
    read_scalar(c, v.type, v.u, v.i, v.f, v.s);
    return v;
  }
  v.elem = read_type(c, "array element type", false);
  const uint64_t at = c.pos();
  const uint64_t n = c.get<uint64_t>("array count");
  const uint64_t min_elem = v.elem == GgufType::STRING ? 8 : gguf_scalar_size(v.elem);
  if (n > kMaxArrayElems)
    c.fail("array count " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(kMaxArrayElems),
           at);
  // n <= 2^24 and min_elem <= 8, so the product cannot overflow.
  if (n * min_elem > c.remaining())
    c.fail("array of " + std::to_string(n) + " " + gguf_type_name(v.elem) + " needs at least " +
               std::to_string(n * min_elem) + " bytes, " + std::to_string(c.remaining()) +
               " left in file",
           at);
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s;
  if (v.elem == GgufType::STRING)
    v.arr_s.reserve(n);
  else if (is_float(v.elem))
    v.arr_f.reserve(n);
  else if (is_signed(v.elem))
    v.arr_i.reserve(n);
  else
    v.arr_u.reserve(n);
  for (uint64_t k = 0; k < n; ++k) {
    c.set_elem(int64_t(k));
    read_scalar(c, v.elem, u, i, f, s);
    if (v.elem == GgufType::STRING)
      v.arr_s.push_back(std::move(s));
    else if (is_float(v.elem))
      v.arr_f.push_back(f);
    else if (is_signed(v.elem))
      v.arr_i.push_back(i);
    else
      v.arr_u.push_back(u);
  }
  c.set_elem(-1);
  return v;
}

std::string type_list() {
  return "supported: f32 (0), f16 (1), q4_0 (2), q5_0 (6), q8_0 (8), q4_K (12), q5_K (13), "
         "q6_K (14), bf16 (30), mxfp4 (39)";
}

}  // namespace

// ---- GgufValue ---------------------------------------------------------------------------------

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8:
      return "uint8";
    case GgufType::INT8:
      return "int8";
    case GgufType::UINT16:
      return "uint16";
    case GgufType::INT16:
      return "int16";
    case GgufType::UINT32:
      return "uint32";
    case GgufType::INT32:
      return "int32";
    case GgufType::FLOAT32:
      return "float32";
    case GgufType::BOOL:
      return "bool";
    case GgufType::STRING:
      return "string";
    case GgufType::ARRAY:
      return "array";
    case GgufType::UINT64:
      return "uint64";
    case GgufType::INT64:
      return "int64";
    case GgufType::FLOAT64:
      return "float64";
  }
  return "unknown";
}

size_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::BOOL:
      return 1;
    case GgufType::UINT16:
    case GgufType::INT16:
      return 2;
    case GgufType::UINT32:
    case GgufType::INT32:
    case GgufType::FLOAT32:
      return 4;
    case GgufType::UINT64:
    case GgufType::INT64:
    case GgufType::FLOAT64:
      return 8;
    default:
      return 0;
  }
}

GgufValue GgufValue::of_u32(uint32_t v) {
  GgufValue r;
  r.type = GgufType::UINT32;
  r.u = v;
  return r;
}
GgufValue GgufValue::of_u64(uint64_t v) {
  GgufValue r;
  r.type = GgufType::UINT64;
  r.u = v;
  return r;
}
GgufValue GgufValue::of_i32(int32_t v) {
  GgufValue r;
  r.type = GgufType::INT32;
  r.i = v;
  return r;
}
GgufValue GgufValue::of_f32(float v) {
  GgufValue r;
  r.type = GgufType::FLOAT32;
  r.f = v;
  return r;
}
GgufValue GgufValue::of_bool(bool v) {
  GgufValue r;
  r.type = GgufType::BOOL;
  r.u = v ? 1 : 0;
  return r;
}
GgufValue GgufValue::of_string(std::string v) {
  GgufValue r;
  r.type = GgufType::STRING;
  r.s = std::move(v);
  return r;
}
GgufValue GgufValue::of_string_array(std::vector<std::string> v) {
  GgufValue r;
  r.type = GgufType::ARRAY;
  r.elem = GgufType::STRING;
  r.arr_s = std::move(v);
  return r;
}
GgufValue GgufValue::of_f32_array(std::vector<float> v) {
  GgufValue r;
  r.type = GgufType::ARRAY;
  r.elem = GgufType::FLOAT32;
  r.arr_f.assign(v.begin(), v.end());
  return r;
}
GgufValue GgufValue::of_i32_array(std::vector<int32_t> v) {
  GgufValue r;
  r.type = GgufType::ARRAY;
  r.elem = GgufType::INT32;
  r.arr_i.assign(v.begin(), v.end());
  return r;
}

size_t GgufValue::array_size() const {
  if (type != GgufType::ARRAY) return 0;
  if (elem == GgufType::STRING) return arr_s.size();
  if (is_float(elem)) return arr_f.size();
  if (is_signed(elem)) return arr_i.size();
  return arr_u.size();
}

// ---- GgufFile ----------------------------------------------------------------------------------

struct GgufFile::Impl {
  std::string path;
  const uint8_t* map = nullptr;  // whole file, PROT_READ; null for an empty file
  uint64_t size = 0;
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_start = 0;  // absolute offset of the data section
  std::vector<std::pair<std::string, GgufValue>> kv;
  std::unordered_map<std::string, size_t> kv_index;
  std::vector<GgufTensorInfo> tensors;
  std::unordered_map<std::string, size_t> tensor_index;

  ~Impl() {
    if (map) munmap(const_cast<uint8_t*>(map), size_t(size));
  }

  [[noreturn]] void key_error(const std::string& key, const std::string& what) const {
    throw GgufError("[gguf] " + path + ": key " + quoted_name(key) + ": " + what);
  }
  const GgufValue& need(const std::string& key) const {
    auto it = kv_index.find(key);
    if (it == kv_index.end()) key_error(key, "missing");
    return kv[it->second].second;
  }
  [[noreturn]] void wrong_type(const std::string& key, const GgufValue& v, const char* want) const {
    std::string has = gguf_type_name(v.type);
    if (v.type == GgufType::ARRAY) has += std::string(" of ") + gguf_type_name(v.elem);
    key_error(key, "has type " + has + ", expected " + want);
  }

  void map_file();
  void parse();
  void parse_tensor_infos(Cursor& c, uint64_t n_tensors);
  void check_data_layout(Cursor& c, const std::vector<uint64_t>& offset_field_pos);
};

void GgufFile::Impl::map_file() {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw GgufError("[gguf] " + path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw GgufError("[gguf] " + path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw GgufError("[gguf] " + path + ": not a regular file");
  }
  size = uint64_t(st.st_size);
  if (size > 0) {
    void* p = mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      throw GgufError("[gguf] " + path + ": cannot map " + std::to_string(size) +
                      " bytes: " + std::strerror(e));
    }
    map = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
}

void GgufFile::Impl::parse() {
  Cursor c(map, size, path);

  c.set_ctx("header");
  c.need(4, "magic");
  if (std::memcmp(map, "GGUF", 4) != 0) {
    std::string got;
    for (int k = 0; k < 4; ++k) {
      const char ch = char(map[k]);
      got += (ch >= 32 && ch < 127) ? ch : '?';
    }
    c.fail("magic: expected \"GGUF\", found \"" + got + "\"", 0);
  }
  c.get<uint32_t>("magic");
  version = c.get<uint32_t>("version");
  if (version != 2 && version != 3) {
    const uint32_t swapped = __builtin_bswap32(version);
    if (swapped == 2 || swapped == 3) c.fail("version: big-endian GGUF files are not supported", 4);
    c.fail("version: " + std::to_string(version) + " unsupported (only 2 and 3 are read)", 4);
  }
  uint64_t at = c.pos();
  const uint64_t n_tensors = c.get<uint64_t>("tensor_count");
  // Each tensor needs at least one info record; bounding by a minimal record keeps a crafted
  // count from sizing any allocation.
  if (n_tensors > kMaxCount || n_tensors > size / kMinTensorInfoBytes)
    c.fail("tensor_count: " + std::to_string(n_tensors) + " cannot fit in a file of " +
               std::to_string(size) + " bytes",
           at);
  at = c.pos();
  const uint64_t n_kv = c.get<uint64_t>("kv_count");
  if (n_kv > kMaxCount || n_kv > c.remaining() / kMinKvBytes)
    c.fail("kv_count: " + std::to_string(n_kv) + " cannot fit in the " +
               std::to_string(c.remaining()) + " bytes left in file",
           at);

  kv.reserve(n_kv);
  kv_index.reserve(n_kv);
  std::unordered_map<std::string, uint64_t> key_pos;
  for (uint64_t k = 0; k < n_kv; ++k) {
    c.set_ctx("key #" + std::to_string(k));
    at = c.pos();
    std::string key(c.str("name", kMaxStringBytes));
    if (key.empty()) c.fail("name: empty key", at);
    c.set_ctx("key " + quoted_name(key));
    if (auto it = kv_index.find(key); it != kv_index.end())
      c.fail("duplicate key (first at byte offset " + std::to_string(key_pos[key]) + ")", at);
    key_pos[key] = at;
    GgufValue v = read_value(c);
    if (key == "general.alignment") {
      if (!is_integer(v.type) || is_signed(v.type))
        c.fail(std::string("has type ") + gguf_type_name(v.type) + ", expected uint32", at);
      if (v.u == 0 || (v.u & (v.u - 1)) != 0 || v.u > kMaxAlignment)
        c.fail("alignment " + std::to_string(v.u) + " is not a power of two in [1, 2^30]", at);
      alignment = v.u;
    }
    kv_index.emplace(key, kv.size());
    kv.emplace_back(std::move(key), std::move(v));
  }

  parse_tensor_infos(c, n_tensors);
}

void GgufFile::Impl::parse_tensor_infos(Cursor& c, uint64_t n_tensors) {
  if (n_tensors > c.remaining() / kMinTensorInfoBytes) {
    c.set_ctx("tensor_count");
    c.fail(std::to_string(n_tensors) + " tensor infos cannot fit in the " +
               std::to_string(c.remaining()) + " bytes left in file",
           8);  // the header's tensor_count field
  }
  tensors.reserve(n_tensors);
  tensor_index.reserve(n_tensors);
  std::vector<uint64_t> offset_pos;  // where each tensor's offset field sits, for errors
  std::unordered_map<std::string, uint64_t> name_pos;
  for (uint64_t k = 0; k < n_tensors; ++k) {
    c.set_ctx("tensor #" + std::to_string(k));
    uint64_t at = c.pos();
    GgufTensorInfo t;
    t.name = std::string(c.str("name", kMaxStringBytes));
    if (t.name.empty()) c.fail("name: empty tensor name", at);
    c.set_ctx("tensor " + quoted_name(t.name));
    if (tensor_index.count(t.name))
      c.fail(
          "duplicate tensor name (first at byte offset " + std::to_string(name_pos[t.name]) + ")",
          at);
    name_pos[t.name] = at;

    at = c.pos();
    const uint32_t n_dims = c.get<uint32_t>("n_dims");
    if (n_dims < 1 || n_dims > kMaxDims)
      c.fail("n_dims " + std::to_string(n_dims) + " outside [1, " + std::to_string(kMaxDims) + "]",
             at);
    // ggml counts elements in int64, so every dimension and the product must fit there.
    constexpr uint64_t kMaxElems = uint64_t(std::numeric_limits<int64_t>::max());
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      at = c.pos();
      const uint64_t dim = c.get<uint64_t>("dims");
      const std::string field = "dims[" + std::to_string(d) + "] ";
      if (dim == 0) c.fail(field + "is 0", at);
      if (dim > kMaxElems) c.fail(field + std::to_string(dim) + " exceeds 2^63-1", at);
      if (__builtin_mul_overflow(n_elements, dim, &n_elements) || n_elements > kMaxElems)
        c.fail(field + std::to_string(dim) + ": element count overflows int64", at);
      t.dims.push_back(dim);
    }
    t.n_elements = n_elements;

    at = c.pos();
    const uint32_t type_id = c.get<uint32_t>("type");
    const auto dt = dtype_from_ggml(type_id);
    if (!dt)
      c.fail("type id " + std::to_string(type_id) + " unsupported (" + type_list() + ")", at);
    t.type = *dt;
    const uint64_t block = dtype_block_elems(t.type);
    if (t.dims[0] % block != 0)
      c.fail("row length dims[0] = " + std::to_string(t.dims[0]) + " is not a multiple of the " +
                 std::string(dtype_name(t.type)) + " block size " + std::to_string(block),
             at);
    const uint64_t rows = n_elements / t.dims[0];
    uint64_t row_bytes = 0;
    if (__builtin_mul_overflow(t.dims[0] / block, uint64_t(dtype_block_bytes(t.type)),
                               &row_bytes) ||
        __builtin_mul_overflow(row_bytes, rows, &t.n_bytes))
      c.fail("byte size of " + std::to_string(n_elements) + " " + std::string(dtype_name(t.type)) +
                 " elements overflows 64 bits",
             at);

    offset_pos.push_back(c.pos());
    t.offset = c.get<uint64_t>("offset");

    tensor_index.emplace(t.name, tensors.size());
    tensors.push_back(std::move(t));
  }
  check_data_layout(c, offset_pos);
}

void GgufFile::Impl::check_data_layout(Cursor& c, const std::vector<uint64_t>& offset_pos) {
  const uint64_t end_of_infos = c.pos();
  data_start = (end_of_infos + alignment - 1) / alignment * alignment;  // alignment <= 2^30
  if (tensors.empty()) return;  // a metadata-only file may end without padding
  if (data_start > size) {
    c.set_ctx("data section");
    c.fail("starts at " + std::to_string(data_start) + ", past end of file (size " +
               std::to_string(size) + ")",
           end_of_infos);
  }
  const uint64_t data_size = size - data_start;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const GgufTensorInfo& t = tensors[k];
    c.set_ctx("tensor " + quoted_name(t.name));
    if (t.offset % alignment != 0)
      c.fail("offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                 std::to_string(alignment),
             offset_pos[k]);
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      // Report absolute file offsets; the sum may exceed 2^64 only in the message, so saturate.
      const uint64_t a = t.offset > UINT64_MAX - data_start ? UINT64_MAX : data_start + t.offset;
      const uint64_t b = t.n_bytes > UINT64_MAX - a ? UINT64_MAX : a + t.n_bytes;
      c.fail("data [" + std::to_string(a) + ", " + std::to_string(b) + ") past end of file (size " +
                 std::to_string(size) + ")",
             offset_pos[k]);
    }
  }
  std::vector<size_t> order(tensors.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const GgufTensorInfo& prev = tensors[order[k - 1]];
    const GgufTensorInfo& cur = tensors[order[k]];
    if (prev.offset + prev.n_bytes > cur.offset) {  // both bounded by data_size: no overflow
      c.set_ctx("tensor " + quoted_name(cur.name));
      c.fail("data at offset " + std::to_string(cur.offset) + " overlaps tensor " +
                 quoted_name(prev.name) + " [" + std::to_string(prev.offset) + ", " +
                 std::to_string(prev.offset + prev.n_bytes) + ")",
             offset_pos[order[k]]);
    }
  }
}

GgufFile::GgufFile() : impl_(std::make_unique<Impl>()) {}
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.impl_->path = path;
  f.impl_->map_file();
  f.impl_->parse();
  return f;
}

const std::string& GgufFile::path() const {
  return impl_->path;
}
uint32_t GgufFile::version() const {
  return impl_->version;
}
uint64_t GgufFile::alignment() const {
  return impl_->alignment;
}
uint64_t GgufFile::file_size() const {
  return impl_->size;
}

const std::vector<std::pair<std::string, GgufValue>>& GgufFile::metadata() const {
  return impl_->kv;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = impl_->kv_index.find(key);
  return it == impl_->kv_index.end() ? nullptr : &impl_->kv[it->second].second;
}

std::string GgufFile::get_string(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (v.type != GgufType::STRING) impl_->wrong_type(key, v, "string");
  return v.s;
}

uint64_t GgufFile::get_uint(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (!is_integer(v.type)) impl_->wrong_type(key, v, "an integer");
  if (is_signed(v.type)) {
    if (v.i < 0) impl_->key_error(key, "value " + std::to_string(v.i) + " is negative");
    return uint64_t(v.i);
  }
  return v.u;
}

int64_t GgufFile::get_int(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (!is_integer(v.type)) impl_->wrong_type(key, v, "an integer");
  if (is_signed(v.type)) return v.i;
  if (v.u > uint64_t(std::numeric_limits<int64_t>::max()))
    impl_->key_error(key, "value " + std::to_string(v.u) + " does not fit in int64");
  return int64_t(v.u);
}

double GgufFile::get_float(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (!is_float(v.type)) impl_->wrong_type(key, v, "float32 or float64");
  return v.f;
}

bool GgufFile::get_bool(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (v.type != GgufType::BOOL) impl_->wrong_type(key, v, "bool");
  return v.u != 0;
}

const std::vector<std::string>& GgufFile::get_string_array(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (v.type != GgufType::ARRAY || v.elem != GgufType::STRING)
    impl_->wrong_type(key, v, "array of string");
  return v.arr_s;
}

std::vector<double> GgufFile::get_float_array(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (v.type != GgufType::ARRAY || !is_float(v.elem))
    impl_->wrong_type(key, v, "array of float32 or float64");
  return v.arr_f;
}

std::vector<int64_t> GgufFile::get_int_array(const std::string& key) const {
  const GgufValue& v = impl_->need(key);
  if (v.type != GgufType::ARRAY || !is_integer(v.elem))
    impl_->wrong_type(key, v, "array of integers");
  if (is_signed(v.elem)) return v.arr_i;
  std::vector<int64_t> out;
  out.reserve(v.arr_u.size());
  for (size_t k = 0; k < v.arr_u.size(); ++k) {
    if (v.arr_u[k] > uint64_t(std::numeric_limits<int64_t>::max()))
      impl_->key_error(key, "element " + std::to_string(k) + " value " +
                                std::to_string(v.arr_u[k]) + " does not fit in int64");
    out.push_back(int64_t(v.arr_u[k]));
  }
  return out;
}

std::optional<uint64_t> GgufFile::get_uint_opt(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_uint(key);
}

std::optional<double> GgufFile::get_float_opt(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

std::optional<std::string> GgufFile::get_string_opt(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

const std::vector<GgufTensorInfo>& GgufFile::tensors() const {
  return impl_->tensors;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

const uint8_t* GgufFile::tensor_data(const GgufTensorInfo& t) const {
  // Infos from this file were checked at open; this guards against one from another file.
  const uint64_t data_size = impl_->size - std::min(impl_->size, impl_->data_start);
  if (t.offset > data_size || t.n_bytes > data_size - t.offset)
    throw GgufError("[gguf] " + impl_->path + ": tensor " + quoted_name(t.name) + ": data [" +
                    std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                    ") is not inside this file's data section");
  return impl_->map + impl_->data_start + t.offset;
}

void GgufFile::release_resident_pages() const {
  // Best effort: a failing madvise only leaves pages resident, it never changes what is read.
  if (impl_->map)
    (void)madvise(const_cast<uint8_t*>(impl_->map), size_t(impl_->size), MADV_DONTNEED);
}

void GgufFile::release_resident_pages(const GgufTensorInfo& t) const {
  const uint8_t* begin = tensor_data(t);  // bounds-checked
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin) / page * page;
  const uintptr_t hi = reinterpret_cast<uintptr_t>(begin) + t.n_bytes;
  (void)madvise(reinterpret_cast<void*>(lo), size_t(hi - lo), MADV_DONTNEED);
}

}  // namespace accel
