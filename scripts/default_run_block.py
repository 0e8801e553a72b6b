#!/usr/bin/env python3
"""Regenerates the default run's console block in docs/identify.md (whole)
and README.md (abbreviated) from the current binary.

Run from the repository root after a change that alters what the default
identification prints:

    python3 scripts/default_run_block.py

It builds the release binary, runs `tether-sweep identify --force` on the
shipped data (about a minute on 2 cores), drops the progress lines, and
writes the output between "$ tether-sweep identify" and the closing fence
of each file's block. README.md keeps the lines up to the best candidate
and from the confidence region on, with "…" between;
tests/new_user.rs checks that the two blocks agree.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPENING = "```console\n$ tether-sweep identify\n"


def run_default() -> list[str]:
    subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    result = subprocess.run(
        [str(ROOT / "target/release/tether-sweep"), "identify", "--force"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"the default run failed ({result.returncode}):\n{result.stderr}")
    # The engine's reason comes first on stderr; progress lines are left out.
    lines = [l for l in result.stderr.splitlines() if l.startswith("backend ")]
    lines += result.stdout.splitlines()
    return [l for l in lines if not l.startswith("progress:")]


def abbreviated(lines: list[str]) -> list[str]:
    best = next(i for i, l in enumerate(lines) if l.startswith("best: "))
    region = next(i for i, l in enumerate(lines) if l.startswith("≈95 %"))
    return lines[: best + 1] + ["…"] + lines[region:]


def replace_block(path: pathlib.Path, lines: list[str]) -> None:
    text = path.read_text()
    start = text.index(OPENING) + len(OPENING)
    end = text.index("```", start)
    path.write_text(text[:start] + "\n".join(lines) + "\n" + text[end:])
    print(f"updated {path.relative_to(ROOT)}")


def main() -> None:
    lines = run_default()
    replace_block(ROOT / "docs/identify.md", lines)
    replace_block(ROOT / "README.md", abbreviated(lines))


if __name__ == "__main__":
    main()
