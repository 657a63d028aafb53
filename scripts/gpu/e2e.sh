#!/usr/bin/env bash
# perfwatch end to end on a GPU machine: installs what scripts/gpu/stage.sh
# carried (.carry/gpu/), then runs the phases named, in order, each timed,
# each under what is left of one deadline, and leaves in $OUT at most 8
# files: per phase its database and its printed summary, e2e.txt (the
# machine, the tools, each phase's exit status and wall time) and logs.tar.gz.
#
# usage: scripts/gpu/e2e.sh [--cpu] [--deadline-s S] PHASE...
#   demo        the demo history (scripts/demo_repo.sh: the CUDA one on a GPU)
#               watched by `perfwatch watch --once`; prints what run.sh prints
#               -> demo.db, demo.txt
#   noise[=K]   `perfwatch noise --runs K` (default 10) on this checkout's
#               perfwatch.json sweep: the run-to-run band per variant x point
#               -> noise.db, noise.txt
#   triton      `perfwatch watch --once` of this checkout with
#               examples/triton_mla/perfwatch.json (bench protocol 2)
#               -> triton.db, triton.txt
#   --cpu       the CPU backend even where there is a GPU: the CPU demo
#               history, a small CPU sweep for noise (K default 3), and the
#               kit's CPU example (examples/python_cpu) in place of Triton --
#               the script itself, tested where there is no GPU
#   --executor FILE  the demo's watch and noise run with this executor config
#               (examples/executors/local-gpus.json: every GPU of the machine)
#   --deadline-s S   every phase ends by S seconds after the start (default
#               540, E2E_DEADLINE_S), leaving time to pack the files: the
#               device's limit for one command is 600
# Env: OUT (the folder brought back; default .perfwatch/e2e-out here),
#      E2E_WORK (scratch, default /tmp/perfwatch-e2e, emptied first),
#      PERFWATCH (the binary where nothing was carried; default build/perfwatch)
#
# A phase that fails or runs out of time does not stop the next one: its
# summary says what happened, its database keeps what was measured.
set -uo pipefail

start_s=$SECONDS
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${OUT:-$root/.perfwatch/e2e-out}
work=${E2E_WORK:-/tmp/perfwatch-e2e}
deadline_s=${E2E_DEADLINE_S:-540}
pack_reserve_s=30
force_cpu=no
phases=()

