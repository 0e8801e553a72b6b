#!/usr/bin/env bash
# Runs the shipped Slurm job script (examples/identify_slurm.sh) on a real
# single-node Slurm started here, then checks what docs/identify.md promises:
# the array's shards write their parts, a summarize chained with
# afterany + kill-on-invalid-dep merges them, a requeued task (scontrol
# requeue) resumes from its saved chunks, and the merge equals the single
# run's table bit for bit.
#
#   sudo scripts/slurm_single_node.sh     # as root: it installs and starts daemons
#   TETHER_SWEEP_BIN=target/debug/tether-sweep sudo -E scripts/slurm_single_node.sh
#
# Needs python3 with pyarrow for the last comparison (pip install pyarrow).
#
# Debian's slurm-wlm 22.05 with munge; everything Slurm writes lives in a
# temporary directory, and the daemons are stopped on exit. Needs root (apt,
# munged, slurmd) and about two minutes on two cores after the release build.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "run as root: it installs slurm and starts munged, slurmctld and slurmd" >&2
    exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        slurmctld slurmd slurm-client munge >/dev/null
fi
# The binary under test: TETHER_SWEEP_BIN (CI passes the one its tests
# built), else a release build of this checkout.
if [ -z "${TETHER_SWEEP_BIN:-}" ]; then
    (cd "$repo" && cargo build --release --quiet)
    TETHER_SWEEP_BIN="$repo/target/release/tether-sweep"
fi
bin_dir=$(mktemp -d /tmp/tether-bin.XXXXXX)
ln -s "$(realpath "$TETHER_SWEEP_BIN")" "$bin_dir/tether-sweep"
export PATH="$bin_dir:$PATH"

state=$(mktemp -d /tmp/tether-slurm.XXXXXX)
work="$state/work"
mkdir -p "$state/spool" "$state/ctld" "$state/munge" "$work"
host=$(hostname -s)
cpus=$(nproc)
export SLURM_CONF="$state/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=tether
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ReturnToService=2
MpiDefault=none
JobRequeue=1
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

socket="$state/munge/munge.socket"
munged --force --socket="$socket" --pid-file="$state/munge/munged.pid" \
    --log-file="$state/munge/munged.log" --seed-file="$state/munge/seed"
# Slurm's munge plugin finds the daemon through this socket.
echo "AuthInfo=socket=$socket" >>"$SLURM_CONF"
slurmctld -i
slurmd
cleanup() {
    scancel --full --quiet --user root 2>/dev/null || true
    for pid in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munge/munged.pid"; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
    done
}
trap cleanup EXIT

for _ in $(seq 60); do
    sinfo --noheader --states=idle 2>/dev/null | grep -q debug && break
    sleep 1
done
sinfo

# A small grid on the shipped drop, three shards of one CPU each: the job
# script passes its arguments to identify in place of the paper's grid.
# One candidate a chunk, so that a task requeued while it runs has saved
# some; 163 candidates a shard (about 6 s of first pass on one core), so
# that it is still running when requeued.
grid=(--elements 30,40 --damping 0:3000:50 --drag-coefficient 0.5,0.6,0.7,0.8
    --backend cpu --chunk-size 1)
cd "$work"
array=$(sbatch --parsable --array=0-2 --cpus-per-task=1 \
    "$repo/examples/identify_slurm.sh" "${grid[@]}")
echo "array job $array"

# Task 1 stopped half-way, as a preemption or `scontrol requeue` stops it:
# once it has saved a chunk, requeue it. It must come back with --resume.
for _ in $(seq 1200); do
    ls "sweep/shard=1/.chunks/"*.parquet >/dev/null 2>&1 && break
    sleep 0.05
done
scontrol requeue "${array}_1"
echo "requeued ${array}_1 after $(ls "sweep/shard=1/.chunks/" | wc -l) saved chunk(s)"

summary=$(sbatch --parsable --dependency="afterany:$array" --kill-on-invalid-dep=yes \
    --output=summarize-%j.out --wrap "tether-sweep summarize sweep")
echo "summarize job $summary"

wait_for() {
    for _ in $(seq 600); do
        [ -z "$(squeue --noheader --jobs="$1" 2>/dev/null)" ] && return 0
        sleep 1
    done
    echo "job $1 did not finish in 10 minutes" >&2
    squeue
    exit 1
}
wait_for "$array"
wait_for "$summary"
tail -n +1 tether-identify-*.out summarize-*.out
for k in 0 1 2; do
    test -f "sweep/shard=$k/part.parquet" || { echo "shard $k wrote no part" >&2; exit 1; }
done
test -f sweep/_summary/results.parquet || { echo "summarize wrote nothing" >&2; exit 1; }
grep -q -- "resuming:" "tether-identify-${array}_1.out" ||
    { echo "the requeued task did not resume its chunks" >&2; exit 1; }

# The merge is the single run's table, row for row.
tether-sweep identify "${grid[@]}" --out single >/dev/null
python3 - <<'EOF'
import pyarrow.parquet as pq
a = pq.read_table("sweep/_summary/results.parquet").to_pylist()
b = pq.read_table("single/results.parquet").to_pylist()
assert a == b, "the merged table differs from the single run's"
print(f"merged table = single run's table ({len(a)} rows)")
EOF
echo "slurm single-node run: ok (logs in $state)"
