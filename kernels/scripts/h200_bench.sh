#!/bin/sh
# The H200 benchmark of the CUDA kernels, as quoted in kernels/BENCHMARKS.md:
# builds kernels/ with CMake alone (the compiler's resource report kept in
# build.log), writes analysis.txt (registers and spills per kernel, the SASS
# instruction mix of one variant, the gather-only bandwidth ceiling of
# gather_probe.cu, and with MLA_PROFILE=1 Nsight Compute sections), runs the
# correctness sweep of every variant, the timing sweep and the PyTorch eager
# comparison (h200_bench.py), and prints the tables last.
#
# With MLA_OLD_SRC (another checkout's kernels/ folder) it also builds that
# tree beside this one, compares the SASS of every bf16 split kernel of the
# two builds (sass_diff.txt) and adds the before/after timing phase (ab).
#
# usage: kernels/scripts/h200_bench.sh [OUT_DIR]    (default: $OUT, else ./h200-results)
# env:   MLA_BUILD_DIR (default /tmp/mla-build), MLA_ARCHS (default "90;120"),
#        MLA_JSON_INCLUDE_DIR (a folder holding nlohmann/json.hpp, when not installed),
#        MLA_PHASES (default check,time,torch; ab is added with MLA_OLD_SRC),
#        MLA_PROFILE=1 (adds the ncu phase), MLA_OLD_SRC,
#        MLA_EXPERIMENTS ("name:DEF=V ...;name2:..." builds one more copy per
#        experiment and adds the exp phase; pass --exp-pairs in MLA_BENCH_ARGS),
#        MLA_BENCH_ARGS (extra h200_bench.py arguments, e.g. --dtypes bf16,fp8)
set -eu
out=${1:-${OUT:-h200-results}}
mkdir -p "$out"
kernels=$(cd "$(dirname "$0")/.." && pwd)
build=${MLA_BUILD_DIR:-/tmp/mla-build}
archs=${MLA_ARCHS:-90;120}
analysis="$out/analysis.txt"
phases=${MLA_PHASES:-check,time,torch}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv || true

configure() {  # source folder, build folder, log
  generator=""
  if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
  json=""
  if [ -n "${MLA_JSON_INCLUDE_DIR:-}" ]; then json="-DMLA_JSON_INCLUDE_DIR=$MLA_JSON_INCLUDE_DIR"; fi
  # shellcheck disable=SC2086
  cmake -S "$1" -B "$2" $generator -DCMAKE_BUILD_TYPE=Release "-DMLA_CUDA_ARCHS=$archs" $json >"$3" 2>&1 &&
    cmake --build "$2" --target mla_bench --parallel >>"$3" 2>&1
}

configure_exp() {  # as configure, plus $MLA_EXTRA
  generator=""
  if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
  json=""
  if [ -n "${MLA_JSON_INCLUDE_DIR:-}" ]; then json="-DMLA_JSON_INCLUDE_DIR=$MLA_JSON_INCLUDE_DIR"; fi
  # shellcheck disable=SC2086
  cmake -S "$1" -B "$2" $generator -DCMAKE_BUILD_TYPE=Release "-DMLA_CUDA_ARCHS=$archs" $json "$MLA_EXTRA" >"$3" 2>&1 &&
    cmake --build "$2" --target mla_bench --parallel >>"$3" 2>&1
}

start=$(date +%s)
if [ -n "${MLA_OLD_SRC:-}" ]; then
  configure "$MLA_OLD_SRC" "$build-old" "$out/build_old.log" &
  old_pid=$!
fi
# Experiments: MLA_EXPERIMENTS="name:DEF=1 DEF2=3;name2:..." builds this tree
# once more per experiment with those definitions (cuda/CMakeLists.txt's
# MLA_CUDA_DEFINES) for the exp phase.
exp_args=""
exp_pids=""
if [ -n "${MLA_EXPERIMENTS:-}" ]; then
  old_ifs=$IFS
  IFS=';'
  for e in $MLA_EXPERIMENTS; do
    IFS=$old_ifs
    name=${e%%:*}
    defs=$(echo "${e#*:}" | tr ' ' ';')
    (MLA_EXTRA="-DMLA_CUDA_DEFINES=$defs" configure_exp "$kernels" "$build-exp-$name" "$out/build_exp_$name.log") &
    exp_pids="$exp_pids $!"
    exp_args="$exp_args${exp_args:+,}$name=$build-exp-$name/mla_bench"
    IFS=';'
  done
  IFS=$old_ifs
