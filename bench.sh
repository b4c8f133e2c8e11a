#!/usr/bin/env bash
# Builds the micro-benchmarks and capacity-extender in Release (build-release) and runs every
# bench_* program once from the repository root. Each writes its JSON report to
# out/bench/<name>.json; its printed numbers go to out/bench/<name>.txt and its logs to
# out/bench/<name>.log. At the end, every target of every report of this run is gathered into
# out/bench/summary.json and printed as one table.
# Benchmarks are never run by ctest: numbers vary with the machine; compare runs on one machine.
# Usage: ./bench.sh [--quick] [--pinned] [NAME...]   (--quick: fewer runs, smaller sizes;
# --pinned: each program on the last core at real-time priority, SCHED_FIFO, for numbers on a
# machine other work keeps busy: needs root or CAP_SYS_NICE; the programs that start threads or
# processes run as without it; NAMEs: only those benchmarks, e.g.
# ./bench.sh podcost_bench). Each program's own options: bench_<name> --help.
set -euo pipefail
cd "$(dirname "$0")"
quick=()
only=()
pinned=false
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    --pinned) pinned=true ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) only+=("$arg") ;;
  esac
done
./scripts/install-deps.sh --bench
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# Link-time optimisation: the simulator's decision loop crosses core's files on every pod (state,
# node table, dense mirror, ledger); measured +8-10% decisions/s. Benchmarks only: it slows the
# build, and the tests do not need it.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON >/dev/null
# One executable per bench/micro/<name>.cpp (bench_tests is the tests of bench/, not a benchmark).
targets=$(for src in bench/micro/*.cpp; do n=$(basename "$src" .cpp); echo "bench_$n"; done)
if [ ${#only[@]} -gt 0 ]; then
  targets=$(for n in "${only[@]}"; do echo "bench_${n#bench_}"; done)
fi
# bench_podcost_bench and bench_throughput_bench start the real capacity-extender.
# shellcheck disable=SC2086
cmake --build build-release -j2 --target $targets capacity-extender
# bench_throughput_bench's do-nothing Go extender (bench/noop_extender: the standard library only,
# so nothing is downloaded), beside the benchmark programs.
if [[ $targets == *bench_throughput_bench* ]]; then
  if command -v go >/dev/null; then
    (cd bench/noop_extender && GOPROXY=off GOFLAGS=-mod=mod go build -trimpath \
      -o ../../build-release/bench/noop-extender .)
  else
    echo "no Go toolchain: bench_throughput_bench runs without the do-nothing Go extender"
  fi
fi
mkdir -p out/bench
started=$(date +%s)
status=0
# Programs that start threads or processes (a server, clients, a control plane): one core at
# real-time priority would measure that core's contention, not the code; --pinned leaves them.
threaded="bind_bench filter_bench hierarchy_bench http_server_bench podcost_bench sim_bench
slow_bind_bench throughput_bench"
threaded=$(echo $threaded)
for target in $targets; do
  name=${target#bench_}
  exe=build-release/bench/$target
  [ -x "$exe" ] || continue
  echo "=== $name"
  run=()
  # A pinned program keeps one core to itself (the scheduler moves other work off it); the
  # kernel's real-time throttling still lends that core to others 50 ms a second by default
  # (/proc/sys/kernel/sched_rt_runtime_us), so single measurements longer than that may see it.
  if $pinned && [[ " $threaded " != *" $name "* ]]; then
    run=(chrt -f 50 taskset -c "$(( $(nproc) - 1 ))")
  fi
  if ! "${run[@]}" "$exe" "${quick[@]}" 2>"out/bench/$name.log" | tee "out/bench/$name.txt"; then
    echo "$name failed (see out/bench/$name.log)"
    status=1
  fi
done
echo "=== summary of targets ($(( $(date +%s) - started )) s)"
python3 - "$started" <<'EOF' || status=1
import glob, json, os, sys
started = int(sys.argv[1])
rows = []
for path in sorted(glob.glob("out/bench/*.json")):
    if os.path.basename(path) == "summary.json" or os.path.getmtime(path) < started:
        continue  # a report of an earlier run
    with open(path) as f:
        report = json.load(f)
    for t in report.get("targets", []):
        rows.append({"bench": report.get("bench"), **t})
with open("out/bench/summary.json", "w") as f:
    json.dump({"targets": rows, "met": sum(r["met"] for r in rows), "total": len(rows)}, f,
              indent=2)
width = max([len(r["name"]) for r in rows] + [6])
print("%-18s %-*s %14s %-12s %-14s %s" % ("bench", width, "target", "value", "unit", "wanted",
                                           "verdict"))
for r in rows:
    print("%-18s %-*s %14.4g %-12s %-14s %s" % (r["bench"], width, r["name"], r["value"], r["unit"],
                                               r["target"], "met" if r["met"] else "MISSED"))
print("%d of %d targets met; out/bench/summary.json" % (sum(r["met"] for r in rows), len(rows)))
EOF
echo "reports in out/bench/"
exit $status
