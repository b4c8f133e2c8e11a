#!/usr/bin/env bash
# Builds every libFuzzer target (tests/fuzz/*_fuzz.cpp) with clang and runs each for a bounded
# time (seconds, default 30). Fails on the first crash.
# Usage: scripts/fuzz.sh [--build-only | --no-build] [SECONDS]   (test.sh builds the targets
# while other tests run, then runs them: --build-only, then --no-build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=true run=true
case "${1:-}" in
  --build-only) run=false; shift ;;
  --no-build) build=false; shift ;;
esac
seconds="${1:-30}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# -O1 with asserts on (no NDEBUG): asserts are checks the fuzzer should reach; -g1 keeps file:line
# in crash reports at a fraction of full debug info's build time.
targets=$(cd tests/fuzz && ls *_fuzz.cpp | sed 's/_fuzz.cpp//; s/^/fuzz_/')
if $build; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_FUZZ=ON -DCE_BENCH_PROGRAMS=OFF -DBUILD_TESTING=ON >/dev/null
  # shellcheck disable=SC2086
  cmake --build build-fuzz -j2 --target $targets
fi
$run || exit 0
# fuzz_one <target>: runs one target for the bounded time; on a crash prints its report and fails.
fuzz_one() {
  local t="$1" corpus="build-fuzz/corpus/$1" seeds="tests/fuzz/seeds/${1#fuzz_}"
  local log="build-fuzz/$t.log"
  mkdir -p "$corpus"
  echo "fuzzing $t for ${seconds}s"
  if ! ./build-fuzz/tests/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/ -print_final_stats=1 "$corpus" \
    $( [ -d "$seeds" ] && echo "$seeds" ) >"$log" 2>&1; then
    # The crash report (stack, input bytes, artifact path) is what a reader needs; print it whole.
    grep -v '^#[0-9]' "$log" | tail -80
    echo "fuzzing: $t failed (full log: $log)"
    return 1
  fi
  tail -4 "$log" | sed "s/^/$t: /"
}
export -f fuzz_one
export seconds
# Two targets at a time (each fuzzer is one process on one core): the stage takes half as long.
if ! printf '%s\n' $targets | xargs -P "${FUZZ_JOBS:-2}" -I{} bash -c 'fuzz_one "$1"' _ {}; then
  echo "fuzzing: a target failed (report above)"
  exit 1
fi
echo "fuzzing: no crash"
