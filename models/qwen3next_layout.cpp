// qwen3next's projection row orders (see qwen3next_layout.h).
#include "models/qwen3next_layout.h"

#include "kernels/check.h"

namespace accel {

std::vector<RowRange> qwen3next_ba_rows(const DeltaLayerDims& d) {
  const uint64_t nk = uint64_t(d.n_k_heads), r = uint64_t(d.n_v_heads / d.n_k_heads);
  std::vector<RowRange> out;
  for (uint64_t half = 0; half < 2; ++half)  // beta, then alpha
    for (uint64_t g = 0; g < nk; ++g) out.push_back({g * 2 * r + half * r, r});
  return out;
}

std::vector<RowRange> qwen3next_qkvz_rows(const DeltaLayerDims& d) {
  const uint64_t nk = uint64_t(d.n_k_heads), dk = uint64_t(d.head_k_dim);
  const uint64_t rv = uint64_t(d.n_v_heads / d.n_k_heads) * uint64_t(d.head_v_dim);
  const uint64_t group = 2 * dk + 2 * rv;
  // Offsets and widths of q_g, k_g, v_g and z_g inside group g's block.
  const RowRange parts[4] = {{0, dk}, {dk, dk}, {2 * dk, rv}, {2 * dk + rv, rv}};
  std::vector<RowRange> out;
  for (const RowRange& part : parts)
    for (uint64_t g = 0; g < nk; ++g) out.push_back({g * group + part.first, part.count});
  return out;
}

std::vector<GgufTensorInfo> row_views(const GgufTensorInfo& t, const std::vector<RowRange>& rows) {
  ACCEL_CHECK(t.dims.size() == 2 && t.dims[1] > 0 && t.n_bytes % t.dims[1] == 0,
              "tensor '%s' is not a 2-D matrix of whole rows", t.name.c_str());
  const uint64_t row_bytes = t.n_bytes / t.dims[1];
  std::vector<GgufTensorInfo> out;
  for (const RowRange& r : rows) {
    ACCEL_CHECK(r.count > 0 && r.first < t.dims[1] && r.count <= t.dims[1] - r.first,
                "rows [%llu, +%llu) outside tensor '%s' of %llu rows", (unsigned long long)r.first,
                (unsigned long long)r.count, t.name.c_str(), (unsigned long long)t.dims[1]);
    GgufTensorInfo v = t;
    v.dims = {t.dims[0], r.count};
    v.offset = t.offset + r.first * row_bytes;
    v.n_bytes = r.count * row_bytes;
    v.n_elements = r.count * t.dims[0];
    out.push_back(v);
  }
  return out;
}

}  // namespace accel
