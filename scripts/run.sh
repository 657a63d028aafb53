#!/usr/bin/env bash
# The main job on its embedded default. Sets up a fresh Debian 12 machine,
# builds perfwatch, then:
#
#   ./scripts/run.sh          watches the bundled kernel repo: creates (if absent)
#                             .perfwatch/demo/repo, a replay of a kernel-tuning history
#                             with this repo's kernels/, runs `perfwatch watch --once` on
#                             it (CPU backend where there is no GPU), prints the runs, the
#                             flags and the negative results, then serves the dashboard on
#                             http://127.0.0.1:${PERFWATCH_PORT:-8080} until Ctrl-C (from a terminal)
#   ./scripts/run.sh bench    benchmarks this repository's HEAD once with perfwatch.json
#                             and prints the table (extra arguments go to `perfwatch bench`)
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
# The dashboard embeds uPlot from npm (web/package-lock.json pins it).
(cd web && npm ci --no-audit --no-fund --loglevel=error)
build=${PERFWATCH_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target perfwatch

if [[ "${1:-}" == "bench" ]]; then
  shift
  exec "$build/perfwatch" --db .perfwatch/perfwatch.db bench --repo . "$@"
fi

PERFWATCH="$build/perfwatch" ./scripts/demo_repo.sh .perfwatch/demo
if [[ -t 0 && -t 1 ]]; then
  echo
  exec "$build/perfwatch" serve --db .perfwatch/demo/perfwatch.db --port "${PERFWATCH_PORT:-8080}"
fi
echo "dashboard: $build/perfwatch serve --db .perfwatch/demo/perfwatch.db --port ${PERFWATCH_PORT:-8080}"
