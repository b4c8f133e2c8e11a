#!/usr/bin/env bash
# Renders GET /ui of `capacity-extender serve` in headless Chromium and fails on any console
# error: on the bundled example cluster (with two pending pods learned through /filter), and on a
# generated snapshot of 300 quotas and 5,000 pending pods (tests/e2e/generate_ui_snapshot.py). On
# the large one it also times /pending, /ui and /quotas over HTTP and prints the numbers (they are
# reported, never asserted). Screenshots go to --out (default /tmp/capext-ui-screenshots/).
#
#   tests/e2e/ui_page_chromium.sh [--build-dir DIR] [--out DIR]
#
# Exit 0 when every page rendered cleanly, 1 on a failure, 77 (CTest's skip code) when Chromium
# is missing and cannot be installed (not root and no sudo, or apt-get failed).
#
# Console errors are seen two independent ways, on every page:
#  1. Chromium's log (--enable-logging=stderr --v=1) has a "CONSOLE" line for every message the
#     page logs (script errors, failed loads, console.error): any such line fails.
#  2. The DOM after the page ran (--dump-dom, --virtual-time-budget lets its fetches finish): the
#     page marks <body data-rendered="QUOTAS/PENDING"> after drawing the server's data and shows
#     a visible #problem box when a fetch fails; the counts must be the server's.
# A canary page with a script error must be caught first, so the check cannot silently stop
# working. Chromium runs as the machine needs it: --headless --no-sandbox --disable-gpu
# --disable-quic --no-first-run --disable-background-networking --disable-component-update
# --disable-sync and a fresh --user-data-dir.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build_dir="$here/build"
out_dir=/tmp/capext-ui-screenshots
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
extender="$build_dir/extender/capacity-extender"
[[ -x "$extender" ]] || { echo "no $extender: build first" >&2; exit 1; }
say() { printf '== %s\n' "$*"; }

# --- Chromium ------------------------------------------------------------------------------------
if ! command -v chromium >/dev/null 2>&1; then
  say "installing chromium (apt-get)"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "SKIP: chromium is missing and this is not root (no sudo)"; exit 77; }
    sudo=sudo
  fi
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; }; then
    echo "SKIP: chromium could not be installed with apt-get"
    exit 77
  fi
fi
chromium --version 2>/dev/null || true

