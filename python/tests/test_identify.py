"""The Python package against the command line and the library: the same
words give the same tables, the batched objective gives the sweep's J_e,
bad input is the command line's message as a ValueError, Ctrl-C stops a
run between chunks and keeps them, and the GIL is free while it runs."""

import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

import tether_sweep as ts

REPO = pathlib.Path(__file__).resolve().parents[2]
# A grid small enough for CI, on the shipped drop, on the CPU, at one
# tolerance (so that the objective compares with the table as written).
SMALL = dict(
    elements="4,6",
    damping="1000:3000:500",
    drag_coefficient="0.7:0.9:0.1",
    backend="cpu",
    tolerance=1e-7,
)
# n = 4, 6 are coarse for the shipped drop (made at n = 80): identify
# flags the fit as not explaining the data, which is not these tests'
# question.
PLAUSIBLE_OR_NOT = dict(allow_implausible=True)


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch):
    # The defaults name the shipped data by paths under the repository.
    monkeypatch.chdir(REPO)


def cli_binary() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("TETHER_SWEEP_BIN", REPO / "target/debug/tether-sweep"))
    if not path.exists():
        pytest.fail(f"{path}: build the command line first (cargo build), or set TETHER_SWEEP_BIN")
    return path


def test_identify_returns_its_tables_with_units_and_a_summary():
    r = ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, progress=False)
    assert r.results.num_rows == 30
    assert r.results.schema.field("damping_pa_s").metadata[b"unit"] == b"Pa*s"
    assert r.results.schema.field("j_e_m2").metadata[b"unit"] == b"m^2"
    assert r.refined is not None and r.best_fit is not None
    best = r.summary["best"]["candidate"]
    j_e = r.results.column("j_e_m2").to_numpy(zero_copy_only=False)
    assert r.summary["best"]["j_e_m2"] == np.nanmin(j_e)
    assert best["elements"] in (4, 6)
    assert "identify: 30 candidates" in r.text
    assert "IdentifyResult: 30 candidates" in repr(r)
    assert "<table>" in r._repr_html_()
    assert r.out is None


FILMED = [
    "--config", "examples/filmed_experiment.toml", "--measured", "datasets/filmed_synthetic.parquet",
    "--elements", "6", "--damping", "1000:4000:1000", "--drag-coefficient", "0.7:0.9:0.1",
    "--axis", "release_time_s=0:0.03:0.01",
]


@pytest.mark.parametrize("words", [[], FILMED], ids=["shipped drop", "filmed config"])
def test_the_same_words_give_the_command_lines_tables(tmp_path, words):
    if not words:
        words = [
            "--elements", "4,6", "--damping", "1000:3000:500", "--drag-coefficient", "0.7:0.9:0.1",
            "--tolerance", "1e-7",
        ]
    words = words + ["--backend", "cpu"]
    done = subprocess.run(
        [str(cli_binary()), "identify", *words, "--allow-implausible", "--out", str(tmp_path / "cli")],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    # The same words as keywords: each flag's value after it, a number
    # as a number.
    from tether_sweep import _keywords

    typed = {"number": float, "count": int, "axes": lambda v: [v]}
    keywords = {}
    for flag, value in zip(words[::2], words[1::2]):
        name = flag[2:].replace("-", "_")
        kind = next(k.kind for k in _keywords.taken("identify") if k.name == name)
        keywords[name] = typed.get(kind, str)(value)
    r = ts.identify(**keywords, allow_implausible=True, out=tmp_path / "py", progress=False)
    assert (tmp_path / "py" / "results.parquet").exists()
    assert sorted(r.tables) == sorted(p.stem for p in (tmp_path / "cli").glob("*.parquet"))
    for name in r.tables:
        cli = pq.read_table(tmp_path / "cli" / f"{name}.parquet")
        ours = r.tables[name]
        assert cli.column_names == ours.column_names, name
        for column in cli.column_names:
            assert cli.column(column).equals(ours.column(column)), f"{name}.{column}"
        assert cli.schema.metadata.keys() == ours.schema.metadata.keys(), name


def test_a_film_given_as_a_table_is_identified_as_its_file():
    import pandas as pd

    as_file = ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, progress=False)
    frame = pd.read_parquet(REPO / "datasets" / "drop_synthetic.parquet")
    as_frame = ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, measured=frame, progress=False)
    assert as_file.results.column("j_e_m2").equals(as_frame.results.column("j_e_m2"))
    table = pq.read_table(REPO / "datasets" / "drop_synthetic.parquet")
    objective = ts.Objective(**SMALL, measured=table)
    row = as_file.results.to_pandas().iloc[[0]]
    np.testing.assert_allclose(objective(row), row["j_e_m2"].to_numpy(), rtol=1e-12)


