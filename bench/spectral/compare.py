"""The scikit-learn half of bench/spectral/run.sh.

Times scikit-learn on the same Swiss roll as unfold (median of REPS fits, data loading
excluded), then compares the two embeddings of each method: trustworthiness of both
(scikit-learn's implementation, same k) and the Procrustes disparity between them
(scipy.spatial.procrustes: 0 = identical up to a similarity transform).

usage: compare.py DATA.csv K REPS OUTDIR RUST_TIMES.txt
"""
import sys
import time

import numpy as np
import scipy
import scipy.linalg
import sklearn
from scipy.spatial import procrustes
from scipy.spatial.distance import cdist
from sklearn.decomposition import PCA, KernelPCA
from sklearn.manifold import (Isomap, LocallyLinearEmbedding, SpectralEmbedding,
                              trustworthiness)


def classical_mds(y):
    """Classical MDS with NumPy/SciPy (scikit-learn's MDS is SMACOF, another method)."""
    d2 = cdist(y, y, "sqeuclidean")
    n = d2.shape[0]
    r = d2.mean(axis=0)
    b = -0.5 * (d2 - r[:, None] - r[None, :] + r.mean())
    w, v = scipy.linalg.eigh(b, subset_by_index=[n - 2, n - 1])
    return v[:, ::-1] * np.sqrt(w[::-1])


def main():
    data_path, k, reps, outdir, rust_times = sys.argv[1:6]
    k, reps = int(k), int(reps)
    data = np.loadtxt(data_path, delimiter=",", skiprows=1)
    y = data[:, :3]
    n = y.shape[0]
    methods = {
        "pca": lambda: PCA(2).fit_transform(y),
        "cmds": lambda: classical_mds(y),
        "kpca": lambda: KernelPCA(2, kernel="rbf", gamma=1.0 / 3.0, random_state=0).fit_transform(y),
        "le": lambda: SpectralEmbedding(2, affinity="nearest_neighbors", n_neighbors=k,
                                        random_state=0).fit_transform(y),
        "lle": lambda: LocallyLinearEmbedding(n_neighbors=k, n_components=2, method="standard",
                                              random_state=0).fit_transform(y),
        "isomap": lambda: Isomap(n_neighbors=k, n_components=2).fit_transform(y),
    }
    ours = {}
    with open(rust_times) as f:
        for line in f:
            name, seconds = line.split()
            ours[name] = float(seconds)
    rows = []
    for name, fit in methods.items():
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            x_theirs = fit()
            times.append(time.perf_counter() - start)
        t_theirs = float(np.median(times))
        x_ours = np.loadtxt(f"{outdir}/unfold_{name}.csv", delimiter=",", skiprows=1)
        tw_ours = trustworthiness(y, x_ours, n_neighbors=k)
        tw_theirs = trustworthiness(y, x_theirs, n_neighbors=k)
        _, _, disparity = procrustes(x_theirs, x_ours)
        rows.append((name, ours[name], t_theirs, tw_ours, tw_theirs, disparity))
    print(f"\n### n = {n}, k = {k}, 2-D (median of {reps} fits each)\n")
    print("| method | unfold s | scikit-learn s | ratio (unfold / sklearn) "
          "| trustworthiness unfold | trustworthiness sklearn | Procrustes disparity |")
    print("|---|---|---|---|---|---|---|")
    for name, a, b, ta, tb, d in rows:
        print(f"| {name} | {a:.4f} | {b:.4f} | {a / b:.3f} | {ta:.4f} | {tb:.4f} | {d:.2e} |")
    print(f"\n(scikit-learn {sklearn.__version__}, NumPy {np.__version__}, SciPy {scipy.__version__}; "
          "`cmds` on the scikit-learn side is NumPy/SciPy classical MDS.)")


if __name__ == "__main__":
    main()
