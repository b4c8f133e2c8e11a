#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite:
#   1. the normal build and every CTest test (unit, end-to-end, scenarios);
#   2. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the concurrency tests under ThreadSanitizer;
#   4. every libFuzzer target for a bounded time.
# Stages 2-4 can be skipped with --quick (CI always runs them).
set -euo pipefail
cd "$(dirname "$0")"
quick=false
[ "${1:-}" = "--quick" ] && quick=true
./scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=5G
start=$(date +%s)
stage() { echo; echo "=== $* ($(( $(date +%s) - start )) s)"; }

stage "build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
stage "tests"
ctest --test-dir build --output-on-failure -j2 --timeout 300

if ! $quick; then
  stage "ASan+UBSan build and tests"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCE_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCE_BENCH_PROGRAMS=OFF >/dev/null
  cmake --build build-asan -j2
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    ctest --test-dir build-asan --output-on-failure -j2 --timeout 600

  stage "TSan build and concurrency tests"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCE_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCE_BENCH_PROGRAMS=OFF >/dev/null
  cmake --build build-tsan -j2 --target extender_tests
  # Every test of the extender's threaded parts: HTTP server, bind storms, reclaim controller,
  # service verbs, API-server client and informers.
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp" ./build-tsan/tests/extender_tests

  stage "fuzzing"
  ./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
fi
stage "done"
