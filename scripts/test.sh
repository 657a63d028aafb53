#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything (the CUDA kernels too
# when nvcc is on the PATH) and runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --with-browser
# The dashboard embeds uPlot from npm (web/package-lock.json pins it).
(cd web && npm ci --no-audit --no-fund --loglevel=error)
build=${PERFWATCH_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFWATCH_REQUIRE_BROWSER_TEST=ON
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
# The parsers of outside input under libFuzzer, a fixed budget each, after the
# tests (tests/fuzz/README.md).
./scripts/fuzz.sh "${PERFWATCH_FUZZ_SECONDS:-20}"
