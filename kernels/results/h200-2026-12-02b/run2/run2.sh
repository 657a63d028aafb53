#!/bin/bash
# Run 2 (2026-12-02, second session): barriers a tile with the bulk gather
# (4 / 3 / 2), all with the split kernel as a programmatic dependent launch,
# each an experiment build beside the default in alternating processes; the
# correctness gate of the two new builds, both dtypes.
# Run from the repository root on the H200, with kernels/ and the json
# headers carried in .carry/kernel/.
root=$(pwd)
R=/tmp/r2; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry/kernel
B16="bt16_w4_s2_tc384@b96_h16_k2048,bt16_w4_s3_tc384@b96_h16_k2048,bt32_w4_s2_tc240@b80_h16_k2048,bt16_w4_s3_tc320@b80_h16_k2048,bt64_w8_s2_tc96@b64_h16_k2048,bt16_w4_s3_tc384@b64_h16_k2048,bt32_w4_s2_tc240@b48_h16_k2048,bt16_w4_s3_tc240@b48_h16_k2048,bt64_w4_s2_tc96@b8_h16_k2048,bt64_w4_s2_tc0@b1_h16_k2048,bt32_w4_s1_tc0@b128_h128_k2048"
F8="bt32_w4_s2_tc384@b96_h16_k2048_fp8,bt16_w4_s3_tc384@b96_h16_k2048_fp8,bt16_w4_s2_tc384@b96_h16_k2048_fp8,bt32_w4_s3_tc240@b96_h16_k2048_fp8,bt64_w4_s2_tc240@b80_h16_k2048_fp8,bt32_w4_s2_tc320@b80_h16_k2048_fp8,bt64_w4_s2_tc240@b48_h16_k2048_fp8,bt64_w8_s2_tc96@b8_h16_k2048_fp8,bt64_w8_s3_tc0@b1_h16_k2048_fp8,bt32_w4_s2_tc0@b128_h128_k2048_fp8"
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_JSON_INCLUDE_DIR=$root/.carry/kernel/json/include MLA_PHASES=exp \
MLA_EXPERIMENTS="bar4:MLA_EXP_BULK_GATHER=1 MLA_EXP_SPLIT_PDL=1;bar3:MLA_EXP_BULK_GATHER=1 MLA_EXP_SPLIT_PDL=1 MLA_EXP_BULK_TILE_BARRIERS=3;bar2:MLA_EXP_BULK_GATHER=1 MLA_EXP_SPLIT_PDL=1 MLA_EXP_BULK_TILE_BARRIERS=2" \
MLA_BENCH_ARGS="--exp-pairs $B16,$F8" timeout 330 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "exp exit $?" >> $R/console.txt
for b in bar3 bar2; do
  timeout 60 python3 kernels/scripts/h200_bench.py --bench /tmp/mb-exp-$b/mla_bench --out $R/check_$b --phases check --dtypes bf16,fp8 > $R/check_$b.txt 2>&1
  echo "check $b exit $?" >> $R/console.txt
done
date -u >> $R/console.txt
rm -f $R/check_*/check.jsonl
cd /tmp && tar czf $OUT/r2.tgz r2 && cp $R/console.txt $OUT/console.txt
grep -A30 "^Experiments" $R/console.txt | head -32; grep -h "^CHECK" $R/check_*.txt; grep "exit" $R/console.txt
