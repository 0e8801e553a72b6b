"""Every command as a function: its tables as the command line writes
them, its text, and a bad value refused with the command line's message
naming the flag."""

import pathlib
import subprocess
import sys
import textwrap

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
    # The call is the file's provenance, as the command line's words are.
    recorded = synth.table.schema.metadata[b"tether_sweep.command"].decode()
    assert recorded.startswith("tether_sweep.dataset_synth(elements=6, damping=2000"), recorded
    assert pq.read_table(tmp_path / "drop.parquet").equals(synth.table, check_metadata=True)
    # Noise-free synthesis is the reference solver's track; the explicit
    # scheme's agrees to far below a tracker's noise.
    x_sim = track.table.column("x").to_numpy()
    x_syn = synth.table.column("x").to_numpy()
    assert x_sim.shape == x_syn.shape
    assert np.max(np.abs(x_sim - x_syn)) < 1e-3
    # A message from deep in the library names no command-line flag.
    with pytest.raises(ValueError, match="choose another out or pass force=True") as refused:
        ts.dataset_synth(**SMALL_DROP, noise=0, out=tmp_path / "drop.parquet")
    assert "--" not in str(refused.value), refused.value


def test_simulate_gives_its_markers_as_arrays():
    track = ts.simulate(scenario="drop", **SMALL_DROP)
    frames = track.table.num_rows // 11
    assert track.markers_m.shape == (frames, 11, 2) and track.time_s.shape == (frames,)
    np.testing.assert_allclose(np.diff(track.time_s), 0.04, rtol=1e-9)
    s = track.arc_lengths_m
    np.testing.assert_allclose(s, np.linspace(0, 0.6, 11), atol=1e-12)
    # Released straight at 45° from the pin, which stays put; the markers
    # keep their spacing along the tether (axially stiff) at every frame.
    np.testing.assert_allclose(track.markers_m[0], np.column_stack([s, -s]) / np.sqrt(2), atol=1e-12)
    assert np.all(track.markers_m[:, 0] == 0.0)
    chords = np.linalg.norm(np.diff(track.markers_m, axis=1), axis=-1)
    assert np.all(chords <= 0.06 * 1.001) and np.all(chords > 0.06 * 0.98)
    # A row of the table is its frame and marker in the array.
    row = 5 * 11 + 7
    assert track.markers_m[5, 7, 1] == track.table.column("y")[row].as_py()
    # A body carrying the tether: its markers from the wide table.
    carried = ts.simulate(scenario="arm", tether=True, duration=0.05)
    assert carried.markers_m.shape == (len(carried.time_s), 11, 2)
    assert carried.markers_m[-1, 10, 0] == carried.table.column("tether_marker10_x_m")[-1].as_py()
    assert carried.arc_lengths_m is None
    bare = ts.simulate(scenario="robot", duration=0.2)
    assert bare.markers_m is None and len(bare.time_s) == bare.table.num_rows
    assert track.q is None


def test_simulate_gives_the_nodal_state_on_request(tmp_path):
    # n = 6: nodes every 0.1 m, markers every 0.06 m; they meet at 0, 0.3
    # and 0.6 m, where a node's x, y (q's first two of its four) are the
    # marker's position at every frame.
    run = ts.simulate(scenario="drop", **SMALL_DROP, state=True)
    frames = len(run.time_s)
    assert run.q.shape == (frames, 28) and run.v.shape == (frames, 28)
    np.testing.assert_allclose(run.node_arc_lengths_m, np.linspace(0, 0.6, 7), atol=1e-12)
    for node, marker in [(0, 0), (3, 5), (6, 10)]:
        np.testing.assert_allclose(run.q[:, 4 * node:4 * node + 2], run.markers_m[:, marker], atol=1e-12)
    # Released straight at 45°, at rest: unit slopes along the line, no speed.
    np.testing.assert_allclose(run.q[0, 2::4], np.sqrt(0.5), atol=1e-12)
    assert np.all(run.v[0] == 0.0) and np.abs(run.v[-1]).max() > 0.1
    # With out, the state is written beside the track; or where it is named.
    kept = ts.simulate(scenario="drop", **SMALL_DROP, state=True, out=tmp_path / "run.parquet")
    assert pq.read_table(tmp_path / "run_state.parquet").equals(kept.tables["run_state"])
    named = ts.simulate(scenario="drop", **SMALL_DROP, state=tmp_path / "q.csv", out=tmp_path / "t.parquet")
    assert (tmp_path / "q.csv").exists() and np.array_equal(named.q, run.q)
    with pytest.raises(ValueError, match=r"^state is recorded by the CPU's solvers; the GPU engine reads back markers only: backend=cpu or auto$"):
        ts.simulate(scenario="drop", **SMALL_DROP, state=True, backend="gpu")


