"""Writes the package's type stubs (``__init__.pyi``): ``identify``,
``Objective`` and every command from the library's description of their
keywords (their types, ``Literal`` choices and defaults), so that an
editor's completion and a type checker see every keyword the functions
take, and a test holds the stubs to them and to the command line's flags:

    python -m tether_sweep._stubs > python/tether_sweep/__init__.pyi
"""

from . import _keywords

HEADER = '''"""Type stubs of tether_sweep, written by `python -m tether_sweep._stubs`
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
'''

def typed_keywords(indent: str, function: str) -> str:
    """The keywords `function` takes with their types and defaults."""
    lines = []
    for k in _keywords.taken(function):
        if k.name == "out":
            continue
        default = "None" if k.default is None else repr(k.default)
        lines.append(f"{indent}{k.name}: {k.type} = {default},")
    return "\n".join(lines)


# The commands besides identify: each with what it returns, whether its
# progress reaches Python, and whether it takes a folder first.
TYPED = (
    ("simulate", "SimulateResult", False, False),
    ("linearize", "Result", False, False),
    ("dataset_synth", "Result", False, False),
    ("swingup", "Result", True, False),
    ("design", "Result", False, False),
    ("summarize", "Result", False, True),
    ("plot", "Result", False, True),
)


def command(function: str, returns: str, progress: bool, folder: bool) -> str:
    """One command's stub: its folder, ``out`` (None: in memory, or
    summarize's default) where it takes one, progress, and keywords."""
    head = "    dir: Union[str, os.PathLike],\n" if folder else ""
    keywords = [k.name for k in _keywords.taken(function)]
    if keywords:
        head += "    *,\n"
    if "out" in keywords:
        head += "    out: Union[str, os.PathLike, None] = None,\n"
    if progress:
        head += "    progress: Progress = True,\n"
    body = typed_keywords("    ", function)
    return f"\ndef {function}(\n{head}" + (body + "\n" if body else "") + f") -> {returns}: ...\n"


def stubs() -> str:
    identify = typed_keywords("    ", "identify")
    study = typed_keywords("        ", "Objective")
    return (
        HEADER
        + "\ndef identify(\n    *,\n    out: Union[str, os.PathLike, None] = None,\n    progress: Progress = True,\n"
        + identify
        + "\n) -> IdentifyResult: ...\n"
        + "\nclass Objective:\n    def __init__(\n        self,\n        *,\n"
        + study
        + "\n    ) -> None: ...\n"
        + "    @property\n    def parameters(self) -> List[str]: ...\n"
        + "    @property\n    def observations(self) -> int: ...\n"
        + "    @property\n    def tolerance_m(self) -> Optional[float]: ...\n"
        + "    @property\n    def implicit_method(self) -> Optional[str]: ...\n"
        + "    def __call__(self, candidates: Any, progress: Progress = True) -> np.ndarray: ...\n"
        + "    def residuals(self, candidate: Any) -> np.ndarray: ...\n"
        + "".join(command(*typed) for typed in TYPED)
    )


if __name__ == "__main__":
    print(stubs(), end="")
