#!/bin/bash
# Device run 2: GPU bench f32/f64 over batch sizes, the GPU tests on the H100.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
cd .devbin && xz -d -T4 *.xz && chmod +x t_* tether-sweep && cd ..
# The test binaries were built in /work/main: give them that path.
[ -e /work/main ] || { mkdir -p /work; ln -s "$PWD" /work/main; }
mkdir -p target/release && cp .devbin/tether-sweep target/release/
B=.devbin/tether-sweep
echo "=== bench gpu-f32"
timeout 100 $B bench --elements 10,40 --batch 1,1024,8192,32768 --engines gpu-f32 --out $OUT/bench_gpu_f32.parquet
echo "=== bench gpu-f32 workgroup 32"
TETHER_SWEEP_WORKGROUP_SIZE=32 timeout 40 $B bench --elements 40 --batch 1024,32768 --engines gpu-f32 --out /tmp/wg32.parquet
echo "=== bench gpu-f64"
timeout 50 $B bench --elements 10,40 --batch 1,1024 --engines gpu-f64 --out $OUT/bench_gpu_f64.parquet
cd /work/main
for t in gpu swingup identify; do
  echo "=== tests/$t.rs on the H100"
  timeout 110 .devbin/t_$t --test-threads 16 2>&1 | grep -v "^test .* ok$" | tail -40
done
