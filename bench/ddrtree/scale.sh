#!/usr/bin/env bash
# DDRTree plus ordering at N = 100,000 in both conventions (scale.py says what is timed);
# the table goes to $OUT/scale.md (default /tmp/unfold-ddrtree-scale), with NumPy from
# the benches' virtual environment (venv.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/venv.sh"
run_trajectory_bench scale
