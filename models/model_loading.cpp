// The loader and forward helpers Model's translation units share (model_loading.h).
#include "models/model_loading.h"

#include <string>

#include "kernels/quant.h"

namespace accel::model_loading {

std::string dims_str(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

void timed_gemm(ForwardProfile* prof, const float* X, size_t M, size_t ldx, const PackedWeight& W,
                float* Y, size_t ldy, const float* bias) {
  if (!prof) return gemm(X, M, ldx, W, Y, ldy, bias);
  const auto t0 = Clock::now();
  gemm(X, M, ldx, W, Y, ldy, bias);
  prof->gemm_s += std::chrono::duration<double>(Clock::now() - t0).count();
  prof->gemm_flops += 2.0 * double(M) * double(W.rows()) * double(W.cols());
}

const GgufTensorInfo& expect(const GgufFile& f, const std::string& name,
                             const std::vector<uint64_t>& dims) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) throw GgufError("[model] " + f.path() + ": tensor '" + name + "' is missing");
  if (t->dims != dims)
    throw GgufError("[model] " + f.path() + ": tensor '" + name + "' has shape " +
                    dims_str(t->dims) + ", expected " + dims_str(dims));
  return *t;
}

double causal_pairs(const int32_t* kv_pos, size_t n_kv, const int32_t* q_pos, size_t T) {
  double pairs = 0;
  for (size_t t = 0; t < T; ++t)
    for (size_t j = 0; j < n_kv; ++j) pairs += kv_pos[j] <= q_pos[t] ? 1 : 0;
  return pairs;
}

std::vector<float> load_vector(const GgufFile& f, const std::string& name, uint64_t n) {
  const GgufTensorInfo& t = expect(f, name, {n});
  std::vector<float> v(n);
  dequantize_row(t.type, f.tensor_data(t), v.data(), n);
  return v;
}

// Mixed types (Q4_K_M's q4_K Q and K with a q6_K V) keep the file's values and bytes.
PackedWeight pack_rows(const GgufFile& f, const std::vector<const GgufTensorInfo*>& parts,
                       size_t cols) {
  bool same = true;
  size_t rows = 0;
  for (auto* p : parts) {
    same = same && p->type == parts[0]->type;
    rows += p->dims[1];
  }
  // Each part's file pages are dropped once packed (see GgufFile::release_resident_pages), so
  // loading holds the packed model plus at most one matrix's pages, not two copies of the model.
  auto release = [&] {
    for (auto* p : parts) f.release_resident_pages(*p);
  };
  if (parts.size() == 1) {
    PackedWeight w = PackedWeight::pack(parts[0]->type, f.tensor_data(*parts[0]), rows, cols);
    release();
    return w;
  }
  if (same) {
    std::vector<PackedWeight::RowSource> src;
    for (auto* p : parts) src.push_back({f.tensor_data(*p), size_t(p->dims[1])});
    PackedWeight w = PackedWeight::pack(parts[0]->type, src, cols);
    release();
    return w;
  }
  std::vector<PackedWeight::TypedRowSource> src;
  for (auto* p : parts) src.push_back({p->type, {f.tensor_data(*p), size_t(p->dims[1])}});
  PackedWeight w = PackedWeight::pack_mixed(src, cols);
  release();
  return w;
}

// A top-k routed MoE FFN's router and experts (ffn_gate_inp, ffn_{gate,up,down}_exps): each
// expert sliced out of the 3-D tensors as 2-D views in the file's type.
GgufTensorInfo expert_slice(const GgufTensorInfo& t, uint64_t e, uint64_t n_expert, uint64_t rows,
                            uint64_t cols) {
  GgufTensorInfo s = t;
  s.dims = {cols, rows};
  s.n_bytes = t.n_bytes / n_expert;
  s.offset = t.offset + e * s.n_bytes;
  return s;
}

void load_routed_experts(const GgufFile& f, const std::string& p, const ModelConfig& c,
                         LayerWeights& L) {
  const uint64_t E = uint64_t(c.n_embd), F = uint64_t(c.n_ff_expert), NE = uint64_t(c.n_expert);
  L.w_router = pack_rows(f, {&expect(f, p + "ffn_gate_inp.weight", {E, NE})}, E);
  const auto& g = expect(f, p + "ffn_gate_exps.weight", {E, F, NE});
  const auto& u = expect(f, p + "ffn_up_exps.weight", {E, F, NE});
  const auto& d = expect(f, p + "ffn_down_exps.weight", {F, E, NE});
  for (uint64_t e = 0; e < NE; ++e) {
    GgufTensorInfo ge = expert_slice(g, e, NE, F, E), ue = expert_slice(u, e, NE, F, E),
                   de = expert_slice(d, e, NE, E, F);
    L.exp_gate_up.push_back(pack_rows(f, {&ge, &ue}, E));
    L.exp_down.push_back(pack_rows(f, {&de}, F));
  }
}

}  // namespace accel::model_loading
