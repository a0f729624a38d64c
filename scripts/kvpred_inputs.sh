#!/usr/bin/env bash
# Makes the inputs the prefill-method plans name by path (plans/prefill_methods.json,
# plans/kvpred_pareto.json): the `small` family, layer-pruned auxiliaries of its target (KVP-LP at
# 25/50/75% of the blocks, corenet's selections), and KV Prediction predictors fitted on the essays
# for each auxiliary and for the family's draft-l / draft as canonical smaller auxiliaries (KVP-C).
# Idempotent: files already there are kept. Run from the repository root after a release build.
# Usage: scripts/kvpred_inputs.sh [ACCELBENCH_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-./build/accelbench}"
fam=models-cache/small-f32-s0
out=models-cache/kvpred-small
text=../shared/data/niah/paul_graham_essays.txt
[ -f "$text" ] || { echo "kvpred_inputs.sh: calibration text $text is missing" >&2; exit 1; }
mkdir -p "$out"
[ -f "$fam/target.gguf" ] || "$B" models make --family small --out "$fam"
for l in 0.25l 0.50l 0.75l; do
  [ -f "$out/aux-$l.gguf" ] || "$B" models make-aux --from "$fam/target.gguf" --layers "$l" --out "$out/aux-$l.gguf"
  [ -f "$out/pred-$l.gguf" ] || "$B" kvpred fit --target "$fam/target.gguf" --aux "$out/aux-$l.gguf" \
    --text "$text" --out "$out/pred-$l.gguf"
done
for d in draft-l draft; do
  [ -f "$out/pred-c-$d.gguf" ] || "$B" kvpred fit --target "$fam/target.gguf" --aux "$fam/$d.gguf" \
    --layer-map kvp-c --text "$text" --out "$out/pred-c-$d.gguf"
done
echo "kvpred_inputs.sh: inputs in $out"
