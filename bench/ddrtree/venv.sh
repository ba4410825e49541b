# The virtual environment of the DDRTree benches, sourced by run.sh, matrix.sh and scale.sh
# (which set $here to this folder): ddrtree-python, and NumPy with it, in
# bench/ddrtree/.venv, installed once.
if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q ddrtree-python
fi

# Runs `$here/$1.py OUT BENCH_TRAJECTORY [ARGS...]` with that environment's Python after
# building the bench binary, OUT being $OUT or /tmp/unfold-ddrtree-$1, and prints
# OUT/$1.md (matrix.sh and scale.sh).
run_trajectory_bench() {
  local name="$1"
  shift
  local root
  root="$(cd "$here/../.." && pwd)"
  (cd "$root" && cargo build --release -q --example bench_trajectory)
  local out="${OUT:-${TMPDIR:-/tmp}/unfold-ddrtree-$name}"
  mkdir -p "$out"
  "$here/.venv/bin/python" "$here/$name.py" "$out" \
    "${CARGO_TARGET_DIR:-$root/target}/release/examples/bench_trajectory" "$@"
  cat "$out/$name.md"
}
