#!/usr/bin/env bash
# The main job on its embedded default: set up a fresh Debian 12 machine,
# build perfwatch, and benchmark this repository's own kernels/ at HEAD
# (CPU backend where there is no GPU), storing every trial in
# .perfwatch/perfwatch.db and printing the table.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
# The dashboard embeds uPlot from npm (web/package-lock.json pins it).
(cd web && npm ci --no-audit --no-fund --loglevel=error)
build=${PERFWATCH_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target perfwatch

exec "$build/perfwatch" --db .perfwatch/perfwatch.db bench --repo . "$@"
