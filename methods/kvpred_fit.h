// Fitting KV Prediction's maps (`accelbench kvpred fit`): run the target and the auxiliary on the
// same calibration tokens, pair each target layer's pre-RoPE K/V rows with those of the aux layer
// the map assigns it, and solve every base layer's K and V map by ridge least squares (Eigen, in
// double). The tail of the tokens is held out and the relative error reported per layer. The
// paper trains the predictor jointly with a fine-tuned auxiliary (spec §2.6); this closed-form fit
// of the linear maps alone, with the auxiliary frozen, is this harness's substitute.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "methods/kvpred_predictor.h"
#include "models/model.h"

namespace accel::kvpred {

// Ridge least squares y = W x + b over streamed rows, from sufficient statistics in double.
// The bias is not penalised: minimising |X W^T + 1 b^T - Y|^2 + lambda |W|^2 centres the data, so
// W = (Cxx + lambda I)^-1 Cxy on the centred covariances and b = mean(y) - W mean(x), with
// lambda = ridge * trace(Cxx) / in (ridge is relative to the mean feature variance, so it does not
// depend on the scale or the count of the rows). ridge = 0 takes the minimum-norm solution.
class RidgeFit {
 public:
  RidgeFit(int in, int out);
  // Adds n rows: x [n][in] with row stride ldx, y [n][out] with row stride ldy.
  void add(const float* x, size_t ldx, const float* y, size_t ldy, size_t n);
  size_t rows() const { return n_; }
  LinearMap solve(double ridge) const;
  // Relative error |W x + b - y| / |y| (Frobenius over the added rows) of a map, from the
  // statistics (no second pass over the rows).
  double relative_error(const LinearMap& m) const;

 private:
  int in_, out_;
  size_t n_ = 0;
  std::vector<double> sxx_;  // [(in+1)][(in+1)] of [x; 1]
  std::vector<double> sxy_;  // [(in+1)][out]
  double syy_ = 0;
};

// Relative error |W x + b - y|_F / |y|_F of a map over explicit rows.
double relative_error(const LinearMap& m, const float* x, size_t ldx, const float* y, size_t ldy,
                      size_t n);

struct FitOptions {
  double ridge = 1e-4;         // relative ridge (see RidgeFit)
  double holdout = 0.1;        // fraction of the tokens (the tail) held out for the reported error
  size_t context = 2048;       // tokens run per window (each window restarts at position 0)
  size_t chunk = 512;          // tokens per forward call
  std::vector<int> layer_map;  // [n_base]; empty: default_layer_map
};

struct LayerFitError {
  int aux_layer = 0;
  double train_k = 0, train_v = 0, heldout_k = 0, heldout_v = 0;  // relative errors
};

struct FitReport {
  std::string map_rule;  // "given", "kvp-lp" or "kvp-c"
  size_t train_rows = 0, heldout_rows = 0;
  std::vector<LayerFitError> layers;  // [n_base]
};

// The map a fit uses when none is given: an auxiliary made by `models make-aux` from this target
// (kvpred.aux.source_layers and a source block count equal to the target's) gets the KVP-LP map of
// its kept layers, any other the KVP-C rule. `rule` receives "kvp-lp" or "kvp-c".
// n_base is the target's block count, aux_file/n_aux the auxiliary's file and block count.
std::vector<int> default_layer_map(int n_base, const GgufFile& aux_file, int n_aux,
                                   std::string* rule);

// Fits every base layer's maps on `tokens` (positions restart at 0 every `context` tokens).
// Throws std::invalid_argument when the models do not pair (vocabulary) or there are too few
// tokens (at least one training row and, when holdout > 0, one held-out row).
Predictor fit_predictor(const Model& target, const Model& aux, std::span<const int32_t> tokens,
                        const FitOptions& opt, FitReport* report = nullptr);

}  // namespace accel::kvpred
