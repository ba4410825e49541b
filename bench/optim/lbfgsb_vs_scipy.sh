#!/usr/bin/env bash
# L-BFGS-B: unfold-lbfgsb vs scipy.optimize.minimize(method='L-BFGS-B') on 24 standard
# problems (same starts, same bounds, m = 10, pgtol = 1e-5, factr = 1e7).
# Usage: bench/optim/lbfgsb_vs_scipy.sh   (from anywhere). Prints a markdown table.
# Creates bench/optim/.venv-lbfgsb (python3 -m venv) with numpy and scipy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv-lbfgsb"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import scipy" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet scipy numpy
fi
(cd "$root" && cargo build --release --quiet -p unfold-lbfgsb --example lbfgsb_problems)
"$venv/bin/python" "$here/lbfgsb_problems.py" "$root/target/release/examples/lbfgsb_problems"
