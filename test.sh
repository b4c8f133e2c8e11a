#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite, all of it on a copy of the
# repository's files with nothing beside it, as a fresh clone has them (build-standalone/src;
# docs/architecture.md#tests):
#   1. an ASan+UBSan build (clang) of everything, and every CTest test under it: unit,
#      end-to-end, scenarios, real cluster;
#   2. beside those tests, at the lowest CPU priority: the TSan build, the fuzz targets, and the
#      product and the benchmark programs as run.sh and bench.sh build them (GCC, -O2);
#   3. the concurrency tests under ThreadSanitizer;
#   4. every libFuzzer target for a bounded time;
#   5. the README's "Try it" block on the GCC build (the benchmark programs finish building
#      beside it).
# --quick stops after 1 (CI always runs everything).
set -euo pipefail
cd "$(dirname "$0")"
quick=false
[ "${1:-}" = "--quick" ] && quick=true
./scripts/install-deps.sh
# Four build trees (ASan+UBSan, TSan, fuzz, GCC) share one cache: at 5 GB a checkout's objects
# were evicted by the next one's, and the next run of test.sh compiled them again.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=16G
start=$(date +%s)
stage() { echo; echo "=== $* ($(( $(date +%s) - start )) s)"; }

stage "copy of the repository's files"
# Nothing outside the repository may be read (issue 25): only the real-cluster fallback and its
# documentation may name the shared folder beside a checkout.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
  git grep --untracked -n -e '\.\./shared' -- ':!scripts/control-plane.sh' ':!docs/architecture.md'; then
  echo "these lines refer to a folder outside the repository" >&2
  exit 1
fi
copy=build-standalone/src
mkdir -p "$copy"
# The copy's own build folders stay (incremental builds); every other file is copied anew, so
# a file deleted here is gone there too. Tracked and new files, as the next commit has them.
find "$copy" -mindepth 1 -maxdepth 1 ! -name 'build*' -exec rm -rf {} +
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
    tar --null -T - -cf - | tar -xf - -C "$copy"
else
  tar --exclude='./build*' --exclude=./out -cf - . | tar -xf - -C "$copy"
fi
# The Kubernetes binaries reach the copy only through KUBE_BIN_DIR (the checkout's fallback
# does not apply there): the real-cluster tests run when this checkout has them, else skip.
if kube=$(scripts/control-plane.sh check); then
  KUBE_BIN_DIR=$(sed -n 's/^kube binaries: //p' <<< "$kube")
  export KUBE_BIN_DIR
  echo "real-cluster tests: $kube" | tr '\n' ' '; echo
else
  echo "real-cluster tests will be skipped: $kube"
fi

stage "ASan+UBSan build, clang (in $copy)"
cd "$copy"
export CCACHE_BASEDIR="$PWD"
# clang: at -O1 it compiles this tree with ASan+UBSan in about 60% of GCC 12's time (GCC's UBSan
# instrumentation at -O1 alone doubles its compile time); the tests run as fast. The tests' own
# code compiles at -O0 (CE_TEST_CXX_FLAGS): half the compile time of -O1 under the
# instrumentation; the code under test keeps -O1 (docs/architecture.md#build-time).
cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCE_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_TEST_CXX_FLAGS=-O0 \
  -DCE_BENCH_PROGRAMS=OFF >/dev/null
cmake --build build-asan -j2

# The builds the later stages need, one after the other, at the lowest CPU priority: they take
# the CPU the tests leave while waiting on their servers, and give it back at once when a test
# wants it. Each leaves a mark when done (side_done), so that its tests start while the next
# builds. In order: TSan, the fuzz targets, then GCC at -O2 (what run.sh and bench.sh build).
side_builds() {
  set -e
  echo "--- TSan: the extender's tests"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCE_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_TEST_CXX_FLAGS=-O0 -DCE_BENCH_PROGRAMS=OFF >/dev/null
  cmake --build build-tsan -j2 --target extender_tests
  touch build-tsan/side-build.done
  echo "--- the fuzz targets"
  ./scripts/fuzz.sh --build-only
  touch build-fuzz/side-build.done
  echo "--- GCC -O2: what run.sh and bench.sh build"
  # Without debug information: the compiler's warnings, which -Werror makes errors, are the same,
  # and nothing here is debugged.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG" >/dev/null
  cmake --build build -j2 --target capacity-extender capacity-sim
  touch build/side-build.done
  # Last, beside the Try it block: the benchmark programs, which nothing in test.sh runs.
  echo "--- GCC -O2: the benchmark programs"
  cmake --build build -j2 --target bench-programs
}
side_pid=""
side_log="$PWD/build-asan/side-builds.log"
rm -f build-tsan/side-build.done build-fuzz/side-build.done build/side-build.done
if ! $quick; then
  # A process group of its own, so that a failing stage stops the builds too. setsid also gives
  # it a scheduler autogroup of its own (Linux, when sched_autogroup_enabled), whose weight the
  # autogroup's nice value sets: nice alone would then still share the CPU equally with the tests.
  export -f side_builds
  setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true; exec nice -n 19 bash -c side_builds' \
    >"$side_log" 2>&1 &
  side_pid=$!
fi
# side_done <folder>: waits until the side build of <folder> is done; fails, with its log, if the
# side builds stopped before it.
side_done() {
  until [ -e "$1/side-build.done" ]; do
    if ! kill -0 "$side_pid" 2>/dev/null; then
      tail -100 "$side_log"
      echo "a build beside the tests failed (full log: $side_log)"
      exit 1
    fi
    sleep 1
  done
}

stage "every test under ASan+UBSan (in $copy)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
# The long-window tests spend minutes watching a quiet cluster, nearly idle: they run beside the
# others instead of holding one of their two slots for that long.
long_log="$PWD/build-asan/long-window-tests.log"
ctest --test-dir build-asan --output-on-failure --timeout 900 -L long-window >"$long_log" 2>&1 &
long_pid=$!
trap 'kill "$long_pid" 2>/dev/null || true; [ -z "$side_pid" ] || kill -- "-$side_pid" 2>/dev/null || true' EXIT
ctest --test-dir build-asan --output-on-failure -j2 --timeout 600 -LE long-window
long_status=0
wait "$long_pid" || long_status=$?
echo "--- the long-window tests (beside the others):"
cat "$long_log"
[ "$long_status" -eq 0 ] || exit "$long_status"
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
if $quick; then
  trap - EXIT
  stage "done"
  exit 0
fi

stage "TSan: the concurrency tests (the fuzz and GCC builds go on beside them)"
side_done build-tsan
# Every test of the extender's threaded parts: HTTP server, bind storms, reclaim controller,
# service verbs, API-server client and informers; two at a time, as the other stages.
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure -j2 --timeout 600 -R '^extender:'

stage "fuzzing (the GCC build goes on beside it)"
side_done build-fuzz
./scripts/fuzz.sh --no-build "${FUZZ_SECONDS:-30}"

stage "the README's Try it block on the GCC build (the benchmark programs build beside it)"
side_done build
tests/e2e/readme_try_it.sh --build-dir build
stage "the benchmark programs' GCC build"
side_status=0
wait "$side_pid" || side_status=$?
trap - EXIT
grep '^---' "$side_log"
if [ "$side_status" -ne 0 ]; then
  tail -100 "$side_log"
  echo "a build beside the tests failed (full log: $side_log)"
  exit "$side_status"
fi
stage "done"
