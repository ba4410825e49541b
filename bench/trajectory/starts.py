"""How much DDRTree's fit depends on the start of its centres, and what restarts recover.

    python starts.py OUT UNFOLD_BIN [GENES ...]

Data: the peers bench's simulated counts (``peers.simulate``): six tree shapes, N = 2000
and 4000, 20, 200 and 2000 genes (or the numbers of genes given), low and high noise,
seeds 1 and 2 (144 data sets), 50 principal components (19 with 20 genes), the earliest
cell as root. For each, unfold's defaults with
``--restarts 1`` (one start: the R package's k-means start from evenly spaced rows), the
same on the rows in two seeded random orders (the start then takes other rows: the spread
is what the start alone changes), ``--restarts 3`` on the same three orders,
and ``--restarts 6`` on the first. A user's row order is arbitrary, so each setting is
scored by its mean over the three orders.
Scores: Spearman's correlation of pseudotime with the true time, dyneval's F1 of the
states against the true segments, and whether the number of branch points is right.
Seconds are the fits' own, from their reports. Writes OUT/trajectory_starts.md and .csv.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import unfold.metrics as um

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import SHAPES, branch_points, simulate  # noqa: E402


def fit(binary, work, x, root, order, extra):
    """Pseudotime, states, branch points, objective and seconds of one fit of the rows of
    `x` taken in `order`, read back in the original order."""
    back = np.argsort(order)
    np.save(work / "x.npy", x[order])
    subprocess.run([binary, "fit", "--method", "ddrtree", "--input", str(work / "x.npy"),
                    "--root-cell", str(int(back[root])), "--out", str(work / "e.csv"),
                    "--report", str(work / "r.json"), *extra], check=True, capture_output=True)
    report = json.loads((work / "r.json").read_text())
    notes = dict(report["notes"])
    bp = 0 if notes["branch_points"] == "none" else len(notes["branch_points"].split(", "))
    o = np.loadtxt(work / "e.order.csv", delimiter=",", skiprows=1)[back]
    return o[:, 0], o[:, 1].astype(int), bp, report["evidence"]["value"], report["seconds"]


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    gene_counts = [int(g) for g in sys.argv[3:]] or [20, 200, 2000]
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in [1, 2]:
        for n in [2000, 4000]:
            for genes in gene_counts:
                for noise in ["low", "high"]:
                    for shape in SHAPES:
                        adata, t, seg = simulate(shape, n, genes, noise, seed)
                        x = np.ascontiguousarray(adata.obsm["X_pca"], dtype=np.float64)
                        root = int(np.argmin(t))
                        truth = branch_points(SHAPES[shape])
                        row = dict(shape=shape, n=n, genes=genes, noise=noise, seed=seed)
                        runs = [("r1", np.arange(n), ["--restarts", "1"])]
                        runs += [(f"r1 order {p}", np.random.default_rng(p).permutation(n),
                                  ["--restarts", "1"]) for p in (1, 2)]
                        runs += [("r3", np.arange(n), ["--restarts", "3"])]
                        runs += [(f"r3 order {p}", np.random.default_rng(p).permutation(n),
                                  ["--restarts", "3"]) for p in (1, 2)]
                        runs += [("r6", np.arange(n), ["--restarts", "6"])]
                        for name, order, extra in runs:
                            pt, states, bp, objective, seconds = fit(binary, work, x, root,
                                                                     order, extra)
                            row[f"{name} spearman"] = spearmanr(pt, t)[0]
                            row[f"{name} f1"] = um.f1_labels(states, seg).f1
                            row[f"{name} bp right"] = bp == truth
                            row[f"{name} objective"] = objective
                            row[f"{name} s"] = seconds
                        rows.append(row)
                        print(row, flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(out / "trajectory_starts.csv", index=False)
    (out / "trajectory_starts.md").write_text(summary(df))


HEADER = """# What the start of DDRTree's centres changes, and what restarts recover

`bench/trajectory/starts.py OUT target/release/unfold` (module docs: the protocol). Data:
the peers bench's simulated counts (`bench/results/trajectory_peers.md`), six shapes,
N = 2000 and 4000, 20, 200 and 2000 genes, low and high noise, seeds 1 and 2: 144 data
sets.
Every fit is unfold's defaults with the true root cell and the number of starts given.

- "1 start": `--restarts 1` (the default), whose start is Lloyd's k-means from evenly
  spaced rows (the R package's).
- "3 starts": the fit of the lowest objective (31) of that start and the
  same on the rows shuffled from 2 seeds; "6 starts": 5 seeds.
- Each data set is fitted with its rows as simulated and in two seeded random orders:
  only the start's rows change. A user's row order is arbitrary, so a setting's score on
  a data set is its mean over the three orders; "spread" is the largest minus the
  smallest of the three.
- "right branch points": fits (of 3 per data set) that find the true number.
- Seconds: the fits' own, from their reports (the ordering included).

One generator family: a claim about these data only.

"""


def summary(df):
    """The table of means per regime (genes, noise) and overall."""
    def over_orders(name, what):
        cols = [f"{name} {what}", f"{name} order 1 {what}", f"{name} order 2 {what}"]
        return df[cols]

    sp1, sp3 = over_orders("r1", "spearman"), over_orders("r3", "spearman")
    df = df.assign(e1=sp1.mean(axis=1), e3=sp3.mean(axis=1),
                   s1=sp1.max(axis=1) - sp1.min(axis=1), s3=sp3.max(axis=1) - sp3.min(axis=1),
                   lo1=sp1.min(axis=1), lo3=sp3.min(axis=1),
                   f1=over_orders("r1", "f1").mean(axis=1),
                   f3=over_orders("r3", "f1").mean(axis=1),
                   b1=over_orders("r1", "bp right").sum(axis=1),
                   b3=over_orders("r3", "bp right").sum(axis=1))
    lines = [HEADER + "| genes | noise | data sets | Spearman: 1 start | 3 starts | "
             "6 starts (first order) | 3 starts higher / lower by > 0.01 | spread: 1 start | "
             "3 starts | lowest single fit: 1 start | 3 starts | F1: 1 start | 3 starts | "
             "right branch points: 1 start | 3 starts | seconds, 3 starts / 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = list(df.groupby(["genes", "noise"])) + [(("all", ""), df)]
    for (genes, noise), g in groups:
        d = g["e3"] - g["e1"]
        lines.append(
            f"| {genes} | {noise} | {len(g)} | {g['e1'].mean():.4f} | {g['e3'].mean():.4f} | "
            f"{g['r6 spearman'].mean():.4f} | {(d > 0.01).sum()} / {(d < -0.01).sum()} | "
            f"{g['s1'].mean():.3f} | {g['s3'].mean():.3f} | {g['lo1'].min():.3f} | "
            f"{g['lo3'].min():.3f} | {g['f1'].mean():.3f} | {g['f3'].mean():.3f} | "
            f"{int(g['b1'].sum())} | {int(g['b3'].sum())} | "
            f"{(g['r3 s'] / g['r1 s']).median():.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
