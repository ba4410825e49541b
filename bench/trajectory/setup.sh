#!/usr/bin/env bash
# The bench venv for peers.py and scale.sh: the peers from PyPI at the versions the
# committed tables were measured with, and unfold's Python package built from this tree.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python3 -m venv "$here/.venv"
py="$here/.venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
# scanpy 1.11.5's neighbors (above 4096 cells) call getnnz on pynndescent's distances:
# pynndescent 0.7 returns a csr_array, which has none, so 0.5.13. SciPy 1.15: Palantir
# 1.4.5's shortest paths need int64 indices, which SciPy 1.13 refuses.
"$py" -m pip install --quiet scanpy==1.11.5 palantir==1.4.5 scFates==1.2.5 scipy==1.15.3 \
  pynndescent==0.5.13 maturin
"$py" -m pip install --quiet "$root/python"
