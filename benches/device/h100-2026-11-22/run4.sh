#!/bin/bash
# Device run 4: GPU tests with node-capacity pipelines, bench f32/f64 up to
# 32,768 drops, identify's default grid on 16 CPU cores and on the GPU.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
cd .devbin && xz -d -T4 *.xz && chmod +x t_gpu tether-sweep && cd ..
[ -e /work/main ] || { mkdir -p /work; ln -s "$PWD" /work/main; }
mkdir -p target/release && cp .devbin/tether-sweep target/release/
B=$PWD/.devbin/tether-sweep
echo "=== tests/gpu.rs on the H100"
(cd /work/main && timeout 60 .devbin/t_gpu --test-threads 16 2>&1 | grep -v "^test .* ok$" | tail -25)
echo "=== bench"
timeout 150 $B bench --elements 10,40 --batch 1,1024,8192,32768 --engines gpu-f32,gpu-f64 --out $OUT/bench_h100.parquet
echo "=== identify default grid, CPU reference, 16 cores"
/usr/bin/time -f "wall %e s, peak RSS %M KB" timeout 90 $B identify --backend cpu --out /tmp/idc 2>&1 | tail -12
echo "=== identify default grid, GPU f32"
/usr/bin/time -f "wall %e s, peak RSS %M KB" timeout 330 $B identify --backend gpu --out /tmp/idg 2>&1 | tail -14
