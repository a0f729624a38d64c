// Ridge fitting of KV Prediction's maps (see kvpred_fit.h). Eigen is used inside the functions
// that compute; nothing outside this file sees an Eigen type.
#include "methods/kvpred_fit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
// Eigen 3.4 with GCC 12 and AVX-512 warns of (maybe-)uninitialized registers inside its own
// intrinsics wrappers (false positives in packet code: GCC's bug 105593, see kernels/simd.h; the
// sanitizer build's -O1 reports them as certain); silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// Eigen stays single-threaded: its OpenMP regions spin against the engine's pool on a busy
// machine (a 40x slowdown measured on 2 shared cores), and these products are small.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Dense>
#include <stdexcept>

#include "models/generation.h"

namespace accel::kvpred {

namespace {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using StridedF = Eigen::Map<const MatF, 0, Eigen::OuterStride<>>;

}  // namespace

RidgeFit::RidgeFit(int in, int out)
    : in_(in),
      out_(out),
      sxx_(size_t(in + 1) * size_t(in + 1), 0.0),
      sxy_(size_t(in + 1) * size_t(out), 0.0) {
  if (in < 1 || out < 1) throw std::invalid_argument("RidgeFit: dimensions must be positive");
}

void RidgeFit::add(const float* x, size_t ldx, const float* y, size_t ldy, size_t n) {
  if (n == 0) return;
  const Eigen::Index di = in_, dout = out_, N = Eigen::Index(n);
  MatD xa(N, di + 1);  // [x; 1]
  xa.leftCols(di) = StridedF(x, N, di, Eigen::OuterStride<>(Eigen::Index(ldx))).cast<double>();
  xa.col(di).setOnes();
  const MatD yd = StridedF(y, N, dout, Eigen::OuterStride<>(Eigen::Index(ldy))).cast<double>();
  Eigen::Map<MatD> sxx(sxx_.data(), di + 1, di + 1), sxy(sxy_.data(), di + 1, dout);
  sxx.noalias() += xa.transpose() * xa;
  sxy.noalias() += xa.transpose() * yd;
  syy_ += yd.squaredNorm();
  n_ += n;
}

LinearMap RidgeFit::solve(double ridge) const {
  if (n_ == 0) throw std::invalid_argument("RidgeFit: no rows");
  if (!(ridge >= 0)) throw std::invalid_argument("RidgeFit: ridge must be >= 0");
  const Eigen::Index di = in_, dout = out_;
  const Eigen::Map<const MatD> sxx(sxx_.data(), di + 1, di + 1), sxy(sxy_.data(), di + 1, dout);
  const double n = double(n_);
  const Eigen::VectorXd mx = sxx.col(di).head(di) / n;  // sum of x / n
  const Eigen::VectorXd my = sxy.row(di).transpose() / n;
  MatD cxx = sxx.topLeftCorner(di, di) - n * mx * mx.transpose();
  const MatD cxy = sxy.topRows(di) - n * mx * my.transpose();
  MatD w;  // [in][out] = W^T
  if (ridge > 0) {
    const double lambda = ridge * std::max(cxx.trace(), 1e-300) / double(di);
    cxx.diagonal().array() += lambda;
    w = cxx.ldlt().solve(cxy);
  } else {
    w = cxx.completeOrthogonalDecomposition().solve(cxy);
  }
  const Eigen::VectorXd b = my - w.transpose() * mx;
  LinearMap m{in_, out_, std::vector<float>(size_t(in_) * size_t(out_)),
              std::vector<float>(size_t(out_))};
  for (Eigen::Index o = 0; o < dout; ++o) {
    for (Eigen::Index i = 0; i < di; ++i) m.w[size_t(o * di + i)] = float(w(i, o));
    m.b[size_t(o)] = float(b(o));
  }
  return m;
}

double RidgeFit::relative_error(const LinearMap& m) const {
  // |W~ x~ - y|^2 summed = tr(W~ Sxx W~^T) - 2 tr(W~ Sxy) + sum |y|^2 with W~ = [W b].
  const Eigen::Index di = in_, dout = out_;
  const Eigen::Map<const MatD> sxx(sxx_.data(), di + 1, di + 1), sxy(sxy_.data(), di + 1, dout);
  MatD wt(dout, di + 1);
  for (Eigen::Index o = 0; o < dout; ++o) {
    for (Eigen::Index i = 0; i < di; ++i) wt(o, i) = m.w[size_t(o * di + i)];
    wt(o, di) = m.b[size_t(o)];
  }
  const double quad = (wt * sxx).cwiseProduct(wt).sum();
  const double cross = (wt * sxy).trace();
  const double err = std::max(0.0, quad - 2 * cross + syy_);
  return syy_ > 0 ? std::sqrt(err / syy_) : 0.0;
}

double relative_error(const LinearMap& m, const float* x, size_t ldx, const float* y, size_t ldy,
                      size_t n) {
  double num = 0, den = 0;
  for (size_t t = 0; t < n; ++t)
    for (int o = 0; o < m.out; ++o) {
      double acc = m.b[size_t(o)];
      for (int i = 0; i < m.in; ++i)
        acc += double(m.w[size_t(o) * size_t(m.in) + size_t(i)]) * x[t * ldx + size_t(i)];
      const double yo = y[t * ldy + size_t(o)];
      num += (acc - yo) * (acc - yo);
      den += yo * yo;
    }
  return den > 0 ? std::sqrt(num / den) : 0.0;
}

std::vector<int> default_layer_map(int n_base, const GgufFile& f, int n_aux, std::string* rule) {
  const auto src = f.get_uint_opt("kvpred.aux.source_block_count");
  if (src && f.has("kvpred.aux.source_layers") && *src == uint64_t(n_base)) {
    const std::vector<int64_t> kept64 = f.get_int_array("kvpred.aux.source_layers");
    if (int64_t(kept64.size()) == n_aux) {
      std::vector<int> kept;
      for (int64_t k : kept64) kept.push_back(int(std::clamp<int64_t>(k, -1, 1 << 20)));
      if (rule) *rule = "kvp-lp";
      return pruned_layer_map(n_base, kept);  // validates the list
    }
  }
  if (rule) *rule = "kvp-c";
  return canonical_layer_map(n_base, n_aux);
}

Predictor fit_predictor(const Model& target, const Model& aux, std::span<const int32_t> tokens,
                        const FitOptions& opt, FitReport* report) {
  const ModelConfig &tc = target.config(), &ac = aux.config();
  if (tc.n_vocab != ac.n_vocab)
    throw std::invalid_argument("kvpred fit: aux and target vocabularies differ (" +
                                std::to_string(ac.n_vocab) + " vs " + std::to_string(tc.n_vocab) +
                                ")");
  if (!(opt.holdout >= 0 && opt.holdout < 1))
    throw std::invalid_argument("kvpred fit: holdout must be in [0, 1)");
  if (opt.context == 0 || opt.chunk == 0)
    throw std::invalid_argument("kvpred fit: context and chunk must be positive");
  if (opt.context > size_t(std::min(tc.n_ctx, ac.n_ctx)))
    throw std::invalid_argument("kvpred fit: context " + std::to_string(opt.context) +
                                " exceeds a model's context length");
  FitReport rep;
  std::vector<int> map = opt.layer_map;
  if (map.empty()) {
    map = default_layer_map(tc.n_layer, aux.file(), ac.n_layer, &rep.map_rule);
  } else {
    rep.map_rule = "given";
    if (int(map.size()) != tc.n_layer)
      throw std::invalid_argument("kvpred fit: layer map has " + std::to_string(map.size()) +
                                  " entries for a " + std::to_string(tc.n_layer) + "-layer target");
    for (int j : map)
      if (j < 0 || j >= ac.n_layer)
        throw std::invalid_argument("kvpred fit: layer map entry " + std::to_string(j) +
                                    " outside the aux's " + std::to_string(ac.n_layer) + " layers");
  }
  const size_t n_tok = tokens.size();
  const size_t n_held = size_t(std::floor(double(n_tok) * opt.holdout));
  const size_t n_train = n_tok - n_held;
  if (n_train == 0 || (opt.holdout > 0 && n_held == 0))
    throw std::invalid_argument("kvpred fit: " + std::to_string(n_tok) +
                                " calibration tokens are too few for a held-out fraction of " +
                                std::to_string(opt.holdout));
  const int Lb = tc.n_layer, La = ac.n_layer;
  const size_t db = size_t(tc.kv_dim()), da = size_t(ac.kv_dim());
  std::vector<RidgeFit> fk, fv;
  for (int i = 0; i < Lb; ++i) fk.emplace_back(int(da), int(db)), fv.emplace_back(int(da), int(db));

  // Captured rows of one forward call: (layer) -> [T][dim] for K and V.
  const size_t nb = static_cast<size_t>(Lb), na = static_cast<size_t>(La);
  std::vector<std::vector<float>> tk(nb), tv(nb), ak(na), av(na);
  auto capture = [](std::vector<std::vector<float>>& K, std::vector<std::vector<float>>& V,
                    size_t dim) {
    ForwardHooks h;
    h.on_pre_rope_kv = [&K, &V, dim](int layer, const float* k, const float* v, size_t T,
                                     size_t ld) {
      K[size_t(layer)].resize(T * dim);
      V[size_t(layer)].resize(T * dim);
      for (size_t t = 0; t < T; ++t) {
        std::memcpy(&K[size_t(layer)][t * dim], k + t * ld, dim * sizeof(float));
        std::memcpy(&V[size_t(layer)][t * dim], v + t * ld, dim * sizeof(float));
      }
    };
    return h;
  };
  const ForwardHooks th = capture(tk, tv, db), ah = capture(ak, av, da);
  // Held-out rows, kept to measure the error directly: (layer) -> [n_held][dim].
  std::vector<std::vector<float>> hk(nb), hv(nb), hak(na), hav(na);

  for (size_t w0 = 0; w0 < n_tok; w0 += opt.context) {
    const size_t wlen = std::min(opt.context, n_tok - w0);
    KVCache tcache = target.make_cache(), acache = aux.make_cache();
    tcache.reserve(wlen);
    acache.reserve(wlen);
    const std::vector<int32_t> pos = iota_positions(0, wlen);
    for (size_t c0 = 0; c0 < wlen; c0 += opt.chunk) {
      const size_t len = std::min(opt.chunk, wlen - c0);
      const auto toks = tokens.subspan(w0 + c0, len);
      const auto ps = std::span(pos).subspan(c0, len);
      target.forward(toks, ps, tcache, {}, &th);
      aux.forward(toks, ps, acache, {}, &ah);
      // Rows [g0, g0 + len) of the whole token sequence; the first n_train train the maps.
      const size_t g0 = w0 + c0;
      const size_t n_tr = g0 >= n_train ? 0 : std::min(len, n_train - g0);
      for (int i = 0; i < Lb; ++i) {
        const size_t j = size_t(map[size_t(i)]);
        fk[size_t(i)].add(ak[j].data(), da, tk[size_t(i)].data(), db, n_tr);
        fv[size_t(i)].add(av[j].data(), da, tv[size_t(i)].data(), db, n_tr);
      }
      if (n_tr < len) {
        for (int i = 0; i < Lb; ++i) {
          hk[size_t(i)].insert(hk[size_t(i)].end(),
                               tk[size_t(i)].begin() + std::ptrdiff_t(n_tr * db),
                               tk[size_t(i)].end());
          hv[size_t(i)].insert(hv[size_t(i)].end(),
                               tv[size_t(i)].begin() + std::ptrdiff_t(n_tr * db),
                               tv[size_t(i)].end());
        }
        for (int j = 0; j < La; ++j) {
          hak[size_t(j)].insert(hak[size_t(j)].end(),
                                ak[size_t(j)].begin() + std::ptrdiff_t(n_tr * da),
                                ak[size_t(j)].end());
          hav[size_t(j)].insert(hav[size_t(j)].end(),
                                av[size_t(j)].begin() + std::ptrdiff_t(n_tr * da),
                                av[size_t(j)].end());
        }
      }
    }
  }

  Predictor p;
  p.n_base = Lb;
  p.n_aux = La;
  p.base_kv_dim = int(db);
  p.aux_kv_dim = int(da);
  p.layer_map = map;
  rep.train_rows = fk[0].rows();
  rep.heldout_rows = n_held;
  std::vector<float> err_k, err_v;
  for (int i = 0; i < Lb; ++i) {
    const size_t j = size_t(map[size_t(i)]);
    LayerFitError e;
    e.aux_layer = int(j);
    p.k.push_back(fk[size_t(i)].solve(opt.ridge));
    p.v.push_back(fv[size_t(i)].solve(opt.ridge));
    e.train_k = fk[size_t(i)].relative_error(p.k.back());
    e.train_v = fv[size_t(i)].relative_error(p.v.back());
    if (n_held > 0) {
      e.heldout_k = relative_error(p.k.back(), hak[j].data(), da, hk[size_t(i)].data(), db, n_held);
      e.heldout_v = relative_error(p.v.back(), hav[j].data(), da, hv[size_t(i)].data(), db, n_held);
    }
    err_k.push_back(float(e.heldout_k));
    err_v.push_back(float(e.heldout_v));
    rep.layers.push_back(e);
  }
  p.fit = {{"ridge", opt.ridge},
           {"holdout", opt.holdout},
           {"context", uint64_t(opt.context)},
           {"train_rows", uint64_t(rep.train_rows)},
           {"heldout_rows", uint64_t(rep.heldout_rows)},
           {"layer_map_rule", rep.map_rule},
           {"heldout_rel_err_k", err_k},
           {"heldout_rel_err_v", err_v}};
  if (report) *report = std::move(rep);
  return p;
}

}  // namespace accel::kvpred
