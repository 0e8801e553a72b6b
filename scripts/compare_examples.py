#!/usr/bin/env python3
"""Runs the four worked examples of the docs with two tether-sweep
binaries and compares their tables' numeric columns bit for bit.

    python3 scripts/compare_examples.py OLD_BINARY NEW_BINARY [WORKDIR]

The examples: the default run (README), the filmed drop, the tracker's
export and the joint pair (docs/identify.md). For each, every numeric column
of results.parquet, refined.parquet and the best-fit tables is compared as
raw float64/int64 values, and every table's metadata keys and values (but
those that record when, where and how fast it ran); a column or key in
one table and not the other is reported, as is each run's wall time.
Exit 1 when any of them differs.
Run from the repository root (the examples name files under it).
"""

import pathlib
import subprocess
import sys
import time

import pyarrow.parquet as pq

EXAMPLES = {
    "default": ["identify"],
    "filmed": [
        "identify", "--config", "examples/filmed_experiment.toml",
        "--measured", "datasets/filmed_synthetic.parquet",
        "--elements", "6,12", "--damping", "1000:4000:500",
        "--drag-coefficient", "0.6:0.9:0.05",
        "--axis", "release_time_s=0:0.03:0.005",
        "--surface", "damping_pa_s,release_time_s",
    ],
    "tracker": [
        "identify", "--config", "examples/tracker_film.toml",
        "--measured", "datasets/tracker_film.csv",
        "--elements", "7", "--damping", "1000:4000:1000",
        "--drag-coefficient", "0.7:0.85:0.05",
        "--axis", "release_time_s=7.49:7.53:0.005",
    ],
    "joint": [
        "identify", "--config", "examples/joint_shallow.toml",
        "--config", "examples/joint_steep.toml",
        "--elements", "16,20", "--damping", "1000:3000:500",
        "--drag-coefficient", "0.75:0.85:0.05",
        "--axis", "shallow.release_time_s=0:0.03:0.005",
        "--axis", "steep.release_time_s=0:0.015:0.0025",
    ],
}


def run(binary: str, args: list[str], out: pathlib.Path) -> float:
    started = time.monotonic()
    done = subprocess.run(
        [binary, *args, "--out", str(out), "--force"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"{binary} {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return time.monotonic() - started


def numeric_columns(path: pathlib.Path) -> dict:
    table = pq.read_table(path)
    columns = {}
    for name, column in zip(table.column_names, table.columns):
        kind = str(column.type)
        if kind.startswith(("double", "float", "int", "uint")):
            columns[name] = column.to_pylist()
    return columns


# Metadata that records when, where and how fast a run ran, not what it found.
VOLATILE = {f"tether_sweep.{k}" for k in ("wall_s", "command_line", "git_commit", "version")}


def metadata(path: pathlib.Path) -> dict:
    raw = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items() if k.decode() != "ARROW:schema"}


def compare_metadata(name: str, table: str, old: pathlib.Path, new: pathlib.Path) -> bool:
    a, b = metadata(old), metadata(new)
    same = True
    for key in sorted(set(a) ^ set(b)):
        print(f"  {name}: {table} metadata key {key} only in the {'old' if key in a else 'new'} run")
        same = False
    for key in sorted(set(a) & set(b)):
        if a[key] != b[key] and key not in VOLATILE:
            print(f"  {name}: {table} metadata {key} differs")
            same = False
    return same


def compare(name: str, old: pathlib.Path, new: pathlib.Path) -> bool:
    same = True
    tables = sorted(p.name for p in old.glob("*.parquet"))
    for table in tables:
        if not (new / table).exists():
            print(f"  {name}: {table} only in the old run")
            same = False
            continue
        same &= compare_metadata(name, table, old / table, new / table)
        a, b = numeric_columns(old / table), numeric_columns(new / table)
        for column in sorted(set(a) | set(b)):
            if column not in a or column not in b:
                print(f"  {name}: {table} column {column} only in one run")
                same = False
            elif a[column] != b[column]:
                differing = sum(x != y for x, y in zip(a[column], b[column]))
                print(f"  {name}: {table} column {column}: {differing} of {len(a[column])} values differ")
                same = False
    print(f"{name}: {len(tables)} tables {'identical' if same else 'DIFFER'} in their numeric columns and metadata")
    return same


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old_bin, new_bin = sys.argv[1], sys.argv[2]
    work = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else "compare-examples")
    all_same = True
    for name, args in EXAMPLES.items():
        old_s = run(old_bin, args, work / "old" / name)
        new_s = run(new_bin, args, work / "new" / name)
        print(f"{name}: old {old_s:.2f} s, new {new_s:.2f} s")
        all_same &= compare(name, work / "old" / name, work / "new" / name)
    sys.exit(0 if all_same else 1)


if __name__ == "__main__":
    main()
