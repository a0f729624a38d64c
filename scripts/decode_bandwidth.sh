#!/bin/sh
# Decode of a Q4_K_M model against this machine's read bandwidth (issue 15): the `medium` target
# in q4_k_m (~0.6 GB of weights, beyond the last-level cache; made on first use under
# models-cache/medium-q4_k_m) after a 128-token prompt, and bench_memory_bandwidth's streaming read
# of 1 GiB (the fastest of its plain and software-prefetch variants), interleaved ROUNDS times on 1
# and 2 threads; prints the median GB/s of each and their ratio.
# Usage: scripts/decode_bandwidth.sh [BUILD_DIR] [ROUNDS] (from the repository root).
set -eu
build=${1:-build}
rounds=${2:-3}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
i=0
while [ "$i" -lt "$rounds" ]; do
  # The read ceiling of a round is its fastest variant (plain, or with a software prefetch).
  "$build/bench/bench_memory_bandwidth" 2>/dev/null | awk '/^BM_StreamRead/ {
      split($1, a, "threads:"); split(a[2], t, "/");
      for (i = 1; i <= NF; i++) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); sub("/s", "", $i);
        if ($i + 0 > best[t[1]]) best[t[1]] = $i + 0 } }
      END { for (k in best) print "read", k, best[k] }' >>"$tmp"
  "$build/bench/bench_engine" --benchmark_filter=DecodeQ4KM 2>/dev/null | awk '/^BM_DecodeQ4KM/ {
      split($1, a, "threads:"); split(a[2], t, "/");
      for (i = 1; i <= NF; i++) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); sub("/s", "", $i); print "decode", t[1], $i } }' >>"$tmp"
  i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for th in 1 2; do
  r=$(awk -v t="$th" '$1 == "read" && $2 == t { print $3 }' "$tmp" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  d=$(awk -v t="$th" '$1 == "decode" && $2 == t { print $3 }' "$tmp" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  awk -v t="$th" -v r="$r" -v d="$d" -v n="$rounds" 'BEGIN {
    printf "threads %s: Q4_K_M decode %.1f GB/s, streaming read %.1f GB/s: %.0f%% (medians of %d)\n", t, d, r, 100 * d / r, n }'
done
