// PLACEHOLDER (being replaced by the optimised kernels): a plain, batch-invariant GEMM that
// dequantizes the whole weight to f32 at pack time and accumulates each output along K in order.
#include "kernels/gemm.h"

#include <cassert>
#include <vector>

#include "kernels/quant.h"

namespace accel {

struct PackedWeight::Storage {
  std::vector<float> w;  // (rows, cols) dequantized
};

PackedWeight PackedWeight::pack(DType t, const void* src, size_t rows, size_t cols) {
  auto st = std::make_shared<Storage>();
  st->w.resize(rows * cols);
  const size_t rb = dtype_row_bytes(t, cols);
  for (size_t r = 0; r < rows; ++r)
    dequantize_row(t, static_cast<const uint8_t*>(src) + r * rb, st->w.data() + r * cols, cols);
  PackedWeight p;
  p.type_ = t;
  p.rows_ = rows;
  p.cols_ = cols;
  p.bytes_ = st->w.size() * 4;
  p.storage_ = std::move(st);
  return p;
}

void gemm(const float* X, size_t M, size_t ldx, const PackedWeight& W, float* Y, size_t ldy,
          const float* bias) {
  const size_t N = W.rows(), K = W.cols();
  const float* w = W.storage()->w.data();
#pragma omp parallel for schedule(static) collapse(2)
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) {
      float acc = 0;
      for (size_t k = 0; k < K; ++k) acc += X[m * ldx + k] * w[n * K + k];
      Y[m * ldy + n] = bias ? acc + bias[n] : acc;
    }
}

void gemm_reference(const float* X, size_t M, size_t ldx, DType t, const void* W, size_t rows,
                    size_t cols, double* Y, size_t ldy, const float* bias) {
  std::vector<float> row(cols);
  const size_t rb = dtype_row_bytes(t, cols);
  for (size_t n = 0; n < rows; ++n) {
    dequantize_row(t, static_cast<const uint8_t*>(W) + n * rb, row.data(), cols);
    for (size_t m = 0; m < M; ++m) {
      double acc = 0;
      for (size_t k = 0; k < cols; ++k) acc += double(X[m * ldx + k]) * double(row[k]);
      Y[m * ldy + n] = bias ? acc + bias[n] : acc;
    }
  }
}

}  // namespace accel
