#!/bin/bash
# Device run 1: setup, adapters, GPU + CPU bench, default identify on the GPU.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
B=.devbin/tether-sweep
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,memory.total --format=csv
nproc; ls /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ 2>&1
export VK_LOADER_DEBUG=error; $B adapters || { export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; VK_LOADER_DEBUG=all $B adapters 2>&1 | tail -20; }
echo "=== bench gpu"
time timeout 150 $B bench --elements 10,40 --batch 1,64,1024,8192 --engines gpu-f32,gpu-f64 --out $OUT/bench_gpu.parquet
echo "=== bench gpu wg32"
TETHER_SWEEP_WORKGROUP_SIZE=32 timeout 60 $B bench --elements 40 --batch 1024 --engines gpu-f32 --out /tmp/b32.parquet
echo "=== bench cpu"
time timeout 100 $B bench --elements 10,40 --batch 1,64,1024 --engines cpu-explicit,cpu-reference --out $OUT/bench_cpu.parquet
echo "=== identify default gpu"
/usr/bin/time -v timeout 200 $B identify --backend gpu --out /tmp/idg 2>&1 | grep -v "^\s*\(Page\|Socket\|Signals\|Swaps\|File sys\|Average\|Exit\|Minor\|Major\|Volun\|Invol\)"
