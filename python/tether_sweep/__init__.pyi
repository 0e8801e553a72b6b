"""Type stubs of tether_sweep, written by `python -m tether_sweep._stubs`
from the library's keywords and the command line's flags: do not edit by
hand."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

__version__: str

Progress = Union[bool, Callable[[int, int], Any], None]

class ImplausibleFit(RuntimeError):
    result: Optional[IdentifyResult]

def flags(command: str) -> Dict[str, tuple]: ...

class Figure:
    name: str
    png: bytes
    svg: str
    @property
    def size_px(self) -> Tuple[int, int]: ...
    def save(self, path: Union[str, os.PathLike]) -> os.PathLike: ...
    def to_matplotlib(self) -> Any: ...

class Result:
    command: str
    text: str
    tables: Dict[str, pa.Table]
    figures: Dict[str, Figure]
    out: Optional[os.PathLike]
    @property
    def table(self) -> Optional[pa.Table]: ...

class SimulateResult(Result):
    time_s: np.ndarray
    markers_m: Optional[np.ndarray]
    arc_lengths_m: Optional[np.ndarray]
    q: Optional[np.ndarray]
    v: Optional[np.ndarray]
    node_arc_lengths_m: Optional[np.ndarray]

class IdentifyResult(Result):
    summary: Dict[str, Any]
    fit_warning: Optional[str]
    @property
    def results(self) -> pa.Table: ...
    @property
    def values(self) -> Dict[str, float]: ...
    @property
    def standard_errors(self) -> Dict[str, float]: ...
    @property
    def robust_standard_errors(self) -> Dict[str, Optional[float]]: ...
    @property
    def intervals(self) -> Dict[str, Tuple[Optional[float], Optional[float]]]: ...
    @property
    def refined(self) -> Optional[pa.Table]: ...
    @property
    def best_fit(self) -> Optional[pa.Table]: ...

def identify(
    *,
    out: Union[str, os.PathLike, None] = None,
    progress: Progress = True,
    measured: Optional[Union[str, os.PathLike, pa.Table, Any]] = None,
    elements: Union[str, float, Sequence[float], range, np.ndarray] = '10:50:10',
    damping: Union[str, float, Sequence[float], range, np.ndarray] = '0:5000:250',
    drag_coefficient: Union[str, float, Sequence[float], range, np.ndarray] = '0.6:0.9:0.05',
    axis: Optional[Union[str, Sequence[str]]] = None,
    surface: str = 'damping_pa_s,drag_coefficient',
    grid: Optional[Union[str, os.PathLike, Dict[str, Any]]] = None,
    shard: Optional[str] = None,
    resume: bool = False,
    chunk_size: Optional[int] = None,
    solver: Optional[Literal['explicit', 'reference', 'semi-implicit']] = None,
    backend: Literal['auto', 'gpu', 'cpu'] = 'auto',
    precision: Literal['f32', 'f64'] = 'f32',
    adapter: Optional[str] = None,
    gpu_layout: Literal['auto', 'thread', 'workgroup'] = 'auto',
    config: Optional[Union[str, os.PathLike, Dict[str, Any], Sequence[Union[str, os.PathLike, Dict[str, Any]]]]] = None,
    tip_mass: Optional[float] = None,
    length: Optional[float] = None,
    tolerance: Optional[float] = None,
    validate: int = 3,
    validate_marker_tolerance: float = 0.0001,
    validate_j_e_tolerance: float = 0.01,
    no_refine: bool = False,
    exhaustive: bool = False,
    allow_implausible: bool = False,
    csv: bool = False,
    force: bool = False,
    tether: Optional[Dict[str, Any]] = None,
    settings: Optional[Dict[str, Any]] = None,
    camera: Optional[Dict[str, Any]] = None,
) -> IdentifyResult: ...

class Objective:
    def __init__(
        self,
        *,
        measured: Optional[Union[str, os.PathLike, pa.Table, Any]] = None,
        elements: Union[str, float, Sequence[float], range, np.ndarray] = '10:50:10',
        damping: Union[str, float, Sequence[float], range, np.ndarray] = '0:5000:250',
        drag_coefficient: Union[str, float, Sequence[float], range, np.ndarray] = '0.6:0.9:0.05',
        axis: Optional[Union[str, Sequence[str]]] = None,
        grid: Optional[Union[str, os.PathLike, Dict[str, Any]]] = None,
        solver: Optional[Literal['explicit', 'reference', 'semi-implicit']] = None,
        backend: Literal['auto', 'gpu', 'cpu'] = 'auto',
        precision: Literal['f32', 'f64'] = 'f32',
        adapter: Optional[str] = None,
        gpu_layout: Literal['auto', 'thread', 'workgroup'] = 'auto',
        config: Optional[Union[str, os.PathLike, Dict[str, Any], Sequence[Union[str, os.PathLike, Dict[str, Any]]]]] = None,
        tip_mass: Optional[float] = None,
        length: Optional[float] = None,
        tolerance: Optional[float] = None,
        allow_implausible: bool = False,
        tether: Optional[Dict[str, Any]] = None,
        settings: Optional[Dict[str, Any]] = None,
        camera: Optional[Dict[str, Any]] = None,
    ) -> None: ...
    @property
    def parameters(self) -> List[str]: ...
    @property
    def observations(self) -> int: ...
    @property
    def tolerance_m(self) -> Optional[float]: ...
    @property
    def implicit_method(self) -> Optional[str]: ...
    def __call__(self, candidates: Any, progress: Progress = True) -> np.ndarray: ...
    def residuals(self, candidate: Any) -> np.ndarray: ...

def simulate(
    *,
    out: Union[str, os.PathLike, None] = None,
    config: Optional[Union[str, os.PathLike, Dict[str, Any]]] = None,
    scenario: Optional[Literal['drop', 'swingup', 'arm', 'robot']] = None,
    formulation: Optional[Literal['baumgarte', 'modified-lagrange']] = None,
    feedback_gains: Optional[Union[str, Sequence[float], np.ndarray]] = None,
    alpha: Optional[float] = None,
    curvature: Optional[float] = None,
    axis: Optional[Union[str, Sequence[str]]] = None,
    tether: Union[bool, Dict[str, Any]] = False,
    start_offset_m: Optional[float] = None,
    elements: Optional[int] = None,
    damping: Optional[float] = None,
    drag_coefficient: Optional[float] = None,
    tip_mass: Optional[float] = None,
    length: Optional[float] = None,
    no_rotary_inertia: bool = False,
    solver: Optional[Literal['explicit', 'reference', 'semi-implicit']] = None,
    step: Optional[float] = None,
    tolerance: Optional[float] = None,
    duration: Optional[float] = None,
    winch_periods: Optional[Union[str, Sequence[float], np.ndarray]] = None,
    winch_amplitude: Optional[float] = None,
    backend: Literal['auto', 'gpu', 'cpu'] = 'auto',
    precision: Literal['f32', 'f64'] = 'f32',
    adapter: Optional[str] = None,
    gpu_layout: Literal['auto', 'thread', 'workgroup'] = 'auto',
    state: Optional[Union[bool, str, os.PathLike]] = None,
    force: bool = False,
    settings: Optional[Dict[str, Any]] = None,
    camera: Optional[Dict[str, Any]] = None,
) -> SimulateResult: ...

def linearize(
    *,
    out: Union[str, os.PathLike, None] = None,
    elements: Optional[int] = None,
    damping: Optional[float] = None,
    drag_coefficient: Optional[float] = None,
    tip_mass: Optional[float] = None,
    length: Optional[float] = None,
    no_rotary_inertia: bool = False,
    frequency_min: float = 0.05,
    frequency_max: float = 50.0,
    frequency_points: int = 400,
    modes: int = 4,
    force: bool = False,
) -> Result: ...

def dataset_synth(
    *,
    out: Union[str, os.PathLike, None] = None,
    elements: int = 80,
    damping: float = 2000.0,
    drag_coefficient: float = 0.8,
    tip_mass: Optional[float] = None,
    length: Optional[float] = None,
    no_rotary_inertia: bool = False,
    noise: float = 0.0005,
    seed: int = 2010,
    tolerance: float = 1e-10,
    layout: Literal['long', 'wide'] = 'long',
    config: Optional[Union[str, os.PathLike, Dict[str, Any]]] = None,
    force: bool = False,
    tether: Optional[Dict[str, Any]] = None,
    settings: Optional[Dict[str, Any]] = None,
    camera: Optional[Dict[str, Any]] = None,
) -> Result: ...

def swingup(
    *,
    out: Union[str, os.PathLike, None] = None,
    progress: Progress = True,
    elements: int = 40,
    damping: float = 2000.0,
    drag_coefficient: float = 0.8,
    tip_mass: float = 0.021,
    winch_amplitude: float = 0.2,
    waypoints: Optional[Union[str, Sequence[float], np.ndarray]] = None,
    duration: float = 3.0,
    bits_per_gene: int = 5,
    period_min: float = 0.25,
    period_max: float = 1.0,
    population: int = 10,
    generations: int = 30,
    seed: int = 2010,
    tournament_size: int = 2,
    crossover_rate: float = 0.8,
    mutation_rate: Optional[float] = None,
    exhaustive: bool = False,
    solver: Optional[Literal['explicit', 'reference', 'semi-implicit']] = None,
    tolerance: float = 1e-07,
    backend: Literal['auto', 'gpu', 'cpu'] = 'auto',
    precision: Literal['f32', 'f64'] = 'f32',
    adapter: Optional[str] = None,
    gpu_layout: Literal['auto', 'thread', 'workgroup'] = 'auto',
    force: bool = False,
) -> Result: ...

def design(
    *,
    out: Union[str, os.PathLike, None] = None,
    config: Optional[Union[str, os.PathLike, Dict[str, Any], Sequence[Union[str, os.PathLike, Dict[str, Any]]]]] = None,
    elements: Optional[int] = None,
    damping: Optional[float] = None,
    drag_coefficient: Optional[float] = None,
    tip_mass: Optional[float] = None,
    length: Optional[float] = None,
    no_rotary_inertia: bool = False,
    noise: float = 0.0005,
    axis: Optional[Union[str, Sequence[str]]] = None,
    estimate: Optional[Union[str, Sequence[str]]] = None,
    backend: Literal['auto', 'gpu', 'cpu'] = 'auto',
    adapter: Optional[str] = None,
    tolerance: Optional[float] = None,
    force: bool = False,
    tether: Optional[Dict[str, Any]] = None,
    settings: Optional[Dict[str, Any]] = None,
    camera: Optional[Dict[str, Any]] = None,
) -> Result: ...

def summarize(
    dir: Union[str, os.PathLike],
    *,
    out: Union[str, os.PathLike, None] = None,
    measured: Optional[Union[str, os.PathLike]] = None,
    no_refine: bool = False,
    allow_implausible: bool = False,
    force: bool = False,
) -> Result: ...

def plot(
    dir: Union[str, os.PathLike],
) -> Result: ...
