#!/usr/bin/env bash
# The Python package's cost over the Rust fits and the Dask sweep's speed-up: builds the
# package into bench/python/.venv and writes bench/results/python.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=bench/python/.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "./python[dask]"
"$venv/bin/python" bench/python/bench_python.py bench/results/python.md
