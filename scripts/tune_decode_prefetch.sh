#!/bin/sh
# Measures decode's software-prefetch distances on this machine (kernels/decode_prefetch.h): the
# one-row weight GEMMs of bench_kquant (q4_k, q6_k against the k-quant distance; q8_0, mxfp4
# against the block distance; 4096 x 4096, 1 and 2 threads) at each setting of
# ACCELBENCH_DECODE_PREFETCH, the settings in a new random order every round, then the median time
# per type, threads and distance, the fastest marked. With ENGINE=1 it also times the whole Q4_K_M
# decode (bench_engine BM_DecodeQ4KM) at each k-quant distance. A CPU kind's row in
# decode_prefetch.cpp's table is read off this output; the CPU kind is printed first.
# Usage: scripts/tune_decode_prefetch.sh [BUILD_DIR] [ROUNDS] ["K,B K,B ..."] (from the repository
# root; ~4 minutes with the defaults, ~16 with ENGINE=1, on a 2-core Zen 5).
set -eu
build=${1:-build}
rounds=${2:-5}
settings=${3:-"0,0 1,2 2,4 2,8 3,12 4,16 6,24"}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
grep -m1 -E "^model name" /proc/cpuinfo >&2 || true
echo "cpu: $(awk -F': ' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} /^model\t/ {m=$2} END {print v " family " f " model " m}' /proc/cpuinfo)" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
i=0
while [ "$i" -lt "$rounds" ]; do
  for s in $(printf '%s\n' $settings | shuf); do
    k=${s%,*}
    b=${s#*,}
    ACCELBENCH_DECODE_PREFETCH="$s" "$build/bench/bench_kquant" \
      --benchmark_filter='kquant/(q4_k|q6_k|q8_0|mxfp4)/m1-t(1|2)/4096/' 2>/dev/null |
      awk -v k="$k" -v b="$b" '/^kquant\// {
        split($1, p, "/"); d = (p[2] == "q8_0" || p[2] == "mxfp4") ? b : k;
        print p[2], p[3], d, $2 }' >>"$tmp"
    if [ "${ENGINE:-0}" = 1 ]; then
      ACCELBENCH_DECODE_PREFETCH="$s" "$build/bench/bench_engine" --benchmark_filter=DecodeQ4KM \
        2>/dev/null | awk -v k="$k" '/^BM_DecodeQ4KM/ {
          split($1, a, "threads:"); split(a[2], t, "/"); print "engine-q4_k_m", "t" t[1], k, $2 }' >>"$tmp"
    fi
  done
  i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "type threads distance median_time (ms for bench_kquant, ms per token for engine; * fastest)"
# Sorted by group, then time, so that a group's middle line is its median (mawk has no asort).
sort -k1,1 -k2,2 -k3,3n -k4,4g "$tmp" | awk '
  function flush() { if (n) { med = v[int((n + 1) / 2)]; key[++m] = last; val[m] = med;
                              if (!(grp in best) || med < best[grp]) best[grp] = med; n = 0 } }
  { g = $1 " " $2; cur = g " " $3; if (cur != last) { flush(); last = cur; grp = g } v[++n] = $4 }
  END { flush(); for (i = 1; i <= m; i++) { split(key[i], f, " ");
        printf "%-14s %-6s %3s  %.4f%s\n", f[1], f[2], f[3], val[i], val[i] == best[f[1] " " f[2]] ? " *" : "" } }'
