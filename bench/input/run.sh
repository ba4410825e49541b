#!/usr/bin/env bash
# Reading CSV and PCA against NumPy, pandas and scikit-learn (bench_input.py says how each
# is timed); builds the Python package into bench/input/.venv and prints the tables
# (written to $OUT/input.md, default /tmp/unfold-input-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=bench/input/.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "./python" scikit-learn pandas
cargo build --release --quiet --example bench_read
out="${OUT:-${TMPDIR:-/tmp}/unfold-input-bench}"
mkdir -p "$out"
"$venv/bin/python" bench/input/bench_input.py "$out/input.md" target/release/examples/bench_read "$out"
cat "$out/input.md"