die() { echo "e2e.sh: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu) force_cpu=yes; shift ;;
    --executor) [[ $# -ge 2 && -f $2 ]] || die "--executor needs a config file"; export PERFWATCH_EXECUTOR=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --deadline-s) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || die "--deadline-s needs a number of seconds"; deadline_s=$2; shift 2 ;;
    demo|triton|noise|noise=*) phases+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown phase or option '$1' (phases: demo, noise[=K], triton; options: --cpu, --deadline-s S)" ;;
  esac
done
[[ ${#phases[@]} -ge 1 ]] || die "name at least one phase: demo, noise[=K], triton"
# Two files a phase plus e2e.txt and logs.tar.gz: the device brings back 8.
[[ ${#phases[@]} -le 3 ]] || die "at most 3 phases a call (the device brings back 8 files: 2 a phase + 2)"
declare -A seen=()
for p in "${phases[@]}"; do
  name=${p%%=*}
  [[ -z ${seen[$name]:-} ]] || die "phase $name named twice"
  seen[$name]=1
done

mkdir -p "$out" || die "cannot create $out"
rm -rf "$work"
mkdir -p "$work/logs" || die "cannot create $work"
report=$out/e2e.txt
: > "$report"
note() { echo "$*" | tee -a "$report"; }

# --- install what was carried ------------------------------------------------
carried=$root/.carry/gpu
if [[ -x $carried/bin/perfwatch ]]; then
  perfwatch=$carried/bin/perfwatch
  # Only the libraries this machine lacks go on the loader's path: the build
  # and bench commands perfwatch starts inherit it, and must keep their own.
  mkdir -p "$work/lib"
  cp "$carried"/lib/* "$work/lib/" 2>/dev/null
  export LD_LIBRARY_PATH=$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for soname in $(ldd "$perfwatch" | awk '/not found/ {print $1}'); do
    if [[ -f $carried/lib-spare/$soname ]]; then
      cp "$carried/lib-spare/$soname" "$work/lib/"
      note "installed: $soname (this machine lacks it)"
    fi
  done
  missing=$(ldd "$perfwatch" | awk '/not found/ {print $1}' | tr '\n' ' ')
  [[ -z $missing ]] || die "perfwatch needs libraries this machine lacks and .carry/gpu does not hold: $missing"
  # nlohmann_json for the kernels' CMake: where CMake looks by default, if
  # this machine has none; else (not root) through CMAKE_PREFIX_PATH.
  if [[ -d $carried/prefix/include/nlohmann ]] && [[ ! -f /usr/include/nlohmann/json.hpp && ! -f /usr/local/include/nlohmann/json.hpp ]]; then
    if mkdir -p /usr/local/share/cmake /usr/local/include 2>/dev/null && [[ -w /usr/local/share/cmake && -w /usr/local/include ]]; then
      cp -r "$carried/prefix/share/cmake/nlohmann_json" /usr/local/share/cmake/ &&
        cp -r "$carried/prefix/include/nlohmann" /usr/local/include/ &&
        note "installed: nlohmann_json (CMake config and headers) into /usr/local"
    else
      export CMAKE_PREFIX_PATH=$carried/prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
      note "nlohmann_json: through CMAKE_PREFIX_PATH=$carried/prefix (/usr/local is not writable)"
    fi
  fi
else
  perfwatch=${PERFWATCH:-$root/build/perfwatch}
  [[ -x $perfwatch ]] || die "no perfwatch: run scripts/gpu/stage.sh and carry .carry/gpu, or set PERFWATCH"
fi
"$perfwatch" --help >/dev/null 2>&1 || die "$perfwatch does not start here: $("$perfwatch" --help 2>&1 | head -n 3)"
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH=/usr/local/cuda/bin:$PATH; fi

if [[ $force_cpu == yes ]]; then
  backend=cpu
else
  backend=$("$root/scripts/demo_repo.sh" --print-backend)
fi
if [[ $backend == cuda ]]; then
  # Build the kernels for this GPU only (kernels/scripts/build.sh passes it
  # on): half the compile of sm_90 + sm_120.
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .\r')
  if [[ $arch =~ ^[0-9]{2,3}$ ]]; then export MLA_CUDA_ARCHS=$arch; fi
fi
export PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=$work/triton-cache

{
  echo "perfwatch end to end: $(date -u +%Y-%m-%dT%H:%M:%SZ), backend $backend, phases: ${phases[*]}, deadline ${deadline_s} s"
  echo "host: $(uname -srm), $(nproc) cores"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,uuid,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  fi
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1 || echo none)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1 || echo none); ninja: $(ninja --version 2>/dev/null || echo none); git: $(git --version 2>/dev/null || echo none)"
  echo "python3: $(python3 -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo none)"
  if [[ $backend == cuda ]]; then
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>/dev/null || echo "torch/triton: not importable"
  fi
  echo "perfwatch: $perfwatch (sha256 $(sha256sum "$perfwatch" | cut -c1-16)); MLA_CUDA_ARCHS=${MLA_CUDA_ARCHS:-default}; executor: ${PERFWATCH_EXECUTOR:-local}"
  if [[ -f $carried/STAGED.txt ]]; then head -n 1 "$carried/STAGED.txt"; fi
  echo "checkout: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo 'not a git checkout here')"
} >> "$report" 2>&1

# --- helpers -------------------------------------------------------------------
left_s() { echo $(( deadline_s - pack_reserve_s - (SECONDS - start_s) )); }

# limited CAP_S CMD...: CMD under min(CAP_S, what is left); SIGTERM first
# (perfwatch stops between runs, keeping what it measured), SIGKILL 20 s later.
# The caps keep one slow phase from starving the next on the GPU machine;
# with --cpu (a test on a slow machine) only the deadline counts.
limited() {
  local cap=$1; shift
  if [[ $force_cpu == yes ]]; then cap=$deadline_s; fi
  local left; left=$(left_s)
  if (( left < 30 )); then echo "e2e.sh: no time left (${left} s) for: $*" >&2; return 124; fi
  (( cap < left )) || cap=$left
  timeout -k 20 "$cap" "$@"
}

# copy_db SRC DEST: a consistent copy (the WAL included) through SQLite's
# backup API; python3 is on the GPU machine, the sqlite3 shell is not.
copy_db() {
  [[ -f $1 ]] || { echo "e2e.sh: no database at $1" >&2; return 1; }
  python3 - "$1" "$2" <<'PY' || cp "$1" "$2"
import sqlite3, sys
src = sqlite3.connect(sys.argv[1])
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.close()
src.close()
PY
}

# A git repo of this checkout's files (the device's copy may have no .git),
# for the phases that watch this repo itself.
snapshot() {
  local dest=$work/self
  [[ -d $dest/.git ]] && return 0
  mkdir -p "$dest"
  local rev="a checkout without git history"
  if git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
    rev=$(git -C "$root" rev-parse HEAD)
    if [[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]]; then rev+=" and its uncommitted changes"; fi
    git -C "$root" ls-files -z -co --exclude-standard |
      tar -C "$root" --null -T - --ignore-failed-read -cf - | tar -C "$dest" -xf -
  else
    tar -C "$root" --exclude=./.git --exclude=./.carry --exclude=./build --exclude='./build-*' \
      --exclude=./.perfwatch --exclude=node_modules --exclude=__pycache__ -cf - . | tar -C "$dest" -xf -
  fi
  git -C "$dest" init -q -b main &&
    git -C "$dest" add -A &&
    git -C "$dest" -c user.name="perfwatch e2e" -c user.email="e2e@perfwatch.invalid" \
      commit -q -m "snapshot for the end-to-end run: $rev"
}

# jobs_failed LOG TXT: a watch exits 0 when a commit's build or bench failed
# (the queue moves on); such jobs are the phase's failure. Their done lines
# go to TXT; returns 1 if there was one.
jobs_failed() {
  local failed
  failed=$(grep -E 'step=done .*status=failed' "$1" 2>/dev/null)
  [[ -n $failed ]] || return 0
  { echo; echo "(e2e.sh: jobs that failed, from the watch's log:)"; echo "$failed"; } >> "$2"
  return 1
}

# summary DB: the commits, the newest run's table, flags, experiments.
summary() {
  local db=$1
  echo; echo "== commits and their runs =="
  "$perfwatch" --db "$db" query runs
  echo; echo "== the newest run's table =="
  "$perfwatch" --db "$db" query runs --latest
  echo; echo "== flags =="
  "$perfwatch" --db "$db" flags --all
  echo; echo "== every experiment, one line each =="
  "$perfwatch" --db "$db" query experiments --brief
}

# --- phases --------------------------------------------------------------------
phase_demo() {
  local dir=$work/demo rc
  PERFWATCH=$perfwatch limited 330 "$root/scripts/demo_repo.sh" --backend "$backend" "$dir" \
    > "$out/demo.txt" 2> "$work/logs/demo.log"
  rc=$?
  if (( rc != 0 )) && [[ -f $dir/perfwatch.db ]]; then
    { echo; echo "(e2e.sh: demo_repo.sh ended with $rc before its summary; what was measured:)"
      PERFWATCH=$perfwatch "$root/scripts/demo_summary.sh" "$dir/perfwatch.db" "$dir/repo" "$backend"
    } >> "$out/demo.txt" 2>> "$work/logs/demo.log"
  fi
  copy_db "$dir/perfwatch.db" "$out/demo.db"
  if ! jobs_failed "$work/logs/demo.log" "$out/demo.txt" && (( rc == 0 )); then rc=3; fi
  return "$rc"
}

# A small sweep for the CPU test of this phase: the shipped perfwatch.json's
# variants at two batch sizes and topk 512, one worker thread.
cpu_noise_manifest() {
  python3 - "$root/perfwatch.json" "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["build"]["command"] = "PERFWATCH_CUDA=OFF kernels/scripts/build.sh build/kernels"
m["bench"]["backend"] = "cpu"
m["bench"].setdefault("params", {})["threads"] = 1  # manifest version 2: the bench's own settings
m["sweep"]["axes"].update({"batch": [1, 8], "topk": [512]})
m["trials"] = {"min": 5, "max": 10, "target_rel_ci": 0.02, "budget_s": 2, "min_trial_ms": 10, "warmup_ms": 20}
json.dump(m, open(sys.argv[2], "w"), indent=2)
PY
}

phase_noise() {
  local runs=$1 dir=$work/noise rc manifest=()
  mkdir -p "$dir"
  snapshot || return 1
  if [[ $backend == cpu ]]; then
    cpu_noise_manifest "$dir/perfwatch.cpu.json" || return 1
    manifest=(--manifest "$dir/perfwatch.cpu.json")
  fi
  {
    echo "perfwatch noise --runs $runs on $(git -C "$work/self" log -1 --format=%s)"
    echo "manifest: ${manifest[1]:-perfwatch.json of this checkout}"
  } > "$out/noise.txt"
  if [[ -n ${PERFWATCH_EXECUTOR:-} ]]; then manifest+=(--executor "$PERFWATCH_EXECUTOR"); fi
  limited 300 "$perfwatch" --db "$dir/perfwatch.db" noise --repo "$work/self" --runs "$runs" "${manifest[@]}" \
    >> "$out/noise.txt" 2> "$work/logs/noise.log"
  rc=$?
  # The K runs, and each one's table: the run medians the band comes from.
  local sha; sha=$(git -C "$work/self" rev-parse HEAD)
  {
    echo; echo "== the runs =="
    "$perfwatch" --db "$dir/perfwatch.db" query runs --commit "$sha"
    for id in $("$perfwatch" --db "$dir/perfwatch.db" query runs --commit "$sha" | awk 'NR > 1 && $2 ~ /^[0-9]+$/ {print $2}'); do
      echo; "$perfwatch" --db "$dir/perfwatch.db" query runs --run "$id"
    done
  } >> "$out/noise.txt" 2>> "$work/logs/noise.log"
  copy_db "$dir/perfwatch.db" "$out/noise.db"
  return "$rc"
}

phase_triton() {
  local dir=$work/triton rc repo manifest=()
  mkdir -p "$dir"
  if [[ $backend == cpu ]]; then
    # No GPU: the kit's CPU example, a protocol-2 bench with its own history.
    repo=$dir/python_cpu
    bash "$root/examples/python_cpu/make_history.sh" "$repo" > "$work/logs/triton-history.txt" || return 1
  else
    snapshot || return 1
    repo=$work/self
    manifest=(--manifest "$repo/examples/triton_mla/perfwatch.json")
  fi
  local first; first=$(git -C "$repo" rev-list --max-parents=0 HEAD)
  echo "perfwatch watch --once on $(git -C "$repo" log -1 --format='%h %s') ${manifest[*]}" > "$out/triton.txt"
  limited 300 "$perfwatch" --db "$dir/perfwatch.db" watch --repo "$repo" --since "$first" --once "${manifest[@]}" \
    2> "$work/logs/triton.log"
  rc=$?
  if [[ -f $dir/perfwatch.db ]]; then
    summary "$dir/perfwatch.db" >> "$out/triton.txt" 2>> "$work/logs/triton.log"
    copy_db "$dir/perfwatch.db" "$out/triton.db"
  fi
  if (( rc != 0 )); then { echo; echo "(e2e.sh: the watch ended with $rc; its log is logs/triton.log)"; tail -n 20 "$work/logs/triton.log"; } >> "$out/triton.txt"; fi
  if ! jobs_failed "$work/logs/triton.log" "$out/triton.txt" && (( rc == 0 )); then rc=3; fi
  return "$rc"
}

# --- run -----------------------------------------------------------------------
note ""
for p in "${phases[@]}"; do
  name=${p%%=*}
  t=$SECONDS
  echo "e2e.sh: phase $p ($(left_s) s left)" >&2
  case "$name" in
    demo) phase_demo ;;
    noise)
      k=${p#noise}; k=${k#=}
      if [[ -z $k ]]; then if [[ $backend == cpu ]]; then k=3; else k=10; fi; fi
      [[ $k =~ ^[0-9]+$ ]] && (( k >= 2 )) || { note "phase $p: K must be a whole number >= 2"; continue; }
      phase_noise "$k" ;;
    triton) phase_triton ;;
  esac
  rc=$?
  status=ok
  if (( rc == 124 || rc == 137 )); then status="stopped at the deadline"
  elif (( rc == 3 )); then status="failed: a commit's job failed (its summary says which)"
  elif (( rc != 0 )); then status="failed"; fi
  note "phase $p: $status (exit $rc), wall $((SECONDS - t)) s"
done

# --- pack ------------------------------------------------------------------------
# The logs: each phase's stderr, and perfwatch's own (every build log and
# bench stderr, under each database's .work/logs), without the worktrees.
find "$work" -path '*.work/logs/*' -type f -print0 2>/dev/null |
  while IFS= read -r -d '' f; do
    rel=${f#"$work"/}
    mkdir -p "$work/logs/perfwatch/$(dirname "$rel")" && cp "$f" "$work/logs/perfwatch/$rel"
  done
cp "$report" "$work/logs/" 2>/dev/null
tar -C "$work" -czf "$out/logs.tar.gz" logs
note "total wall $((SECONDS - start_s)) s; brought back: $(cd "$out" && ls | tr '\n' ' ')"
echo
for f in "$out"/*.txt; do
  [[ $f == "$report" ]] && continue
  echo "===== $(basename "$f") (last 60 lines) ====="
  tail -n 60 "$f"
done
echo "===== e2e.txt ====="
cat "$report"
