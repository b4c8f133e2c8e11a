#!/usr/bin/env bash
# Renders capacity-sim's HTML reports in headless Chromium, saves a screenshot of each, and fails
# when a page logs anything to the console (issue 8's acceptance: "a screenshot of the HTML report
# rendered in headless Chromium is produced by a test script and the page has no console errors").
#
#   tests/e2e/sim_report_screenshot.sh [--out DIR] [--build-dir DIR] [--keep]
#
# Steps: installs Debian's chromium with apt-get if it is missing; builds capacity-sim if needed
# (in --build-dir, default build/); runs the acceptance command of issue 8 on the Alibaba trace
# (`capacity-sim run ... --tenants qos --quotas bench/examples/alibaba-quotas.yaml`),
# `capacity-sim compare` over the four policies, and a run with the two-level plan
# bench/examples/alibaba-org-quotas.yaml, into a temporary directory; renders every report.html
# and compare.html; prints where the PNGs are (default /tmp/capext-sim-screenshots/).
# Not run by ctest (it needs a browser and a minute); its output is not committed.
#
# How console errors are detected, two independent ways, on every page:
#  1. Chromium's own log (--enable-logging=stderr --v=1) carries every console message of the
#     page as "CONSOLE" lines, whatever produced it: script errors, console.error, and the
#     renderer's own complaints (an SVG attribute it cannot parse, a resource that does not load).
#     The log does not say the level, and the reports contain no scripts, so any console line
#     about the page counts as an error.
#  2. A copy of the page with a small hook prepended (window 'error' events including failed
#     resource loads, unhandled rejections, console.error) that writes what it saw into an
#     element; --dump-dom shows it.
# Before the real pages, a canary (a copy of a report with a broken script and a broken SVG path
# added) must be caught by both ways, so the check cannot silently stop working.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
out_dir=/tmp/capext-sim-screenshots
build_dir="$here/build"
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out_dir=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ "$build_dir" = /* ]] || build_dir="$here/$build_dir"
data="$here/bench/data/alibaba-gpu-v2023"
[[ -f "$data/openb_pod_list_default.csv" ]] || { echo "missing $data (the Alibaba trace)" >&2; exit 1; }

say() { printf '== %s\n' "$*"; }

# --- Chromium ------------------------------------------------------------------------------------
if ! command -v chromium >/dev/null 2>&1; then
  say "installing chromium (apt-get)"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "chromium is missing and this is not root (no sudo)" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y chromium
fi
chromium --version 2>/dev/null

# --- capacity-sim --------------------------------------------------------------------------------
sim="$build_dir/bench/capacity-sim"
if [[ ! -x "$sim" ]]; then
  say "building capacity-sim in $build_dir"
  [[ -f "$build_dir/build.ninja" || -f "$build_dir/Makefile" ]] ||
    cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  nice -n 10 cmake --build "$build_dir" -j2 --target capacity-sim
fi

work=$(mktemp -d /tmp/capext-sim-shot.XXXXXX)
cleanup() { if [[ $keep -eq 0 ]]; then rm -rf "$work"; else echo "kept $work"; fi; }
trap cleanup EXIT
mkdir -p "$out_dir"
rm -f "$out_dir"/*.png "$out_dir"/*.log

# --- the reports -----------------------------------------------------------------------------------
trace_flags=(--trace "$data/openb_pod_list_default.csv" --nodes "$data/openb_node_list_all_node.csv"
             --tenants qos --quotas "$here/bench/examples/alibaba-quotas.yaml" --no-progress)
say "capacity-sim run (issue 8 acceptance command)"
"$sim" run "${trace_flags[@]}" --out "$work/run"
say "capacity-sim compare over the four policies"
"$sim" compare "${trace_flags[@]}" --policies capacity,scheduler-plugins,static,none --out "$work/compare"
say "capacity-sim run with the two-level plan (issue 13: used, min and max per level)"
"$sim" run "${trace_flags[@]}" --quotas "$here/bench/examples/alibaba-org-quotas.yaml" --out "$work/org-run"

# --- rendering and checking ------------------------------------------------------------------------
chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
        --disable-extensions --disable-background-networking --disable-sync --disable-default-apps
        --enable-logging=stderr --v=1)
hook_file="$work/hook.html"
cat >"$hook_file" <<'HOOK'
<script>(function(){var seen=[];function note(m){seen.push(String(m));var e=document.getElementById("capext-console-errors");if(e)e.textContent=seen.join(" | ");}
window.addEventListener("error",function(ev){var t=ev.target;note("error: "+(ev.message||(t&&(t.src||t.href||t.tagName))||"unknown"));},true);
window.addEventListener("unhandledrejection",function(ev){note("unhandled rejection: "+ev.reason);});
var original=console.error;console.error=function(){note("console.error: "+Array.prototype.join.call(arguments," "));return original.apply(console,arguments);};
document.addEventListener("DOMContentLoaded",function(){var p=document.createElement("pre");p.id="capext-console-errors";p.textContent=seen.join(" | ");document.body.appendChild(p);});})();</script>
HOOK

# check_page HTML PNG HEIGHT: screenshot, then both checks; prints what was found, returns 1 on errors.
check_page() {
  local page=$1 png=$2 height=$3 name log hooked dom errors=0
  name=$(basename "$png" .png)
  log="$out_dir/$name.chromium.log"
  # 1. Screenshot of the page as it is, with Chromium's log.
  timeout 120 "${chrome[@]}" --screenshot="$png" --window-size=1400,"$height" "file://$page" \
    >/dev/null 2>"$log" || { echo "  chromium failed on $page (see $log)"; return 1; }
  [[ -s "$png" ]] || { echo "  no screenshot for $page"; return 1; }
  # 2. The same page with the hook, its DOM dumped.
  hooked="$work/hooked-$name.html"
  awk -v hook_file="$hook_file" '
    BEGIN { while ((getline line < hook_file) > 0) hook = hook line "\n" }
    !done && (i = index($0, "<head>")) { $0 = substr($0, 1, i + 5) hook substr($0, i + 6); done = 1 }
    { print }' "$page" >"$hooked"
  grep -q 'capext-console-errors' "$hooked" || { echo "  could not insert the hook into $page"; return 1; }
  dom="$work/dom-$name.html"
  timeout 120 "${chrome[@]}" --dump-dom "file://$hooked" >"$dom" 2>>"$log" ||
    { echo "  chromium --dump-dom failed on $page"; return 1; }
  if grep -q ':CONSOLE' "$log"; then
    echo "  console messages in Chromium's log for $(basename "$page"):"
    grep ':CONSOLE' "$log" | sed 's/^/    /' | head -20
    errors=1
  fi
  # What the hook saw (joined with " | " on one line).
  local recorded
  recorded=$(grep -o '<pre id="capext-console-errors">[^<]*</pre>' "$dom" |
             sed -e 's/<pre id="capext-console-errors">//' -e 's/<\/pre>//' || true)
  printf '%s\n' "$recorded" >"$work/recorded-$name.txt"
  if ! grep -q '<pre id="capext-console-errors">' "$dom"; then
    echo "  the hook did not run on $(basename "$page") (no record element in the DOM)"
    errors=1
  elif [[ -n "$recorded" ]]; then
    echo "  errors recorded in the page:"
    printf '%s\n' "$recorded" | sed 's/^/    /' | head -20
    errors=1
  fi
  return $errors
}

say "canary: a broken copy of a report must be caught"
canary="$work/canary.html"
sed -e 's|</body>|<script>notDefinedAnywhere();</script><svg width="10" height="10"><path d="M1 1 Lx"/></svg></body>|' \
  "$work/run/report.html" >"$canary"
if check_page "$canary" "$work/canary.png" 1200 >"$work/canary.txt"; then
  cat "$work/canary.txt"
  echo "FAIL: the console-error check did not notice a broken page" >&2
  exit 1
fi
grep -q 'CONSOLE.*notDefinedAnywhere' "$out_dir/canary.chromium.log" ||
  { echo "FAIL: Chromium's log did not show the canary's script error" >&2; exit 1; }
grep -q 'CONSOLE.*attribute d' "$out_dir/canary.chromium.log" ||
  { echo "FAIL: Chromium's log did not show the canary's SVG error" >&2; exit 1; }
grep -q 'notDefinedAnywhere' "$work/recorded-canary.txt" ||
  { echo "FAIL: the in-page hook did not record the canary's script error" >&2; exit 1; }
rm -f "$out_dir/canary.chromium.log"
echo "  caught (both ways)"

failed=0
pages=("$work/run/report.html:run-report:4000" "$work/compare/compare.html:compare:9000"
       "$work/org-run/report.html:org-run-report:5000")
for policy in capacity scheduler-plugins static none; do
  pages+=("$work/compare/$policy/report.html:compare-$policy-report:4000")
done
for entry in "${pages[@]}"; do
  IFS=: read -r page name height <<<"$entry"
  say "rendering $(realpath --relative-to="$work" "$page")"
  if check_page "$page" "$out_dir/$name.png" "$height"; then
    echo "  no console errors; $out_dir/$name.png"
    rm -f "$out_dir/$name.chromium.log"
  else
    failed=1
  fi
done

echo
if [[ $failed -ne 0 ]]; then
  echo "FAIL: console errors (details above; Chromium logs kept in $out_dir)" >&2
  exit 1
fi
echo "OK: every page rendered without console errors. Screenshots:"
ls -1 "$out_dir"/*.png
