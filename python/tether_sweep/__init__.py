"""tether-sweep from Python: the command line's jobs as functions.

Each function takes its command's flags as keywords, named as the flags
are with dashes as underscores (``drag_coefficient="0.6:0.9:0.05"``,
``axis=["release_time_s=0:0.03:0.005"]``).

Every function but ``summarize`` and ``plot`` (and ``Objective``) hands
its keywords to the library as Python values: each keyword's type,
default, unit and help come from the library's description of its inputs
(``help(ts.identify)``), an axis is text or numbers, a film a file or a
DataFrame (passed in memory), a config a file or a dict (a list of them
for several films), and an error names the keyword. ``summarize`` and
``plot`` take a folder and a few of the command line's flags, parsed by
its own parser: a value is its text or a Python value; a flag without a
value takes ``True``.

    >>> import tether_sweep as ts
    >>> r = ts.identify(elements=10, damping="1000:3000:500", drag_coefficient=0.8)
    >>> r.summary["refined"]

Errors are exceptions: ``ValueError`` for input the library refuses (its
message, naming the keyword or the config key and the allowed range),
``TypeError`` for a keyword of the wrong type or one the function does not
take, ``ImplausibleFit`` for a fit the data's own noise cannot explain
(unless ``allow_implausible=True``), ``KeyboardInterrupt`` for Ctrl-C (the
chunks that finished are kept: ``resume=True`` completes the run), and
``RuntimeError`` for anything else.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import _keywords, _native
from ._native import ImplausibleFit

__all__ = [
    "identify",
    "design",
    "simulate",
    "swingup",
    "linearize",
    "summarize",
    "plot",
    "dataset_synth",
    "Objective",
    "IdentifyResult",
    "SimulateResult",
    "Result",
    "Figure",
    "ImplausibleFit",
    "flags",
]
__version__ = _native.VERSION


def _quiet_mesa_runtime_dir() -> None:
    """Mesa's drivers (lavapipe among them) print `XDG_RUNTIME_DIR is
    invalid or not set` on every device open without it, though compute
    needs none: as the command line does, point it at a private folder of
    this user's when it is unset or no folder."""
    import os

    if os.path.isdir(os.environ.get("XDG_RUNTIME_DIR", "")):
        return
    user = os.environ.get("USER", "user")
    folder = pathlib.Path(tempfile.gettempdir()) / f"tether-sweep-runtime-{user}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return
    os.environ["XDG_RUNTIME_DIR"] = str(folder)


_quiet_mesa_runtime_dir()

Progress = Union[bool, Callable[[int, int], Any], None]


def flags(command: str) -> Dict[str, tuple]:
    """The keywords `command` takes: each flag's keyword, and whether it
    takes a value and may be given more than once."""
    return {
        long.replace("-", "_"): (takes_value, repeated)
        for long, takes_value, repeated in _native.flags(command)
    }


def _progress_callback(progress: Progress, what: str, delay_s: float = 0.0) -> Optional[Callable[[int, int], Any]]:
    """A callable that receives (done, total): the caller's, a tqdm bar when
    tqdm is installed and `progress` is True (shown once `delay_s` has
    passed), or none."""
    if callable(progress):
        return progress
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = tqdm(total=0, unit=f" {what}", dynamic_ncols=True, delay=delay_s)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update


class Figure:
    """One figure a command drew, held in memory whether or not ``out``
    kept its files: ``png`` (bytes) and ``svg`` (text), shown inline by a
    notebook. ``save(path)`` writes it (``.png`` or ``.svg``);
    ``to_matplotlib()`` returns a matplotlib figure showing it."""

    def __init__(self, name: str, png: bytes, svg: str):
        self.name = name
        self.png = bytes(png)
        self.svg = svg

    @property
    def size_px(self) -> Tuple[int, int]:
        """Width and height of the PNG (its header's)."""
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")

    def _repr_png_(self) -> bytes:
        return self.png

    def save(self, path: Union[str, pathlib.Path]) -> pathlib.Path:
        """Writes the figure to ``path``: PNG or SVG by its extension."""
        path = pathlib.Path(path)
        suffix = path.suffix.lower()
        if suffix == ".png":
            path.write_bytes(self.png)
        elif suffix == ".svg":
            path.write_text(self.svg, encoding="utf-8")
        else:
            raise ValueError(f"save: {str(path)!r} must end in .png or .svg")
        return path

    def to_matplotlib(self) -> Any:
        """A ``matplotlib.figure.Figure`` showing the drawn image at its own
        size (100 dpi), to place in a notebook or save as matplotlib does.
        Needs matplotlib."""
        import io

        import matplotlib.image
        import matplotlib.pyplot as plt

        width, height = self.size_px
        figure = plt.figure(figsize=(width / 100, height / 100), dpi=100)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        axes.imshow(matplotlib.image.imread(io.BytesIO(self.png), format="png"))
        axes.set_axis_off()
        return figure

    def __repr__(self) -> str:
        width, height = self.size_px
        return f"Figure({self.name!r}, {width}×{height} px)"


def _figures(outcome: Any) -> Dict[str, Figure]:
    """The figures a command drew, by name (a file's stem below ``out``)."""
    return {name: Figure(name, png, svg) for name, png, svg in outcome.figures}


class Result:
    """A command's results: the tables it wrote (``pyarrow.Table``s with
    the Parquet files' columns and field metadata, by file stem), the
    figures it drew (``Figure``s by name, kept in memory also with
    ``out=None``), and what the terminal shows."""

    def __init__(
        self,
        command: str,
        text: str,
        tables: Dict[str, pa.Table],
        out: Optional[pathlib.Path],
        figures: Optional[Dict[str, Figure]] = None,
    ):
        self.command = command
        self.text = text
        self.tables = tables
        self.out = out
        self.figures: Dict[str, Figure] = figures or {}

    @property
    def table(self) -> Optional[pa.Table]:
        """The command's main table: its only one, or the first by name."""
        return next(iter(self.tables.values()), None)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name} ({t.num_rows} rows)" for name, t in self.tables.items())
        drawn = f"; figures {', '.join(self.figures)}" if self.figures else ""
        first = self.text.strip().splitlines()[:3]
        return "\n".join([f"{self.command} result: {shown or 'no tables'}{drawn}"] + [f"  {line}" for line in first])

    def _repr_html_(self) -> str:
        import html

        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{t.num_rows}</td><td>{html.escape(', '.join(t.column_names[:8]))}</td></tr>"
            for name, t in self.tables.items()
        )
        return (
            f"<table><caption>tether-sweep {html.escape(self.command)}</caption>"
            f"<tr><th>table</th><th>rows</th><th>columns</th></tr>{rows}</table>"
            f"<pre>{html.escape(self.text)}</pre>"
        )


def _tables(outcome: Any) -> Dict[str, pa.Table]:
    """The tables a command wrote (or, with ``out=None``, would have
    written), by name: each a ``pyarrow.Table`` over the engine's own
    buffers (the Arrow C data interface: no copy), with the file's columns,
    field metadata (units) and key-value metadata (provenance)."""
    return {name: table for name, table in outcome.tables}


class IdentifyResult(Result):
    """An identification's results: a command's (its tables, its text),
    with its summary as a dict, its named tables, and the refined values,
    standard errors and profile intervals by parameter name."""

    def __init__(self, outcome: Any, out: Optional[pathlib.Path]):
        super().__init__("identify", outcome.text, _tables(outcome), out, _figures(outcome))
        self.summary: Dict[str, Any] = json.loads(outcome.summary_json)
        self.fit_warning: Optional[str] = outcome.fit_warning

    @property
    def results(self) -> pa.Table:
        """Every candidate's J_e (results.parquet)."""
        return self.tables["results"]

    def _refined_parameters(self) -> List[Dict[str, Any]]:
        return (self.summary.get("refined") or {}).get("parameters", [])

    @staticmethod
    def _name(parameter: Dict[str, Any]) -> str:
        film = parameter.get("film")
        return f"{film}.{parameter['parameter']}" if film else parameter["parameter"]

    @property
    def values(self) -> Dict[str, float]:
        """The refined values by name (``damping_pa_s``, a film's own as
        ``FILM.NAME``); empty when nothing was refined."""
        return {self._name(p): p["value"] for p in self._refined_parameters()}

    @property
    def standard_errors(self) -> Dict[str, float]:
        """The refined values' Gauss–Newton standard errors, by name."""
        return {self._name(p): p["standard_error"] for p in self._refined_parameters()}

    @property
    def robust_standard_errors(self) -> Dict[str, Optional[float]]:
        """The standard errors robust to residuals correlated in time
        (Newey–West over frames; the ones to quote when the residuals are
        not white), by name; None where JᵀJ is singular."""
        return {self._name(p): p.get("robust_standard_error") for p in self._refined_parameters()}

    @property
    def intervals(self) -> Dict[str, Tuple[Optional[float], Optional[float]]]:
        """The profile-likelihood intervals (at the summary's
        ``confidence_level``), by name: (lower, upper), an end None where
        the profile did not cross the threshold (it reached the range
        searched, or was not resolved: the data allow values beyond)."""

        def end(profile: Dict[str, Any], side: str) -> Optional[float]:
            e = profile.get(side) or {}
            return e.get("value") if e.get("end") == "crossed" else None

        return {
            self._name(p): (end(p["profile"], "lower"), end(p["profile"], "upper"))
            for p in self._refined_parameters()
            if p.get("profile")
        }

    @property
    def refined(self) -> Optional[pa.Table]:
        """The refined optimum with its standard errors (refined.parquet)."""
        return self.tables.get("refined")

    @property
    def best_fit(self) -> Optional[pa.Table]:
        """The best candidate's track against the film (best_fit.parquet;
        several films: the first film's, see ``tables``)."""
        fits = [name for name in self.tables if name.startswith("best_fit")]
        return self.tables[fits[0]] if fits else None

    def _rows(self) -> List[tuple]:
        best = (self.summary.get("best") or {}).get("candidate", {})
        rows = [("best " + k, v) for k, v in best.items() if not isinstance(v, dict)]
        refined = self.summary.get("refined") or {}
        for p in refined.get("parameters", []):
            rows.append((f"refined {p.get('parameter')}", f"{p.get('value')} ± {p.get('standard_error')}"))
        rows.append(("engine", self.summary.get("engine")))
        rows.append(("tolerance_m", self.summary.get("tolerance_m")))
        rows.append(("implicit_method", self.summary.get("implicit_method")))
        return rows

    def __repr__(self) -> str:
        lines = [f"IdentifyResult: {self.summary.get('candidates')} candidates, tables {sorted(self.tables)}"]
        lines += [f"  {k}: {v}" for k, v in self._rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in self._rows()
        )
        return f"<table><caption>tether-sweep identify</caption>{cells}</table>"


def identify(*, out: Union[str, pathlib.Path, None] = None, progress: Progress = True, **keywords: Any) -> IdentifyResult:
    """Identifies D and C_D (and the best n, and any axis) from a film, as
    ``tether-sweep identify`` does with the same inputs. ``out=None`` keeps
    the results in memory (nothing is left on disk); a path writes what the
    command line writes there. ``measured`` is a file's path, or its table
    (pandas, polars or pyarrow, with the file's columns), handed over in
    memory; ``config`` a config file or a dict of its tables, or a list of
    them for several films of one tether (a dict's film as
    ``settings={"measured": ...}``). ``progress``: a tqdm bar when tqdm is
    installed (True), a callable receiving (done, total), or False.

    """
    _keywords.check("identify", keywords)
    # out=None: a scratch folder for the run's lock, nothing written (the
    # tables kept in memory), removed after.
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tether-sweep-"))
    try:
        target = scratch / "out" if out is None else pathlib.Path(out)
        try:
            outcome = _native.identify(
                _keywords.native(keywords), str(target), _progress_callback(progress, "candidates"), out is None
            )
        except ImplausibleFit as e:
            raise _implausible(e, out, scratch) from None
        except KeyboardInterrupt as e:
            raise _interrupted(e, out, scratch) from None
        return IdentifyResult(outcome, None if out is None else pathlib.Path(out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


identify.__signature__ = _keywords.signature("identify", out=True, progress=True)  # type: ignore[attr-defined]
identify.__doc__ = (identify.__doc__ or "") + _keywords.docs("identify")


def _implausible(e: ImplausibleFit, out: Any, scratch: pathlib.Path) -> ImplausibleFit:
    """The command line's implausible fit in Python's words: the result on
    the exception (``.result``), ``allow_implausible=True`` named, and no
    temporary folder named where ``out=None`` wrote nothing."""
    message = str(e).replace("allow_implausible=True accepts them", "allow_implausible=True returns it instead")
    if out is None:
        message = message.replace(
            f"The results are written to {scratch / 'out'} and marked so",
            "The result is this exception's .result, its tables marked so",
        )
    raised = ImplausibleFit(message)
    outcome = getattr(e, "outcome", None)
    raised.result = None if outcome is None else IdentifyResult(outcome, None if out is None else pathlib.Path(out))
    return raised


def _interrupted(e: KeyboardInterrupt, out: Any, scratch: pathlib.Path) -> KeyboardInterrupt:
    """Ctrl-C in Python's words: what was kept, and how to finish it."""
    message = str(e)
    if not message:
        return e
    again = "run the same command with resume=True to finish"
    if out is None:
        chunks = scratch / "out" / ".chunks"
        message = message.replace(f"finished and saved in {chunks}; {again}", "finished, but with out=None nothing is kept")
        message = message.replace(f"the sweep is saved in {chunks}; {again}", "with out=None nothing is kept")
        message += " (give out=DIR to keep the finished chunks, and resume=True to finish from them)"
    else:
        message = message.replace(again, "call identify again with resume=True to finish")
    return KeyboardInterrupt(message)


class Objective:
    """J_e (m²) of any candidates against a study, run as one batch on the
    engine an identification of the same study would choose: for
    optimizers, samplers and least-squares fitters. Built from
    ``identify``'s keywords (the film, its config, camera and experiment,
    the tether, ``backend`` and ``tolerance``); the grid's axes name the
    candidates' parameters (``parameters``). With ``tolerance`` it runs
    generalized-alpha at it, as ``identify`` with the same ``tolerance``;
    without, the method and tolerance ``identify``'s rule chooses from the
    film's own noise (its refinement's accuracy; ``implicit_method`` and
    ``tolerance_m`` say which)."""

    def __init__(self, **keywords: Any):
        _keywords.check("Objective", keywords)
        # The film is read while the objective is built.
        self._objective = _native.Objective(_keywords.native(keywords))

    __init__.__signature__ = _keywords.signature("Objective", out=False, progress=False)  # type: ignore[attr-defined]
    __init__.__doc__ = "Builds the objective of a study given as identify's keywords (those of the study: not a whole run's outputs or passes).\n\n" + _keywords.docs("Objective")

    @property
    def parameters(self) -> List[str]:
        """The candidates' parameters, in the order a row takes them."""
        return list(self._objective.parameters)

    @property
    def observations(self) -> int:
        """Compared coordinates: the residual vector's length."""
        return self._objective.observations

    @property
    def tolerance_m(self) -> Optional[float]:
        return self._objective.tolerance_m

    @property
    def implicit_method(self) -> Optional[str]:
        """The reference solver's method at ``tolerance_m``: "radau5" or
        "generalized-alpha" (None: a fixed-step scheme)."""
        return self._objective.implicit_method

    def _rows(self, candidates: Any) -> List[List[float]]:
        names = self.parameters
        if hasattr(candidates, "to_dict") and hasattr(candidates, "columns"):
            candidates = {name: np.asarray(candidates[name]) for name in names}
        if isinstance(candidates, dict):
            missing = [n for n in names if n not in candidates]
            if missing:
                raise ValueError(f"candidates lack {missing}; the parameters are {names}")
            columns = [np.atleast_1d(np.asarray(candidates[n], dtype=float)) for n in names]
            lengths = {len(c) for c in columns}
            if len(lengths) != 1:
                raise ValueError(f"the parameters' columns differ in length: {sorted(lengths)}")
            return np.column_stack(columns).tolist()
        array = np.atleast_2d(np.asarray(candidates, dtype=float))
        if array.ndim != 2 or array.shape[1] != len(names):
            raise ValueError(
                f"candidates as a 2-D array need one column per parameter ({len(names)}: {names}); got shape {array.shape}"
            )
        return array.tolist()

    def __call__(self, candidates: Any, progress: Progress = True) -> np.ndarray:
        """J_e (m²) of each candidate (NaN where its simulation diverged):
        a dict of arrays by parameter name, a pandas or polars DataFrame
        with those columns, or a 2-D array with one column per parameter.
        ``progress``: a tqdm bar when tqdm is installed, shown once a batch
        has taken 3 s (True), a callable receiving (done, total), or
        nothing (False)."""
        callback = _progress_callback(progress, "candidates", delay_s=3.0)
        return np.asarray(self._objective.j_e_m2(self._rows(candidates), callback), dtype=float)

    def residuals(self, candidate: Any) -> np.ndarray:
        """Measured minus simulated coordinates (m) of one candidate, whose
        sum of squares is its J_e: for least-squares fitters."""
        row = self._rows(np.atleast_2d(np.asarray(candidate, dtype=float)) if not isinstance(candidate, dict) else candidate)
        if len(row) != 1:
            raise ValueError("residuals takes one candidate")
        return np.asarray(self._objective.residuals_m(row[0]), dtype=float)

    def __repr__(self) -> str:
        return f"Objective(parameters={self.parameters}, observations={self.observations})"


# Where each command writes when `out=None`: a file's name, or a folder.
_OUT_FILES = {"simulate": "track.parquet", "dataset_synth": "measured.parquet"}


# Keywords that name a second output file, which `True` places beside
# `out` (with out=None: in memory), and the suffix of its name there.
_BESIDE = {"state": "_state"}


def _beside(keywords: Dict[str, Any], target: pathlib.Path) -> Dict[str, Any]:
    """`keywords` with each second output given as True named beside the
    command's `out` file (`track.parquet` → `track_state.parquet`)."""
    keywords = dict(keywords)
    for key, suffix in _BESIDE.items():
        if keywords.get(key) is False:
            del keywords[key]
        if keywords.get(key) is True:
            keywords[key] = str(target.with_name(target.stem + suffix + target.suffix))
    return keywords


def _unscratched(message: str, scratch: pathlib.Path, instead: str) -> str:
    """`message` with each path under the scratch folder replaced by
    `instead`: a user never sees a temporary folder that is gone."""
    import re

    return re.sub(re.escape(str(scratch)) + r"[^\s)]*", instead, message)


def design(*, out: Any = None, **keywords: Any) -> Result:
    """Plans a film: the standard errors identify would report at each
    design point (``tether-sweep design``); ``result.table`` is
    design.parquet. ``config`` is a config file or a dict of its tables
    (a film already taken: its ``settings={"measured": ...}``, a file or a
    table), or a list of them for several films of one tether. ``out`` is
    a folder; None keeps the table and figure in memory.

    """
    return _typed("design", out, _keywords.native(keywords))


design.__signature__ = _keywords.signature("design", out=True, progress=False)  # type: ignore[attr-defined]
design.__doc__ = (design.__doc__ or "") + _keywords.docs("design")


class SimulateResult(Result):
    """One simulation's results (a command's: its table, its text), with
    its marker tracks as NumPy arrays: ``time_s`` (frames,) and
    ``markers_m`` (frames, markers, 2: x and y in metres), the tether's
    (a body's run: the tether it carries, None without one), and
    ``arc_lengths_m`` (markers,) where the table has them. With
    ``state=True`` (or a file), the nodal state at every frame too:
    ``q`` and ``v`` (frames, 4 × nodes: each node's x, y [m], slopes
    ∂x/∂s, ∂y/∂s, in the model's order; ``v`` their rates per second) and
    ``node_arc_lengths_m`` (nodes,); else None."""

    def __init__(self, base: Result):
        super().__init__(base.command, base.text, base.tables, base.out, base.figures)
        self.time_s, self.markers_m, self.arc_lengths_m = _marker_arrays(self.table)
        self.q: Optional[np.ndarray] = None
        self.v: Optional[np.ndarray] = None
        self.node_arc_lengths_m: Optional[np.ndarray] = None
        state = next((t for t in self.tables.values() if "slope_x" in t.column_names), None)
        if state is not None:
            nodes = int(pc.max(state.column("node")).as_py()) + 1
            column = lambda name: state.column(name).to_numpy().reshape(-1, nodes)  # noqa: E731
            self.q = np.stack([column(c) for c in ("x", "y", "slope_x", "slope_y")], axis=-1).reshape(-1, 4 * nodes)
            self.v = np.stack([column(c) for c in ("vx", "vy", "slope_rate_x", "slope_rate_y")], axis=-1).reshape(-1, 4 * nodes)
            self.node_arc_lengths_m = column("s")[0].copy()


def _marker_arrays(table: Optional[pa.Table]) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """A track table's times and markers as arrays: the tether's long table
    (t, marker, s, x, y; every marker at every frame, in order) or a body's
    wide one (t_s, tether_markerK_x_m, tether_markerK_y_m)."""
    if table is None:
        return np.empty(0), None, None
    names = table.column_names
    if "marker" in names:
        marker = table.column("marker").to_numpy()
        count = int(marker.max()) + 1 if len(marker) else 0
        frames = len(marker) // count if count else 0
        if count == 0 or frames * count != len(marker) or not np.array_equal(
            marker.reshape(frames, count), np.broadcast_to(np.arange(count), (frames, count))
        ):
            raise RuntimeError("the track's rows are not every marker at every frame in order")
        xy = np.stack([table.column("x").to_numpy(), table.column("y").to_numpy()], axis=-1)
        time_s = table.column("t").to_numpy()[::count]
        return time_s, xy.reshape(frames, count, 2), table.column("s").to_numpy()[:count]
    time_s = table.column("t_s").to_numpy()
    count = sum(1 for n in names if n.startswith("tether_marker") and n.endswith("_x_m"))
    if count == 0:
        return time_s, None, None
    xy = [
        np.stack([table.column(f"tether_marker{k}_x_m").to_numpy(), table.column(f"tether_marker{k}_y_m").to_numpy()], axis=-1)
        for k in range(count)
    ]
    return time_s, np.stack(xy, axis=1), None


def simulate(*, out: Any = None, **keywords: Any) -> SimulateResult:
    """One simulation's marker track (``tether-sweep simulate``);
    ``result.table`` is the track, ``result.markers_m`` and
    ``result.time_s`` the same as arrays. ``out`` is a file (.parquet or
    .csv); None keeps the tables in memory and writes nothing.
    ``config`` is a config file or a dict of its tables (``tether=``,
    ``settings=``, ``camera=`` dicts go over it, or stand alone).
    ``state=True`` keeps the nodal state at every frame too
    (``result.q``, ``result.v``; with ``out``, written beside it as
    ``NAME_state``), or ``state=FILE`` writes it there; the CPU runs it.

    """
    return SimulateResult(_typed("simulate", out, keywords))


simulate.__signature__ = _keywords.signature("simulate", out=True, progress=False)  # type: ignore[attr-defined]
simulate.__doc__ = (simulate.__doc__ or "") + _keywords.docs("simulate")


def swingup(*, out: Any = None, progress: Progress = True, **keywords: Any) -> Result:
    """The swing-up GA (``tether-sweep swingup``); its tables by name.
    ``out`` is a folder; None keeps the tables and figures in memory.
    ``progress`` (an exhaustive landscape's): as ``identify``'s.

    """
    return _typed("swingup", out, keywords, progress=_progress_callback(progress, "chromosomes"))


swingup.__signature__ = _keywords.signature("swingup", out=True, progress=True)  # type: ignore[attr-defined]
swingup.__doc__ = (swingup.__doc__ or "") + _keywords.docs("swingup")


def _typed(
    function: str, out: Any, keywords: Dict[str, Any], command: Optional[str] = None, progress: Optional[Callable[[int, int], Any]] = None
) -> Result:
    """`function` run in the library with its typed keywords (each
    checked by name first); ``out=None`` keeps its tables and figures in
    memory and writes nothing. `command`: the call, recorded in what it
    writes (dataset_synth's provenance); `progress`: what receives
    (done, total) (swingup's)."""
    _keywords.check(function, keywords)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tether-sweep-"))
    try:
        target = pathlib.Path(out) if out is not None else scratch / _OUT_FILES.get(function, "out")
        native = getattr(_native, function)
        try:
            if command is not None:
                outcome = native(keywords, str(target), command, out is None)
            elif function == "swingup":
                outcome = native(keywords, str(target), progress, out is None)
            else:
                outcome = native(_beside(keywords, target), str(target), out is None)
        except (ValueError, RuntimeError) as e:
            # Nothing was kept in the scratch folder: name no temporary path.
            raise type(e)(_unscratched(str(e), scratch, "in memory (out=None keeps no file)")) from None
        text = _unscratched(outcome.text, scratch, "the result's tables (out=None: in memory)")
        return Result(function.replace("_", " "), text, _tables(outcome), None if out is None else pathlib.Path(out), _figures(outcome))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def linearize(*, out: Any = None, **keywords: Any) -> Result:
    """The linearized model about the hanging equilibrium (``tether-sweep
    linearize``): modes, state space and frequency response tables, and
    the Bode and mode-shape figures. ``out`` is a folder; None keeps them
    in memory.

    """
    return _typed("linearize", out, keywords)


linearize.__signature__ = _keywords.signature("linearize", out=True, progress=False)  # type: ignore[attr-defined]
linearize.__doc__ = (linearize.__doc__ or "") + _keywords.docs("linearize")


def summarize(dir: Union[str, pathlib.Path], *, out: Any = None, **keywords: Any) -> Result:
    """Merges a sharded identification's parts in ``dir`` (``tether-sweep
    summarize DIR``); ``out=None`` writes the merged tables beside the
    parts, as the command line does, and returns them.

    """
    _keywords.check("summarize", keywords)
    outcome = _native.summarize(str(dir), dict(keywords, out=None if out is None else str(out)))
    return Result("summarize", outcome.text, _tables(outcome), None if out is None else pathlib.Path(out), _figures(outcome))


summarize.__signature__ = _keywords.signature("summarize", out=True, progress=False, folder=True)  # type: ignore[attr-defined]
summarize.__doc__ = (summarize.__doc__ or "") + _keywords.docs("summarize")


def plot(dir: Union[str, pathlib.Path]) -> Result:
    """Redraws an identification's figures from its tables in ``dir``
    (``tether-sweep plot DIR``)."""
    outcome = _native.plot(str(dir))
    return Result("plot", outcome.text, {}, pathlib.Path(dir), _figures(outcome))


def dataset_synth(*, out: Any = None, **keywords: Any) -> Result:
    """A synthetic measured drop with known truth (``tether-sweep dataset
    synth``); ``result.table`` is the track as a tracker would export it.
    ``out`` is a file (.parquet or .csv); None keeps it in memory. The
    call is recorded in the file's metadata, as the command line's words
    are.

    """
    call = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
    return _typed("dataset_synth", out, keywords, command=f"tether_sweep.dataset_synth({call})")


dataset_synth.__signature__ = _keywords.signature("dataset_synth", out=True, progress=False)  # type: ignore[attr-defined]
dataset_synth.__doc__ = (dataset_synth.__doc__ or "") + _keywords.docs("dataset_synth")