def test_a_config_files_top_level_keys_survive_a_tether_dict(tmp_path):
    # The config's own keys outside its tables (here the reference solver
    # and its fourth-order method) are kept when a dict overrides its
    # [tether]: they once broke the config written for the command line.
    config = tmp_path / "drop.toml"
    config.write_text(
        'scenario = "drop"\nsolver = "reference"\nimplicit_method = "esdirk43"\n'
        "[tether]\nelements = 4\n[settings]\nduration_s = 0.2\n"
    )
    track = ts.simulate(config=config, tether={"damping_pa_s": 2000.0})
    settings = track.table.schema.metadata[b"tether_sweep.solver_settings"].decode()
    assert '"esdirk43"' in settings and '"reference"' in settings
    assert "reference (esdirk43)" in track.text
    tether = track.table.schema.metadata[b"tether_sweep.tether"].decode()
    assert '"damping_pa_s":2000.0' in tether.replace(" ", "")


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
        (ts.design, dict(elements=20, damping=2000, drag_coefficient=0.8, noise=-1), "^invalid noise = -1: must be a standard deviation > 0 m$"),
        (ts.simulate, dict(scenario="drop", elements=0), "^invalid elements = 0: must be an integer from 1 to 1024$"),
        (ts.swingup, dict(population=0), "^invalid population = 0: "),
        (ts.linearize, dict(elements=6, frequency_points=0), "^invalid frequency_points = 0: "),
        (ts.dataset_synth, dict(noise=-1), "^invalid noise = -1: must be a finite number >= 0$"),
        # Every command's keywords reach the library as themselves: named
        # so, never as a flag.
        (ts.identify, dict(drag_coefficient="-0.5", progress=False), "^invalid drag_coefficient = -0.5: "),
    ],
    ids=["design", "simulate", "swingup", "linearize", "dataset_synth", "identify"],
)
def test_a_bad_value_is_the_librarys_message_naming_the_keyword(function, keywords, flag):
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
    with pytest.raises(TypeError, match=r"^linearize\(\) got an unexpected keyword 'tether'"):
        ts.linearize(tether={"elements": 6})


def test_tables_are_handed_over_without_a_copy(tmp_path):
    import pyarrow as pa

    # A table read from a file (or copied on the way) is allocated by
    # pyarrow's pool; the engine's own buffers, handed over through the
    # Arrow C data interface, are not.
    before = pa.total_allocated_bytes()
    track = ts.simulate(scenario="drop", **SMALL_DROP).table
    assert track.nbytes > 10_000
    assert pa.total_allocated_bytes() - before < track.nbytes // 100
    # The same table as the file the command line writes, metadata and all.
    written = ts.simulate(scenario="drop", **SMALL_DROP, out=tmp_path / "track.parquet")
    from_file = pq.read_table(tmp_path / "track.parquet")
    assert written.table.equals(from_file, check_metadata=True)


