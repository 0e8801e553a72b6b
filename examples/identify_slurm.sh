#!/usr/bin/env bash
# The paper's full identification grid (docs/model.md §6) as a Slurm job array: one shard per
# task, each writing sweep/shard=K/part.parquet, then one summarize.
#
#   jobs=$(sbatch --parsable examples/identify_slurm.sh)
#   sbatch --dependency=afterany:$jobs --kill-on-invalid-dep=yes \
#       --wrap "tether-sweep summarize sweep"
#
# Arguments after the script replace the paper's grid (any identify flags:
# `sbatch examples/identify_slurm.sh --grid my_grid.toml --measured film.csv`).
# tether-sweep reads its shard from SLURM_ARRAY_TASK_ID (minus
# SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT, so --array alone decides
# N. A task that was killed (time limit, preemption, `scontrol requeue`)
# keeps its finished chunks; requeued, --resume finishes it. summarize waits
# for every task to end (afterany, not afterok, which would wait forever on a
# failed task) and names the shards still missing; after rerunning them, run
# summarize again. docs/identify.md has the whole recipe, and
# scripts/slurm_single_node.sh runs this script on a real single-node Slurm. pyarrow, polars, DuckDB and Spark
# read sweep/ as one Hive-partitioned table (column `shard`).
#SBATCH --job-name=tether-identify
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --requeue
# Slurm opens the log before the script runs, so it goes to the submit
# directory, which exists, and not into a folder the script would create.
#SBATCH --output=tether-identify-%A_%a.out
set -euo pipefail

args=(identify --out sweep)
if [ $# -eq 0 ]; then
    args+=(--grid examples/paper_grid.toml --backend auto)
else
    args+=("$@")
fi
# One GPU per task (`--gres=gpu:1`, e.g. `--array=0-7` on an 8-GPU node):
# Slurm names the task's GPU in CUDA_VISIBLE_DEVICES, which Vulkan ignores;
# its PCI address names it to tether-sweep (--adapter) as well.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && command -v nvidia-smi >/dev/null \
    && [[ " $* " != *" --adapter "* ]]; then
    bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i "${CUDA_VISIBLE_DEVICES%%,*}")
    args+=(--adapter "$bus")
fi
# After a requeue the shard's saved chunks are there to resume from.
if [ -d "sweep/shard=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))/.chunks" ]; then
    args+=(--resume)
fi
RAYON_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}" tether-sweep "${args[@]}"
