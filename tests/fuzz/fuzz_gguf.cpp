// libFuzzer target "gguf" (built with -DACCELBENCH_FUZZ=ON by scripts/fuzz.sh): hands each input to
// accel::fuzz::gguf (tests/support/fuzz_entries.h), which swallows only documented bad-input
// errors.
#include "tests/support/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return accel::fuzz::gguf(data, size);
}
