"""Every command as a function: its tables as the command line writes
them, its text, and a bad value refused with the command line's message
naming the flag."""

import pathlib
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest

import tether_sweep as ts

from test_identify import REPO, cli_binary, in_the_repository  # noqa: F401

SMALL_DROP = dict(elements=6, damping=2000, drag_coefficient=0.8)


def test_design_gives_the_command_lines_table(tmp_path):
    words = ["--elements", "20", "--damping", "2000", "--drag-coefficient", "0.8",
             "--axis", "initial_angle_deg=45,90", "--backend", "cpu"]
    done = subprocess.run([str(cli_binary()), "design", *words, "--out", str(tmp_path / "cli")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    r = ts.design(elements=20, damping=2000, drag_coefficient=0.8, axis=["initial_angle_deg=45,90"], backend="cpu")
    cli = pq.read_table(tmp_path / "cli" / "design.parquet")
    assert r.table.column_names == cli.column_names
    for column in cli.column_names:
        assert r.table.column(column).equals(cli.column(column)), column
    assert "initial_angle_deg = 90" in r.text
    assert r.out is None


def test_simulate_and_dataset_synth_give_their_tracks(tmp_path):
    track = ts.simulate(scenario="drop", **SMALL_DROP)
    assert set(track.table.column_names) >= {"t", "marker", "x", "y"}
    assert track.table.schema.field("x").metadata[b"unit"] == b"m"
    synth = ts.dataset_synth(**SMALL_DROP, noise=0, out=tmp_path / "drop.parquet")
    assert (tmp_path / "drop.parquet").exists()
    # Noise-free synthesis is the reference solver's track; the explicit
    # scheme's agrees to far below a tracker's noise.
    x_sim = track.table.column("x").to_numpy()
    x_syn = synth.table.column("x").to_numpy()
    assert x_sim.shape == x_syn.shape
    assert np.max(np.abs(x_sim - x_syn)) < 1e-3


def test_linearize_gives_its_tables():
    r = ts.linearize(elements=6, damping=2000)
    assert {"modes", "statespace", "frequency_response", "mode_shapes"} <= set(r.tables)
    assert "hanging equilibrium" in r.text


def test_swingup_runs_a_small_ga():
    r = ts.swingup(population=8, generations=2, bits_per_gene=2, elements=4, backend="cpu")
    assert r.tables, r.text
    assert "best:" in r.text


def test_shards_summarize_to_the_whole_run_and_plot_redraws(tmp_path):
    grid = dict(elements="4", damping="1000:3000:500", drag_coefficient="0.7:0.9:0.1", backend="cpu", tolerance=1e-7)
    for k in (0, 1):
        ts.identify(**grid, shard=f"{k}/2", out=tmp_path / "sharded", progress=False)
    merged = ts.summarize(tmp_path / "sharded", no_refine=True)
    whole = ts.identify(**grid, no_refine=True, progress=False)
    assert merged.tables["results"].column("j_e_m2").equals(whole.results.column("j_e_m2"))
    redrawn = ts.plot(tmp_path / "sharded" / "_summary")
    assert "redrew" in redrawn.text


@pytest.mark.parametrize(
    "function, keywords, flag",
    [
        (ts.design, dict(elements=20, damping=2000, drag_coefficient=0.8, noise=-1), "--noise"),
        (ts.simulate, dict(scenario="drop", elements=0), "--elements"),
        (ts.swingup, dict(population=0), "--population"),
        (ts.linearize, dict(elements=6, frequency_points=0), "--frequency-points"),
        (ts.dataset_synth, dict(noise=-1), "--noise"),
        (ts.identify, dict(drag_coefficient="-0.5", progress=False), "--drag-coefficient"),
    ],
    ids=["design", "simulate", "swingup", "linearize", "dataset_synth", "identify"],
)
def test_a_bad_value_is_the_command_lines_message(function, keywords, flag):
    with pytest.raises(ValueError, match=flag):
        function(**keywords)


def test_summarize_and_plot_refuse_a_folder_without_a_run(tmp_path):
    with pytest.raises(ValueError):
        ts.summarize(tmp_path)
    with pytest.raises((ValueError, RuntimeError)):
        ts.plot(tmp_path)


def test_a_tether_given_as_a_dict_is_the_flags():
    flags = ts.simulate(scenario="drop", **SMALL_DROP)
    as_dict = ts.simulate(scenario="drop", tether={"elements": 6, "damping_pa_s": 2000, "drag_coefficient": 0.8})
    assert flags.table.column("x").equals(as_dict.table.column("x"))
    with pytest.raises(TypeError, match="has no --config"):
        ts.linearize(tether={"elements": 6})
