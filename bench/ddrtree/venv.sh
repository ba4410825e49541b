# The virtual environment of the DDRTree benches, sourced by run.sh, matrix.sh and scale.sh
# (which set $here to this folder): ddrtree-python, and NumPy with it, in
# bench/ddrtree/.venv, installed once.
if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q ddrtree-python
fi
