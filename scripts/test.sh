#!/usr/bin/env bash
# Sets up, builds and runs every test. Usage: scripts/test.sh [release|sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
scripts/setup.sh
scripts/build.sh "$kind"
dir=build; [ "$kind" = sanitize ] && dir=build-sanitize
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 1200
