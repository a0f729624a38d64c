#!/bin/sh
# The int4 KV attention kernel table (issue 11): fused vs f32, f16, dequantize-then-attend, the
# seed's naive baseline, the read-bound floors and the f32 P.V arithmetic floor, as medians and
# ratios with bootstrap intervals.
# Repetitions are randomly interleaved across benchmarks so that machine noise hits every variant
# alike. Usage: scripts/kv_kernel_table.sh [BUILD_DIR] [REPETITIONS] [FILTER]
# (from the repository root; ~10 minutes with the defaults; FILTER e.g. '/(seed|small)/(1024|32768)$').
set -eu
build=${1:-build}
reps=${2:-5}
filter=${3:-.}
out=${KV_TABLE_JSON:-runs/kv_kernel_table.json}
mkdir -p "$(dirname "$out")"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$build/bench/bench_kv_attention" --benchmark_filter="dram_read|fma_peak|int8_peak|fma_int8_overlap|$filter" \
  --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out="$out" >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$build/accelbench" bench-table "$out"
