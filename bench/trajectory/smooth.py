"""Tried and not kept: DDRTree's defaults on principal components smoothed by their
neighbours' mean, as diffusion-based orderings (DPT, Palantir) denoise through a kNN graph.

    python smooth.py OUT UNFOLD_BIN

The data sets are those of ``peers.py`` (its ``simulate``, seed 1): six shapes, N = 2000 and
4000, 200 and 2000 genes, low and high noise. Each is fitted with ``unfold fit --method
ddrtree --root-cell R`` and nothing else, on ``X_pca`` as it is ("raw") and on ``X_pca``
replaced by the mean of each cell's k nearest neighbours (itself included; Euclidean, on
``X_pca``) once or twice. Writes OUT/smooth.csv (Spearman of pseudotime with the true time,
dyneval's F1 of the states against the true segments, branch points found / true) and
prints, for the cells where the noise leaves the topology identifiable (low noise with 200
or 2000 genes, high noise with 2000), how many have the right number of branch points and
F1 >= 0.8, and the mean Spearman.
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.neighbors import NearestNeighbors

import peers
import unfold.metrics as um

VARIANTS = [("raw", 0, 0), ("k15x1", 15, 1), ("k15x2", 15, 2), ("k30x1", 30, 1)]


def smooth(x, k, steps):
    _, idx = NearestNeighbors(n_neighbors=k).fit(x).kneighbors(x)
    for _ in range(steps):
        x = x[idx].mean(axis=1)
    return x


def fit(binary, work, x, root, t, seg):
    np.save(work / "x.npy", np.ascontiguousarray(x))
    subprocess.run([binary, "fit", "--method", "ddrtree", "--input", str(work / "x.npy"),
                    "--root-cell", str(root), "--out", str(work / "e.csv"),
                    "--report", str(work / "r.json")], check=True, capture_output=True)
    notes = dict(json.loads((work / "r.json").read_text())["notes"])
    order = np.loadtxt(work / "e.order.csv", delimiter=",", skiprows=1)
    bp = 0 if notes["branch_points"] == "none" else len(notes["branch_points"].split(", "))
    f1 = um.f1_labels(order[:, 1].astype(int), seg).f1
    return spearmanr(order[:, 0], t).correlation, f1, bp


def main(out, binary):
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in (2000, 4000):
        for genes, noise in ((2000, "high"), (200, "low"), (2000, "low"), (200, "high")):
            for shape in peers.SHAPES:
                adata, t, seg = peers.simulate(shape, n, genes, noise, 1)
                root = int(np.argmin(t))
                x0 = np.asarray(adata.obsm["X_pca"], dtype=np.float64)
                row = {"shape": shape, "n": n, "genes": genes, "noise": noise,
                       "true_bp": peers.branch_points(peers.SHAPES[shape])}
                for name, k, steps in VARIANTS:
                    x = x0 if k == 0 else smooth(x0, k, steps)
                    rho, f1, bp = fit(binary, out, x, root, t, seg)
                    row.update({f"{name}_rho": round(rho, 3), f"{name}_f1": round(f1, 3),
                                f"{name}_bp": bp})
                rows.append(row)
                print(row, flush=True)
    with open(out / "smooth.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ident = [r for r in rows if r["noise"] == "low" and r["genes"] >= 200
             or r["noise"] == "high" and r["genes"] == 2000]
    for name, _, _ in VARIANTS:
        right = sum(r[f"{name}_bp"] == r["true_bp"] for r in ident)
        good = sum(r[f"{name}_f1"] >= 0.8 for r in ident)
        rho = np.mean([r[f"{name}_rho"] for r in ident])
        print(f"{name}: {len(ident)} identifiable cells, right branch points in {right}, "
              f"F1 >= 0.8 in {good}, mean Spearman {rho:.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
