#!/bin/bash
# fp8 experiments (skip unit rescale, 2 QK chains, 4 CTAs/SM) beside the run-1 default; then the full fp8 check + time + torch of the best
root=$(pwd)
R=/tmp/r; mkdir -p $R
date -u > $R/console.txt
cd $root/.carry
F=b96_h16_k2048_fp8
P="bt16_w4_s2_tc384@$F,bt16_w4_s2_tc480@$F,bt32_w4_s2_tc240@b48_h16_k2048_fp8,bt16_w4_s2_tc240@b48_h16_k2048_fp8,bt64_w4_s2_tc240@b64_h16_k2048_fp8,bt16_w4_s2_tc384@b64_h16_k2048_fp8,bt64_w4_s2_tc240@b80_h16_k2048_fp8,bt16_w4_s2_tc240@b80_h16_k2048_fp8,bt64_w8_s2_tc96@b8_h16_k2048_fp8,bt64_w8_s3_tc0@b1_h16_k2048_fp8,bt32_w4_s2_tc0@b128_h128_k2048_fp8,bt16_w4_s2_tc384@b96_h16_k2048,bt64_w4_s2_tc96@b8_h16_k2048,bt32_w4_s2_tc240@b48_h16_k2048"
MLA_ARCHS=90 MLA_BUILD_DIR=/tmp/mb MLA_JSON_INCLUDE_DIR=$root/.carry/json/include MLA_PHASES=exp \
MLA_EXPERIMENTS="skip:MLA_EXP_FP8_SKIP_UNIT_RESCALE=1;sets2:MLA_EXP_FP8_QK_SETS=2;skipsets2:MLA_EXP_FP8_SKIP_UNIT_RESCALE=1 MLA_EXP_FP8_QK_SETS=2;skipmb4:MLA_EXP_FP8_SKIP_UNIT_RESCALE=1 MLA_EXP_BT16_W4_MIN_BLOCKS=4" \
MLA_BENCH_ARGS="--exp-pairs $P" timeout 240 sh kernels/scripts/h200_bench.sh $R >> $R/console.txt 2>&1
echo "exp exit $?" >> $R/console.txt
best=$(python3 - <<'PY'
import json,statistics
s=json.load(open('/tmp/r/summary.json'))
rows=[r for r in s['exp'] if r['point'].endswith('_fp8')]
score={}
for b in ('skip','sets2','skipsets2'):
    rs=[statistics.mean(r[b])/statistics.mean(r['default']) for r in rows if b in r and 'default' in r]
    score[b]=statistics.mean(rs)
best=min(score,key=score.get)
print(best if score[best]<0.99 else 'default')
PY
)
echo "best build: $best" >> $R/console.txt
if [ "$best" != default ]; then
  timeout 200 python3 kernels/scripts/h200_bench.py --bench /tmp/mb-exp-$best/mla_bench --out $R/final --phases check,time,torch --dtypes fp8 --target-ctas 0,96,240,384,480,528,1056 > $R/final.txt 2>&1
  echo "final exit $?" >> $R/console.txt
fi
for b in mb mb-exp-$best mb-exp-skipsets2; do o=$(find /tmp/$b -name 'split_kv_bt16_w4_s2_fp8.cu.o' | head -1); [ -n "$o" ] && cuobjdump --dump-sass $o > $R/sass_fp8_bt16_w4_s2_$b.txt 2>&1; done
date -u >> $R/console.txt
cd /tmp && tar czf $OUT/r2.tgz r && cp $R/console.txt $OUT/console.txt && tail -c 3000 $R/console.txt; grep -A40 "^Experiments" $R/console.txt | head -30; tail -c 2500 $R/final.txt
