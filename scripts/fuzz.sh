#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang and the sanitizers,
# and runs each for a fixed time over its seed corpus. CI runs it after the
# tests with the default budget; tests/fuzz/README.md gives the longer run.
#
#   scripts/fuzz.sh [seconds per target (default 20)] [target...]
#
# Exits non-zero when a target finds a crash, a leak, a sanitizer report or
# a broken invariant; the input that did it is left in $build/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_manifest fuzz_bench_line fuzz_git_output fuzz_query_params)
build=${PERFWATCH_FUZZ_BUILD_DIR:-build-fuzz}
cxx=${PERFWATCH_FUZZ_CXX:-clang++-16}

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFWATCH_FUZZ=ON \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" >/dev/null
cmake --build "$build" --target "${targets[@]}"

mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
  # New inputs go to a scratch folder (first), the committed seeds are read
  # only (second): a run never changes the repository.
  scratch="$build/corpus/$t"
  mkdir -p "$scratch"
  echo "fuzz: $t for ${seconds} s"
  "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$scratch" "tests/fuzz/corpus/$t" 2>"$build/$t.log" ||
    { tail -n 60 "$build/$t.log"; echo "fuzz: $t FAILED: the input is in $build/artifacts/"; exit 1; }
  grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$build/$t.log" | tail -n 2 | sed "s/^/  /"
done
echo "fuzz: ${#targets[@]} targets, ${seconds} s each: no crash"
