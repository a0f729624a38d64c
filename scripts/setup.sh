#!/usr/bin/env bash
# Installs accelbench's build dependencies from Debian's archive (Debian 12). Idempotent: packages
# already present are skipped, and nothing is downloaded from anywhere but the package archive.
set -euo pipefail
# clang, libclang-rt-14-dev (libFuzzer, sanitizers) and libomp-dev (clang's OpenMP): scripts/fuzz.sh.
# python3 with fuzzywuzzy and python-Levenshtein: tests that compare metrics with the reference
# packages themselves (the harness never runs Python). python3-jieba: jieba 0.42.1's dictionary
# and HMM tables, which the LongBench suite reads to cut Chinese text as metrics.py does (required
# for multifieldqa_zh, dureader, vcsum; the tests also compare with jieba itself).
packages=(g++ cmake ninja-build pkg-config libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libgmock-dev libbenchmark-dev libsqlite3-dev libpcre2-dev libfmt-dev libssl-dev clang-format
  clang libclang-rt-14-dev libomp-dev zlib1g-dev libcpp-httplib-dev
  python3 python3-fuzzywuzzy python3-levenshtein python3-jieba)
# Debian's chromium, for the headless browser test of the dashboard and a plot
# (tests/harness/browser_screenshot_test.cpp): required under CI=true, where that test fails
# without it and so does setup; elsewhere optional (the test skips naming it) and
# ACCELBENCH_NO_BROWSER=1 skips it.
install_browser() {
  [ "${ACCELBENCH_NO_BROWSER:-0}" = 1 ] && [ "${CI:-}" != true ] && return 0
  command -v chromium >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing chromium"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null 2>&1 && return 0
  # The package lists may be older than the archive (every other package was already present).
  $sudo apt-get update -qq >/dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = true ]; then
    echo "setup: chromium could not be installed; under CI=true the browser test needs it" >&2
    return 1
  fi
  echo "setup: chromium not available; the browser screenshot test will skip"
  return 0
}
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  install_browser
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_browser
