#!/usr/bin/env bash
# drive_h200.sh OUT_DIR: checks and times the Triton example on a GPU machine with the kit's
# driver (kit/drive_bench.py plays perfwatch's runner: the plan from perfwatch.json, measure
# requests, every line validated against schemas/bench/v2/). Not perfwatch watch: that end-to-end
# run is a separate script. Needs python3 with PyTorch and Triton; about 2 minutes on an H200.
#
#   1 timing:  perfwatch.json (C1..C96, 6 variants), 5 trials per variant x point, interleaved
#   2 checks:  perfwatch.check.json (odd shapes: 8 and 40 heads, topk 100/1000/2047, masks), 1 trial
#
# Writes to OUT_DIR: env.txt, timing.txt/.err, lines.jsonl, summary.json, check.txt/.err,
# check_summary.json. TIMING_DEADLINE_S and CHECK_DEADLINE_S bound each part (no request is sent
# after them; what was measured is kept).
set -uo pipefail
out=${1:?usage: drive_h200.sh OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$out"
cd "$root"
export PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/perfwatch-triton-cache}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
} > "$out/env.txt" 2>&1

python3 kit/drive_bench.py --manifest examples/triton_mla/perfwatch.json --repo . --trials 5 --seed 20261201 \
  --deadline-s "${TIMING_DEADLINE_S:-80}" --lines "$out/lines.jsonl" --summary "$out/summary.json" \
  > "$out/timing.txt" 2> "$out/timing.err"
timing=$?
python3 kit/drive_bench.py --manifest examples/triton_mla/perfwatch.check.json --repo . --trials 1 --seed 7 \
  --deadline-s "${CHECK_DEADLINE_S:-30}" --summary "$out/check_summary.json" \
  > "$out/check.txt" 2> "$out/check.err"
check=$?
cat "$out/timing.txt"
tail -n 80 "$out/check.txt"
echo "drive_h200: timing exit $timing, checks exit $check"
