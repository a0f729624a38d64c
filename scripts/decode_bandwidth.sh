#!/bin/sh
# Decode of a Q4_K_M model against this machine's read bandwidth (issue 15): the `medium` target
# in q4_k_m (~0.6 GB of weights, beyond the last-level cache; made on first use under
# models-cache/medium-q4_k_m) after a 128-token prompt, and bench_memory_bandwidth's streaming read
# of 1 GiB (the fastest of its plain and software-prefetch variants), interleaved ROUNDS times on 1
# and 2 threads. Each round's decode is divided by the read ceiling measured beside it (before and
# after the decode run, the larger), since a shared host's bandwidth moves between minutes (24-51
# GB/s on 2 threads within ten minutes on a Zen 5 VM, 2026-11-29); prints the median GB/s of each,
# the median of the per-round fractions and their range.
# Usage: scripts/decode_bandwidth.sh [BUILD_DIR] [ROUNDS] (from the repository root).
set -eu
build=${1:-build}
rounds=${2:-3}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# "read <threads> <GB/s> <round>" for the fastest variant of one bench_memory_bandwidth run.
read_ceiling() {
  "$build/bench/bench_memory_bandwidth" 2>/dev/null | awk -v r="$1" '/^BM_StreamRead/ {
      split($1, a, "threads:"); split(a[2], t, "/");
      for (i = 1; i <= NF; i++) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); sub("/s", "", $i);
        if ($i + 0 > best[t[1]]) best[t[1]] = $i + 0 } }
      END { for (k in best) print "read", k, best[k], r }'
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
i=0
while [ "$i" -lt "$rounds" ]; do
  read_ceiling "$i" >>"$tmp"
  "$build/bench/bench_engine" --benchmark_filter=DecodeQ4KM 2>/dev/null | awk -v r="$i" '/^BM_DecodeQ4KM/ {
      split($1, a, "threads:"); split(a[2], t, "/");
      for (i = 1; i <= NF; i++) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); sub("/s", "", $i); print "decode", t[1], $i, r } }' >>"$tmp"
  read_ceiling "$i" >>"$tmp"
  i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for th in 1 2; do
  # Per round: the larger of its two reads is that round's ceiling.
  awk -v t="$th" '$1 == "read" && $2 == t { if ($3 > c[$4]) c[$4] = $3 }
      $1 == "decode" && $2 == t { d[$4] = $3 }
      END { for (r in d) if (c[r] > 0) print d[r], c[r], d[r] / c[r] }' "$tmp" >"$tmp.$th"
  d=$(cut -d' ' -f1 "$tmp.$th" | median)
  r=$(cut -d' ' -f2 "$tmp.$th" | median)
  f=$(cut -d' ' -f3 "$tmp.$th" | median)
  lo=$(cut -d' ' -f3 "$tmp.$th" | sort -g | head -1)
  hi=$(cut -d' ' -f3 "$tmp.$th" | sort -g | tail -1)
  rm -f "$tmp.$th"
  awk -v t="$th" -v r="$r" -v d="$d" -v f="$f" -v lo="$lo" -v hi="$hi" -v n="$rounds" 'BEGIN {
    printf "threads %s: Q4_K_M decode %.1f GB/s, streaming read %.1f GB/s (medians of %d); per-round decode / read: median %.0f%%, range %.0f-%.0f%%\n",
      t, d, r, n, 100 * f, 100 * lo, 100 * hi }'
done
