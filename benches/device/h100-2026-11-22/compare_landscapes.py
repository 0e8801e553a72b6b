"""Compares a swing-up landscape with the H100's (landscape.parquet here).

    python3 compare_landscapes.py OTHER/landscape.parquet

OTHER is typically `tether-sweep swingup --exhaustive --backend cpu --out OTHER`.
Prints the relative J_a,min differences per chromosome, the rank correlation
and both optima (BENCHMARKS.md quotes this output).
"""
import pathlib
import sys

import numpy as np
import pyarrow.parquet as pq

here = pathlib.Path(__file__).parent
gpu = pq.read_table(here / "landscape.parquet").to_pandas()
other = pq.read_table(sys.argv[1]).to_pandas()
both = other.merge(gpu, on="chromosome", suffixes=("_other", "_gpu"))
assert len(both) == len(gpu) == len(other), "the landscapes cover different chromosomes"
relative = (both.j_a_min_m_gpu - both.j_a_min_m_other).abs() / both.j_a_min_m_other
print(f"relative J_a,min difference: median {relative.median():.2e}, "
      f"99th percentile {relative.quantile(0.99):.2e}, max {relative.max():.2e}")
late = both[relative > 1e-3]
print(f"{len(late)} chromosomes beyond 1e-3; their J_a,min times (other): "
      f"{late.t_at_min_s_other.min():.3f}..{late.t_at_min_s_other.max():.3f} s")
rank = np.corrcoef(both.j_a_min_m_other.rank(), both.j_a_min_m_gpu.rank())[0, 1]
print(f"rank correlation {rank:.8f}")
for name, table in (("other", other), ("gpu", gpu)):
    best = table.loc[table.j_a_min_m.idxmin()]
    print(f"{name} optimum: {best.bits} J_a,min {best.j_a_min_m:.6f} m at {best.t_at_min_s:.3f} s")
