#!/usr/bin/env bash
# Sets up, builds and runs the main job: install the trained `capable` family and ask it a needle
# question, make the `tiny` synthetic family and generate from it, run the quick plan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release
./build/accelbench models make --family capable --out models-cache/capable
# A 7-digit needle hidden in ~3K tokens of this README's prose; the model answers " 4837261".
./build/accelbench generate --model models-cache/capable/target.gguf \
  --prompt-file models/capable/needle-demo.txt --max-tokens 12
./build/accelbench models make --family tiny --out models-cache/tiny
./build/accelbench generate --model models-cache/tiny/target.gguf --prompt "Hello, accelbench" --max-tokens 16
./build/accelbench run
