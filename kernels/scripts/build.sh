#!/bin/sh
# Builds kernels/ the way perfwatch.json asks: with the CUDA backend where a
# GPU and nvcc are present, the CPU backend alone elsewhere (nvcc without a GPU
# would only cost minutes of compiling for a binary that cannot run them).
# PERFWATCH_CUDA=ON or OFF overrides the choice; MLA_CUDA_ARCHS (e.g. 90)
# builds for those architectures only instead of the default sm_90 and sm_120
# (the GPU demo builds for the GPU it found: half the compile time).
#
# usage: kernels/scripts/build.sh [BUILD_DIR]     (default build/kernels)
set -eu
build_dir=${1:-build/kernels}
source_dir=$(cd "$(dirname "$0")/.." && pwd)

cuda=${PERFWATCH_CUDA:-}
if [ -z "$cuda" ]; then
  if command -v nvcc >/dev/null 2>&1 && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    cuda=ON
    echo "build.sh: found a GPU and nvcc: building the CUDA backend"
  else
    cuda=OFF
    echo "build.sh: no GPU found: building the CPU backend only"
  fi
fi

generator=""
if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
archs=""
if [ -n "${MLA_CUDA_ARCHS:-}" ]; then archs="-DMLA_CUDA_ARCHS=$MLA_CUDA_ARCHS"; fi
# shellcheck disable=SC2086
cmake -S "$source_dir" -B "$build_dir" $generator -DCMAKE_BUILD_TYPE=Release -DMLA_ENABLE_CUDA="$cuda" ${archs:+"$archs"}
cmake --build "$build_dir" --parallel
