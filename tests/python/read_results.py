"""Reads tether-sweep's identification tables the way users do: pyarrow,
pandas, polars and DuckDB. Called by tests/python_readers.rs with the path of a
single run's results.parquet, a sharded run's directory and the expected row
count; exits non-zero on the first mismatch."""

import json
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

results_path, sharded_dir, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])

# The documented schema, with units in the field metadata (text columns
# carry none).
SCHEMA = {
    "elements": (pa.int32(), "1"),
    "damping_pa_s": (pa.float64(), "Pa*s"),
    "drag_coefficient": (pa.float64(), "1"),
    "j_e_m2": (pa.float64(), "m^2"),
    "status": (pa.string(), None),
    "abandoned_at_s": (pa.float64(), "s"),
    "step_s": (pa.float64(), "s"),
    "steps": (pa.int64(), "1"),
    "tolerance_m": (pa.float64(), "m"),
    "implicit_method": (pa.string(), None),
    "backend": (pa.string(), None),
    "precision": (pa.string(), None),
    "solver": (pa.string(), None),
    "gpu_layout": (pa.string(), None),
}

table = pq.read_table(results_path)
assert table.num_rows == rows, (table.num_rows, rows)
assert table.schema.names == list(SCHEMA), table.schema.names
for field in table.schema:
    data_type, unit = SCHEMA[field.name]
    assert field.type == data_type, (field.name, field.type)
    found = field.metadata[b"unit"].decode() if field.metadata else None
    assert found == unit, (field.name, field.metadata)
meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
for key in ["tether_sweep.version", "tether_sweep.grid", "tether_sweep.measured_sha256",
            "tether_sweep.tether", "tether_sweep.scenario", "tether_sweep.summary"]:
    assert key in meta, (key, sorted(meta))
grid = json.loads(meta["tether_sweep.grid"])
assert len(grid["elements"]) * len(grid["damping_pa_s"]) * len(grid["drag_coefficient"]) == rows
assert set(table.column("status").to_pylist()) <= {"ok", "diverged", "abandoned"}
# Where an abandoned row stopped; null for every other.
abandoned = [s == "abandoned" for s in table.column("status").to_pylist()]
assert [t is not None for t in table.column("abandoned_at_s").to_pylist()] == abandoned
# A CPU run: no GPU layout, as nulls; every row on the reference solver
# says its method.
assert table.column("gpu_layout").null_count == rows
assert set(table.column("implicit_method").to_pylist()) <= {"generalized-alpha", "radau5"}

frame = pd.read_parquet(results_path)
assert len(frame) == rows and frame["elements"].dtype == "int32", frame.dtypes

# The sharded run as one Hive-partitioned table.
dataset = ds.dataset(sharded_dir, format="parquet", partitioning="hive").to_table()
assert dataset.num_rows == rows, dataset.num_rows
assert "shard" in dataset.schema.names

frame = pl.read_parquet(f"{sharded_dir}/shard=*/part.parquet", hive_partitioning=True)
assert frame.height == rows and "shard" in frame.columns, frame

con = duckdb.connect()
# The parts are a first pass: the single run's rows, but for those it
# re-ran near the best at the data's tolerance.
count, shards, same, rerun = con.execute(
    f"select count(*), count(distinct p.shard), "
    f"count(*) filter (where p.j_e_m2 is not distinct from s.j_e_m2 and p.tolerance_m = s.tolerance_m), "
    f"count(*) filter (where p.tolerance_m > s.tolerance_m) "
    f"from read_parquet('{sharded_dir}/shard=*/part.parquet', hive_partitioning = true) p "
    f"join read_parquet('{results_path}') s using (elements, damping_pa_s, drag_coefficient)"
).fetchone()
assert count == rows and shards >= 2, (count, shards)
assert same + rerun == rows, (same, rerun, rows)
best = con.execute(f"select min(j_e_m2) from read_parquet('{results_path}')").fetchone()[0]
print(f"pyarrow, pandas, polars and DuckDB read {rows} rows ({rerun} re-run by the single run); best J_e {best:.6e} m^2")
