#!/usr/bin/env bash
# Turns a demo database brought back from the GPU machine (demo.db of
# scripts/gpu/e2e.sh) into the artefacts to commit: the summary run.sh
# prints, and a screenshot of the dashboard's history chart.
#
# usage: scripts/gpu/artefacts.sh DB OUT_DIR [cuda|cpu] [-- screenshot options]
#   writes OUT_DIR/summary.txt (scripts/demo_summary.sh on DB) and
#   OUT_DIR/history.png (scripts/gpu/screenshot.mjs: the baseline variant at
#   the point of its largest flagged change, unless --variant/--point say)
#   cuda|cpu: which demo history DB holds (default cuda)
#   PERFWATCH=path/to/perfwatch   the binary (default: build/perfwatch)
#   CHROMIUM=path                 the browser (default: /usr/bin/chromium)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
perfwatch=${PERFWATCH:-$root/build/perfwatch}
if [[ $# -lt 2 ]]; then
  echo "usage: artefacts.sh DB OUT_DIR [cuda|cpu] [-- screenshot options]" >&2
  exit 2
fi
db=$1 dir=$2
shift 2
backend=cuda
if [[ $# -gt 0 && $1 != -- ]]; then backend=$1; shift; fi
if [[ $# -gt 0 && $1 == -- ]]; then shift; fi
[[ -f $db ]] || { echo "artefacts.sh: $db: no such database" >&2; exit 2; }
[[ -x $perfwatch ]] || { echo "artefacts.sh: $perfwatch not found: build perfwatch (or set PERFWATCH)" >&2; exit 2; }
[[ -d $root/web/node_modules/playwright-core ]] || { echo "artefacts.sh: web/node_modules/playwright-core missing: run npm ci in web/" >&2; exit 2; }

mkdir -p "$dir"
# A copy to read: serving or querying leaves the brought-back file as it came.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$db" "$tmp/perfwatch.db"
PERFWATCH=$perfwatch "$root/scripts/demo_summary.sh" "$tmp/perfwatch.db" "" "$backend" |
  sed "s|$tmp/perfwatch.db|$(basename "$db")|g" > "$dir/summary.txt"
node "$root/scripts/gpu/screenshot.mjs" --perfwatch "$perfwatch" --db "$tmp/perfwatch.db" \
  --out "$dir/history.png" --chromium "${CHROMIUM:-/usr/bin/chromium}" "$@"
echo "artefacts.sh: wrote $dir/summary.txt and $dir/history.png"
