#!/usr/bin/env bash
# Makes the KV Prediction inputs of plans/capable_prefill_niah.json for the trained `capable`
# family: a layer-pruned auxiliary of its target (KVP-LP, corenet's 0.50l selection) and predictors
# fitted for it and for the family's separately trained 2 x 128 draft as a smaller canonical
# auxiliary (KVP-C). Calibration text: essay bytes the NIAH plan does not use as its haystack
# (from 79259 on: the family's held-out essays are [0, 79259)), 48 KB of them.
# Idempotent: files already there are kept. Run from the repository root after a release build.
# Usage: scripts/kvpred_capable_inputs.sh [ACCELBENCH_BINARY]
set -euo pipefail
# A binary given by a relative path is relative to the caller's directory: resolve it before
# moving to the repository root (the default is the root's own release build).
B="${1:-}"
[[ -n "$B" && "$B" == */* && "$B" != /* ]] && B="$(cd "$(dirname "$B")" && pwd)/$(basename "$B")"
cd "$(dirname "$0")/.."
B="${B:-./build/accelbench}"
essays=../shared/data/niah/paul_graham_essays.txt
out=models-cache/kvpred-capable
fam=models-cache/capable-shipped
[ -f "$essays" ] || { echo "kvpred_capable_inputs.sh: essays $essays are missing" >&2; exit 1; }
mkdir -p "$out"
[ -f "$fam/target.gguf" ] || "$B" models make --family capable --out "$fam"
calib="$out/calibration.txt"
# Written beside and renamed into place: an interrupted run leaves no partial calibration file.
if [ ! -f "$calib" ]; then
  head -c $((79259 + 49152)) "$essays" | tail -c 49152 >"$calib.tmp"
  mv "$calib.tmp" "$calib"
fi
[ -f "$out/aux-0.50l.gguf" ] ||
  "$B" models make-aux --from "$fam/target.gguf" --layers 0.50l --out "$out/aux-0.50l.gguf"
[ -f "$out/pred-0.50l.gguf" ] ||
  "$B" kvpred fit --target "$fam/target.gguf" --aux "$out/aux-0.50l.gguf" --text "$calib" \
    --max-tokens 49152 --out "$out/pred-0.50l.gguf"
[ -f "$out/pred-c-draft.gguf" ] ||
  "$B" kvpred fit --target "$fam/target.gguf" --aux "$fam/draft.gguf" --layer-map kvp-c \
    --text "$calib" --max-tokens 49152 --out "$out/pred-c-draft.gguf"
echo "kvpred_capable_inputs.sh: inputs in $out"
