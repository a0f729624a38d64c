// small_family_target (see small_family.h).
#include "tests/support/small_family.h"

#include <filesystem>
#include <memory>
#include <string>

#include "models/synthetic.h"

namespace accel::test {

const Model& small_family_target() {
  static const std::unique_ptr<Model> m = [] {
    const std::string dir = std::string(ACCELBENCH_SOURCE_DIR) + "/models-cache/small";
    if (!std::filesystem::exists(dir + "/target.gguf"))
      make_synthetic_family("small", dir, 0, DType::F32);
    return Model::load(dir + "/target.gguf");
  }();
  return *m;
}

const Model& medium_q4_k_m_target() {
  static const std::unique_ptr<Model> m = [] {
    const std::string dir = std::string(ACCELBENCH_SOURCE_DIR) + "/models-cache/medium-q4_k_m";
    if (!std::filesystem::exists(dir + "/target.gguf"))
      make_synthetic_family("medium", dir, 0, *weight_scheme_from_name("q4_k_m"));
    return Model::load(dir + "/target.gguf");
  }();
  return *m;
}

}  // namespace accel::test
