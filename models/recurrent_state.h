// RecurrentState: one recurrent layer's cache entry (Mamba-2 or Gated DeltaNet): the conv window
// of the last d_conv - 1 inputs and the scan state, both f32, with the token count they stand for,
// a checkpoint for exact rollback and free-standing snapshots. Owns the buffers and their
// bookkeeping only: the kernels (kernels/causal_conv1d.h, ssm_scan.h, gated_delta_rule.h) advance
// them in place, and the model's cache holds one per recurrent layer beside attention storage.
//
// Rollback design (PLD verify, any speculative step): a checkpoint at the last committed token,
// then replay of the accepted tokens. A verify step feeds k + 1 tokens; when only j + 1 of them are
// kept, rollback() restores the checkpoint bit for bit and the caller runs the recurrent layers
// again over the j + 1 kept tokens (from their saved layer inputs, or by a forward of those
// tokens). Why not one state per verified token (llama.cpp's n_rs_seq snapshot slots): that costs k
// + 1 state copies per layer per step (small-nemotron-h's width: 24 x 64 x 128 floats = 768 KiB per
// layer, so 12.75 MiB per layer at k = 16) and memory to match, on every step, while replay costs
// work only on a partial accept and one copy per step. Replay is exact because the kernels scan in
// sequential token order on every path: running the kept tokens in one call gives the bits that
// decoding them one by one gives, so after rollback + replay the state equals greedy decoding's
// state exactly.
#pragma once
#include <cstddef>
#include <vector>

namespace accel {

struct RecurrentStateShape {
  // Channels of the conv window: Mamba-2 d_inner + 2 n_group d_state, Gated DeltaNet
  // 2 n_k_heads head_k_dim + n_v_heads head_v_dim.
  int conv_channels = 0;
  int d_conv = 0;  // the conv kernel width (>= 1); the window keeps d_conv - 1 rows
  // Floats of the scan state: ssm_state_elements() or gated_delta_state_elements().
  size_t scan_elements = 0;
};

// Throws std::invalid_argument naming the field when a shape is unusable (zero or negative sizes,
// or a state past 2^32 floats, which no published model comes near).
void validate(const RecurrentStateShape& shape);

class RecurrentState {
 public:
  RecurrentState() = default;
  explicit RecurrentState(const RecurrentStateShape& shape);  // zeroed, 0 tokens

  const RecurrentStateShape& shape() const { return shape_; }
  // [d_conv - 1][conv_channels], oldest row first, as causal_conv1d takes it.
  float* conv_window() { return conv_.data(); }
  const float* conv_window() const { return conv_.data(); }
  // [scan_elements], laid out as the scan kernel's header says.
  float* scan_state() { return scan_.data(); }
  const float* scan_state() const { return scan_.data(); }

  // Tokens the state has consumed since clear(); advance(n) records n more (the caller has just
  // run the kernels over them). The model's cache keeps this equal to its attention size().
  size_t tokens() const { return tokens_; }
  void advance(size_t n) { tokens_ += n; }

  // Back to the empty sequence: zero state, 0 tokens, no checkpoint (buffers kept).
  void clear();

  // Bytes of the state itself (window + scan state), independent of context length.
  size_t bytes() const;
  // Bytes held for the checkpoint: 0 until the first checkpoint(), then bytes() again.
  size_t checkpoint_bytes() const;

  // Saves the current state and token count as the checkpoint (replacing any earlier one).
  void checkpoint();
  bool has_checkpoint() const { return has_checkpoint_; }
  size_t checkpoint_tokens() const { return checkpoint_tokens_; }
  // Restores the checkpoint exactly (it stays, so a step may roll back again). Throws
  // std::logic_error when there is none.
  void rollback();

  // A free-standing copy (e.g. the state after a full prefill, kept to measure a sparse
  // prefill's drift against it).
  struct Snapshot {
    RecurrentStateShape shape;
    size_t tokens = 0;
    std::vector<float> conv, scan;
  };
  Snapshot snapshot() const;
  // Throws std::invalid_argument when the snapshot's shape differs from this state's.
  void restore(const Snapshot& s);

 private:
  RecurrentStateShape shape_;
  size_t tokens_ = 0, checkpoint_tokens_ = 0;
  bool has_checkpoint_ = false;
  std::vector<float> conv_, scan_;            // the live state
  std::vector<float> conv_ckpt_, scan_ckpt_;  // allocated by the first checkpoint()
};

// Relative L2 distance ||a - b|| / ||b|| of two states of one shape, per part (the scan state is
// what a sparse prefill's drift is measured on; the window only remembers the last inputs). A part
// whose reference b is all zero gives 0 when a equals it, else infinity. Throws
// std::invalid_argument when the shapes differ.
struct StateDistance {
  double conv = 0, scan = 0;
};
StateDistance relative_l2_distance(const RecurrentState& a, const RecurrentState& b);

}  // namespace accel