def test_python_values_are_written_as_the_command_lines_text():
    as_text = ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, progress=False)
    as_values = ts.identify(
        **dict(SMALL, elements=[4, 6], damping=range(1000, 3001, 500), drag_coefficient=np.array([0.7, 0.8, 0.9])),
        **PLAUSIBLE_OR_NOT,
        progress=False,
    )
    assert as_text.results.column("j_e_m2").equals(as_values.results.column("j_e_m2"))


def test_the_objective_gives_the_sweeps_j_e_for_the_same_candidates():
    # A hundred candidates: n 4 and 6, ten D, five C_D.
    grid = dict(SMALL, damping="1000:3250:250", drag_coefficient="0.7:0.9:0.05")
    r = ts.identify(**grid, no_refine=True, validate=0, progress=False)
    objective = ts.Objective(**grid)
    assert objective.parameters == ["elements", "damping_pa_s", "drag_coefficient"]
    assert objective.tolerance_m == 1e-7
    # A given tolerance is generalized-alpha's, as identify's.
    assert objective.implicit_method == "generalized-alpha"
    assert r.summary["implicit_method"] == "generalized-alpha"
    table = r.results.to_pandas()
    assert len(table) == 100
    # Every row, in another order than the sweep's, as one batch: the
    # rows scored to the end, and the hopeless ones' lower bounds below.
    rows = table.iloc[::-1]
    j_e = objective(rows)
    ok = (rows["status"] == "ok").to_numpy()
    assert 0 < ok.sum() < 100, rows["status"].value_counts()
    expected = rows["j_e_m2"].to_numpy()
    np.testing.assert_allclose(j_e[ok], expected[ok], rtol=1e-12, atol=0)
    assert np.all(expected[~ok] < j_e[~ok])
    whole = ts.identify(**grid, no_refine=True, validate=0, progress=False, exhaustive=True)
    np.testing.assert_allclose(j_e, whole.results.to_pandas().iloc[::-1]["j_e_m2"].to_numpy(), rtol=1e-12, atol=0)
    # The same from a dict of arrays and from a 2-D array, its progress
    # passed on to the end.
    as_dict = {name: rows[name].to_numpy() for name in objective.parameters}
    seen = []
    np.testing.assert_array_equal(objective(as_dict, progress=lambda done, total: seen.append((done, total))), j_e)
    assert seen and seen[-1] == (100, 100), seen[-3:]
    np.testing.assert_array_equal(objective(rows[objective.parameters].to_numpy()), j_e)
    # The residuals' sum of squares is J_e.
    residuals = objective.residuals(rows[objective.parameters].to_numpy()[0])
    assert residuals.shape == (objective.observations,)
    assert abs(np.sum(residuals**2) / j_e[0] - 1) < 1e-9


def test_bad_input_is_a_value_error_naming_the_keyword():
    with pytest.raises(ValueError, match="^invalid damping = -5: must be values >= 0"):
        ts.identify(**dict(SMALL, damping="-5"), progress=False)
    with pytest.raises(ValueError, match="^invalid axis = "):
        ts.identify(**SMALL, axis=["release_time_s"], progress=False)
    with pytest.raises(TypeError, match="did you mean damping"):
        ts.identify(dampnig="1000", progress=False)
    with pytest.raises(ValueError, match="^invalid elements = "):
        ts.Objective(**dict(SMALL, elements="4.5"))
    with pytest.raises(ValueError, match="one column per parameter"):
        ts.Objective(**SMALL)(np.zeros((2, 2)))


def test_the_gil_is_free_while_a_run_runs():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=tick)
    thread.start()
    started = time.monotonic()
    ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, progress=False)
    elapsed = time.monotonic() - started
    stop.set()
    thread.join()
    # The other thread ran all along: about one tick per 10 ms.
    assert len(ticks) > 0.5 * elapsed / 0.01, (len(ticks), elapsed)


