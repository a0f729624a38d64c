#!/usr/bin/env bash
# Sets up, builds and runs the main job: make the `tiny` synthetic family and generate from it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release
./build/accelbench models make --family tiny --out models-cache/tiny
./build/accelbench generate --model models-cache/tiny/target.gguf --prompt "Hello, accelbench" --max-tokens 16
./build/accelbench run
