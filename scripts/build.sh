#!/usr/bin/env bash
# Configures and builds one build directory. Usage: scripts/build.sh [release|sanitize]
# release -> build/, sanitize -> build-sanitize/ (ASan + UBSan, no benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) dir=build-sanitize; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCELBENCH_SANITIZE=ON -DACCELBENCH_BENCHMARKS=OFF) ;;
  *) echo "build.sh: unknown build kind '$kind' (release|sanitize)" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