def test_progress_reaches_a_callable():
    seen = []
    ts.identify(**SMALL, **PLAUSIBLE_OR_NOT, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (30, 30)


CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    import tether_sweep as ts
    sent = []
    def progress(done, total):
        # After a few chunks of 8 have finished and been saved.
        if done >= 24 and not sent:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)
    try:
        ts.identify(out=sys.argv[1] if len(sys.argv) > 1 else None, progress=progress, chunk_size=8, **{GRID})
    except KeyboardInterrupt as e:
        print("interrupted after", time.monotonic() - sent[0], "s:", e, flush=True)
        sys.exit(130)
    print("finished", flush=True)
    """
)
LONG = dict(elements="4,6", damping="0:4000:250", drag_coefficient="0.6:0.9:0.1", backend="cpu", allow_implausible=True)


def test_ctrl_c_stops_between_chunks_keeps_them_and_resume_completes(tmp_path):
    out = tmp_path / "interrupted"
    child = CHILD.replace("{GRID}", repr(LONG))
    done = subprocess.run([sys.executable, "-c", child, str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 130, done.stdout + done.stderr
    # It says what was kept and how to finish, in Python's words.
    assert "resume=True" in done.stdout and "--resume" not in done.stdout, done.stdout
    after = float(done.stdout.split()[2])
    assert after < 5.0, done.stdout
    chunks = list((out / ".chunks").glob("*.parquet"))
    assert chunks, "the finished chunks are kept"
    assert not (out / "results.parquet").exists()
    resumed = ts.identify(out=out, resume=True, chunk_size=8, progress=False, **LONG)
    whole = ts.identify(chunk_size=8, progress=False, **LONG)
    assert resumed.results.num_rows == whole.results.num_rows == 2 * 17 * 4
    assert resumed.results.column("j_e_m2").equals(whole.results.column("j_e_m2"))
    # With out=None nothing is kept, and the message says so without a
    # temporary folder or a command-line flag.
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 130, done.stdout + done.stderr
    assert "with out=None nothing is kept" in done.stdout and "out=DIR" in done.stdout, done.stdout
    assert "--resume" not in done.stdout and "tether-sweep-" not in done.stdout, done.stdout


def test_the_docs_python_examples_run():
    text = (REPO / "docs" / "python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) >= 2
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), scope)
    assert scope["r"].refined is not None


def test_the_type_stubs_are_the_command_lines_flags():
    import inspect

    from tether_sweep import _stubs

    shipped = (REPO / "python" / "tether_sweep" / "__init__.pyi").read_text()
    assert shipped == _stubs.stubs(), "python -m tether_sweep._stubs > python/tether_sweep/__init__.pyi"
    import ast

    tree = ast.parse(shipped)
    identify = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "identify")
    def expected(command):
        tables = {"tether", "settings", "camera"} if "config" in ts.flags(command) else set()
        return set(ts.flags(command)) | tables

    keywords = {a.arg for a in identify.args.kwonlyargs}
    assert keywords == expected("identify") | {"progress"}
    # The commands whose keywords are the library's: the command line's
    # flags, the config's tables as dicts, and progress where it reaches
    # Python.
    from tether_sweep import _keywords

    for function, _, progress, folder in _stubs.TYPED:
        stub = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
        tables = {k.name for k in _keywords.taken(function) if k.kind == "table"}
        wanted = set(ts.flags(function.replace("_", " "))) | tables | ({"progress"} if progress else set())
        assert {a.arg for a in stub.args.kwonlyargs} == wanted, function
        positional = {"dir"} if folder else set()
        assert [a.arg for a in stub.args.args] == list(positional), function
        assert set(inspect.signature(getattr(ts, function)).parameters) == wanted | positional, function


FILMED_KEYWORDS = dict(
    measured="datasets/filmed_synthetic.parquet", elements=6, damping="1000:4000:1000",
    drag_coefficient="0.7:0.9:0.1", axis=["release_time_s=0:0.03:0.01"], backend="cpu", progress=False,
)


def test_a_config_given_as_dicts_is_its_file():
    as_file = ts.identify(config="examples/filmed_experiment.toml", **FILMED_KEYWORDS)
    tether = {"length_m": 0.5, "thickness_m": 0.0025, "youngs_modulus_pa": 8e6, "density_kg_m3": 1000.0}
    settings = {"initial_angle_deg": 30.0, "pin_m": [0.1, 0.2]}
    as_dicts = ts.identify(tether=tether, settings=settings, **FILMED_KEYWORDS)
    assert as_file.results.column("j_e_m2").equals(as_dicts.results.column("j_e_m2"))
    # A dict over a config replaces the keys it names and keeps the rest.
    same = ts.identify(config="examples/filmed_experiment.toml", settings={"initial_angle_deg": 30.0}, **FILMED_KEYWORDS)
    assert same.results.column("j_e_m2").equals(as_file.results.column("j_e_m2"))
    # Another release angle is another experiment: a fit the film's noise
    # cannot explain, raised unless allowed.
    steeper = dict(config="examples/filmed_experiment.toml", settings={"initial_angle_deg": 35.0}, **FILMED_KEYWORDS)
    with pytest.raises(ts.ImplausibleFit, match="the model is not this film's experiment") as raised:
        ts.identify(**steeper)
    # It carries the result, names the keyword, and no temporary folder.
    message = str(raised.value)
    assert "allow_implausible=True" in message and "--allow-implausible" not in message, message
    assert "tether-sweep-" not in message and ".result" in message, message
    assert raised.value.result.results.num_rows == as_file.results.num_rows
    assert raised.value.result.fit_warning
    allowed = ts.identify(**steeper, allow_implausible=True)
    assert not allowed.results.column("j_e_m2").equals(as_file.results.column("j_e_m2"))
    assert allowed.fit_warning
    # A key the config does not have is the config's message, naming it.
    with pytest.raises(ValueError, match="lenght_m"):
        ts.identify(tether={"lenght_m": 0.5}, **FILMED_KEYWORDS)
    with pytest.raises(TypeError, match="dict"):
        ts.identify(tether=0.5, **FILMED_KEYWORDS)


OBJECTIVE_CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import numpy as np
    import tether_sweep as ts
    objective = ts.Objective(**{GRID})
    # Four thousand low-damping candidates: a batch of a minute or more.
    rows = np.array([[6, d, c] for d in np.linspace(0, 500, 400) for c in np.linspace(0.6, 0.9, 10)])
    sent = []
    def interrupt():
        time.sleep(1.0)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        objective(rows)
    except KeyboardInterrupt as e:
        print("interrupted after", time.monotonic() - sent[0], "s:", e, flush=True)
        sys.exit(130)
    print("finished", flush=True)
    """
)


