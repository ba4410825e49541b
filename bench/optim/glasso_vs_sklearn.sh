#!/usr/bin/env bash
# Graphical lasso: unfold-glasso vs scikit-learn, same S, same penalty, same duality-gap tol.
# Usage: bench/optim/glasso_vs_sklearn.sh [TOL]   (from anywhere; default TOL = 1e-4)
# Creates bench/optim/.venv-glasso (python3 -m venv) with numpy and scikit-learn.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv-glasso"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet scikit-learn numpy
fi
# Both sides single-threaded (unfold-glasso is sequential): a fair, less noisy comparison.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
(cd "$root" && cargo build --release --quiet -p unfold-glasso --example glasso_bench)
"$venv/bin/python" "$here/glasso_vs_sklearn.py" "$root/target/release/examples/glasso_bench" "${1:-1e-4}"
