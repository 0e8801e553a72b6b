"""Writes the package's type stubs (``__init__.pyi``): ``identify``,
``Objective`` and every command but ``summarize`` and ``plot`` from the
library's description of their keywords (their types, ``Literal`` choices and defaults), the other
commands from the
command line's own flags, so that an editor's completion and a type
checker see every keyword the functions take, and a test holds the stubs
to them:

    python -m tether_sweep._stubs > python/tether_sweep/__init__.pyi
"""

from . import _keywords, flags

HEADER = '''"""Type stubs of tether_sweep, written by `python -m tether_sweep._stubs`
from the library's keywords and the command line's flags: do not edit by
hand."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

__version__: str

Value = Union[str, int, float, Sequence[Union[int, float]], range, np.ndarray]
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
    def refined(self) -> Optional[pa.Table]: ...
    @property
    def best_fit(self) -> Optional[pa.Table]: ...
'''

# The commands as functions: (function, command, a positional folder).
COMMANDS = [
    ("summarize", "summarize", True),
    ("plot", "plot", True),
]


CONFIG_TABLES = ("tether", "settings", "camera")


def keywords(command: str, skip: tuple = ()) -> str:
    lines = []
    tables = CONFIG_TABLES if "config" in flags(command) else ()
    for name, (takes_value, repeated) in flags(command).items():
        if name in skip:
            continue
        if not takes_value:
            kind = "bool"
        elif repeated:
            kind = "Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]"
        elif name == "measured":
            kind = "Union[str, os.PathLike, pa.Table, Any]"
        else:
            kind = "Value"
        lines.append(f"    {name}: Optional[{kind}] = ...,")
    # A config's tables as dicts (over the config given, or alone).
    taken = flags(command)
    lines += [f"    {table}: Optional[Dict[str, Any]] = ...," for table in tables if table not in taken]
    return "\n".join(lines)


def typed_keywords(indent: str, function: str) -> str:
    """The keywords `function` takes (identify's, Objective's or
    simulate's) with their types and defaults."""
    lines = []
    for k in _keywords.taken(function):
        if k.name == "out":
            continue
        default = "None" if k.default is None else repr(k.default)
        lines.append(f"{indent}{k.name}: {k.type} = {default},")
    return "\n".join(lines)


# The commands besides identify whose keywords are the library's: each
# with what it returns, and whether its progress reaches Python.
TYPED = (
    ("simulate", "SimulateResult", False),
    ("linearize", "Result", False),
    ("dataset_synth", "Result", False),
    ("swingup", "Result", True),
    ("design", "Result", False),
)


def stubs() -> str:
    identify = typed_keywords("    ", "identify")
    study = typed_keywords("        ", "Objective")
    commands = ""
    for function, command, positional in COMMANDS:
        out = "    out: Union[str, os.PathLike, None] = ...,\n" if "out" in flags(command) else ""
        body = keywords(command, skip=("out",))
        star = "*" if out or body else ""
        head = ", ".join(p for p in ["dir: Union[str, os.PathLike]" if positional else "", star] if p)
        commands += f"\ndef {function}(\n    {head},\n{out}" + (body + "\n" if body else "") + ") -> Result: ...\n"
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
        + "    def __call__(self, candidates: Any, progress: Progress = True) -> np.ndarray: ...\n"
        + "    def residuals(self, candidate: Any) -> np.ndarray: ...\n"
        + "".join(
            f"\ndef {function}(\n    *,\n    out: Union[str, os.PathLike, None] = None,\n"
            + ("    progress: Progress = True,\n" if progress else "")
            + typed_keywords("    ", function)
            + f"\n) -> {returns}: ...\n"
            for function, returns, progress in TYPED
        )
        + commands
    )


if __name__ == "__main__":
    print(stubs(), end="")
