#!/bin/sh
# Builds kernels/ the way perfwatch.json asks: with the CUDA backend where a
# GPU and nvcc are present, the CPU backend alone elsewhere (nvcc without a GPU
# would only cost minutes of compiling for a binary that cannot run them).
# PERFWATCH_CUDA=ON or OFF overrides the choice.
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
# shellcheck disable=SC2086
cmake -S "$source_dir" -B "$build_dir" $generator -DCMAKE_BUILD_TYPE=Release -DMLA_ENABLE_CUDA="$cuda"
cmake --build "$build_dir" --parallel
