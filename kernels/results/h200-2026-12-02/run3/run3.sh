#!/bin/bash
# fp8 bt32 x 4 warps capped at 168 registers (3 CTAs an SM) beside the default; then the full check + time + torch of the winner
root=$(pwd)
R=/tmp/r; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry
P="bt32_w4_s2_tc384@b96_h16_k2048_fp8,bt32_w4_s1_tc384@b96_h16_k2048_fp8,bt16_w4_s2_tc384@b96_h16_k2048_fp8,bt32_w4_s2_tc320@b80_h16_k2048_fp8,bt64_w4_s2_tc240@b80_h16_k2048_fp8,bt32_w4_s2_tc384@b64_h16_k2048_fp8,bt64_w4_s2_tc240@b64_h16_k2048_fp8,bt32_w4_s2_tc384@b48_h16_k2048_fp8,bt32_w4_s2_tc240@b48_h16_k2048_fp8,bt32_w4_s2_tc96@b8_h16_k2048_fp8,bt32_w4_s2_tc0@b128_h128_k2048_fp8,bt16_w4_s2_tc384@b96_h16_k2048"
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_JSON_INCLUDE_DIR=$root/.carry/json/include MLA_PHASES=exp \
MLA_EXPERIMENTS="mb3:MLA_EXP_FP8_BT32_W4_MIN_BLOCKS=3" \
MLA_BENCH_ARGS="--exp-pairs $P" timeout 150 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "exp exit $?" >> $R/console.txt
timeout 170 python3 kernels/scripts/h200_bench.py --bench /tmp/mb-exp-mb3/mla_bench --out $R/final --phases check,time,torch --dtypes fp8 --target-ctas 0,96,240,320,384 > $R/final.txt 2>&1
echo "final exit $?" >> $R/console.txt
for b in mb mb-exp-mb3; do o=$(find /tmp/$b -name 'split_kv_bt32_w4_s2_fp8.cu.o' | head -1); [ -n "$o" ] && cuobjdump --dump-sass $o > $R/sass_fp8_bt32_w4_s2_$b.txt 2>&1; done
date -u >> $R/console.txt
cd /tmp && tar czf $OUT/r3.tgz r && cp $R/console.txt $OUT/console.txt && grep -A16 "^Experiments" $R/console.txt | head -18; grep "CHECK\|Correctness\|exit" $R/final.txt $R/console.txt; grep -A12 "Best variant per point" $R/final.txt; grep "torch eager\|Copy bandwidth" $R/final.txt
