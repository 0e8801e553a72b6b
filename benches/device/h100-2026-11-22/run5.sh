#!/bin/bash
# Device run 5: the n = 40, 32,768-drop f32 bench row that run 4 ran out of time for.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export XDG_RUNTIME_DIR=/tmp
cd .devbin && xz -d tether-sweep.xz && cd ..
timeout 140 .devbin/tether-sweep bench --elements 40 --batch 32768 --engines gpu-f32 --out $OUT/bench_n40_32768.parquet 2>&1 | tee $OUT/run5.log
