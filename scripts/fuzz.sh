#!/usr/bin/env bash
# Builds every libFuzzer target (tests/fuzz/*_fuzz.cpp) with clang and runs each for a bounded
# time (seconds, default 30). Fails on the first crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# -O1 with asserts on (no NDEBUG): asserts are checks the fuzzer should reach; -g1 keeps file:line
# in crash reports at a fraction of full debug info's build time.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_FUZZ=ON -DCE_BENCH_PROGRAMS=OFF -DBUILD_TESTING=ON >/dev/null
targets=$(cd tests/fuzz && ls *_fuzz.cpp | sed 's/_fuzz.cpp//; s/^/fuzz_/')
cmake --build build-fuzz -j2 --target $targets
for t in $targets; do
  corpus="build-fuzz/corpus/$t"
  mkdir -p "$corpus"
  seeds="tests/fuzz/seeds/${t#fuzz_}"
  echo "fuzzing $t for ${seconds}s"
  ./build-fuzz/tests/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$corpus" $( [ -d "$seeds" ] && echo "$seeds" ) 2>&1 | tail -4
done
echo "fuzzing: no crash"
