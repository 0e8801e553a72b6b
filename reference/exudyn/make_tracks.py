"""Drop-scenario marker tracks from Exudyn's ObjectANCFCable2D: an independent
implementation with the same strain and curvature as docs/model.md §2.

Exudyn's cable has no rotary-inertia term and no air drag, so these tracks
are for rotary_inertia = false and C_D = 0. Its implicit generalized-α solver
is used (its explicit solvers mishandle a pinned ANCF node); the pin is two
coordinate constraints on node 0's position, node 0's slope is free.

Regenerate (from the repository root):

    python3 -m venv /tmp/exu && /tmp/exu/bin/pip install exudyn==1.13.6 numpy
    /tmp/exu/bin/python reference/exudyn/make_tracks.py

Each run also repeats the simulation at half the step and prints the largest
marker difference, the time-discretisation error of the committed tracks.
"""

import csv
import math
import os
import sys

import exudyn as exu
import numpy as np
from exudyn.itemInterface import (
    MarkerBodyMass,
    MarkerNodeCoordinate,
    NodePoint2DSlope1,
    NodePointGround,
    ObjectANCFCable2D,
    ObjectConnectorCoordinate,
    LoadMassProportional,
    SensorBody,
)

# docs/model.md §1
L, B, H = 0.6, 0.020, 0.002
E, RHO, G = 9.4e6, 920.0, 9.8
AREA, INERTIA = B * H, B * H**3 / 12.0
ANGLE = math.radians(45.0)
DURATION, FRAME = 2.0, 0.04
MARKERS = [j * L / 10.0 for j in range(11)]
STEP = 2.5e-5  # committed tracks; the check runs STEP / 2
SPECTRAL_RADIUS = 0.9


def build(elements, damping, step):
    """The drop model and solver settings; returns (sc, mbs, sensors, settings)."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    le = L / elements
    d = (math.sin(ANGLE), -math.cos(ANGLE))
    nodes = [
        mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le * d[0], i * le * d[1], d[0], d[1]]))
        for i in range(elements + 1)
    ]
    cables = []
    for k in range(elements):
        cable = mbs.AddObject(
            ObjectANCFCable2D(
                physicsLength=le,
                physicsMassPerLength=RHO * AREA,
                physicsBendingStiffness=E * INERTIA,
                physicsAxialStiffness=E * AREA,
                physicsBendingDamping=damping * INERTIA,
                physicsAxialDamping=damping * AREA,
                nodeNumbers=[nodes[k], nodes[k + 1]],
            )
        )
        cables.append(cable)
        marker = mbs.AddMarker(MarkerBodyMass(bodyNumber=cable))
        mbs.AddLoad(LoadMassProportional(markerNumber=marker, loadVector=[0.0, -G, 0.0]))
    ground = mbs.AddNode(NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    ground_marker = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    for coordinate in (0, 1):
        pin = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=coordinate))
        mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[ground_marker, pin]))
    sensors = []
    for s in MARKERS:
        k = min(int(s / le + 1e-12), elements - 1)
        sensors.append(
            mbs.AddSensor(
                SensorBody(
                    bodyNumber=cables[k],
                    localPosition=[s - k * le, 0.0, 0.0],
                    outputVariableType=exu.OutputVariableType.Position,
                    storeInternal=True,
                    writeToFile=False,
                )
            )
        )
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime = DURATION
    settings.timeIntegration.numberOfSteps = int(round(DURATION / step))
    settings.timeIntegration.generalizedAlpha.spectralRadius = SPECTRAL_RADIUS
    settings.timeIntegration.verboseMode = 0
    settings.solutionSettings.writeSolutionToFile = False
    # Every step: a coarser period can land a step late through rounding.
    settings.solutionSettings.sensorsWritePeriod = step
    return sc, mbs, sensors, settings


def simulate(elements, damping, step):
    sc, mbs, sensors, settings = build(elements, damping, step)
    # Fixed steps: with adaptive stepping a Newton hiccup halves one step and
    # shifts every later sample off the frame grid.
    settings.timeIntegration.adaptiveStep = False
    settings.timeIntegration.newton.useModifiedNewton = False
    exu.SolveDynamic(mbs, settings)
    frames = int(round(DURATION / FRAME))
    track = np.full((frames + 1, len(MARKERS), 2), np.nan)
    for j, sensor in enumerate(sensors):
        data = mbs.GetSensorStoredData(sensor)
        for p in range(frames + 1):
            row = np.argmin(np.abs(data[:, 0] - p * FRAME))
            if abs(data[row, 0] - p * FRAME) < step / 4:
                track[p, j] = data[row, 1:3]
    if np.isnan(track).any():
        missing = np.argwhere(np.isnan(track[:, :, 0]))
        sys.exit(f"n={elements} step={step}: sensors missed frames {missing[:5].tolist()}, last time {data[-1, 0]}")
    return track


def main():
    out_dir = os.path.dirname(os.path.abspath(__file__))
    for elements in (10, 40):
        damping = 2000.0
        track = simulate(elements, damping, STEP)
        finer = simulate(elements, damping, STEP / 2)
        error = np.max(np.linalg.norm(track - finer, axis=2))
        name = f"drop_n{elements}_d2000.csv"
        with open(os.path.join(out_dir, name), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t", "marker", "s", "x", "y"])
            for p in range(track.shape[0]):
                for j, s in enumerate(MARKERS):
                    w.writerow([f"{p * FRAME:.2f}", j, f"{s:.17g}", f"{track[p, j, 0]:.17g}", f"{track[p, j, 1]:.17g}"])
        print(f"{name}: n={elements} D={damping} step={STEP} exudyn={exu.__version__} "
              f"max |track(h) - track(h/2)| = {error:.3e} m", file=sys.stderr)


if __name__ == "__main__":
    main()
