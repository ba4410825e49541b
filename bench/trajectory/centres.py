"""How much DDRTree's ordering depends on the number of centres K: unfold's defaults with K
at 1/4, 1/2, 1 and 2 times Monocle 2's rule (lambda = gamma N / K follows K), on the
simulated counts of ``peers.py``.

    python centres.py OUT UNFOLD_BIN

Shapes: the six of ``peers.py``; N = 2000 and 4000; 200 and 2000 genes at low and high
noise; seeds 1 and 2. Every fit gets the same 50 principal components and the earliest
cell as its root. Scores: Spearman's correlation of pseudotime with the true time, and
dyneval's F1 of the states against the true segments. Writes OUT/trajectory_centres.csv and
OUT/trajectory_centres.md (per data set, then a summary by regime).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import unfold.metrics as um
from peers import SHAPES, simulate

SCALES = [0.25, 0.5, 1.0, 2.0]


def monocle_centres(n):
    return round(200 * np.log(n) / (np.log(n) + np.log(100)))


def fit(x, root, k, binary, work):
    np.save(work / "x.npy", x)
    subprocess.run([binary, "fit", "--method", "ddrtree", "--input", str(work / "x.npy"),
                    "--root-cell", str(root), "--ncenters", str(k),
                    "--out", str(work / "e.csv"), "--report", str(work / "r.json")],
                   check=True, capture_output=True)
    report = json.loads((work / "r.json").read_text())
    order = np.loadtxt(work / "e.order.csv", delimiter=",", skiprows=1)
    return order[:, 0], order[:, 1].astype(int), report["seconds"]


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in [1, 2]:
        for n in [2000, 4000]:
            for genes, noise in [(200, "low"), (2000, "low"), (200, "high"), (2000, "high")]:
                for shape in SHAPES:
                    adata, truth, seg = simulate(shape, n, genes, noise, seed)
                    x = np.ascontiguousarray(adata.obsm["X_pca"], dtype=np.float64)
                    root = int(np.argmin(truth))
                    for scale in SCALES:
                        k = max(3, round(monocle_centres(n) * scale))
                        pt, states, seconds = fit(x, root, k, binary, work)
                        rows.append((shape, n, genes, noise, seed, scale, k,
                                     um.pseudotime_correlation(pt, truth),
                                     um.f1_labels(states, seg).f1, seconds))
                        print(rows[-1], flush=True)
    table = pd.DataFrame(rows, columns=["shape", "N", "genes", "noise", "seed", "scale", "K",
                                        "spearman", "f1", "seconds"])
    table.to_csv(out / "trajectory_centres.csv", index=False)
    keys = ["shape", "N", "genes", "noise", "seed"]
    wide = table.pivot_table(index=keys, columns="scale", values=["spearman", "f1"])
    lines = ["| shape | N | genes | noise | seed | "
             + " | ".join(f"Spearman K x {s:g}" for s in SCALES) + " | "
             + " | ".join(f"F1 K x {s:g}" for s in SCALES) + " |",
             "|---" * (5 + 2 * len(SCALES)) + "|"]
    for idx, r in wide.iterrows():
        lines.append("| " + " | ".join(str(v) for v in idx) + " | "
                     + " | ".join(f"{r[('spearman', s)]:.3f}" for s in SCALES) + " | "
                     + " | ".join(f"{r[('f1', s)]:.3f}" for s in SCALES) + " |")
    lines += ["", "| genes | noise | data sets | K x | median Spearman | "
              "within 0.01 of the best K | median F1 | median seconds |", "|---" * 8 + "|"]
    best = table.groupby(keys)["spearman"].transform("max")
    table["near_best"] = table["spearman"] >= best - 0.01
    for (genes, noise, scale), g in table.groupby(["genes", "noise", "scale"]):
        lines.append(f"| {genes} | {noise} | {len(g)} | {scale:g} | {g.spearman.median():.3f} | "
                     f"{int(g.near_best.sum())} | {g.f1.median():.3f} | "
                     f"{g.seconds.median():.3f} |")
    (out / "trajectory_centres.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
