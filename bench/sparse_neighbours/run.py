"""Neighbour methods on sparse points without a dense copy: unfold's Isomap, Laplacian
eigenmaps and LLE on a scipy CSR matrix, against the same fits of its dense copy and
against scikit-learn's Isomap and SpectralEmbedding on the same CSR matrix (its
LocallyLinearEmbedding does not take sparse input, so it gets the dense copy, made inside
its timed fit).

Each fit runs in a fresh process on the same matrix (saved once, read with
scipy.sparse.load_npz, the libraries imported first), timed fit only. Memory: the process's peak resident memory is
reset just before the fit (Linux's clear_refs), so "fit peak" is the peak during the fit
(the interpreter, the libraries and the matrix included) and "added" is that peak minus
the resident memory just before the fit. The dense rows first make the dense copy
(np.asarray of the matrix), inside the timed and measured fit, as a user would. Accuracy:
trustworthiness (k = 10) of the embedding against the generating 2-D coordinates.

Generators (p features, about `density` of them non-zero per point, 2-D latent positions
uniform on the unit square; every feature has a centre on the square):
- bumps: feature value exp(-d^2 / (2 w^2)) within radius r of its centre, 0 beyond;
- counts: log1p of Poisson counts with mean 4 exp(-d^2 / (2 w^2)) within r.

    python bench/sparse_neighbours/run.py > bench/results/sparse_neighbours.md
    python bench/sparse_neighbours/run.py lle    # the LLE rows
"""

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np, scipy.sparse as sp

def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024

method, tool, path = sys.argv[1], sys.argv[2], sys.argv[3]
import unfold
from sklearn.manifold import Isomap, LocallyLinearEmbedding, SpectralEmbedding
X = sp.load_npz(path).tocsr()
matrix_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = rss("VmRSS:")
start = time.perf_counter()
data = X.toarray() if tool == "unfold-dense" or (method, tool) == ("lle", "scikit-learn") else X
if tool.startswith("unfold"):
    cls = {"isomap": unfold.Isomap, "le": unfold.LaplacianEigenmaps, "lle": unfold.LLE}[method]
    emb = cls(n_components=2, n_neighbors=10).fit(data).embedding_
elif method == "lle":
    emb = LocallyLinearEmbedding(n_components=2, n_neighbors=10, random_state=0).fit_transform(data)
elif method == "isomap":
    emb = Isomap(n_components=2, n_neighbors=10).fit_transform(data)
else:
    emb = SpectralEmbedding(n_components=2, affinity="nearest_neighbors", n_neighbors=10,
                            random_state=0).fit_transform(data)
seconds = time.perf_counter() - start
peak = rss("VmHWM:")
np.save(sys.argv[4], emb)
print(json.dumps(dict(seconds=seconds, peak=peak, before=before, matrix=matrix_bytes,
                      nnz=int(X.nnz))))
"""


def generate(kind, n, p, density, path, latent_path):
    """The CSR matrix of `kind` (module doc), built a block of points at a time."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    t = rng.random((n, 2))
    centres = rng.random((p, 2))
    r2 = density / np.pi  # area pi r^2 = density: that share of the centres lies within r
    w2 = r2 / 4
    blocks = []
    for start in range(0, n, 500):
        d2 = ((t[start:start + 500, None, :] - centres[None]) ** 2).sum(-1)
        near = d2 < r2
        vals = np.exp(-d2[near] / (2 * w2))
        if kind == "counts":
            vals = np.log1p(rng.poisson(4 * vals))
        rows, cols = np.nonzero(near)
        block = sp.csr_matrix((vals, (rows, cols)), shape=(len(d2), p))
        block.eliminate_zeros()
        blocks.append(block)
    X = sp.vstack(blocks).tocsr()
    X.sum_duplicates()
    sp.save_npz(path, X, compressed=False)
    np.save(latent_path, t)


def run(method, tool, data, emb_file):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, method, tool, data, emb_file],
        capture_output=True, text=True, timeout=1800,
    )
    if out.returncode != 0:
        return dict(error=out.stderr.strip().splitlines()[-1][:120])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    import numpy as np
    from sklearn.manifold import trustworthiness

    if sys.argv[1:] == ["lle"]:
        cells = [
            ("bumps", 2000, 20000, 0.05, ("lle",), True),
            ("counts", 2000, 20000, 0.01, ("lle",), True),
            ("counts", 5000, 20000, 0.05, ("lle",), True),
        ]
    else:
        cells = [
        # (generator, n, p, density, methods, with the dense copy)
            ("bumps", 2000, 20000, 0.05, ("isomap", "le"), True),
            ("counts", 2000, 20000, 0.05, ("isomap", "le"), True),
            ("counts", 2000, 20000, 0.01, ("isomap", "le"), True),
            ("bumps", 5000, 20000, 0.05, ("isomap", "le"), True),
            ("counts", 5000, 20000, 0.01, ("isomap", "le"), True),
            ("counts", 10000, 20000, 0.05, ("le",), True),
            ("bumps", 20000, 20000, 0.01, ("le",), False),
        ]
    print("| generator | n | p | non-zeros | method | tool | fit s | matrix GB | fit peak GB | added GB | trustworthiness |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, n, p, density, methods, dense in cells:
        data, latent = f"/tmp/sparse_nb_{kind}_{n}_{density}.npz", f"/tmp/sparse_nb_latent_{kind}_{n}.npy"
        generate(kind, n, p, density, data, latent)
        t = np.load(latent)
        for method in methods:
            tools = ["unfold", "scikit-learn"] + (["unfold-dense"] if dense else [])
            for tool in tools:
                r = run(method, tool, data, "/tmp/sparse_nb_emb.npy")
                if "error" in r:
                    print(f"| {kind} | {n} | {p} | | {method} | {tool} | failed: {r['error']} | | | | |", flush=True)
                    continue
                emb = np.load("/tmp/sparse_nb_emb.npy")
                tw = trustworthiness(t, emb, n_neighbors=10)
                print(
                    f"| {kind} | {n} | {p} | {r['nnz']:,} | {method} | {tool} | {r['seconds']:.1f} | "
                    f"{r['matrix'] / 1e9:.3f} | {r['peak'] / 1e9:.3f} | {(r['peak'] - r['before']) / 1e9:.3f} | {tw:.3f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
