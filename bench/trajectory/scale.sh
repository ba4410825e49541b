#!/usr/bin/env bash
# DDRTree with its defaults on 100,000 simulated cells x 50 principal components (counts
# from a binary tree of three branch points, as peers.py simulates them): the fit plus
# ordering's own seconds from the report, and the process's peak resident memory (reading
# the .npy file included). Prints one table row.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
(cd "$root" && cargo build --release -q --bin unfold)
bin="${CARGO_TARGET_DIR:-$root/target}/release/unfold"
out="${OUT:-${TMPDIR:-/tmp}/unfold-trajectory-scale}"
mkdir -p "$out"
n="${N:-100000}"
(cd "$here" && .venv/bin/python -c "
import sys, numpy as np, peers
a, t, seg = peers.simulate('binary, 3 branch points', $n, 2000, 'low', 1)
np.save('$out/x.npy', np.ascontiguousarray(a.obsm['X_pca'], dtype=np.float64))
np.save('$out/time.npy', t)
print(int(np.argmin(t)))
" > "$out/root.txt")
/usr/bin/time -v "$bin" fit --method ddrtree --input "$out/x.npy" --root-cell "$(cat "$out/root.txt")" \
  --out "$out/e.csv" --report "$out/r.json" 2> "$out/time.txt" >/dev/null
peak=$(awk '/Maximum resident/ {print $6}' "$out/time.txt")
(cd "$here" && .venv/bin/python -c "
import json, numpy as np, unfold.metrics as um
r = json.load(open('$out/r.json')); notes = dict(r['notes'])
order = np.loadtxt('$out/e.order.csv', delimiter=',', skiprows=1)
rho = um.pseudotime_correlation(order[:, 0], np.load('$out/time.npy'))
bp = 0 if notes['branch_points'] == 'none' else len(notes['branch_points'].split(', '))
print(f\"| {r['n']} | {r['p']} | {r['dim']} | {notes['ncenters']} | {bp}/3 | {rho:.3f} | {r['seconds']:.2f} | {int('$peak') / 1024:.0f} |\")
")
