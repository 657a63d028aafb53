#!/usr/bin/env bash
# make_history.sh DEST [PATCH]: makes a git repo at DEST that replays a short tuning history of the CPU
# example, with one planted slowdown, for an end-to-end test of perfwatch (or to try it by hand):
#
#   1 baseline   the example as it is here, the kit vendored beside the bench (as a user does)
#   2 docs       README only: outside the manifest's paths, so it inherits 1's results
#   3 slowdown   planted_slowdown.patch: scores_of sums each dot product with math.fsum over a
#                list (exactly rounded, about 1.4x the work of the whole step on this machine's
#                CPython); every variant at every point is slower, and still correct
#   4 comment    a comment in bench.py: inside the paths, measured, no change in speed
#
# PATCH replaces planted_slowdown.patch as step 3 (tests/cli's end-to-end test plants a much
# larger slowdown, so that a loaded CI machine cannot hide it).
# Prints "<step> <sha>" per commit on stdout. Author and committer dates are fixed, so the same
# sources give the same shas.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: make_history.sh DEST [PATCH]" >&2
  exit 2
fi
dest=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
patch=$(cd "$(dirname "${2:-$here/planted_slowdown.patch}")" && pwd)/$(basename "${2:-planted_slowdown.patch}")
[[ -f $patch ]] || { echo "make_history.sh: no patch at $patch" >&2; exit 2; }
kit=$here/../../kit/perfwatch_bench.py
if [[ -e $dest ]]; then
  echo "make_history.sh: $dest exists; give a new path" >&2
  exit 2
fi
[[ -f $kit ]] || { echo "make_history.sh: the kit is not at $kit" >&2; exit 2; }

mkdir -p "$dest"
cd "$dest"
git init -q -b main
git config user.name "perfwatch example"
git config user.email "example@perfwatch.invalid"
git config commit.gpgsign false

when=1767225600  # 2026-01-01T00:00:00Z; each commit a minute later
commit() {
  local step=$1 message=$2
  when=$((when + 60))
  GIT_AUTHOR_DATE="@$when +0000" GIT_COMMITTER_DATE="@$when +0000" git commit -q -m "$message"
  echo "$step $(git rev-parse HEAD)"
}

cp "$here/attention.py" "$here/bench.py" "$here/perfwatch.json" .
cp "$kit" perfwatch_bench.py
cat > README.md <<'TXT'
# attention example

A tiny attention decode step in pure Python, watched by perfwatch (perfwatch.json).
TXT
git add attention.py bench.py perfwatch.json perfwatch_bench.py README.md
commit baseline "attention: two-pass and online-softmax decode step, with its bench"

echo "Run it: python3 bench.py < plan.jsonl, or perfwatch watch --repo ." >> README.md
git add README.md
commit docs "docs: how to run the bench"

git apply "$patch"
git add attention.py
commit slowdown "scores_of: exactly rounded dot products (math.fsum)"

sed -i '1a # Inputs are seeded per set, so every run of one commit times the same data.' bench.py
git add bench.py
commit comment "bench: say how the inputs are seeded"
