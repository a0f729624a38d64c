// Reference states of a full prefill and the drift stat (see state_drift.h).
#include "methods/state_drift.h"

#include <algorithm>
#include <stdexcept>

#include "models/generation.h"

namespace accel {

ReferenceStates full_prefill_states(const Model& m, std::span<const int32_t> prompt,
                                    KVDType kv_dtype, size_t chunk) {
  if (!has_recurrent_layers(m.config()))
    throw std::invalid_argument("state drift: the target '" + m.path() +
                                "' has no recurrent layer (only hybrids keep a state to drift)");
  KVCache cache = m.make_cache(kv_dtype);
  cache.reserve(prompt.size());
  prefill(m, prompt, iota_positions(0, prompt.size()), cache, chunk);
  ReferenceStates ref;
  for (int l = 0; l < m.config().n_layer; ++l) {
    if (!cache.is_recurrent(l)) continue;
    const RecurrentState& s = cache.recurrent_state(l);
    RecurrentState copy(s.shape());  // without the checkpoint the live state carries
    copy.restore(s.snapshot());
    ref.layers.push_back(l);
    ref.states.push_back(std::move(copy));
  }
  return ref;
}

nlohmann::json state_drift_json(const KVCache& cache, const ReferenceStates& ref) {
  nlohmann::json scan = nlohmann::json::array(), conv = nlohmann::json::array();
  double sum = 0, max = 0;
  for (size_t i = 0; i < ref.layers.size(); ++i) {
    const StateDistance d =
        relative_l2_distance(cache.recurrent_state(ref.layers[i]), ref.states[i]);
    scan.push_back(d.scan);
    conv.push_back(d.conv);
    sum += d.scan;
    max = std::max(max, d.scan);
  }
  const double n = double(ref.layers.size());
  return {{"layers", ref.layers},
          {"scan", scan},
          {"conv", conv},
          {"scan_mean", n > 0 ? sum / n : 0.0},
          {"scan_max", max}};
}

}  // namespace accel
