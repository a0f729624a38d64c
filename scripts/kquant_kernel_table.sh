#!/bin/sh
# The quantized-weight GEMM table (issue 33): bench_kquant's q8_0, q4_0, k-quant and mxfp4 GEMMs
# (4096 x 4096; decode M = 1, verify 16, prefill 256; 1 and 2 threads) with each entry's time over
# its roofline bound, from the read bandwidth, f32 FMA peak and int8 dot-product peak measured in
# the same run at the entry's thread count. Repetitions are randomly interleaved across benchmarks
# so that machine noise hits every variant alike.
# Usage: scripts/kquant_kernel_table.sh [BUILD_DIR] [REPETITIONS] [FILTER]
# (from the repository root; ~15 minutes with the defaults; FILTER e.g. '/m(1|256)-t1/').
set -eu
build=${1:-build}
reps=${2:-5}
filter=${3:-.}
out=${KQUANT_TABLE_JSON:-runs/kquant_kernel_table.json}
mkdir -p "$(dirname "$out")"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$build/bench/bench_kquant" --benchmark_filter="dram_read|fma_peak|int8_peak|fma_int8_overlap|$filter" \
  --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out="$out" >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$build/accelbench" bench-table "$out" --family kquant --reference q8_0 --floor none --size-label K
