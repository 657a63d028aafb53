#!/bin/bash
# Run 4 (2026-12-02, second session): the committed code (commit 9fa7dbc's
# kernels) timed at the B 96 targets in four processes (the same binary as
# "default" and "again", two rounds), to settle run 2 (65.9 us) against
# run 3 (66.8 us) for bf16 B 96.
root=$(pwd)
R=/tmp/r4; mkdir -p $R
cd $root/.carry/kernel
cmake -S kernels -B /tmp/mb -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLA_CUDA_ARCHS=90 -DMLA_JSON_INCLUDE_DIR=$root/.carry/kernel/json/include > $R/build.log 2>&1 &&
  timeout 60 cmake --build /tmp/mb --target mla_bench --parallel >> $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
P="bt16_w4_s2_tc384@b96_h16_k2048,bt32_w4_s2_tc384@b96_h16_k2048_fp8,bt64_w8_s2_tc96@b8_h16_k2048"
timeout 60 python3 kernels/scripts/h200_bench.py --bench /tmp/mb/mla_bench --bench-exp again=/tmp/mb/mla_bench --out $R --phases exp --exp-pairs $P > $R/console.txt 2>&1
echo "exit $?" >> $R/console.txt
cp $R/console.txt $R/exp.md $OUT/ 2>/dev/null; gzip -c $R/exp.jsonl > $OUT/exp.jsonl.gz
cat $R/console.txt | tail -12
