"""Compare unfold's DDRTree (R-compatible mode) with the PyPI port `ddrtree-python`.

Run through `bench/ddrtree/run.sh`. For each N it generates a seeded noisy branching data
set (N x D), runs both implementations with the same parameters (R package defaults,
`ncenter = K`), and reports: whether the learned trees are identical, the relative
differences of Z, W and the centres after aligning the sign of each principal direction,
the objective histories and the timings.
"""
import subprocess
import sys
import time

import numpy as np
import ddrtree

ROOT = sys.argv[1]
BIN = sys.argv[2]
SIZES = [int(s) for s in sys.argv[3].split(",")]
K, D, DIM = 200, 50, 2


def branching(n, d, seed):
    """Three noisy branches from a common root in 2-D, with a random linear map to d
    dimensions and isotropic noise."""
    rng = np.random.default_rng(seed)
    dirs = np.array([[1.0, 0.0], [-0.5, 0.8], [-0.5, -0.8]])
    branch = rng.integers(0, 3, n)
    t = rng.uniform(0, 1, n)
    latent = t[:, None] * dirs[branch]
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return latent @ basis[:, :2].T + 0.02 * rng.standard_normal((n, d))


def read(path):
    return np.loadtxt(path, delimiter=",", ndmin=2)


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


rows = []
for n in SIZES:
    y = branching(n, D, seed=n)
    data = f"{ROOT}/data_{n}.csv"
    np.savetxt(data, y, delimiter=",", fmt="%.17e")
    lam, sigma, gamma, max_iter, tol = 5.0 * n, 1e-3, 10.0, 20, 1e-3

    start = time.perf_counter()
    ref = ddrtree.DDRTree(y.T, dimensions=DIM, max_iter=max_iter, sigma=sigma,
                          lambda_=lam, ncenter=K, gamma=gamma, tol=tol)
    t_py = time.perf_counter() - start

    out = f"{ROOT}/ours_{n}"
    res = subprocess.run([BIN, data, out, str(DIM), str(K), repr(lam), repr(sigma),
                          repr(gamma), str(max_iter), repr(tol), "r"],
                         check=True, capture_output=True, text=True)
    t_rs = float(res.stdout.strip())
    z, w, c = read(out + "_Z.csv"), read(out + "_W.csv"), read(out + "_C.csv")
    edges = read(out + "_edges.csv").astype(int)
    obj = read(out + "_objective.csv")[:, 0]

    # Align the sign of each principal direction on W.
    signs = np.sign(np.sum(w * ref.W, axis=0))
    w, z, c = w * signs, z * signs, c * signs
    tree_ref = ref.stree.tocoo()
    ours = {(min(a, b), max(a, b)) for a, b in edges}
    theirs = {(min(a, b), max(a, b)) for a, b in zip(tree_ref.row, tree_ref.col) if a != b}
    row = dict(n=n, t_py=t_py, t_rs=t_rs, same_tree=ours == theirs,
               dz=rel(z, ref.Z.T), dw=rel(w, ref.W), dc=rel(c, ref.Y.T),
               iters_py=len(ref.objective_vals), iters_rs=len(obj),
               dobj=rel(obj[-1:], np.array(ref.objective_vals[-1:])))
    rows.append(row)
    print(row, flush=True)

with open(f"{ROOT}/table.md", "w") as f:
    f.write("| N | K | D | ddrtree-python (s) | unfold (s) | speed-up | same tree | "
            "rel. diff Z | rel. diff W | rel. diff centres | iterations (py / ours) | "
            "rel. diff final objective |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['n']} | {K} | {D} | {r['t_py']:.2f} | {r['t_rs']:.3f} | "
                f"{r['t_py'] / r['t_rs']:.1f}x | {r['same_tree']} | {r['dz']:.1e} | "
                f"{r['dw']:.1e} | {r['dc']:.1e} | {r['iters_py']} / {r['iters_rs']} | "
                f"{r['dobj']:.1e} |\n")