def test_ctrl_c_stops_an_objective_batch_within_seconds():
    grid = dict(elements=6, damping=1000, drag_coefficient=0.8, backend="cpu")
    child = OBJECTIVE_CHILD.replace("{GRID}", repr(grid))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 130, done.stdout + done.stderr
    assert float(done.stdout.split()[2]) < 5.0, done.stdout


def test_identify_has_a_real_signature_and_help():
    import inspect
    import pydoc
    import typing

    sig = inspect.signature(ts.identify)
    for name in ("config", "measured", "damping", "backend", "tolerance", "out", "progress"):
        assert name in sig.parameters, name
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    backend = sig.parameters["backend"]
    assert backend.default == "auto"
    assert typing.get_args(backend.annotation) == ("auto", "gpu", "cpu")
    assert sig.parameters["validate"].default == 3
    assert sig.parameters["damping"].default == "0:5000:250"
    doc = pydoc.render_doc(ts.identify)
    assert "tolerance : Optional[float]" in doc and "[m]." in doc, doc
    study = inspect.signature(ts.Objective)
    assert "measured" in study.parameters and "out" not in study.parameters
    # The objective takes the study, not a whole run's outputs or passes:
    # its signature leaves them out and a call naming one is refused.
    for whole_run in ("surface", "shard", "resume", "chunk_size", "csv", "force", "validate", "no_refine", "exhaustive"):
        assert whole_run in sig.parameters and whole_run not in study.parameters, whole_run
    for taken in ("tolerance", "backend", "config", "axis", "allow_implausible"):
        assert taken in study.parameters, taken
    with pytest.raises(TypeError, match=r"Objective\(\) takes no 'resume': .*\(ts\.identify\)"):
        ts.Objective(resume=True)
    assert "chunk_size :" not in pydoc.render_doc(ts.Objective)


def test_a_type_checker_refuses_a_wrong_type(tmp_path):
    from mypy import api

    right = tmp_path / "right.py"
    right.write_text(
        "import tether_sweep as ts\n"
        "ts.identify(backend='cpu', damping=[1000, 2000], config=[{'tether': {}}, 'b.toml'], progress=False)\n"
    )
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import tether_sweep as ts\nts.identify(backend=3.7)\n")
    out, _, status = api.run(["--no-incremental", "--cache-dir=/dev/null", str(right)])
    assert status == 0, out
    out, _, status = api.run(["--no-incremental", "--cache-dir=/dev/null", str(wrong)])
    assert status == 1 and '"backend"' in out, out


