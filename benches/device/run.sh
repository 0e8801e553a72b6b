#!/usr/bin/env bash
# One device call (under 10 minutes on an H100; 2026-11-24: about 3): both GPU layouts on
# hardware, and every job the layouts are for. With --small it runs the same
# steps at toy sizes on whatever adapter this machine has (lavapipe here),
# so the script is known to work before a GPU is lent:
#
#   bash benches/device/run.sh --small          # here, a few minutes
#   device run: bash benches/device/run.sh      # carry [".devbin", ".gl"]
#
# Steps: the machine and adapters; `bench` of the semi-implicit scheme in
# f32 and f64 in both layouts (n = 10, 40, 50; batches up to 8,192), each
# row with its stage's device time from timestamp queries and the host's
# around it (columns device s, host s, subs; src/gpu/timing.rs); the
# default and the paper's identification grid (docs/model.md §6), a default
# GA run and the exhaustive 32,768-chromosome landscape, each with
# --backend auto (the targets: 1 s, 3 s, 0.5 s a generation and 20 s on one
# H100, with auto choosing the GPU); both grids again in the thread layout
# and the GA on the GPU, to check auto's choices; both grids' sweeps on the
# GPU's adaptive reference solver (f32 at its first-pass tolerance; the
# paper's in f64 too) and the GA on it in f64 and f32 (issue 26's targets on one
# H100: 0.2 s, 0.3 s and 0.15 s a generation; `auto`'s reason lines give
# the cost model's calibrated estimate of every engine it weighed, the
# adaptive one included); the GPU tests (the fixed-step and the adaptive
# stages') and the shader function tests; `bench` of that solver at each
# number of lanes a simulation against the cost model's choice. Output in
# $OUT (default /tmp/device-run): run.log, bench_layouts.parquet,
# bench_lanes.parquet and outputs.tar.gz (every run's folder).
set -uo pipefail
small=false
[ "${1:-}" = "--small" ] && small=true
OUT=${OUT:-/tmp/device-run}
mkdir -p "$OUT"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# On the lent machine (NVIDIA's driver, no build of its own): the Vulkan
# loader and glvnd from .gl/, and the binaries from .devbin/ (prepare.sh
# makes both). Here this checkout's release build runs, even where an
# earlier prepare.sh left .devbin/: its binaries are that day's, and the
# copy below would replace the build with them.
lent=false
command -v nvidia-smi >/dev/null && [ -d .devbin ] && lent=true
if command -v nvidia-smi >/dev/null && [ -d .gl ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
if $lent; then
    (cd .devbin && for f in ./*.xz; do [ -e "$f" ] && xz -d -f "$f"; done; chmod +x ./*)
    B=.devbin/tether-sweep
    TESTS=.devbin/gpu-tests
    # The test binary finds datasets, reference files and the CLI binary
    # (CARGO_BIN_EXE_tether-sweep, target/release/) by the paths it was
    # built at.
    [ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
    mkdir -p target/release && cp "$B" target/release/tether-sweep
else
    B=target/release/tether-sweep
    TESTS=
fi
[ -x "$B" ] || { echo "no binary at $B: run prepare.sh (device) or cargo build --release (here)"; exit 2; }
if $small; then
    bench_sizes=(--elements 4,10 --batch 1,8 --duration 0.04)
    lanes_sizes=(--elements 10 --batch 1,8 --duration 0.04)
    backend=gpu      # lavapipe: auto would choose the CPU
    grid=(--elements 4 --damping 1000:2000:1000 --drag-coefficient 0.8)
    paper=(--elements 4,6 --damping 0:4000:2000 --drag-coefficient 0.7,0.8)
    ga=(--elements 6 --generations 2 --population 4 --duration 0.48)
    landscape=(--elements 6 --bits-per-gene 1 --generations 1 --population 2 --duration 0.48)
    carried=(--elements 4 --duration 0.1 --axis drag_coefficient=0,1.2 --axis damping_pa_s=0,2000)
    limit=120
else
    bench_sizes=(--elements 10,40,50 --batch 1,1024,8192 --duration 0.04)
    lanes_sizes=(--elements 50 --batch 10,3535 --duration 0.12)
    backend=auto
    grid=()
    paper=(--grid examples/paper_grid.toml)
    ga=()
    landscape=(--generations 1)
    carried=(--axis drag_coefficient=0:2:0.0625 --axis damping_pa_s=0:4000:500)
    limit=0
fi
run() {  # name, seconds, command…
    local name=$1 seconds=$2
    shift 2
    echo "=== $name"
    [ "$limit" -gt 0 ] && seconds=$limit
    /usr/bin/time -f "=== $name: %e s wall, %P CPU, %M KB" timeout "$seconds" "$@"
    echo "=== $name: exit $?"
}
{
date -u
command -v nvidia-smi >/dev/null && nvidia-smi \
    --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,memory.total --format=csv
nproc
$B adapters
run "bench, both layouts" 60 $B bench "${bench_sizes[@]}" \
    --engines gpu-semi-implicit-f32,gpu-semi-implicit-f64 --gpu-layout thread,workgroup \
    --out "$OUT/bench_layouts.parquet" --force
# The GPU reference solver's lanes a simulation: the cost model's choice
# per batch ("auto") against each fixed count, alone and filled. One lane
# runs both ends of the factorization and solve, two or more run them at
# once: 1 against 2 shows what the two ends give beside the shared passes.
run "bench, GPU reference solver lanes" 60 $B bench "${lanes_sizes[@]}" \
    --engines gpu-reference-f32,gpu-reference-f64 --lanes 1,2,4,8,16,32,64,auto \
    --out "$OUT/bench_lanes.parquet" --force
run "identify, default grid" 40 $B identify --backend $backend "${grid[@]}" \
    --out "$OUT/identify-default" --force
run "identify, paper's grid" 60 $B identify --backend $backend "${paper[@]}" \
    --out "$OUT/identify-paper" --force
# The same sweeps in the layout the cost model did not choose, without the
# refinement and validation (the sweep's own time): is its choice right?
run "identify, default grid, thread layout" 30 $B identify --backend gpu --gpu-layout thread \
    "${grid[@]}" --no-refine --validate 0 --out "$OUT/identify-default-thread" --force
run "identify, paper's grid, thread layout" 60 $B identify --backend gpu --gpu-layout thread \
    "${paper[@]}" --no-refine --validate 0 --out "$OUT/identify-paper-thread" --force
# The reference solver's adaptive implicit scheme on the GPU (issue 26):
# the sweep alone (a first pass at f32's first-pass tolerance, 1e-6 m at
# n = 50; the paper's grid in f64 at 1e-7 m too), against the fixed-step
# runs above and the CPU's 28 s on 2 cores (2026-11-26). The runs with --backend auto
# above say in their reason line what the cost model estimated for it.
run "identify, default grid, GPU reference solver f32" 60 $B identify --backend gpu \
    --solver reference "${grid[@]}" --no-refine --validate 0 \
    --out "$OUT/identify-default-gpu-reference" --force
run "identify, paper's grid, GPU reference solver f32" 90 $B identify --backend gpu \
    --solver reference "${paper[@]}" --no-refine --validate 0 \
    --out "$OUT/identify-paper-gpu-reference" --force
run "identify, paper's grid, GPU reference solver f64" 90 $B identify --backend gpu \
    --solver reference --precision f64 "${paper[@]}" --no-refine --validate 0 \
    --out "$OUT/identify-paper-gpu-reference-f64" --force
run "swingup, default GA" 40 $B swingup --backend $backend "${ga[@]}" \
    --out "$OUT/swingup-ga" --force
run "swingup, default GA on the GPU" 40 $B swingup --backend gpu "${ga[@]}" \
    --out "$OUT/swingup-ga-gpu" --force
run "swingup, default GA on the GPU reference solver f64" 40 $B swingup --backend gpu \
    --solver reference --precision f64 "${ga[@]}" --out "$OUT/swingup-ga-gpu-reference" --force
# f32 at the GA's 1e-7 m: since its strain is formed from the displacement
# and the drift apart, in about f64's steps (BENCHMARKS.md, 2026-11-26).
run "swingup, default GA on the GPU reference solver f32" 40 $B swingup --backend gpu \
    --solver reference --precision f32 "${ga[@]}" --out "$OUT/swingup-ga-gpu-reference-f32" --force
run "swingup, exhaustive landscape" 60 $B swingup --backend $backend --exhaustive \
    "${landscape[@]}" --out "$OUT/swingup-landscape" --force
# The arm carrying the tether (docs/constrained.md §5), 297 tethers: the
# GPU engine (semi-implicit, f32 and f64) against the CPU's reference
# solver on all cores (lavapipe on 2 cores, 36 of them: 3.9 s against 3.2).
for engine in "cpu" "gpu --precision f32" "gpu --precision f64"; do
    # shellcheck disable=SC2086
    run "arm carrying the tether, sweep, $engine" 60 $B simulate --scenario arm --tether \
        "${carried[@]}" --backend $engine --out "$OUT/carried-${engine// /-}.parquet" --force
done
if [ -n "$TESTS" ]; then
    run "GPU tests" 80 "$TESTS"
    run "GPU adaptive scheme tests" 60 .devbin/gpu-adaptive-tests
    # Each shared WGSL function against its CPU mirror, on this adapter's
    # compiler (which may fuse multiply-adds the mirror rounds twice).
    run "shader function tests" 30 .devbin/lib-tests gpu::mirror --nocapture
else
    echo "=== GPU tests: run here with cargo test --test gpu --test gpu_adaptive (no .devbin/gpu-tests)"
fi
} 2>&1 | tee "$OUT/run.log"
# The rates `auto` measured, as saved for later runs (docs/gpu.md).
cp "${XDG_CACHE_HOME:-$HOME/.cache}/tether-sweep/calibration.json" "$OUT/" 2>/dev/null
# The device tool brings back eight files: the runs' folders travel as one
# archive.
(cd "$OUT" && tar czf outputs.tar.gz identify-* swingup-* carried-* && rm -rf identify-* swingup-* carried-*)
