#!/usr/bin/env bash
# DDRTree plus ordering at N = 100,000 in both conventions (scale.py says what is timed);
# the table goes to $OUT/scale.md (default /tmp/unfold-ddrtree-scale), with NumPy from
# the benches' virtual environment (venv.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/venv.sh"
(cd "$root" && cargo build --release -q --example bench_trajectory)
out="${OUT:-${TMPDIR:-/tmp}/unfold-ddrtree-scale}"
mkdir -p "$out"
"$here/.venv/bin/python" "$here/scale.py" "$out" \
  "${CARGO_TARGET_DIR:-$root/target}/release/examples/bench_trajectory"
cat "$out/scale.md"
