#!/usr/bin/env bash
# Runs the README's "Try it" block as written, from the repository root: the extender serves the
# bundled example as ./run.sh starts it (`capacity-extender serve`, no flags), on a free port
# instead of 8888 (other tests and people use 8888), and ./build/ becomes --build-dir. Then checks
# what the block promises: the quotas, job-2 rejected then placed on n2 once the reclaim freed
# room, the bind, explain's arithmetic, and every scenario passing.
# Usage: tests/e2e/readme_try_it.sh --build-dir DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$here/build
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
cd "$here"

# The first ```sh block after the line that starts with "Try it:".
block=$(awk '/^Try it:/ { found = 1 } found && /^```sh$/ { inside = 1; next }
             inside && /^```$/ { exit } inside { print }' README.md)
[[ -n $block ]] || { echo "no Try it block in README.md" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/capext_readme_XXXXXX")
server=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$build_dir/extender/capacity-extender" serve --port 0 > "$work/serve.out" 2> "$work/serve.log" &
server=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*extender listening.*address=127[.]0[.]0[.]1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
  [[ -n $port ]] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.05
done
[[ -n $port ]] || { echo "the extender did not say where it listens" >&2; cat "$work/serve.log" >&2; exit 1; }

script=${block//127.0.0.1:8888/127.0.0.1:$port}
script=${script//.\/build\//$build_dir/}
echo "--- the block, as run:"
echo "$script"
echo "---"
output=$(bash -euo pipefail -c "$script" 2>&1) || {
  echo "$output"
  echo "FAIL: the block exited with an error" >&2
  exit 1
}
echo "$output"

failures=0
expect() {  # expect DESCRIPTION EXTENDED-REGEX
  if grep -Eq -- "$2" <<< "$output"; then echo "ok: $1"; else echo "FAIL: $1 (/$2/)"; failures=$((failures + 1)); fi
}
expect "/quotas lists eq1 and eq2" '"eq1".*"eq2"|"eq2".*"eq1"'
expect "the first /filter rejects job-2 on both nodes" '"FailedNodes":\{[^}]*"n1"[^}]*"n2"'
expect "the second /filter passes n2" '"NodeNames":\["n2"\]'
expect "the bind succeeds" '\{"Error":""\}'
expect "explain shows eq1's quota" 'quota eq1/eq1: min \{cpu 6\} max \{cpu 10\}'
expect "every scenario passes" '^[1-9][0-9]* passed, 0 failed'
if grep -q '^FAIL' <<< "$output"; then echo "FAIL: a scenario line failed"; failures=$((failures + 1)); fi
exit $((failures > 0))
