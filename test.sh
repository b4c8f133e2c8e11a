#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite:
#   1. the normal build and every CTest test (unit, end-to-end, scenarios, real cluster), on a
#      copy of the repository's files with nothing beside it, as a fresh clone has them
#      (build-standalone/src; docs/architecture.md#tests);
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

stage "build (in $copy)"
(
  cd "$copy"
  export CCACHE_BASEDIR="$PWD"
  # -g1 (line tables: file:line in every stack trace) instead of full debug info: a third less
  # compile time on the Beast-heavy files, nothing a test reads.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
  cmake --build build -j2
)
stage "tests (in $copy)"
# The long-window tests spend minutes watching a quiet cluster, nearly idle: they run beside the
# others instead of holding one of their two slots for that long.
long_log="$copy/build/long-window-tests.log"
ctest --test-dir "$copy/build" --output-on-failure --timeout 900 -L long-window >"$long_log" 2>&1 &
long_pid=$!
trap 'kill "$long_pid" 2>/dev/null || true' EXIT
ctest --test-dir "$copy/build" --output-on-failure -j2 --timeout 300 -LE long-window
long_status=0
wait "$long_pid" || long_status=$?
trap - EXIT
echo "--- the long-window tests (beside the others):"
cat "$long_log"
[ "$long_status" -eq 0 ] || exit "$long_status"

if ! $quick; then
  # The real-cluster tests ran in the first stage; here they would add minutes of waiting on
  # kube-apiserver and etcd for paths the end-to-end tests on the API-server double also drive.
  stage "ASan+UBSan build and tests"
  # clang: at -O1 it compiles this tree with ASan+UBSan in about 60% of GCC 12's time (GCC's
  # UBSan instrumentation at -O1 alone doubles its compile time); the tests run as fast
  # (docs/architecture.md#tests).
  # The tests' own code compiles at -O0 (CE_TEST_CXX_FLAGS): half the compile time of -O1 under
  # the instrumentation; the code under test keeps -O1.
  cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DCE_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_TEST_CXX_FLAGS=-O0 \
    -DCE_BENCH_PROGRAMS=OFF >/dev/null
  cmake --build build-asan -j2
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    ctest --test-dir build-asan --output-on-failure -j2 --timeout 600 -LE 'long-window|real-cluster'

  stage "TSan build and concurrency tests"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCE_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCE_BENCH_PROGRAMS=OFF >/dev/null
  cmake --build build-tsan -j2 --target extender_tests
  # Every test of the extender's threaded parts: HTTP server, bind storms, reclaim controller,
  # service verbs, API-server client and informers; two at a time, as the other stages.
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -j2 --timeout 600 -R '^extender:'

  stage "fuzzing"
  ./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
fi
stage "done"
