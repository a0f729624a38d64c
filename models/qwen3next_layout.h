// qwen3next's Gated DeltaNet projection layouts (llama.cpp 3f545bec src/models/qwen3next.cpp) as
// row orders into the engine's one in-projection GEMM [qkv | z | beta | alpha]. Owns only the row
// arithmetic and the row views of a GGUF tensor; it must not read weights or know the forward.
#pragma once
#include <cstdint>
#include <vector>

#include "models/gguf.h"
#include "models/model_config.h"

namespace accel {

// Rows [first, first + count) of a 2-D tensor.
struct RowRange {
  uint64_t first = 0, count = 0;
};

// ssm_ba [n_embd, 2 * n_v_heads] holds, per key-head group g of r = n_v / n_k value heads, r beta
// rows (value heads g*r .. g*r + r - 1) then r alpha rows. Returns the ranges that read every
// beta row in value-head order, then every alpha row.
std::vector<RowRange> qwen3next_ba_rows(const DeltaLayerDims& d);

// The legacy ssm_in [n_embd, 2 * key_dim + 2 * value_dim] holds, per key-head group g, q_g (one
// key head), k_g, v_g (r value heads) and z_g (r value heads). Returns the ranges that read q
// (every key head), k, v and z (every value head), each in head order: attn_qkv then attn_gate.
std::vector<RowRange> qwen3next_qkvz_rows(const DeltaLayerDims& d);

// Views of t's row ranges for pack_rows: t must be 2-D with dims[1] rows, every range inside it
// (ACCEL_CHECK: the callers derive ranges from dims they checked against t). A row is a whole
// number of blocks in every GGUF type, so a view of whole rows is exact for quantized tensors.
std::vector<GgufTensorInfo> row_views(const GgufTensorInfo& t, const std::vector<RowRange>& rows);

}  // namespace accel
