#!/usr/bin/env bash
# Fails (exit 1) on an include that points against the dependency arrows
# (docs/architecture.md#dependency-arrows), printing each as file:line: include (rule):
#   core/                 includes only core/
#   policies/             includes core/ and policies/
#   config/               includes core/, policies/ and config/
#   extender/, bench/sim/, bench/report/   never include bench/ (extender) or extender/ (bench)
#   extender/http/        is a leaf: includes only extender/http/ (the transport knows no verb)
# And no source file outside tests/ is over 500 lines (one idea per file; CE_MAX_FILE_LINES
# overrides the limit, for the check's own test).
# bench/micro/ measures the extender's own code and may include both. Only quoted includes with a
# folder ("dir/file.h") are project includes; <...> are system and third-party headers.
# Usage: check_layering.sh [repository root]   (default: the repository holding this script)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"
failures=0

# check <folder> <description> <allowed include regex>: every project include of a C++ file under
# <folder> must match the regex.
check() {
  local folder="$1" rule="$2" allowed="$3"
  [ -d "$folder" ] || return 0
  local hits
  hits=$(grep -rnE --include='*.h' --include='*.cpp' --include='*.in' \
           '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]*/[^"]*"' "$folder" |
         grep -vE "#[[:space:]]*include[[:space:]]+\"($allowed)" || true)
  if [ -n "$hits" ]; then
    while IFS= read -r hit; do
      echo "${hit%%:#*}: $(echo "$hit" | sed -E 's/^[^#]*//') ($rule)"
    done <<<"$hits"
    failures=$((failures + $(wc -l <<<"$hits")))
  fi
}

check core "core/ is pure: it includes only core/" 'core/'
check policies "policies/ includes core/ and policies/" '(core|policies)/'
check config "config/ includes core/, policies/ and config/" '(core|policies|config)/'
check extender "extender/ never includes bench/" '(core|policies|config|extender)/'
check extender/http "extender/http/ is a leaf: it includes only extender/http/" 'extender/http/'
check bench/sim "bench/sim/ never includes extender/" '(core|policies|config|bench)/'
check bench/report "bench/report/ never includes extender/" '(core|policies|config|bench)/'

max_lines="${CE_MAX_FILE_LINES:-500}"
long=0
for folder in core policies config extender bench; do
  [ -d "$folder" ] || continue
  while IFS= read -r -d '' f; do
    lines=$(wc -l <"$f")
    if [ "$lines" -gt "$max_lines" ]; then
      echo "$f: $lines lines (over $max_lines: one idea per file)"
      long=$((long + 1))
    fi
  done < <(find "$folder" \( -name '*.h' -o -name '*.cpp' \) -print0)
done

if [ "$failures" -gt 0 ] || [ "$long" -gt 0 ]; then
  [ "$failures" -eq 0 ] ||
    echo "check_layering: $failures include(s) against docs/architecture.md#dependency-arrows" >&2
  [ "$long" -eq 0 ] || echo "check_layering: $long file(s) over $max_lines lines" >&2
  exit 1
fi
echo "check_layering: every include follows docs/architecture.md#dependency-arrows"
echo "check_layering: no file outside tests/ is over $max_lines lines"
