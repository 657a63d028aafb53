#!/bin/bash
# fp8 direct-fragment kernel: build new (.carry/kernels) and old (kernels/ = main), check, A/B bf16, time fp8, ncu, torch
root=$(pwd)
R=/tmp/r; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_OLD_SRC=$root/kernels MLA_JSON_INCLUDE_DIR=$root/.carry/json/include MLA_PROFILE=1 \
MLA_BENCH_ARGS="--dtypes bf16,fp8 --time-dtypes fp8 --target-ctas 0,96,240,384,528,1056 --profile-cases b96_h16_k2048:16:4:2:384:fp8,b96_h16_k2048:32:8:2:240:fp8" \
  timeout 420 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "h200_bench.sh exit $?" >> $R/console.txt
# the old build's fp8 at the target_ctas its bests used, same run
timeout 90 python3 kernels/scripts/h200_bench.py --bench /tmp/mb-old/mla_bench --out $R/oldfp8 --phases time --dtypes fp8 --target-ctas 0,240,384 > $R/oldfp8.txt 2>&1
echo "old fp8 exit $?" >> $R/console.txt
for b in mb mb-old; do o=$(find /tmp/$b -name 'split_kv_bt16_w4_s2_fp8.cu.o' | head -1); [ -n "$o" ] && cuobjdump --dump-sass $o > $R/sass_fp8_bt16_w4_s2_$b.txt 2>&1; done
date -u >> $R/console.txt
cd /tmp && tar czf $OUT/r1.tgz r && cp $R/console.txt $OUT/console.txt && tail -c 9000 $R/console.txt; tail -5 $R/oldfp8.txt
