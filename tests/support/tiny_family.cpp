// Implementation of tiny_family.h.
#include "tests/support/tiny_family.h"

#include "models/synthetic.h"

namespace accel::test {

const TinyFamily& tiny_family() {
  static const TinyFamily family = [] {
    TinyFamily f;
    f.dir = std::make_unique<TempDir>();
    const auto paths = make_synthetic_family("tiny", f.dir->path().string(), 5, DType::F32);
    f.target = Model::load(paths[0]);
    f.draft = Model::load(paths[1]);
    return f;
  }();
  return family;
}

}  // namespace accel::test
