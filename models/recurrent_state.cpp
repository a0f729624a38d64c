// RecurrentState's buffers, checkpoint and snapshots. Copies are plain memcpy of f32 buffers, so a
// rollback or restore gives back exactly the bits that were saved.
#include "models/recurrent_state.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace accel {
namespace {

constexpr size_t kMaxElements = size_t(1) << 32;

std::string describe(const RecurrentStateShape& s) {
  return "conv_channels " + std::to_string(s.conv_channels) + ", d_conv " +
         std::to_string(s.d_conv) + ", scan_elements " + std::to_string(s.scan_elements);
}

bool same_shape(const RecurrentStateShape& a, const RecurrentStateShape& b) {
  return a.conv_channels == b.conv_channels && a.d_conv == b.d_conv &&
         a.scan_elements == b.scan_elements;
}

size_t conv_elements(const RecurrentStateShape& s) {
  return size_t(s.d_conv - 1) * size_t(s.conv_channels);
}

// ||a - b|| / ||b|| in double.
double rel_l2(const float* a, const float* b, size_t n) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - double(b[i]);
    diff += d * d;
    ref += double(b[i]) * double(b[i]);
  }
  if (ref == 0) return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff / ref);
}

}  // namespace

void validate(const RecurrentStateShape& s) {
  if (s.conv_channels <= 0)
    throw std::invalid_argument("recurrent state: conv_channels must be positive (" + describe(s) +
                                ")");
  if (s.d_conv <= 0)
    throw std::invalid_argument("recurrent state: d_conv must be positive (" + describe(s) + ")");
  if (s.scan_elements == 0)
    throw std::invalid_argument("recurrent state: scan_elements must be positive (" + describe(s) +
                                ")");
  if (s.scan_elements > kMaxElements || conv_elements(s) > kMaxElements)
    throw std::invalid_argument("recurrent state: more than 2^32 floats (" + describe(s) + ")");
}

RecurrentState::RecurrentState(const RecurrentStateShape& shape) : shape_(shape) {
  validate(shape);
  conv_.assign(conv_elements(shape), 0.f);
  scan_.assign(shape.scan_elements, 0.f);
}

void RecurrentState::clear() {
  std::fill(conv_.begin(), conv_.end(), 0.f);
  std::fill(scan_.begin(), scan_.end(), 0.f);
  tokens_ = 0;
  has_checkpoint_ = false;
  checkpoint_tokens_ = 0;
}

size_t RecurrentState::bytes() const {
  return (conv_.size() + scan_.size()) * sizeof(float);
}

size_t RecurrentState::checkpoint_bytes() const {
  return (conv_ckpt_.size() + scan_ckpt_.size()) * sizeof(float);
}

void RecurrentState::checkpoint() {
  conv_ckpt_ = conv_;  // same size after the first call: no reallocation
  scan_ckpt_ = scan_;
  checkpoint_tokens_ = tokens_;
  has_checkpoint_ = true;
}

void RecurrentState::rollback() {
  if (!has_checkpoint_) throw std::logic_error("recurrent state: rollback() without a checkpoint");
  std::copy(conv_ckpt_.begin(), conv_ckpt_.end(), conv_.begin());
  std::copy(scan_ckpt_.begin(), scan_ckpt_.end(), scan_.begin());
  tokens_ = checkpoint_tokens_;
}

RecurrentState::Snapshot RecurrentState::snapshot() const {
  return {shape_, tokens_, conv_, scan_};
}

void RecurrentState::restore(const Snapshot& s) {
  if (!same_shape(s.shape, shape_) || s.conv.size() != conv_.size() ||
      s.scan.size() != scan_.size())
    throw std::invalid_argument("recurrent state: snapshot of shape (" + describe(s.shape) +
                                ") restored into a state of shape (" + describe(shape_) + ")");
  std::copy(s.conv.begin(), s.conv.end(), conv_.begin());
  std::copy(s.scan.begin(), s.scan.end(), scan_.begin());
  tokens_ = s.tokens;
}

StateDistance relative_l2_distance(const RecurrentState& a, const RecurrentState& b) {
  if (!same_shape(a.shape(), b.shape()))
    throw std::invalid_argument("recurrent state distance: shapes differ (" + describe(a.shape()) +
                                " vs " + describe(b.shape()) + ")");
  const RecurrentStateShape& s = a.shape();
  return {rel_l2(a.conv_window(), b.conv_window(), conv_elements(s)),
          rel_l2(a.scan_state(), b.scan_state(), s.scan_elements)};
}

}  // namespace accel
