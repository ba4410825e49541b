#!/usr/bin/env bash
# The bench venv for peers.py and scale.sh: the peers from PyPI at the versions the
# committed tables were measured with, and unfold's Python package built from this tree.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python3 -m venv "$here/.venv"
py="$here/.venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet scanpy==1.11.5 palantir==1.4.5 scFates==1.2.5 maturin
"$py" -m pip install --quiet "$root/python"
