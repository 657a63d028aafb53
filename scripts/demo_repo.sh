#!/bin/sh
# The embedded default: a small git repo that replays a kernel-tuning history
# like the users' with this repo's own kernels/, watched by `perfwatch watch
# --once` on the CPU backend, ending with the flags and the negative results
# it found.
#
# usage: scripts/demo_repo.sh [DEMO_DIR]        (default: .perfwatch/demo)
#   PERFWATCH=path/to/perfwatch   the binary (default: build/perfwatch)
#
# The history, created only if DEMO_DIR/repo does not exist yet:
#   1. baseline: kernels/ with three variants (block_t 32 and 64, 4 and 8 warps)
#   2. a tuning change that really slows the CPU kernel down: the tile
#      kernel's vectors narrowed to 4 floats (kernels/src/cpu_tuning.h), with
#      a Perf-Hypothesis trailer -- perfwatch must flag it and reject it
#   3. its revert
#   4. a comment-only change under kernels/ (rebuilt and measured: the same
#      code again, so any flag there is a false positive)
#   5. a docs-only commit (touches none of the manifest's paths: inherits)
# Running it again re-watches the same repo: nothing new, no runs; the
# summary is printed again.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-"$root/.perfwatch/demo"}
perfwatch=${PERFWATCH:-"$root/build/perfwatch"}
repo="$demo/repo"
db="$demo/perfwatch.db"

if [ ! -x "$perfwatch" ]; then
  echo "demo_repo.sh: $perfwatch not found: build perfwatch first (or set PERFWATCH)" >&2
  exit 2
fi

commit() {  # commit MESSAGE: everything in the work tree, with a fixed identity
  git -C "$repo" add -A
  git -C "$repo" -c user.name="Kernel Engineer" -c user.email="kernels@example.com" \
    commit -q -m "$1"
}

if [ ! -d "$repo/.git" ]; then
  echo "demo_repo.sh: creating the demo history in $repo" >&2
  mkdir -p "$repo"
  git -C "$repo" init -q -b main
  # The kernels as committed here (no build folders, no local edits).
  if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$root" archive HEAD kernels | tar -x -C "$repo"
  else
    cp -r "$root/kernels" "$repo/kernels"
    rm -rf "$repo/kernels/build"
  fi
  printf '/build/\n' > "$repo/.gitignore"
  cat > "$repo/README.md" <<'EOF'
# sparse MLA decode kernels (perfwatch demo)

A replay of a kernel-tuning history, watched by perfwatch.
EOF
  # A small sweep for two CPU cores: three batch sizes at topk 512, one
  # worker thread (on a shared 2-core machine a second one mostly measures
  # the neighbours).
  cat > "$repo/perfwatch.json" <<'EOF'
{
  "schema_version": 1,
  "name": "sparse MLA decode, CPU backend (perfwatch demo)",
  "build": {"command": "PERFWATCH_CUDA=OFF kernels/scripts/build.sh build/kernels", "timeout_s": 1800},
  "paths": ["kernels/", "perfwatch.json"],
  "bench": {"command": "build/kernels/mla_bench", "backend": "cpu", "threads": 1, "timeout_s": 600, "idle_timeout_s": 120},
  "variants": [
    {"name": "bt32_w4", "baseline": true,
     "params": {"block_t": 32, "num_warps": 4, "num_stages": 2, "target_ctas": 0}},
    {"name": "bt64_w4",
     "params": {"block_t": 64, "num_warps": 4, "num_stages": 2, "target_ctas": 0},
     "hypothesis": "64-token tiles halve the per-tile softmax and synchronisation overhead"},
    {"name": "bt32_w8",
     "params": {"block_t": 32, "num_warps": 8, "num_stages": 2, "target_ctas": 0},
     "hypothesis": "8 warps hide more of the gather latency"}
  ],
  "sweep": {"batch": [1, 8, 48], "heads": [16], "topk": [512], "dtype": ["bf16"]},
  "trials": {"min": 5, "max": 12, "target_rel_ci": 0.02, "budget_s": 3, "min_trial_ms": 10, "warmup_ms": 20},
  "metric": {"name": "time_us", "direction": "lower_is_better"},
  "runs": {"per_commit": 3, "max_per_commit": 6},
  "noise": {"default_band": 0.05}
}
EOF
  commit "kernels: sparse MLA decode with split-KV, CPU backend (baseline)"

  tuning="$repo/kernels/src/cpu_tuning.h"
  grep -q 'kMaxVectorFloats = 16;' "$tuning"
  sed 's/kMaxVectorFloats = 16;/kMaxVectorFloats = 4;/' "$tuning" > "$tuning.new" && mv "$tuning.new" "$tuning"
  commit "cpu: 4-float vectors in the tile kernel

Narrower vectors leave more registers for the P.V accumulators.

Perf-Hypothesis: 4-float vectors free registers for a deeper P.V block and speed up the tile loop
Perf-Experiment: cpu-vector-width"

  sed 's/kMaxVectorFloats = 4;/kMaxVectorFloats = 16;/' "$tuning" > "$tuning.new" && mv "$tuning.new" "$tuning"
  commit "Revert \"cpu: 4-float vectors in the tile kernel\"

The tile loop got slower, not faster."

  printf '\n<!-- The split heuristic aims at two tasks per worker thread. -->\n' >> "$repo/kernels/README.md"
  commit "kernels: note on the split heuristic (comment only)"

  printf '\nSee perfwatch.json for the sweep.\n' >> "$repo/README.md"
  commit "docs: where the sweep is defined"
fi

first=$(git -C "$repo" rev-list --max-parents=0 HEAD)
echo "demo_repo.sh: perfwatch watch --once on $repo (CPU backend); one log line per event" >&2
"$perfwatch" --db "$db" watch --repo "$repo" --since "$first" --once

echo
echo "== commits and their runs =="
"$perfwatch" --db "$db" query runs --repo "$repo"
echo
echo "== the newest run's table: variant x point, median, 95% CI, trials, tokens/s, delta vs the baseline variant =="
"$perfwatch" --db "$db" query runs --latest --repo "$repo"
echo
echo "== flags =="
"$perfwatch" --db "$db" flags --all --repo "$repo"
echo
echo "== negative results (rejected experiments) =="
"$perfwatch" --db "$db" query experiments --verdict rejected --repo "$repo"
echo "== every experiment, one line each (variant A/B of each commit, trailers) =="
"$perfwatch" --db "$db" query experiments --brief --repo "$repo"
echo
echo "more: perfwatch --db $db query experiments --param num_warps=8"
echo "      perfwatch --db $db query history --variant bt32_w4 --point b8_h16_k512_bf16"
echo "      perfwatch --db $db watch --repo $repo --port 8080   (the dashboard)"
