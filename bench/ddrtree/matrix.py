"""DDRTree over a matrix of data sets: unfold (fit, then the ordering) against the PyPI
port `ddrtree-python`, both on the same `.npy` file with the R package's defaults.

Run through `bench/ddrtree/matrix.sh`. Each cell is a seeded branching trajectory
(`branching.py`: a trunk into one branch point, BRANCHES arms spread over 240 degrees, a
random orthonormal map into D dimensions plus isotropic noise of standard deviation NOISE;
the same design as `unfold_data::synthetic::branching`, in NumPy so both sides read one
file).
Times are the fit only (no I/O), one run each; the peer runs in its own process (its
peak memory is reported too). K = 200 centres (the R package's automatic K at these N is
about 100-150; 200 is what the earlier table used).
"""
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from branching import branching

OUT, BIN = sys.argv[1], sys.argv[2]
CELLS = [
    # (branches, noise, D, N): one factor at a time around (3, 0.05, 50, 20000), then the
    # corners the targets name (D >= 500 at N >= 20000; N = 100,000).
    (3, 0.05, 50, 2000),
    (3, 0.05, 50, 20000),
    (2, 0.05, 50, 20000),
    (4, 0.05, 50, 20000),
    (6, 0.05, 50, 20000),
    (3, 0.01, 50, 20000),
    (3, 0.2, 50, 20000),
    (3, 0.05, 20, 20000),
    (3, 0.05, 500, 20000),
    (3, 0.05, 2000, 20000),
    (5, 0.1, 500, 2000),
    (3, 0.05, 50, 100000),
    (3, 0.05, 2000, 100000),
]
if len(sys.argv) > 3:
    CELLS = [c for c in CELLS if c[3] <= int(sys.argv[3])]
# MATRIX_CELLS="3,0.05,2000,100000;..." re-runs only the cells given.
if os.environ.get("MATRIX_CELLS"):
    CELLS = [tuple(t(v) for t, v in zip((int, float, int, int), cell.split(",")))
             for cell in os.environ["MATRIX_CELLS"].split(";")]
K = 200
PEER_LIMIT_S = int(os.environ.get("PEER_LIMIT_S", "1800"))
# An optional cap on the peer's address space (MiB), so that a peer that would exhaust the
# machine fails with MemoryError instead (reported in its row).
PEER_MEMORY_MIB = int(os.environ.get("PEER_MEMORY_MIB", "0"))


def peer_limits():
    if PEER_MEMORY_MIB:
        limit = PEER_MEMORY_MIB * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


PEER = r"""
import json, resource, sys, time
import numpy as np, ddrtree
y = np.load(sys.argv[1]); n = y.shape[0]
start = time.perf_counter()
ref = ddrtree.DDRTree(y.T, dimensions=2, max_iter=20, sigma=1e-3, lambda_=5.0 * n,
                      ncenter=int(sys.argv[2]), gamma=10.0, tol=1e-3)
seconds = time.perf_counter() - start
t = ref.stree.tocoo()
edges = sorted({(int(min(a, b)), int(max(a, b))) for a, b in zip(t.row, t.col) if a != b})
print(json.dumps({"fit_s": seconds, "edges": edges,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

rows = []
for branches, noise, d, n in CELLS:
    path = f"{OUT}/b{branches}_s{noise}_d{d}_n{n}.npy"
    y = branching(n, d, branches, noise, seed=n + d + branches)
    np.save(path, y)
    del y
    edges_path = path[:-4] + "_edges.csv"
    ours = json.loads(subprocess.run([BIN, path, str(K), edges_path], check=True,
                                     capture_output=True, text=True).stdout)
    ours_edges = sorted(tuple(int(v) for v in l.split(",")) for l in open(edges_path))
    try:
        peer = json.loads(subprocess.run([sys.executable, "-c", PEER, path, str(K)], check=True,
                                         capture_output=True, text=True,
                                         timeout=PEER_LIMIT_S,
                                         preexec_fn=peer_limits).stdout)
    except subprocess.TimeoutExpired:
        peer = None
    except subprocess.CalledProcessError as e:
        peer = {"error": e.stderr.strip().splitlines()[-1][:80]}
    row = dict(branches=branches, noise=noise, d=d, n=n, ours=ours, peer=peer,
               same_tree=(peer is not None and "edges" in peer and
                          [tuple(e) for e in peer["edges"]] == ours_edges))
    rows.append(row)
    print(json.dumps({k: v for k, v in row.items() if k != "peer"} |
                     {"peer_s": peer and peer.get("fit_s")}), flush=True)
    os.remove(path)

with open(f"{OUT}/matrix.md", "w") as f:
    f.write("| branches | noise | D | N | ddrtree-python fit (s) | unfold fit (s) | speed-up | "
            "unfold ordering (s) | same tree | unfold peak MiB | ddrtree-python peak MiB | "
            "states / branch points |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        o, p = r["ours"], r["peer"]
        if p is None:
            peer_s, ratio, peer_mib = f"> {PEER_LIMIT_S}", f"> {PEER_LIMIT_S / o['fit_s']:.0f}x", "-"
        elif "error" in p:
            peer_s, ratio, peer_mib = f"failed: {p['error']}", "-", "-"
        else:
            peer_s, ratio = f"{p['fit_s']:.2f}", f"{p['fit_s'] / o['fit_s']:.1f}x"
            peer_mib = f"{p['peak_mib']:.0f}"
        # Trees are compared only where the peer finished.
        same = r["same_tree"] if p is not None and "edges" in p else "-"
        f.write(f"| {r['branches']} | {r['noise']} | {r['d']} | {r['n']} | {peer_s} | "
                f"{o['fit_s']:.3f} | {ratio} | {o['order_s']:.4f} | {same} | "
                f"{o['peak_mib']:.0f} | {peer_mib} | {o['states']} / {o['branch_points']} |\n")