fi
configure "$kernels" "$build" "$out/build.log" || { tail -50 "$out/build.log"; exit 1; }
if [ -n "${MLA_OLD_SRC:-}" ]; then
  wait "$old_pid" || { tail -50 "$out/build_old.log"; exit 1; }
fi
for p in $exp_pids; do wait "$p" || { echo "an experiment build failed"; tail -30 "$out"/build_exp_*.log; exit 1; }; done
echo "build: $(( $(date +%s) - start )) s (sm $archs)"

# Registers and spills per kernel (ptxas), and the instruction mix of the SASS.
ptxas_table() {
  grep -A3 "Compiling entry function '_ZN3mla4cuda15split_kv" "$1" | grep -E "entry|Used|spill" \
    | sed -e "s/ptxas info *: //" || true
}
{
  echo "== ptxas: split kernels"
  ptxas_table "$out/build.log"
  if [ -n "${MLA_OLD_SRC:-}" ]; then
    echo "== ptxas: split kernels of the old build ($MLA_OLD_SRC)"
    ptxas_table "$out/build_old.log"
  fi
} >"$analysis"
if command -v cuobjdump >/dev/null 2>&1; then
  obj=$(find "$build" -name 'split_kv_bt64_w4_s2.cu.o' | head -1)
  if [ -n "$obj" ]; then
    cuobjdump --dump-sass "$obj" >"$out/sass_bt64_w4_s2.txt" 2>&1 || true
    {
      echo "== instruction mix of split_kv_bt64_w4_s2 (all functions in the object):"
      grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+" "$out/sass_bt64_w4_s2.txt" | awk '{print $2}' \
        | sed -E 's/\..*//' | sort | uniq -c | sort -rn | head -25
    } >>"$analysis"
    gzip -f "$out/sass_bt64_w4_s2.txt"
  fi
  if [ -n "${MLA_OLD_SRC:-}" ]; then
    # Every bf16 variant object of both builds (the fp8 units are new).
    for o in $(find "$build-old" -name 'split_kv_bt*_w*_s?.cu.o' | sort); do cuobjdump --dump-sass "$o"; done >"$out/old.sass" 2>&1
    for o in $(find "$build" -name 'split_kv_bt*_w*_s?.cu.o' | sort); do cuobjdump --dump-sass "$o"; done >"$out/new.sass" 2>&1
    python3 "$kernels/scripts/sass_diff.py" "$out/old.sass" "$out/new.sass" >"$out/sass_diff.txt" 2>&1 || true
    tail -1 "$out/sass_diff.txt"
    rm -f "$out/old.sass" "$out/new.sass"
  fi
fi

# The access pattern's own ceiling: the same gather with no arithmetic.
if nvcc -std=c++17 -O3 -arch=sm_90 -o "$build/gather_probe" "$kernels/scripts/gather_probe.cu" >>"$out/build.log" 2>&1; then
  { echo "== gather_probe"; "$build/gather_probe"; } >>"$analysis" 2>&1 || true
  grep "gather best" "$analysis" || true
fi

{
  for f in "$out"/build_exp_*.log; do
    [ -f "$f" ] || continue
    echo "== ptxas: split kernels of experiment build $(basename "$f" .log)"
    ptxas_table "$f"
  done
} >>"$analysis"
if [ -n "$exp_args" ]; then
  exp_args="--bench-exp $exp_args"
  case ",$phases," in *,exp,*) ;; *) phases="exp,$phases" ;; esac
fi
old_args=""
if [ -n "${MLA_OLD_SRC:-}" ]; then
  old_args="--bench-old $build-old/mla_bench"
  case ",$phases," in *,ab,*) ;; *) phases="ab,$phases" ;; esac
fi
if [ "${MLA_PROFILE:-0}" = 1 ]; then phases="$phases,profile"; fi
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 python3 "$kernels/scripts/h200_bench.py" --bench "$build/mla_bench" --out "$out" --phases "$phases" \
  $old_args $exp_args ${MLA_BENCH_ARGS:-}