work=$(mktemp -d /tmp/capext-ui.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out_dir"
rm -f "$out_dir"/*.png "$out_dir"/*.log

chrome() {
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-extensions --disable-default-apps --hide-scrollbars --user-data-dir="$profile" \
    --enable-logging=stderr --v=1 "$@"
}

# check_page URL NAME HEIGHT EXPECT_RENDERED: screenshot and DOM; prints what it found.
check_page() {
  local url=$1 name=$2 height=$3 expect=$4 log="$out_dir/$2.chromium.log" dom="$work/$2.dom.html"
  local errors=0
  chrome --virtual-time-budget=8000 --window-size=1400,"$height" --screenshot="$out_dir/$name.png" \
    "$url" >/dev/null 2>"$log" || { echo "  chromium failed on $url (see $log)"; return 1; }
  chrome --virtual-time-budget=8000 --dump-dom "$url" >"$dom" 2>>"$log" ||
    { echo "  chromium --dump-dom failed on $url"; return 1; }
  if grep -q ':CONSOLE' "$log"; then
    echo "  console messages in Chromium's log for $name:"
    grep ':CONSOLE' "$log" | sed 's/^/    /' | head -20
    errors=1
  fi
  if [[ -n "$expect" ]]; then
    if ! grep -q "data-rendered=\"$expect\"" "$dom"; then
      echo "  the page did not draw the server's data (want data-rendered=\"$expect\"; got $(grep -o 'data-rendered="[^"]*"' "$dom" || echo none))"
      errors=1
    fi
    if grep -q '<div id="problem" style="display: block' "$dom"; then
      echo "  the page shows a problem: $(grep -o '<div id="problem"[^<]*' "$dom")"
      errors=1
    fi
  fi
  return $errors
}

# start_serve NAME ARGS...: starts serve on a free port; sets $port.
start_serve() {
  local name=$1; shift
  local log="$work/$name.serve.log"
  "$extender" serve --listen-address 127.0.0.1 --port 0 "$@" 2>"$log" &
  pids+=($!)
  port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'extender listening" address=127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://' || true)
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || { echo "serve did not start:"; cat "$log"; return 1; }
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0
    sleep 0.1
  done
  echo "serve never became ready"; return 1
}

# timing URL N: prints median and max of N sequential requests (seconds -> ms).
timing() {
  local url=$1 n=$2
  for _ in $(seq 1 "$n"); do curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "$url"; done |
    sort -n | awk -v name="$url" '{t[NR]=$1; s=$2} END {printf "  %-45s %7.1f KB  median %6.2f ms  max %6.2f ms  (%d requests)\n", name, s/1024, t[int((NR+1)/2)]*1000, t[NR]*1000, NR}'
}

say "canary: a page with a script error must be caught"
printf '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><script>notDefinedAnywhere();</script></body></html>' >"$work/canary.html"
if check_page "file://$work/canary.html" canary 400 "" >/dev/null; then
  echo "FAIL: the console-error check did not notice a broken page" >&2
  exit 1
fi
grep -q 'CONSOLE.*notDefinedAnywhere' "$out_dir/canary.chromium.log" ||
  { echo "FAIL: Chromium's log did not show the canary's script error" >&2; exit 1; }
rm -f "$out_dir/canary.chromium.log" "$out_dir/canary.png"
echo "  caught"

failed=0
say "bundled example cluster, with eq2/job-2 (reclaim) and eq1/big (over max) pending"
start_serve bundled
for pod in 'job-2","namespace":"eq2","uid":"u-job-2' 'big","namespace":"eq1","uid":"u-big'; do
  curl -sf -XPOST "http://127.0.0.1:$port/filter" -d '{"Pod":{"metadata":{"name":"'"$pod"'"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"5"}}}]}},"NodeNames":["n1","n2"]}' >/dev/null
done
for _ in $(seq 1 50); do
  [[ $(curl -s "http://127.0.0.1:$port/pending" | grep -o '"count":[0-9]*') == '"count":2' ]] && break
  sleep 0.1
done
if check_page "http://127.0.0.1:$port/ui" bundled 1000 "2/2"; then
  echo "  no console errors; $out_dir/bundled.png"
else
  failed=1
fi

say "generated snapshot: 300 quotas, 5,000 pending pods"
python3 "$here/tests/e2e/generate_ui_snapshot.py" --quotas 300 --pending 5000 --out "$work/large.json"
start_serve large --snapshot "$work/large.json"
# The reclaim loop judges at most reclaimMaxPodsPerPass (500) pods a pass: wait until it has
# judged every pending pod (10 passes, one a second).
for _ in $(seq 1 600); do
  [[ $(curl -s "http://127.0.0.1:$port/pending" | grep -o '"count":[0-9]*') == '"count":5000' ]] && break
  sleep 0.1
done
if check_page "http://127.0.0.1:$port/ui" large 3200 "300/5000"; then
  echo "  no console errors; $out_dir/large.png"
else
  failed=1
fi
grep -q '[0-9][0-9]* more' "$work/large.dom.html" ||
  { echo "  no \"N more\" cap on the large page"; failed=1; }
say "serving time at that size (sequential requests over loopback, reclaim loop running)"
timing "http://127.0.0.1:$port/pending" 30
timing "http://127.0.0.1:$port/ui" 30
timing "http://127.0.0.1:$port/quotas" 30

echo
if [[ $failed -ne 0 ]]; then
  echo "FAIL: see above (Chromium logs kept in $out_dir)" >&2
  exit 1
fi
rm -f "$out_dir"/*.chromium.log
echo "OK: /ui rendered without console errors. Screenshots:"
ls -1 "$out_dir"/*.png
