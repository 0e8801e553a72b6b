#!/usr/bin/env bash
# The tests (README.md's test command): the library's and the command
# line's (cargo test), then the Python package's (python/), built into a
# fresh virtual environment as a user installs it, and run with pytest.
# Needs Rust and Python >= 3.9 with venv; pip reaches PyPI for maturin,
# pyarrow, numpy, pandas, scipy, mypy, matplotlib and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test
# The API docs build without a broken link (docs.rs would show them).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
venv="$scratch/venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --upgrade pip
# The dev profile (optimized, as cargo test builds it) reuses that build;
# a user's `pip install ./python` builds the release profile.
MATURIN_PEP517_ARGS="--profile dev" \
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir ./python
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir pytest pandas scipy mypy matplotlib
# The tests compare with the command line that cargo test built; they run
# from an empty folder, so that `import tether_sweep` is the installed one.
repo="$PWD"
mkdir "$scratch/run"
(cd "$scratch/run" && TETHER_SWEEP_BIN="$repo/target/debug/tether-sweep" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests")
