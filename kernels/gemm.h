// Matrix multiplication of activations by a weight matrix, Y = X · Wᵀ (+ bias), for every weight
// DType, multithreaded with OpenMP. Owns the packed weight layout and the micro-kernels; knows
// nothing about layers or models.
//
// Batch invariance contract (ARCHITECTURE.md invariant 1): Y[m][n] is bit-identical for a given
// row X[m] and column W[n] whatever M, the row's index in the batch, the thread count, or the
// OpenMP schedule. Each output is accumulated in one place, along K in a fixed order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/dtype.h"

namespace accel {

// A weight matrix of `rows` (= N, output features) by `cols` (= K, input features), as ggml stores
// it (row r is `cols` contiguous elements), repacked once into the layout the micro-kernels stream.
// Owns its storage; the source buffer may be released after pack().
class PackedWeight {
 public:
  PackedWeight() = default;
  // `src` holds rows*cols elements of type `t` in ggml row-major order (row bytes =
  // dtype_row_bytes(t, cols)). cols must be a multiple of the type's block size.
  static PackedWeight pack(DType t, const void* src, size_t rows, size_t cols);
  // The row-concatenation of several such sources (e.g. Q, K and V into one weight), packed
  // straight from each source: the same result as pack() on a concatenated copy, without the copy.
  struct RowSource {
    const void* data;
    size_t rows;
  };
  static PackedWeight pack(DType t, const std::vector<RowSource>& parts, size_t cols);
  // The same for parts of different types (e.g. Q and K in q4_K, V in q6_K): each part is packed
  // in its own type and gemm() multiplies it into its own output columns (all parts in one
  // parallel region), so every output is exactly what that part alone would give, at the part's
  // own bytes. type() is the first part's.
  struct TypedRowSource {
    DType type;
    RowSource rows;
  };
  static PackedWeight pack_mixed(const std::vector<TypedRowSource>& parts, size_t cols);
  bool is_mixed() const { return !segments_.empty(); }
  const std::vector<PackedWeight>& segments() const { return segments_; }  // mixed: in row order

  DType type() const { return type_; }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }
  size_t bytes() const { return bytes_; }  // bytes of packed storage (what a GEMM streams)
  bool empty() const { return rows_ == 0; }

  // Implementation detail, public for the kernels' translation units.
  struct Storage;
  const Storage* storage() const { return storage_.get(); }

 private:
  DType type_ = DType::F32;
  size_t rows_ = 0, cols_ = 0, bytes_ = 0;
  std::shared_ptr<const Storage> storage_;
  std::vector<PackedWeight> segments_;
};

// Y[m][n] = sum_k X[m][k] * W[n][k] (+ bias[n] when bias != nullptr), for m < M, n < W.rows().
// X has W.cols() columns with row stride ldx (floats); Y has row stride ldy (floats).
// Runs on the current OpenMP thread count.
void gemm(const float* X, size_t M, size_t ldx, const PackedWeight& W, float* Y, size_t ldy,
          const float* bias = nullptr);

// The blocking compiled into gemm(), for the run record (kernels/kernel_variant.h): the float
// micro-kernel's tile, the K block, the rows of packed X per block, the panels per N chunk, and the
// integer-dot kernels' rows per tile.
struct GemmBlocking {
  int tile_rows, tile_cols;
  size_t k_block, row_block, panels_per_chunk;
  int intdot_rows_per_tile;
};
GemmBlocking gemm_blocking();

// Plain double-precision reference over the raw (unpacked) weight, for tests.
// Y[m][n] = sum_k double(X[m][k]) * double(dequant(W)[n][k]) (+ bias[n]).
void gemm_reference(const float* X, size_t M, size_t ldx, DType t, const void* W, size_t rows,
                    size_t cols, double* Y, size_t ldy, const float* bias = nullptr);

}  // namespace accel
