"""PCA of sparse counts without a dense copy: unfold.PCA against scikit-learn's PCA on the
same scipy CSR matrix (svd_solver="arpack", which centres implicitly on sparse input, and
"covariance_eigh" where p is small enough for its p x p covariance).

Each fit runs in a fresh process on the same matrix (saved once, read with
scipy.sparse.load_npz), timed fit only, with the process's peak resident memory after the
fit (the interpreter, the libraries and the matrix included) and how much the fit added
to the peak the process had reached with the matrix loaded. Accuracy: the relative error of the q
variances against arpack's, and the largest sine between the two q-dimensional subspaces.

    python bench/sparse_pca/run.py > bench/results/sparse_pca.md
"""

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
n, p, density, q, tool = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
X = sp.load_npz(sys.argv[7])
matrix_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = time.perf_counter()
if tool == "unfold":
    import unfold
    est = unfold.PCA(n_components=q).fit(X)
    var, axes = est.explained_variance_, est.components_
else:
    from sklearn.decomposition import PCA
    est = PCA(n_components=q, svd_solver=tool, random_state=0).fit(X)
    var, axes = est.explained_variance_, est.components_
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
np.save(sys.argv[6], axes)
print(json.dumps(dict(seconds=seconds, peak=peak, before=before, matrix=matrix_bytes,
                      nnz=int(X.nnz), var=list(map(float, var)))))
"""


def counts(n, p, density, path):
    """Counts-like data, saved uncompressed as CSR: 20 programmes of genes switched on in
    groups of cells, and sparse noise."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    per_row = int(round(density * p))
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, p, n * per_row)
    third = np.arange(n * per_row) % 3 == 0
    cols[third] = ((rows[third] % 20) * 500 + rng.integers(0, 500, third.sum())) % p
    vals = 1.0 + np.floor(rng.uniform(0, 4, n * per_row))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    sp.save_npz(path, X, compressed=False)


def run(n, p, density, q, tool, axes_file, data):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(p), str(density), str(q), tool, axes_file, data],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    import numpy as np

    sizes = [(20000, 5000, 0.05, 50), (50000, 10000, 0.02, 50), (100000, 20000, 0.05, 50)]
    print("| n | p | non-zeros | q | tool | fit s | matrix GB | peak GB | added by the fit GB | max rel. error of variances | max sine to arpack's axes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, p, density, q in sizes:
        tools = ["unfold", "arpack"] + (["covariance_eigh"] if p <= 10000 else [])
        data = f"/tmp/sparse_pca_{n}_{p}.npz"
        counts(n, p, density, data)
        results = {}
        for tool in tools:
            results[tool] = run(n, p, density, q, tool, f"/tmp/axes_{tool}.npy", data)
        ref = np.array(results["arpack"]["var"])
        ref_axes = np.load("/tmp/axes_arpack.npy")
        for tool in tools:
            r = results[tool]
            axes = np.load(f"/tmp/axes_{tool}.npy")
            # Sines of the principal angles between the row spaces.
            q_ref, _ = np.linalg.qr(ref_axes.T)
            q_got, _ = np.linalg.qr(axes.T)
            cos = np.linalg.svd(q_ref.T @ q_got, compute_uv=False)
            sine = float(np.sqrt(max(0.0, 1.0 - cos.min() ** 2)))
            err = float(np.max(np.abs(np.array(r["var"]) - ref) / ref))
            print(
                f"| {n} | {p} | {r['nnz']:,} | {q} | {tool} | {r['seconds']:.1f} | "
                f"{r['matrix'] / 1e9:.2f} | {r['peak'] / 1e9:.2f} | {(r['peak'] - r['before']) / 1e9:.2f} | "
                f"{err:.1e} | {sine:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
