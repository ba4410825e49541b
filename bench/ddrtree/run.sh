#!/usr/bin/env bash
# Installs ddrtree-python into bench/ddrtree/.venv (once), builds unfold's DDRTree bench
# example and compares both at N = 2000 and 20000 (K = 200, D = 50); the table goes to
# $out/table.md (a scratch directory, default /tmp/unfold-ddrtree-bench). The example is
# looked up in $CARGO_TARGET_DIR when set. Usage: bench/ddrtree/run.sh [sizes, default 2000,20000]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/venv.sh"
(cd "$root" && cargo build --release -q -p unfold-models --example ddrtree_bench)
out="${OUT:-${TMPDIR:-/tmp}/unfold-ddrtree-bench}"
mkdir -p "$out"
"$here/.venv/bin/python" "$here/compare.py" "$out" \
  "${CARGO_TARGET_DIR:-$root/target}/release/examples/ddrtree_bench" "${1:-2000,20000}"
cat "$out/table.md"
