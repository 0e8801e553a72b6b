"""The keywords of every command and ``Objective`` as the library
describes them (``_native.keywords(command)``: each name, kind,
default, unit, line of help and choices): their types, the functions'
signatures and docs, and the stubs' lines are all written from that one
description, so that none can drift from what the library takes."""

from __future__ import annotations

import difflib
import inspect
import os
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _native

# The type of each kind, as the stubs write it.
_TYPES = {
    "switch": "bool",
    "count": "int",
    "number": "float",
    "text": "str",
    "path": "Union[str, os.PathLike]",
    "second_output": "Union[bool, str, os.PathLike]",
    "numbers": "Union[str, Sequence[float], np.ndarray]",
    "config": "Union[str, os.PathLike, Dict[str, Any]]",
    "switch_or_table": "Union[bool, Dict[str, Any]]",
    "axis": "Union[str, float, Sequence[float], range, np.ndarray]",
    "axes": "Union[str, Sequence[str]]",
    "names": "Union[str, Sequence[str]]",
    "film": "Union[str, os.PathLike, pa.Table, Any]",
    "configs": "Union[str, os.PathLike, Dict[str, Any], Sequence[Union[str, os.PathLike, Dict[str, Any]]]]",
    "grid": "Union[str, os.PathLike, Dict[str, Any]]",
    "table": "Dict[str, Any]",
}

Progress = Union[bool, Callable[[int, int], Any], None]


class Keyword:
    """One keyword: its name, kind, default (the library's), unit, help,
    choices, and whether only a whole identification takes it (its
    outputs and passes; ``Objective`` does not)."""

    def __init__(
        self, name: str, kind: str, default: Optional[str], unit: Optional[str], help: str, choices: List[str], whole_run_only: bool
    ):
        self.name, self.kind, self.unit, self.help, self.choices = name, kind, unit, help, list(choices)
        self.whole_run_only = whole_run_only
        self.default = _python_default(kind, default)

    @property
    def type(self) -> str:
        """Its type as the stubs write it (Optional where it has no
        default)."""
        if self.kind == "choice":
            base = "Literal[" + ", ".join(repr(c) for c in self.choices) + "]"
        else:
            base = _TYPES[self.kind]
        return base if self.default is not None else f"Optional[{base}]"

    @property
    def annotation(self) -> Any:
        """Its type as a typing object, for ``inspect.signature``."""
        names = dict(Union=Union, Optional=Optional, Sequence=Sequence, Dict=Dict, Any=Any, Literal=Literal, os=os, np=np, pa=pa)
        return eval(self.type, names)  # the text above: no user input

    def doc(self) -> str:
        unit = f" [{self.unit}]" if self.unit else ""
        default = "" if self.default in (None, False) else f", default {self.default!r}"
        return f"{self.name} : {self.type}{default}\n    {self.help}{unit}."


def _python_default(kind: str, text: Optional[str]) -> Any:
    if kind in ("switch", "switch_or_table"):
        return False
    if text is None:
        return None
    if kind == "count":
        return int(text)
    if kind == "number":
        return float(text)
    return text


# Each command's keywords; `Objective` takes identify's study.
KEYWORDS: Dict[str, List[Keyword]] = {
    command: [Keyword(*k) for k in _native.keywords(command)] for command in ("identify", "simulate", "linearize", "dataset_synth", "swingup", "design", "summarize", "plot")
}


def taken(function: str) -> List[Keyword]:
    """The keywords ``function`` takes: a command every one of its own,
    ``Objective`` identify's of the study (not a whole run's)."""
    if function == "Objective":
        return [k for k in KEYWORDS["identify"] if not k.whole_run_only]
    return KEYWORDS[function]


def signature(function: str, *, out: bool, progress: bool, folder: bool = False) -> inspect.Signature:
    """The signature of `function`, taking its keywords (keyword-only),
    after its folder ``dir``, ``out`` and ``progress`` where it takes them
    (``Objective``: its constructor, which takes the study's only)."""
    kw = inspect.Parameter.KEYWORD_ONLY
    params = []
    if folder:
        params.append(inspect.Parameter("dir", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Union[str, os.PathLike]))
    if function == "Objective":
        params.append(inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD))
    if out:
        params.append(inspect.Parameter("out", kw, default=None, annotation=Optional[Union[str, os.PathLike]]))
    if progress:
        params.append(inspect.Parameter("progress", kw, default=True, annotation=Progress))
    for k in taken(function):
        if k.name == "out":
            continue
        params.append(inspect.Parameter(k.name, kw, default=k.default, annotation=k.annotation))
    return inspect.Signature(params)


def docs(function: str) -> str:
    """The keywords' docs, numpydoc's "Parameters" layout."""
    lines = [k.doc() for k in taken(function) if k.name != "out"]
    return "Parameters\n----------\n" + "\n".join(lines)


def check(function: str, keywords: Dict[str, Any]) -> None:
    """A TypeError for a keyword the function does not take: a whole
    run's, for the objective, said so; else with the nearest it does."""
    known = [k.name for k in taken(function)]
    whole_run = {k.name for k in KEYWORDS["identify"]}
    for key in keywords:
        if function == "Objective" and key in whole_run and key not in known:
            raise TypeError(
                f"Objective() takes no '{key}': it scores the candidates it is given; '{key}' is a whole identification's (ts.identify)"
            )
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise TypeError(f"{function}() got an unexpected keyword '{key}'{hint} (its keywords: help(tether_sweep.{function}))")


def arrow_table(value: Any) -> Optional[pa.Table]:
    """A pyarrow Table, a pandas or polars DataFrame (or anything with the
    Arrow stream interface) as a pyarrow Table; None for anything else."""
    if isinstance(value, pa.Table):
        return value
    if isinstance(value, pa.RecordBatch):
        return pa.Table.from_batches([value])
    if hasattr(value, "to_arrow"):  # polars
        return value.to_arrow()
    if hasattr(value, "__arrow_c_stream__"):
        return pa.table(value)
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # pandas
        return pa.Table.from_pandas(value, preserve_index=False)
    return None


def _film(value: Any) -> Any:
    table = arrow_table(value)
    return value if table is None else table


def _config(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    settings = value.get("settings")
    if isinstance(settings, dict) and "measured" in settings:
        settings = dict(settings, measured=_film(settings["measured"]))
        return dict(value, settings=settings)
    return value


def native(keywords: Dict[str, Any]) -> Dict[str, Any]:
    """The keywords as the native module takes them: a film given as a
    pandas or polars frame as a pyarrow Table (in memory, no file), in a
    config's ``settings`` too."""
    keywords = dict(keywords)
    if "measured" in keywords:
        keywords["measured"] = _film(keywords["measured"])
    configs = keywords.get("config")
    if isinstance(configs, dict):
        keywords["config"] = _config(configs)
    elif isinstance(configs, (list, tuple)):
        keywords["config"] = [_config(c) for c in configs]
    return keywords