def test_errors_name_the_keyword_and_suggest_the_nearest():
    with pytest.raises(ValueError) as raised:
        ts.identify(tolerance=-1.0, progress=False)
    message = str(raised.value)
    assert message.startswith("invalid tolerance = -1: must be") and "--" not in message, message
    with pytest.raises(TypeError, match="did you mean tolerance"):
        ts.identify(tolerence=1e-6)
    with pytest.raises(TypeError, match="backend takes text, not float"):
        ts.identify(backend=3.7)
    with pytest.raises(ValueError, match=r"^invalid chunk_size = -1"):
        ts.identify(chunk_size=-1)
    # A config of several is named by its place in the list.
    configs = [{"settings": {"measured": "datasets/joint_shallow.csv"}}, {"tether": {"length_m": -1.0}}]
    with pytest.raises(ValueError, match=r"invalid length_m \(in config\[1\]\) = -1"):
        ts.identify(config=configs)
    with pytest.raises(ValueError, match=r"^damping beside grid"):
        ts.identify(grid="examples/paper_grid.toml", damping=1000)


def _film(name):
    import pandas as pd

    angle = {"shallow": 45.0, "steep": 90.0}[name]
    measured = pd.read_csv(REPO / "datasets" / f"joint_{name}.csv")
    return {"settings": {"name": name, "initial_angle_deg": angle, "measured": measured}}


def test_several_films_as_dicts_and_frames_are_their_files_and_leave_no_file(tmp_path, monkeypatch):
    import tempfile

    grid = dict(
        elements=16, damping=[1500, 2500], drag_coefficient=0.8, backend="cpu", tolerance=1e-7,
        axis=["shallow.release_time_s=0.01,0.015", "steep.release_time_s=0.005,0.0075"],
        no_refine=True, progress=False,
    )
    files = ts.identify(config=["examples/joint_shallow.toml", "examples/joint_steep.toml"], **grid)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    frames = ts.identify(config=[_film("shallow"), _film("steep")], **grid)
    assert frames.results.column("j_e_m2").equals(files.results.column("j_e_m2"))
    assert frames.results.column("shallow.j_e_m2").equals(files.results.column("shallow.j_e_m2"))
    assert list(scratch.iterdir()) == [], "out=None with films in memory leaves no file"
    # Its figures are the result's all the same, named as files would be.
    assert {"surface", "per_elements", "shapes_shallow", "residuals_steep"} <= set(frames.figures), frames.figures
    kept = ts.identify(config=["examples/joint_shallow.toml", "examples/joint_steep.toml"], out=tmp_path / "kept", **grid)
    assert set(kept.figures) == set(frames.figures)
    assert kept.figures["surface"].png == (tmp_path / "kept" / "surface.png").read_bytes()
    redrawn = ts.plot(tmp_path / "kept")
    assert set(redrawn.figures) == set(kept.figures)
    # The objective takes the study, not a whole run's progress or refinement.
    study = {k: v for k, v in grid.items() if k not in ("progress", "no_refine")}
    objective = ts.Objective(config=[_film("shallow"), _film("steep")], **study)
    assert "damping_pa_s" in objective.parameters
    assert list(scratch.iterdir()) == []


def test_the_notebook_runs_and_is_stored_executed():
    import json

    notebook = REPO / "docs" / "notebooks" / "identify.ipynb"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "execute_notebook.py"), str(notebook)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    assert cells and all(c["execution_count"] and c["outputs"] for c in cells), (
        "python3 scripts/execute_notebook.py docs/notebooks/identify.ipynb --write"
    )


def test_the_refined_values_errors_and_intervals_are_attributes_as_refined_parquet_has_them():
    r = ts.identify(**FILMED_KEYWORDS, allow_implausible=True)
    rows = r.refined.to_pylist()
    assert [row["parameter"] for row in rows] == list(r.values) == ["damping_pa_s", "drag_coefficient", "release_time_s"]
    for row in rows:
        name = row["parameter"]
        assert r.values[name] == row["value"] and r.standard_errors[name] == row["standard_error"]
        assert r.robust_standard_errors[name] is not None and r.robust_standard_errors[name] > 0
        for side in ("lower", "upper"):
            end = r.intervals[name][0 if side == "lower" else 1]
            if row[f"profile_{side}_end"] == "crossed":
                assert end == row[f"profile_{side}"], (name, side)
            else:
                assert end is None, (name, side)
    unrefined = ts.identify(**FILMED_KEYWORDS, allow_implausible=True, no_refine=True)
    assert unrefined.values == {} and unrefined.intervals == {}
