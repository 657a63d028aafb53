#!/bin/sh
# A stand-in for a serving engine's end-to-end throughput script, as the
# command adapter watches one unchanged: it takes the concurrency as an
# argument and a knob from the environment, logs a little, and prints one
# throughput line. Its figure is a formula, so that a test can tell that the
# adapter passed the right values: tokens/s = 1000 * conc * TARGET_CTAS / 64.
#
#   --conc C            the concurrency (required)
#   --label TEXT        printed in the throughput line's prefix
#   FAIL_AT_CONC=C      exit 3 with a message on stderr at that concurrency
#   SAY=TEXT            print "throughput: TEXT tokens/s" instead of the figure
#   ZERO_AT_CONC=C      print 0 tokens/s at that concurrency
conc=""
label="serve"
while [ $# -gt 0 ]; do
  case "$1" in
    --conc) conc="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    *) echo "throughput.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$conc" ] || { echo "throughput.sh: --conc is required" >&2; exit 2; }
ctas="${TARGET_CTAS:-64}"
echo "loading model ... done"
echo "warming up at concurrency $conc with TARGET_CTAS=$ctas"
if [ "${FAIL_AT_CONC:-}" = "$conc" ]; then
  echo "CUDA error: out of memory (tried to allocate 2.00 GiB) at concurrency $conc" >&2
  exit 3
fi
if [ -n "${SAY:-}" ]; then
  echo "[$label] throughput: $SAY tokens/s"
  exit 0
fi
if [ "${ZERO_AT_CONC:-}" = "$conc" ]; then
  echo "[$label] throughput: 0 tokens/s"
  exit 0
fi
echo "[$label] throughput: $((1000 * conc * ctas / 64)) tokens/s"
echo "[$label] done"
