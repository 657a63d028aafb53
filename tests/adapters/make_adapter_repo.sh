#!/bin/sh
# Makes a git repo that perfwatch can watch through an adapter, with a planted
# slowdown at a known commit: for the end-to-end tests that check that
# `perfwatch watch` flags it at the right commit (and nowhere else).
#
#   make_adapter_repo.sh KIND DIR [--slowdown N]
#
# KIND  google-benchmark: the Google Benchmark suite of gbench_suite/ (built by
#                         the manifest's build command: cmake + ninja against
#                         the system's libbenchmark-dev), judged by cpu_time
#                         in microseconds -- CPU time, not real time, because
#                         CI machines are shared and real time there moves
#                         with the neighbours' load;
#       command:          command_repo/tok_bench.sh, an end-to-end throughput
#                         script read by a regex, judged by tokens/s (higher is
#                         better), with TARGET_CTAS set per variant.
# DIR   must not exist, or be empty.
# N     how many times the work the slow commit does (an integer >= 2; default 2).
#
# The history, oldest first (every commit by "perfwatch test"):
#   base      the suite and its v2 perfwatch.json
#   docs      README.md only: outside the manifest's paths (inherits base's results)
#   neutral   a comment in a watched file: same speed as base
#   slow      the planted slowdown: the kernel's passes (google-benchmark) or
#             the script's passes (command) times N
#   after     a comment in a watched file: as slow as slow
# On success it prints, one a line: kind=, repo=, base=, docs=, neutral=,
# slow=, after= (full shas) and exits 0.
set -eu

usage() { echo "usage: make_adapter_repo.sh google-benchmark|command DIR [--slowdown N]" >&2; exit 2; }
[ $# -ge 2 ] || usage
kind="$1"
dir="$2"
shift 2
factor=2
while [ $# -gt 0 ]; do
  case "$1" in
    --slowdown) [ $# -ge 2 ] || usage; factor="$2"; shift 2 ;;
    *) usage ;;
  esac
done
case "$factor" in
  ''|*[!0-9]*) echo "make_adapter_repo.sh: --slowdown must be an integer >= 2, not '$factor'" >&2; exit 2 ;;
esac
[ "$factor" -ge 2 ] || { echo "make_adapter_repo.sh: --slowdown must be >= 2" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  echo "make_adapter_repo.sh: $dir exists and is not empty" >&2
  exit 2
fi
mkdir -p "$dir"
cd "$dir"
git init -q -b main .
git config user.name "perfwatch test"
git config user.email "perfwatch-test@example.invalid"
git config commit.gpgsign false

commit() {  # message
  git add -A
  git commit -q -m "$1"
  git rev-parse HEAD
}

case "$kind" in
  google-benchmark)
    cp "$here/gbench_suite/CMakeLists.txt" "$here/gbench_suite/decode_bench.cpp" "$here/gbench_suite/decode_kernel.h" .
    printf 'build/\n' > .gitignore
    cat > perfwatch.json <<'EOF'
{
  "schema_version": 2,
  "name": "decode suite (Google Benchmark)",
  "build": {
    "command": "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build",
    "timeout_s": 900
  },
  "paths": ["CMakeLists.txt", "decode_bench.cpp", "decode_kernel.h"],
  "bench": {
    "adapter": "google-benchmark",
    "command": "build/decode_bench",
    "google_benchmark": {
      "name": "BM_decode<{block_t}>/{batch}/real_time",
      "fields": {"time_us": "cpu_time", "tokens_per_s": "tokens_per_s"}
    }
  },
  "variants": [
    {"name": "bt16", "params": {"block_t": 16}, "baseline": true},
    {"name": "bt32", "params": {"block_t": 32}, "hypothesis": "wider tiles halve the loop overhead"}
  ],
  "sweep": {"axes": {"batch": [1, 8]}, "label": "C{batch}"},
  "metrics": [
    {"name": "time_us", "unit": "us", "direction": "lower_is_better", "description": "CPU time of one decode step"},
    {"name": "tokens_per_s", "unit": "tokens/s", "direction": "higher_is_better"}
  ],
  "metric": "time_us",
  "trials": {"min": 3, "max": 8, "min_trial_ms": 20, "warmup_ms": 5},
  "runs": {"per_commit": 3}
}
EOF
    watched=decode_kernel.h
    base=$(commit "decode suite: BM_decode over BLOCK_T 16/32/64 and batch 1/8")
    ;;
  command)
    cp "$here/command_repo/tok_bench.sh" .
    chmod +x tok_bench.sh
    cat > perfwatch.json <<'EOF'
{
  "schema_version": 2,
  "name": "serving throughput (command adapter)",
  "paths": ["tok_bench.sh"],
  "bench": {
    "adapter": "command",
    "command": "./tok_bench.sh --conc {batch}",
    "env": {"TARGET_CTAS": "{target_ctas}"},
    "extract": {"tokens_per_s": {"regex": "throughput: ([0-9.]+) tokens/s"}},
    "trial_timeout_s": 60
  },
  "variants": [
    {"name": "ctas64", "params": {"target_ctas": 64}, "baseline": true},
    {"name": "ctas128", "params": {"target_ctas": 128}, "hypothesis": "more CTAs split the KV cache finer"}
  ],
  "sweep": {"axes": {"batch": [1, 8]}, "label": "C{batch}"},
  "metrics": [{"name": "tokens_per_s", "unit": "tokens/s", "direction": "higher_is_better"}],
  "trials": {"min": 3, "max": 6},
  "runs": {"per_commit": 3}
}
EOF
    watched=tok_bench.sh
    base=$(commit "serving throughput script, watched unchanged through the command adapter")
    ;;
  *) usage ;;
esac

printf '# %s\n\nA repo for perfwatch'"'"'s adapter tests.\n' "$kind" > README.md
docs=$(commit "docs: README")

# A comment changes nothing measurable.
if [ "$kind" = google-benchmark ]; then
  sed -i 's|^// A stand-in for a decode kernel|// A stand-in for a decode kernel (reviewed)|' "$watched"
else
  sed -i 's|^# An end-to-end throughput script|# An end-to-end throughput script (reviewed)|' "$watched"
fi
neutral=$(commit "comment: reviewed")

if [ "$kind" = google-benchmark ]; then
  sed -i "s|^constexpr int kPasses = 1;|constexpr int kPasses = $factor;|" "$watched"
  grep -q "kPasses = $factor;" "$watched"
else
  sed -i "s|^passes=1 |passes=$factor |" "$watched"
  grep -q "^passes=$factor " "$watched"
fi
slow=$(commit "decode: $factor passes over each tile (planted slowdown)")

printf '\n' >> "$watched"
after=$(commit "whitespace: trailing newline")

printf 'kind=%s\nrepo=%s\nbase=%s\ndocs=%s\nneutral=%s\nslow=%s\nafter=%s\n' \
  "$kind" "$(pwd)" "$base" "$docs" "$neutral" "$slow" "$after"
