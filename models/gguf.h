// GGUF v3 model files: a memory-mapped, bounds-checked reader and a writer.
// The reader treats the file as hostile: every count, length, dimension and offset is checked
// before use, and any violation throws GgufError naming the file, the field and the byte offset.
// It owns parsing only; what the metadata means (architectures, tokenizers) lives elsewhere.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace accel {

class GgufError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GGUF metadata value type ids (gguf_type in the spec).
enum class GgufType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

// Spec name of a type id ("uint32", "string", ...; "unknown" otherwise) and the encoded size of a
// scalar (0 for STRING, ARRAY and unknown ids).
const char* gguf_type_name(GgufType t);
size_t gguf_scalar_size(GgufType t);

// One metadata value. Scalars keep their declared type; integer types are stored widened in
// `u` (unsigned and BOOL) or `i` (signed), floats in `f`. Arrays (of any non-array type) keep their
// element type in `elem` and their values in the matching vector (arr_u / arr_i / arr_f / arr_s).
struct GgufValue {
  GgufType type = GgufType::UINT32;
  GgufType elem = GgufType::UINT32;  // ARRAY only
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<uint64_t> arr_u;
  std::vector<int64_t> arr_i;
  std::vector<double> arr_f;
  std::vector<std::string> arr_s;

  static GgufValue of_u32(uint32_t v);
  static GgufValue of_u64(uint64_t v);
  static GgufValue of_i32(int32_t v);
  static GgufValue of_f32(float v);
  static GgufValue of_bool(bool v);
  static GgufValue of_string(std::string v);
  static GgufValue of_string_array(std::vector<std::string> v);
  static GgufValue of_f32_array(std::vector<float> v);
  static GgufValue of_i32_array(std::vector<int32_t> v);
  size_t array_size() const;  // element count of an ARRAY value, 0 otherwise
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (innermost) dimension
  DType type = DType::F32;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

class GgufFile {
 public:
  // Opens and fully validates the file (header, metadata, tensor table, data bounds).
  static GgufFile open(const std::string& path);
  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& path() const;
  uint32_t version() const;
  uint64_t alignment() const;
  uint64_t file_size() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const;
  const GgufValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }

  // Typed getters. Missing keys or wrong types throw GgufError naming the file and key.
  // get_uint accepts any integer type holding a non-negative value; get_float accepts FLOAT32/64.
  std::string get_string(const std::string& key) const;
  uint64_t get_uint(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::vector<std::string>& get_string_array(const std::string& key) const;
  std::vector<double> get_float_array(const std::string& key) const;  // FLOAT32/64 arrays
  std::vector<int64_t> get_int_array(const std::string& key) const;   // any integer array
  std::optional<uint64_t> get_uint_opt(const std::string& key) const;
  std::optional<double> get_float_opt(const std::string& key) const;
  std::optional<std::string> get_string_opt(const std::string& key) const;

  const std::vector<GgufTensorInfo>& tensors() const;
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  // Start of a tensor's bytes inside the mapping (valid while this object lives).
  const uint8_t* tensor_data(const GgufTensorInfo& t) const;
  // Drops this process's resident pages of the mapping (madvise DONTNEED). Safe at any time: the
  // mapping is read-only, so a later read faults the page back in from the page cache. Model calls
  // it once its weights are packed, so a model is resident once (packed), not twice.
  void release_resident_pages() const;
  // The same for the pages holding one tensor's bytes (rounded out to whole pages), so a loader
  // that packs tensor by tensor never holds more than one tensor's file pages at once.
  void release_resident_pages(const GgufTensorInfo& t) const;

 private:
  GgufFile();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// llama.cpp's file-type number (`enum llama_ftype` in its include/llama.h) for a model whose
// matrices are stored in `t` and whose norms and biases stay f32, which is what llama.cpp's
// "MOSTLY_*" types mean; for general.file_type. These are not ggml type ids: q8_0 is tensor type 8
// but file type 7, bf16 is tensor type 30 but file type 32.
uint32_t llama_file_type(DType t);

// Builds a GGUF v3 file in memory order: metadata in insertion order, tensors in insertion order,
// each tensor's data aligned to `alignment` (default 32, written as general.alignment only when
// not 32). write() goes to a temporary file and renames it, so a failed write leaves nothing.
class GgufWriter {
 public:
  explicit GgufWriter(uint64_t alignment = 32);
  void set(const std::string& key, GgufValue value);  // replaces an existing key
  // `data` holds the tensor's bytes in `type`, dims in ggml order; bytes are copied.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, DType type, const void* data,
                  size_t n_bytes);
  void write(const std::string& path) const;

 private:
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  struct PendingTensor {
    std::string name;
    std::vector<uint64_t> dims;
    DType type;
    std::vector<uint8_t> data;
  };
  std::vector<PendingTensor> tensors_;
};

}  // namespace accel
