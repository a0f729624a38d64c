#!/bin/sh
# Builds the libFuzzer targets (tests/fuzz/: gguf, tokenizer_metadata, llama2c, plan) with clang,
# ASan and UBSan in build-fuzz/ and runs each from its generated seeds plus the committed
# regression files. A crash, leak, sanitizer report or timeout stops the run with a non-zero exit
# and leaves the input in build-fuzz/artifacts/ (copy it to tests/fuzz/regressions/<target>/ once
# fixed). Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [extra libFuzzer flags...]
# e.g. scripts/fuzz.sh 0 -runs=1000000 for a fixed number of executions.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
secs=${1:-60}
[ $# -gt 0 ] && shift
launcher=""
command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCELBENCH_FUZZ=ON \
  -DACCELBENCH_BENCHMARKS=OFF $launcher >/dev/null
ninja -C build-fuzz fuzz_gguf fuzz_tokenizer_metadata fuzz_llama2c fuzz_plan fuzz_make_seeds
build-fuzz/fuzz/fuzz_make_seeds build-fuzz/corpus
mkdir -p build-fuzz/artifacts
for t in gguf tokenizer_metadata llama2c plan; do
  mkdir -p "tests/fuzz/regressions/$t"
  echo "fuzz: $t for ${secs}s $*"
  # -max_len 65536 lets inputs grow past the seeds; -rss_limit_mb bounds what a crafted size may
  # allocate (a finding when exceeded).
  "build-fuzz/fuzz/fuzz_$t" "build-fuzz/corpus/$t" "tests/fuzz/regressions/$t" \
    -max_total_time="$secs" -max_len=65536 -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$t-" "$@" 2>"build-fuzz/fuzz-$t.log" ||
    { tail -n 40 "build-fuzz/fuzz-$t.log"; echo "fuzz: $t found a crash" >&2; exit 1; }
  grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|cov:" "build-fuzz/fuzz-$t.log" | tail -n 3
done
