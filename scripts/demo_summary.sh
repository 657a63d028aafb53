#!/bin/sh
# What the demo prints at its end, from the database it filled: the commits
# and their runs, the newest run's table, the flags, the negative results,
# every experiment in a line, and commands to look further. Also used on a
# database brought back from a GPU machine (scripts/gpu/).
#
# usage: scripts/demo_summary.sh DB [REPO [cpu|cuda]]
#   DB         the demo's database
#   REPO       the watched repo as `perfwatch watch --repo` recorded it
#              (empty or left out: the only repo in DB)
#   cpu|cuda   which demo history DB holds (only the hints at the end
#              differ; default cpu)
#   PERFWATCH=path/to/perfwatch   the binary (default: build/perfwatch)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
perfwatch=${PERFWATCH:-"$root/build/perfwatch"}
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: demo_summary.sh DB [REPO [cpu|cuda]]" >&2
  exit 2
fi
db=$1
repo=${2:-}
backend=${3:-cpu}
case "$backend" in
  cpu|cuda) ;;
  *) echo "demo_summary.sh: the backend is cpu or cuda, not '$backend'" >&2; exit 2 ;;
esac
if [ ! -f "$db" ]; then
  echo "demo_summary.sh: $db: no such database" >&2
  exit 2
fi

# The repo flag only where a repo was named: a database brought back from
# another machine holds a path that does not exist here.
pw() {
  if [ -n "$repo" ]; then "$perfwatch" --db "$db" "$@" --repo "$repo"; else "$perfwatch" --db "$db" "$@"; fi
}

echo
echo "== commits and their runs =="
pw query runs
echo
echo "== the newest run's table: variant x point, median, 95% CI, trials, the other declared metrics, delta vs the baseline variant =="
pw query runs --latest
echo
echo "== flags =="
pw flags --all
echo
echo "== negative results (rejected experiments) =="
pw query experiments --verdict rejected
echo "== every experiment, one line each (variant A/B of each commit, trailers) =="
pw query experiments --brief
echo
if [ "$backend" = cuda ]; then
  echo "more: perfwatch --db $db query experiments --verdict mixed"
  echo "      perfwatch --db $db query history --variant bt16_w4_s2_tc240 --point C64"
else
  echo "more: perfwatch --db $db query experiments --param num_warps=8"
  echo "      perfwatch --db $db query history --variant bt32_w4 --point C8"
fi
if [ -n "$repo" ]; then
  echo "      perfwatch --db $db watch --repo $repo --port 8080   (the dashboard)"
else
  echo "      perfwatch serve --db $db --port 8080   (the dashboard)"
fi
