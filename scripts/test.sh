#!/usr/bin/env bash
# Sets up, builds and runs every test. Usage: scripts/test.sh [release|portable|sanitize]
# (build kinds and directories as in scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
case "$kind" in
  release) dir=build ;;
  portable) dir=build-portable ;;
  sanitize) dir=build-sanitize ;;
  *) echo "test.sh: unknown build kind '$kind' (release|portable|sanitize)" >&2; exit 2 ;;
esac
scripts/setup.sh
scripts/build.sh "$kind"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 1200
