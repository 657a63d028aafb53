#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything (the CUDA kernels too
# when nvcc is on the PATH) and runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --for-tests
# The dashboard embeds uPlot from npm (web/package-lock.json pins it).
(cd web && npm ci --no-audit --no-fund --loglevel=error)
build=${PERFWATCH_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFWATCH_REQUIRE_BROWSER_TEST=ON
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
# The parsers of outside input under libFuzzer, a fixed budget each, after the
# tests (tests/fuzz/README.md).
./scripts/fuzz.sh "${PERFWATCH_FUZZ_SECONDS:-20}"

# The unit and integration tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a build folder of their own (without CUDA:
# nvcc's host code is not what this checks). Any report fails the step.
# Left out: the browser test (chromium and node are not ours to instrument;
# the server it drives is exercised by web_test here), the `e2e` tests (the
# three ways in: minutes of real benches whose perfwatch side the other daemon
# and CLI tests cover under the sanitizers), the `slow` test
# (daemon_kernel_test configures and builds kernels/ from scratch: 15 min
# un-instrumented), the `kit` tests (Python only, no C++ of ours runs), and
# the kernels' tests: their code is compiled -O3 with its own flags, runs on
# a GPU in production, and is tested by the main step; leaving them out
# keeps this step's cost down (ASan compiles cost ~1.3x, tests run 2-3x).
# Nor are kernels/ and benchmarks/ built here: the benchmarks' smoke tests
# (fault_kill_smoke: 12 kill -9s of real daemons, minutes) run in the main
# step, and the daemon code they drive is tested here by daemon_test.
# PERFWATCH_SANITIZE=0 skips this step (a developer re-running the main one).
# Its first run found Boost.Process's environment lookup reading past an
# entry (fixed in runner/process.cpp); since then it runs clean.
if [[ "${PERFWATCH_SANITIZE:-1}" != 0 ]]; then
  san=${PERFWATCH_SANITIZE_BUILD_DIR:-build-sanitize}
  # Every part's tests but the kernels' and the fuzz targets' (their own build,
  # above); a new part is included by itself.
  parts=""
  for list in tests/*/CMakeLists.txt; do
    part=$(basename "$(dirname "$list")")
    if [[ $part != support && $part != kernels && $part != fuzz ]]; then parts+="${parts:+;}$part"; fi
  done
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DMLA_ENABLE_CUDA=OFF "${launcher[@]}" \
    -DPERFWATCH_TEST_PARTS="$parts" -DPERFWATCH_WITH_KERNELS=OFF -DPERFWATCH_WITH_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS_SANITIZE="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS_SANITIZE="-fsanitize=address,undefined"
  cmake --build "$san"
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$san" --output-on-failure -j "$(nproc)" -LE 'slow|kit|e2e|slurm' -E '^web_browser_test$'
fi
