"""Wall time of Exudyn 1.13.6's generalized-α on the 2-s drop (n = 40,
D = 2000 Pa·s, no drag, no rotary inertia: Exudyn's cable has neither) at
h = 2.5e-4 s with its sparse solver and default Newton settings, single
thread: the comparison point for `cargo bench --bench reference_solver`.

    /tmp/exu/bin/python reference/exudyn/time_exudyn.py
"""

import time

import exudyn as exu

from make_tracks import FRAME, build

best = float("inf")
for _ in range(3):
    sc, mbs, sensors, settings = build(40, 2000.0, 2.5e-4)
    settings.solutionSettings.sensorsWritePeriod = FRAME
    settings.linearSolverType = exu.LinearSolverType.EigenSparse
    settings.parallel.numberOfThreads = 1
    start = time.perf_counter()
    exu.SolveDynamic(mbs, settings)
    best = min(best, time.perf_counter() - start)
print(f"exudyn {exu.__version__}: drop n=40 D=2000 h=2.5e-4 EigenSparse, 1 thread: best of 3 = {best:.3f} s")
