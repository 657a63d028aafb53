#!/usr/bin/env bash
# The main job on its embedded default. Sets up a fresh Debian 12 machine,
# builds perfwatch, then:
#
#   ./scripts/run.sh          watches the bundled kernel repo: creates (if absent) a replay
#                             of a kernel-tuning history with this repo's kernels/ --
#                             .perfwatch/demo-cuda/repo, the CUDA history, where nvcc and a
#                             GPU are found; .perfwatch/demo/repo, the CPU history, elsewhere
#                             (scripts/demo_repo.sh) -- runs `perfwatch watch --once` on it,
#                             prints the runs, the flags and the negative results, then
#                             serves the dashboard on http://127.0.0.1:${PERFWATCH_PORT:-8080}
#                             until Ctrl-C (from a terminal). PERFWATCH_DEMO_BACKEND=cpu or
#                             cuda chooses the history.
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

backend=$(./scripts/demo_repo.sh --print-backend)
demo=.perfwatch/demo
if [[ $backend == cuda ]]; then demo=.perfwatch/demo-cuda; fi
PERFWATCH="$build/perfwatch" ./scripts/demo_repo.sh --backend "$backend" "$demo"
if [[ -t 0 && -t 1 ]]; then
  echo
  exec "$build/perfwatch" serve --db "$demo/perfwatch.db" --port "${PERFWATCH_PORT:-8080}"
fi
echo "dashboard: $build/perfwatch serve --db $demo/perfwatch.db --port ${PERFWATCH_PORT:-8080}"
