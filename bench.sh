#!/usr/bin/env bash
# Builds the micro-benchmarks in Release (build-release) and runs every bench_* program once from
# the repository root. Each writes its JSON report to out/bench/<name>.json (those that write one);
# its printed numbers go to out/bench/<name>.txt and its logs to out/bench/<name>.log.
# Benchmarks are never run by ctest: numbers vary with the machine; compare runs on one machine.
# For options (e.g. --quick), run one directly: build-release/bench/bench_<name> --help.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# One executable per bench/micro/<name>.cpp (bench_tests is the tests of bench/, not a benchmark).
targets=$(for src in bench/micro/*.cpp; do n=$(basename "$src" .cpp); echo "bench_$n"; done)
# shellcheck disable=SC2086
cmake --build build-release -j2 --target $targets
mkdir -p out/bench
status=0
for target in $targets; do
  name=${target#bench_}
  exe=build-release/bench/$target
  [ -x "$exe" ] || continue
  echo "=== $name"
  if ! "$exe" 2>"out/bench/$name.log" | tee "out/bench/$name.txt"; then
    echo "$name failed (see out/bench/$name.log)"
    status=1
  fi
done
echo "reports in out/bench/"
exit $status
