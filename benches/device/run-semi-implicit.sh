#!/usr/bin/env bash
# One device call (under 10 minutes on an H100): the semi-implicit GPU
# engine on hardware. Setup as in h100-2026-11-22 (Vulkan loader and glvnd
# from .gl/, binaries from .devbin/, both made by prepare.sh), then:
# adapters and peak, the bench of both schemes in f32 up to batches that
# fill the GPU, the default and the SPEC identification grids on the GPU
# (the target: SPEC grid under 30 s), and the GPU tests. Output in
# $OUT: run.log and the Parquet files.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
# The test binary finds datasets and reference files by the path it was
# built at.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
(cd .devbin && xz -d -f ./*.xz && chmod +x ./*)
B=.devbin/tether-sweep
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,memory.total --format=csv
nproc
$B adapters
echo "=== bench"
timeout 200 $B bench --elements 10,40,50 --batch 1,1024,8192 \
    --engines gpu-f32,gpu-semi-implicit-f32 --repeats 2 --out "$OUT/bench_gpu.parquet"
echo "=== identify, default grid, GPU"
/usr/bin/time -f "%e s %P %M KB" timeout 120 $B identify --backend gpu --out /tmp/idg
echo "=== identify, SPEC grid, GPU"
/usr/bin/time -f "%e s %P %M KB" timeout 150 $B identify --backend gpu \
    --grid examples/spec_grid.toml --out "$OUT/spec-grid-gpu"
echo "=== GPU tests"
timeout 100 .devbin/gpu-tests
} 2>&1 | tee "$OUT/run.log"
