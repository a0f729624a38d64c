#!/usr/bin/env bash
# Installs accelbench's build dependencies from Debian's archive (Debian 12). Idempotent: packages
# already present are skipped, and nothing is downloaded from anywhere but the package archive.
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libgmock-dev libbenchmark-dev libsqlite3-dev libpcre2-dev libfmt-dev libssl-dev clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
