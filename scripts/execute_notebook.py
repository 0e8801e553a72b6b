#!/usr/bin/env python3
"""Executes a notebook's code cells in order, in one namespace, from the
repository root, as a kernel would: each cell's printed text and the value
of its last expression (as text, and as HTML where it has `_repr_html_`)
become its outputs. A cell that raises stops the run with exit 1.

    python3 scripts/execute_notebook.py docs/notebooks/identify.ipynb          # run, check
    python3 scripts/execute_notebook.py docs/notebooks/identify.ipynb --write  # and store the outputs

Written without Jupyter so that the Python tests run the notebook with the
packages they already have (the notebook opens in Jupyter as usual).
"""

import ast
import contextlib
import io
import json
import os
import pathlib
import sys
import traceback


def run_cell(source: str, scope: dict) -> list:
    """The outputs of one code cell run in `scope`."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    printed = io.StringIO()
    value = None
    with contextlib.redirect_stdout(printed):
        exec(compile(tree, "<cell>", "exec"), scope)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope)
    outputs = []
    if printed.getvalue():
        outputs.append({"name": "stdout", "output_type": "stream", "text": printed.getvalue().splitlines(True)})
    if value is not None:
        data = {"text/plain": repr(value).splitlines(True)}
        if hasattr(value, "_repr_html_"):
            html = value._repr_html_()
            if html:
                data["text/html"] = html.splitlines(True)
        outputs.append({"data": data, "execution_count": None, "metadata": {}, "output_type": "execute_result"})
    return outputs


def execute(path: pathlib.Path) -> dict:
    notebook = json.loads(path.read_text())
    scope: dict = {"__name__": "__main__"}
    count = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        count += 1
        source = "".join(cell["source"])
        try:
            outputs = run_cell(source, scope)
        except Exception:
            print(f"{path}: code cell {count} raised:\n{source}\n", file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)
        for output in outputs:
            if output["output_type"] == "execute_result":
                output["execution_count"] = count
        cell["outputs"] = outputs
        cell["execution_count"] = count
    return notebook


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = pathlib.Path(sys.argv[1]).resolve()
    # The notebook names files under the repository's root.
    os.chdir(pathlib.Path(__file__).resolve().parents[1])
    notebook = execute(path)
    if "--write" in sys.argv[2:]:
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path} with its outputs")
    else:
        cells = sum(1 for c in notebook["cells"] if c["cell_type"] == "code")
        print(f"{path}: {cells} code cells ran")


if __name__ == "__main__":
    main()
