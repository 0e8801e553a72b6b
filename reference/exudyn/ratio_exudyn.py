"""The reference solver against Exudyn 1.13.6 at equal accuracy, whole
process, on one host: the 2-s drop (n = 40, D = 2000 Pa·s, no drag, no
rotary inertia: Exudyn's cable has neither), single thread each.

Accuracy is each solver's RMS marker error over frames 1..50 against its
own converged run: Exudyn's committed track (drop_n40_d2000.csv, h = 2.5e-5
s) for Exudyn at step h; tether-sweep's run at tolerance 1e-12 m for
tether-sweep at tolerance τ. Time is the whole process (start, build,
solve, write), best of 5, as a user would time `python drop.py` against
`tether-sweep simulate`.

    cargo build --release
    /tmp/exu/bin/pip install exudyn==1.13.6 numpy pyarrow
    /tmp/exu/bin/python reference/exudyn/ratio_exudyn.py [target/release/tether-sweep] [radau5|esdirk43]

A second argument runs tether-sweep's reference solver with that implicit
method (a config's `implicit_method`) at tolerances suited to it.
"""

import csv
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow.parquet as pq

here = os.path.dirname(os.path.abspath(__file__))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../target/release/tether-sweep")
method = sys.argv[2] if len(sys.argv) > 2 else "generalized-alpha"
FRAMES = range(1, 51)
FRAME = 0.04


def best_of(command, repeats=5, env=None):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        best = min(best, time.perf_counter() - start)
    return best


def rms(a, b):
    d = np.array([a[k][i] - b[k][i] for k in a for i in range(2)])
    return float(np.sqrt(np.mean(d**2)))


# Exudyn: one process builds, solves and writes its sensors' tracks.
EXUDYN_RUN = """
import sys, numpy as np, exudyn as exu
sys.path.insert(0, {here!r})
from make_tracks import build, DURATION, FRAME
sc, mbs, sensors, settings = build(40, 2000.0, {h!r})
settings.solutionSettings.sensorsWritePeriod = FRAME
settings.linearSolverType = exu.LinearSolverType.EigenSparse
settings.parallel.numberOfThreads = 1
exu.SolveDynamic(mbs, settings)
rows = []
for j, sensor in enumerate(sensors):
    data = mbs.GetSensorStoredData(sensor)
    for p in range(1, int(round(DURATION / FRAME)) + 1):
        r = np.argmin(np.abs(data[:, 0] - p * FRAME))
        rows.append((p, j, data[r, 1], data[r, 2]))
np.savetxt({out!r}, np.array(rows))
"""

converged = {}
with open(os.path.join(here, "drop_n40_d2000.csv")) as f:
    for row in csv.DictReader(f):
        p = round(float(row["t"]) / FRAME)
        if p in FRAMES:
            converged[(p, int(row["marker"]))] = (float(row["x"]), float(row["y"]))

work = tempfile.mkdtemp()
print("solver\tsetting\trms_marker_error_m\twhole_process_s")
# Exudyn ships two modules: exudynCPP (baseline instruction set, range
# checks; what `import exudyn` loads) and exudynCPPfast (AVX2, no range
# checks; EXUDYN_MODULE=fast). Our binary picks AVX2 or AVX-512 at run time
# where the CPU has them, so both are timed and compared.
MODULES = {"exudyn": "", "exudyn fast": "fast"}
exudyn = {name: {} for name in MODULES}
for name, module in MODULES.items():
    env = dict(os.environ, EXUDYN_MODULE=module)
    for h in [1.25e-4, 2.5e-4, 5e-4, 1e-3]:
        out = os.path.join(work, f"exudyn_{module}_{h}.txt")
        script = os.path.join(work, f"exudyn_{module}_{h}.py")
        with open(script, "w") as f:
            f.write(EXUDYN_RUN.format(here=here, h=h, out=out))
        wall = best_of([sys.executable, script], env=env)
        track = {(int(p), int(j)): (x, y) for p, j, x, y in np.loadtxt(out)}
        exudyn[name][h] = (rms(track, converged), wall)
        print(f"{name} {h:g} s\t{exudyn[name][h][0]:.2e}\t{wall:.3f}")


config = os.path.join(work, "drop.toml")
with open(config, "w") as f:
    f.write(f'scenario = "drop"\nsolver = "reference"\nimplicit_method = "{method}"\n'
            "[tether]\nelements = 40\ndamping_pa_s = 2000.0\ndrag_coefficient = 0.0\nrotary_inertia = false\n")


def ours(tolerance, path):
    return [binary, "simulate", "--config", config, "--backend", "cpu",
            "--tolerance", f"{tolerance:g}", "--out", path, "--force"]


def track_of(path):
    t = pq.read_table(path).to_pydict()
    return {(round(tt / FRAME), m): (x, y) for tt, m, x, y in zip(t["t"], t["marker"], t["x"], t["y"])
            if round(tt / FRAME) in FRAMES and abs(tt - round(tt / FRAME) * FRAME) < 1e-9}


truth_path = os.path.join(work, "truth.parquet")
subprocess.run(ours(1e-12, truth_path), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
truth = track_of(truth_path)
# Each method's tolerances near Exudyn's errors (Radau's error is its
# tolerance's, generalized-α's about 1.2 τ^(2/3)).
for tolerance in {"generalized-alpha": [1e-9, 6e-9]}.get(method, [1e-7, 1e-6, 1e-5]):
    path = os.path.join(work, f"ours_{tolerance}.parquet")
    wall = best_of(ours(tolerance, path))
    error = rms(track_of(path), truth)
    print(f"tether-sweep {method} {tolerance:g} m\t{error:.2e}\t{wall:.3f}")
    # Equal accuracy lies between the cheapest Exudyn step at least as
    # accurate (its ratio an upper bound) and the next coarser one (a
    # lower bound); log-log interpolation between them gives the estimate.
    for name, runs in exudyn.items():
        finer = [(h, e, w) for h, (e, w) in runs.items() if e <= error]
        coarser = [(h, e, w) for h, (e, w) in runs.items() if e > error]
        line = []
        if finer:
            h, e, w = max(finer)
            line.append(f"{w / wall:.1f}x against h = {h:g} s (rms {e:.2e} m, as accurate)")
        if coarser:
            h, e, w = min(coarser)
            line.append(f"{w / wall:.1f}x against h = {h:g} s (rms {e:.2e} m, less accurate)")
        if finer and coarser:
            (_, e0, w0), (_, e1, w1) = max(finer), min(coarser)
            slope = np.log(w1 / w0) / np.log(e1 / e0)
            line.append(f"at equal accuracy ≈ {w0 * (error / e0) ** slope / wall:.1f}x")
        print(f"  ratio to {name}: " + "; ".join(line))
