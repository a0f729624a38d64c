// The `tiny` synthetic family (target and draft, f32, seed 5) made in a scratch directory and
// loaded once per test process, for fixtures that only read the models. Tests that need another
// seed or type, or that change a model, make their own.
#pragma once
#include <memory>

#include "models/model.h"
#include "tests/support/test_support.h"

namespace accel::test {

struct TinyFamily {
  std::unique_ptr<TempDir> dir;  // holds target.gguf, draft.gguf; tests may add files of their own
  std::unique_ptr<Model> target, draft;
};
const TinyFamily& tiny_family();

}  // namespace accel::test
