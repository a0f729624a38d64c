#!/usr/bin/env bash
# Sets up, builds and runs the tests (every test; the portable kind only the kernels, models and
# methods tests, see below). Usage: scripts/test.sh [release|portable|sanitize]
# (build kinds and directories as in scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
# The portable build exists to run the kernels' 8-lane AVX2 paths, so it builds and runs only the
# test programs that reach kernels directly (kernels, models, methods); the suites, results,
# reports and harness tests call the same kernels through those layers and run in the other kinds.
targets=()
labels=()
case "$kind" in
  release) dir=build ;;
  portable) dir=build-portable; targets=(kernels_tests models_tests methods_tests)
            labels=(-L '^(kernels|models|methods)$') ;;
  sanitize) dir=build-sanitize ;;
  *) echo "test.sh: unknown build kind '$kind' (release|portable|sanitize)" >&2; exit 2 ;;
esac
# Tree hygiene first: it takes a second and needs no build.
scripts/check_tree.sh
scripts/setup.sh
scripts/build.sh "$kind" "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 1200 "${labels[@]}"
