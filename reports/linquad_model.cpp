// The linear + quadratic prefill cost model (linquad_model.h).
#include "reports/linquad_model.h"

#include <array>
#include <cmath>

#include "reports/cost_model.h"

namespace accel::reports {

PrefillFlops prefill_flops_split(const nlohmann::json& cfg, int64_t tokens, int64_t context) {
  return {prefill_linear_flops(cfg, tokens), prefill_attention_flops(cfg, tokens, context)};
}

namespace {

// Solves the 3x3 system m x = v by Gaussian elimination with partial pivoting; false when
// singular relative to the matrix's scale.
bool solve3(std::array<std::array<double, 3>, 3> m, std::array<double, 3> v,
            std::array<double, 3>& x) {
  double scale = 0;
  for (const auto& row : m)
    for (double e : row) scale = std::max(scale, std::fabs(e));
  if (!(scale > 0)) return false;
  for (int col = 0; col < 3; ++col) {
    int piv = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[piv][col])) piv = r;
    if (std::fabs(m[piv][col]) <= 1e-12 * scale) return false;
    std::swap(m[piv], m[col]);
    std::swap(v[piv], v[col]);
    for (int r = col + 1; r < 3; ++r) {
      const double f = m[r][col] / m[col][col];
      for (int c = col; c < 3; ++c) m[r][c] -= f * m[col][c];
      v[r] -= f * v[col];
    }
  }
  for (int r = 2; r >= 0; --r) {
    double s = v[r];
    for (int c = r + 1; c < 3; ++c) s -= m[r][c] * x[c];
    x[r] = s / m[r][r];
  }
  return true;
}

}  // namespace

LinQuadFit fit_linquad(std::span<const PrefillObservation> obs) {
  LinQuadFit fit;
  fit.n = int(obs.size());
  if (obs.size() < 3) return fit;
  // Weighted normal equations: rows (lin, attn, 1) / seconds against 1.
  std::array<std::array<double, 3>, 3> ata{};
  std::array<double, 3> atb{};
  for (const auto& o : obs) {
    if (!(o.seconds > 0)) return fit;
    const std::array<double, 3> row = {o.flops.linear * 1e-9 / o.seconds,
                                       o.flops.attention * 1e-9 / o.seconds, 1 / o.seconds};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) ata[i][j] += row[i] * row[j];
      atb[i] += row[i];
    }
  }
  std::array<double, 3> x{};
  if (!solve3(ata, atb, x)) return fit;
  fit.a = x[0];
  fit.b = x[1];
  fit.c = x[2];
  double ss = 0;
  for (const auto& o : obs) {
    const double e = (fit.seconds(o.flops) - o.seconds) / o.seconds;
    ss += e * e;
  }
  fit.rms_rel = std::sqrt(ss / double(obs.size()));
  fit.ok = true;
  return fit;
}

}  // namespace accel::reports
