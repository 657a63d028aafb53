#!/bin/bash
# An end-to-end throughput script as a serving engineer keeps one: it runs a
# batch of `--conc` concurrent requests through the "engine" (here a
# CPU-bound awk loop standing in for the decode step) and prints one line,
# "throughput: N tokens/s". It knows nothing of perfwatch; the command
# adapter reads that line. TARGET_CTAS is the engine knob a variant sets.
# bash for EPOCHREALTIME: the clock is read without starting a process, so
# the timed interval is the engine's work (and one awk start), not date's.
conc=1
while [ $# -gt 0 ]; do
  case "$1" in
    --conc) conc="$2"; shift 2 ;;
    *) echo "tok_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export LC_ALL=C  # EPOCHREALTIME's decimal point, and awk's, must be a dot
ctas="${TARGET_CTAS:-64}"
passes=1  # decode passes over each tile
start=$EPOCHREALTIME
awk -v c="$conc" -v p="$passes" -v ctas="$ctas" 'BEGIN {
  s = 0; n = (1000000 + 150000 * c) * p
  for (i = 0; i < n; i++) s += (i % ctas) * 0.5
  if (s < 0) print s
}'
end=$EPOCHREALTIME
echo "served $conc requests with TARGET_CTAS=$ctas"
awk -v t="$((conc * 256))" -v start="$start" -v end="$end" 'BEGIN { printf "throughput: %.1f tokens/s\n", t / (end - start) }'
