#!/bin/sh
# The H200 benchmark of the CUDA kernels, as quoted in kernels/BENCHMARKS.md:
# builds kernels/ with CMake alone (sm_90 and sm_120; the compiler's resource
# report kept in build.log), writes analysis.txt (registers and spills per
# kernel, the SASS instruction mix of one variant, the gather-only bandwidth
# ceiling of gather_probe.cu, and with MLA_PROFILE=1 Nsight Compute sections),
# runs the correctness sweep of every variant, the timing sweep and the
# PyTorch eager comparison (h200_bench.py), and prints the tables last.
#
# usage: kernels/scripts/h200_bench.sh [OUT_DIR]    (default: $OUT, else ./h200-results)
# env:   MLA_BUILD_DIR (default /tmp/mla-build), MLA_PROFILE=1 (adds the ncu phase),
#        MLA_BENCH_ARGS (extra h200_bench.py arguments)
set -eu
out=${1:-${OUT:-h200-results}}
mkdir -p "$out"
kernels=$(cd "$(dirname "$0")/.." && pwd)
build=${MLA_BUILD_DIR:-/tmp/mla-build}
analysis="$out/analysis.txt"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv || true

start=$(date +%s)
generator=""
if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
# shellcheck disable=SC2086
cmake -S "$kernels" -B "$build" $generator -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1
cmake --build "$build" --target mla_bench --parallel >>"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

# Registers and spills per kernel (ptxas), and the instruction mix of the SASS.
{
  echo "== ptxas: split kernels"
  grep -A2 "Compiling entry function '_ZN3mla4cuda15split_kv" "$out/build.log" | grep -E "entry|Used|spill" \
    | sed -e "s/ptxas info *: //" || true
} >"$analysis"
if command -v cuobjdump >/dev/null 2>&1; then
  obj=$(find "$build" -name 'split_kv_bt64_w4_s2.cu.o' | head -1)
  if [ -n "$obj" ]; then
    cuobjdump --dump-sass "$obj" >"$out/sass_bt64_w4_s2.txt" 2>&1 || true
    {
      echo "== instruction mix of split_kv_bt64_w4_s2 (all functions in the object, sm_90 and sm_120):"
      grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+" "$out/sass_bt64_w4_s2.txt" | awk '{print $2}' \
        | sed -E 's/\..*//' | sort | uniq -c | sort -rn | head -25
    } >>"$analysis"
    gzip -f "$out/sass_bt64_w4_s2.txt"
  fi
fi

# The access pattern's own ceiling: the same gather with no arithmetic.
if nvcc -std=c++17 -O3 -arch=sm_90 -o "$build/gather_probe" "$kernels/scripts/gather_probe.cu" >>"$out/build.log" 2>&1; then
  { echo "== gather_probe"; "$build/gather_probe"; } >>"$analysis" 2>&1 || true
  grep "gather best" "$analysis" || true
fi

phases=check,time,torch
if [ "${MLA_PROFILE:-0}" = 1 ]; then phases=check,profile,time,torch; fi
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 python3 "$kernels/scripts/h200_bench.py" --bench "$build/mla_bench" --out "$out" --phases "$phases" \
  ${MLA_BENCH_ARGS:-}
