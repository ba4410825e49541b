"""DDRTree and the ordering at up to N = 100,000 cells in both of unfold's conventions: the R
package's (`--compat r`, as the peer is run in `matrix.py`) and the paper's (the default of
`unfold fit --method ddrtree`, `unfold.DDRTree` and `unfold.tl.ddrtree`): the two
N = 100,000 cells of `matrix.py` (3 branches, noise 0.05, D = 50 and 2000) and two other
generators (6 branches, noise 0.1, D = 500, N = 100,000; 2 branches, noise 0.2, D = 1000,
N = 50,000), K = 200.

Run through `bench/ddrtree/scale.sh`. One run per row, each in its own process: the fit's
seconds (the fit only), the ordering's seconds and the process's peak resident memory
(VmHWM, the data and the reading of the `.npy` file included).
"""
import json
import os
import subprocess
import sys

import numpy as np

from branching import branching

OUT, BIN = sys.argv[1], sys.argv[2]
CELLS = [
    (3, 0.05, 50, 100000),
    (3, 0.05, 2000, 100000),
    # Other generators: more branches and noise, fewer branches and a middle D and N.
    (6, 0.1, 500, 100000),
    (2, 0.2, 1000, 50000),
]
K = 200

rows = []
for branches, noise, d, n in CELLS:
    path = f"{OUT}/b{branches}_s{noise}_d{d}_n{n}.npy"
    y = branching(n, d, branches, noise, seed=n + d + branches)
    data_mib = y.nbytes / 2**20
    np.save(path, y)
    del y
    for compat in ("r", "paper"):
        out = subprocess.run([BIN, path, str(K), path[:-4] + "_edges.csv", compat],
                             check=True, capture_output=True, text=True).stdout
        row = dict(branches=branches, noise=noise, d=d, n=n, compat=compat,
                   data_mib=data_mib, **json.loads(out))
        rows.append(row)
        print(json.dumps(row), flush=True)
    os.remove(path)

with open(f"{OUT}/scale.md", "w") as f:
    f.write("| branches | noise | D | N | conventions | data MiB | fit (s) | ordering (s) | "
            "iterations | peak MiB | peak / data | states / branch points |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['branches']} | {r['noise']} | {r['d']} | {r['n']} | {r['compat']} | "
                f"{r['data_mib']:.0f} | {r['fit_s']:.2f} | {r['order_s']:.4f} | "
                f"{r['iterations']} | {r['peak_mib']:.0f} | "
                f"{r['peak_mib'] / r['data_mib']:.2f} | {r['states']} / {r['branch_points']} |\n")
