#!/usr/bin/env bash
# Configures and builds one build directory. Usage: scripts/build.sh [release|portable|sanitize]
# [TARGET...] (no targets: everything the kind enables)
# release  -> build/           -march=native (AVX-512 kernels on a CPU that has it)
# portable -> build-portable/  ACCELBENCH_NATIVE=OFF: -mavx2 -mfma -mf16c, so the 8-lane AVX2 kernel
#                              paths are built and tested even on an AVX-512 machine; no benchmarks
# sanitize -> build-sanitize/  ASan + UBSan, no benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  portable) dir=build-portable; flags=(-DCMAKE_BUILD_TYPE=Release -DACCELBENCH_NATIVE=OFF -DACCELBENCH_BENCHMARKS=OFF) ;;
  sanitize) dir=build-sanitize; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCELBENCH_SANITIZE=ON -DACCELBENCH_BENCHMARKS=OFF) ;;
  *) echo "build.sh: unknown build kind '$kind' (release|portable|sanitize)" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
shift || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
