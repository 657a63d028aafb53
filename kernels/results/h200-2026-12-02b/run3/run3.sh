#!/bin/bash
# Run 3 (2026-12-02, second session): the committed defaults (bulk gather,
# 2/3 barriers a tile, programmatic split launch): build, ptxas, the gather
# probe, the correctness gate of every variant (both dtypes), the time sweep
# of both dtypes at target_ctas 0, 96, 240, 320, 384, and PyTorch eager.
# Run from the repository root on the H200, with kernels/ and the json
# headers carried in .carry/kernel/.
root=$(pwd)
R=/tmp/r3; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry/kernel
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_JSON_INCLUDE_DIR=$root/.carry/kernel/json/include MLA_PHASES=check,time,torch \
MLA_BENCH_ARGS="--dtypes bf16,fp8 --target-ctas 0,96,240,320,384" timeout 420 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "bench exit $?" >> $R/console.txt
date -u >> $R/console.txt
gzip -f $R/check.jsonl $R/time.jsonl 2>/dev/null
cd /tmp && tar czf $OUT/r3.tgz r3 && cp $R/console.txt $OUT/console.txt
grep "gather best\|^build" $R/console.txt $R/analysis.txt; grep -h "^CHECK" $R/console.txt; tail -45 $R/console.txt