SWINGUP_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    import tether_sweep as ts
    sent = []
    def progress(done, total):
        if done >= total // 4 and not sent:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)
    try:
        ts.swingup(exhaustive=True, bits_per_gene=3, elements=4, backend="cpu", progress=progress, out=sys.argv[1])
    except KeyboardInterrupt:
        print("interrupted after", time.monotonic() - sent[0], "s", flush=True)
        sys.exit(130)
    print("finished", flush=True)
    """
)


def test_swingup_reports_progress_and_stops_on_ctrl_c(tmp_path):
    seen = []
    ts.swingup(exhaustive=True, bits_per_gene=1, elements=4, backend="cpu", progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (8, 8)
    out = tmp_path / "interrupted"
    done = subprocess.run([sys.executable, "-c", SWINGUP_CHILD, str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 130, done.stdout + done.stderr
    assert float(done.stdout.split()[2]) < 5.0, done.stdout
    # What finished is kept; the rest is marked.
    status = pq.read_table(out / "landscape.parquet").column("status").to_pylist()
    assert len(status) == 512 and "cancelled" in status and status.count("cancelled") < 512


def test_mesa_is_given_a_runtime_dir_so_it_does_not_warn():
    import os

    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = "import os, tether_sweep; print(os.environ['XDG_RUNTIME_DIR'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    folder = pathlib.Path(done.stdout.strip())
    assert folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700, folder
    # A GPU job on lavapipe then opens its device without Mesa's warning.
    code = "import tether_sweep as ts; ts.simulate(scenario='drop', elements=2, duration=0.04, backend='gpu')"
    if os.environ.get("TETHER_SWEEP_SKIP_GPU_TESTS") == "1":
        return
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr, done.stderr



def test_a_body_run_in_memory_names_no_temporary_path():
    # The arm's Baumgarte form fails at the folded pose: its error names
    # the time, and no scratch folder of out=None.
    with pytest.raises(RuntimeError, match=r"baumgarte failed at t = 0\.4932") as raised:
        ts.simulate(scenario="arm", formulation="baumgarte")
    assert "tether-sweep-" not in str(raised.value), str(raised.value)
    robot = ts.simulate(scenario="robot", feedback_gains=[0, 0], duration=2)
    assert "tether-sweep-" not in robot.text, robot.text
    assert robot.table.column("tracking_error_m").to_numpy()[-1] > 0.19


def test_the_arm_carries_a_tether_given_as_a_flag_beside_the_tables_dict():
    # tether=True is simulate's --tether; the tether's own keywords set it.
    carried = ts.simulate(scenario="arm", tether=True, drag_coefficient=1.2, duration=0.3)
    pull = carried.table.column("tether_pull_y_n").to_numpy()
    assert carried.table.num_rows == 31 and (pull < -0.2).all(), pull
    trail = carried.table.column("tether_marker10_x_m").to_numpy() - carried.table.column("tether_marker0_x_m").to_numpy()
    assert trail[-1] > 1e-3, trail
    with pytest.raises(ValueError, match=r"^drag_coefficient is the tether's: .* only with tether=True"):
        ts.simulate(scenario="arm", drag_coefficient=1.2)
    # The GPU engine carries it as the CPU does (lavapipe in CI).
    on_gpu = ts.simulate(scenario="arm", tether=True, drag_coefficient=1.2, duration=0.3,
                         backend="gpu", precision="f64")
    assert "GPU engine" in on_gpu.text, on_gpu.text
    gpu_pull = on_gpu.table.column("tether_pull_y_n").to_numpy()
    assert abs(gpu_pull - pull).max() < 1e-5, abs(gpu_pull - pull).max()


def test_figures_come_back_in_memory_as_drawn(tmp_path):
    # With out=None nothing is written, yet every figure is the result's:
    # the PNG a notebook shows, the SVG, a matplotlib figure of it.
    before = set(pathlib.Path.cwd().iterdir())
    r = ts.linearize()
    assert set(r.figures) == {"bode", "mode_shapes"}, r.figures
    bode = r.figures["bode"]
    assert bode._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")
    assert bode.svg.startswith("<svg")
    width, height = bode.size_px
    assert width >= 400 and height >= 300
    assert "bode" in repr(r) and repr(bode) == f"Figure('bode', {width}×{height} px)"
    assert set(pathlib.Path.cwd().iterdir()) == before
    figure = bode.to_matplotlib()
    assert tuple(figure.get_size_inches() * figure.dpi) == (width, height)
    import matplotlib.pyplot as plt

    plt.close(figure)
    assert bode.save(tmp_path / "b.svg").read_text(encoding="utf-8") == bode.svg
    with pytest.raises(ValueError, match="must end in .png or .svg"):
        bode.save(tmp_path / "b.jpg")
    # With out=DIR the files are the figures, byte for byte; a command that
    # names its figures by folder (plot) keeps the same names.
    kept = ts.linearize(out=tmp_path / "lin")
    for name, f in kept.figures.items():
        assert (tmp_path / "lin" / f"{name}.png").read_bytes() == f.png, name
        assert (tmp_path / "lin" / f"{name}.svg").read_text(encoding="utf-8") == f.svg, name
    designed = ts.design(elements=20, damping=2000, drag_coefficient=0.8, axis=["initial_angle_deg=45,90"], backend="cpu")
    assert list(designed.figures) == ["design"]


def test_simulate_has_a_real_signature_and_its_keywords_reach_the_library(tmp_path, monkeypatch):
    import inspect
    import pydoc
    import typing

    from mypy import api

    sig = inspect.signature(ts.simulate)
    for name in ("out", "config", "scenario", "elements", "damping", "state", "settings"):
        assert name in sig.parameters, name
    assert typing.get_args(sig.parameters["scenario"].annotation.__args__[0]) == ("drop", "swingup", "arm", "robot")
    assert "duration : Optional[float]" in pydoc.render_doc(ts.simulate)
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import tether_sweep as ts\nts.simulate(backend=3.7)\n")
    out, _, status = api.run(["--no-incremental", "--cache-dir=/dev/null", str(wrong)])
    assert status == 1 and '"backend"' in out, out
    with pytest.raises(TypeError, match="did you mean duration"):
        ts.simulate(duraton=1.0)
    with pytest.raises(ValueError, match=r"^invalid tolerance = -1: must be") as raised:
        ts.simulate(solver="reference", tolerance=-1.0)
    assert "--" not in str(raised.value)
    # A config as a dict reaches the library as its tables: no file is
    # written for it, and its errors name it.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    config = {"scenario": "drop", "tether": dict(elements=6, damping_pa_s=2000.0, drag_coefficient=0.8)}
    from_dict = ts.simulate(config=config, duration=0.4)
    flags = ts.simulate(scenario="drop", **SMALL_DROP, duration=0.4)
    assert from_dict.table.column("x").equals(flags.table.column("x"))
    assert [p.name for p in tmp_path.iterdir() if p.name != "wrong.py"] == []
    with pytest.raises(ValueError, match=r"invalid length_m \(in config\) = -1"):
        ts.simulate(config={"tether": {"length_m": -1.0}})
    with pytest.raises(ValueError, match=r"^state is the tether's drop or swing-up run's"):
        ts.simulate(scenario="robot", state=True)


def test_design_takes_films_as_dicts_and_frames_in_memory(tmp_path):
    import pandas as pd

    expected = dict(elements=6, damping=2000, drag_coefficient=0.8, backend="cpu")
    taken = pd.read_csv(REPO / "datasets" / "joint_shallow.csv")
    films = [
        {"settings": {"name": "taken", "initial_angle_deg": 45.0, "release_time_s": 0.0125, "measured": taken}},
        {"settings": {"initial_angle_deg": 90.0}},
    ]
    plan = ts.design(config=films, **expected)
    assert "taken" in plan.text and plan.table.num_rows == 1, plan.text
    # The same films from files give the same standard errors.
    (tmp_path / "taken.toml").write_text(
        '[settings]\ninitial_angle_deg = 45.0\nrelease_time_s = 0.0125\nmeasured = "%s"\n'
        % (REPO / "datasets" / "joint_shallow.csv")
    )
    (tmp_path / "film2.toml").write_text("[settings]\ninitial_angle_deg = 90.0\n")
    from_files = ts.design(config=[tmp_path / "taken.toml", tmp_path / "film2.toml"], **expected)
    se = [c for c in plan.table.column_names if c.startswith("se_")]
    assert se and all(plan.table.column(c).equals(from_files.table.column(c)) for c in se), se
    with pytest.raises(ValueError, match=r"^design predicts errors at the values you expect: give damping"):
        ts.design(elements=6, drag_coefficient=0.8)
