"""Exudyn 1.13.6's accuracy at the timed setting of time_exudyn.py: the
2-s drop (n = 40, D = 2000 Pa·s, no drag, no rotary inertia) at h = 2.5e-4 s
with its default Newton settings, against the committed converged track
(drop_n40_d2000.csv, h = 2.5e-5 s, full Newton): the RMS and largest marker
error over frames 1..50, and the wall time of that solve. BENCHMARKS.md
compares the reference solver with it at equal accuracy.

    /tmp/exu/bin/python reference/exudyn/accuracy_exudyn.py
"""

import csv
import os
import time

import exudyn as exu
import numpy as np

from make_tracks import DURATION, FRAME, MARKERS, build

here = os.path.dirname(os.path.abspath(__file__))
converged = {}
with open(os.path.join(here, "drop_n40_d2000.csv")) as f:
    for row in csv.DictReader(f):
        converged[(round(float(row["t"]) / FRAME), int(row["marker"]))] = (float(row["x"]), float(row["y"]))

sc, mbs, sensors, settings = build(40, 2000.0, 2.5e-4)
settings.linearSolverType = exu.LinearSolverType.EigenSparse
settings.parallel.numberOfThreads = 1
start = time.perf_counter()
exu.SolveDynamic(mbs, settings)
wall = time.perf_counter() - start
errors = []
for j, sensor in enumerate(sensors):
    data = mbs.GetSensorStoredData(sensor)
    for p in range(1, int(round(DURATION / FRAME)) + 1):
        row = np.argmin(np.abs(data[:, 0] - p * FRAME))
        x, y = converged[(p, j)]
        errors += [data[row, 1] - x, data[row, 2] - y]
errors = np.array(errors)
print(f"exudyn {exu.__version__}: n=40 D=2000 h=2.5e-4, {len(MARKERS)} markers: "
      f"rms {np.sqrt(np.mean(errors**2)):.3e} m, max {np.abs(errors).max():.3e} m "
      f"against h=2.5e-5; solve {wall:.3f} s")
