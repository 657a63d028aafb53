#!/bin/bash
# Run 1 (2026-12-02, second session): the bulk gather and the programmatic
# split launch, each an experiment build beside the default in alternating
# processes; the gather probe (656- and 1152-byte rows, cp.async and bulk);
# the full correctness gate of the experiment builds, both dtypes.
# Run from the repository root on the H200, with kernels/ and the json
# headers carried in .carry/kernel/.
root=$(pwd)
R=/tmp/r1; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry/kernel
B16="bt16_w4_s2_tc384@b96_h16_k2048,bt32_w4_s2_tc240@b80_h16_k2048,bt64_w8_s2_tc96@b64_h16_k2048,bt32_w4_s2_tc240@b48_h16_k2048,bt64_w4_s2_tc96@b8_h16_k2048,bt64_w4_s2_tc0@b1_h16_k2048,bt32_w4_s1_tc0@b128_h128_k2048"
B8="bt64_w8_s2_tc96@b8_h16_k2048,bt32_w4_s2_tc96@b8_h16_k2048,bt32_w4_s2_tc264@b8_h16_k2048,bt64_w4_s1_tc264@b8_h16_k2048,bt16_w4_s2_tc240@b8_h16_k2048,bt16_w4_s3_tc384@b8_h16_k2048"
F8="bt32_w4_s2_tc320@b96_h16_k2048_fp8,bt32_w4_s2_tc384@b96_h16_k2048_fp8,bt16_w4_s2_tc384@b96_h16_k2048_fp8,bt64_w4_s2_tc240@b80_h16_k2048_fp8,bt64_w4_s2_tc240@b48_h16_k2048_fp8,bt64_w8_s2_tc96@b8_h16_k2048_fp8,bt64_w8_s3_tc0@b1_h16_k2048_fp8,bt32_w4_s2_tc0@b128_h128_k2048_fp8"
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_JSON_INCLUDE_DIR=$root/.carry/kernel/json/include MLA_PHASES=exp \
MLA_EXPERIMENTS="bulk:MLA_EXP_BULK_GATHER=1;pdl:MLA_EXP_SPLIT_PDL=1;both:MLA_EXP_BULK_GATHER=1 MLA_EXP_SPLIT_PDL=1" \
MLA_BENCH_ARGS="--exp-pairs $B16,$B8,$F8" timeout 330 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "exp exit $?" >> $R/console.txt
for b in bulk both; do
  timeout 60 python3 kernels/scripts/h200_bench.py --bench /tmp/mb-exp-$b/mla_bench --out $R/check_$b --phases check --dtypes bf16,fp8 > $R/check_$b.txt 2>&1
  echo "check $b exit $?" >> $R/console.txt
done
for b in mb mb-exp-bulk; do o=$(find /tmp/$b -name 'split_kv_bt16_w4_s2.cu.o' | head -1); [ -n "$o" ] && cuobjdump --dump-sass $o > $R/sass_bt16_w4_s2_$b.txt 2>&1; o=$(find /tmp/$b -name 'split_kv_bt32_w4_s2_fp8.cu.o' | head -1); [ -n "$o" ] && cuobjdump --dump-sass $o > $R/sass_fp8_bt32_w4_s2_$b.txt 2>&1; done
date -u >> $R/console.txt
cd /tmp && tar czf $OUT/r1.tgz r1 && cp $R/console.txt $OUT/console.txt
grep "gather best" $R/analysis.txt; grep -A40 "^Experiments" $R/console.txt | head -42; grep -h "CHECK\|Correctness\|ok\b" $R/check_*.txt | head; grep "exit" $R/console.txt
