"""DDRTree's defaults against one knob moved at a time, on two generator families: is any
other single setting better across the matrix, or only on some cells of it?

    python knobs.py OUT UNFOLD_BIN

Data sets (168):
- "counts": ``peers.simulate`` (gamma-Poisson counts from a tree of cell states, scanpy's
  normalize_total, log1p and 50 principal components), the six shapes of ``peers.py``,
  N = 2000 and 4000, 200 and 2000 genes, low and high noise, seeds 1 and 2.
- "straight" and "curved": cells on the segments of the same six trees, each segment a
  straight line along its own latent direction (as ``unfold_data::synthetic::tree``
  places them) or a quarter circle in a plane of its own, mapped into D = 50 by a random
  orthonormal map, plus isotropic noise of sd 0.02, 0.05 or 0.1 (segment length 1);
  N = 4000, seeds 1 and 2.

Every fit is ``unfold fit --method ddrtree --root-cell R`` (R the earliest cell) with one
setting changed from the defaults: pseudotime as the distance along the tree
(``--pseudotime-neighbours 1``; the default averages it over each cell's nearest cells in
the latent projection, as many as one centre stands for, at most 30); lambda times 1/4, 4
or 16 (the default is gamma N / K); K = 50 centres (Monocle 2's rule gives 125 to 129
here); d = 3 or 8 (the default counts the principal components above the noise); sigma =
lambda_1 / 50 or / 100 (lambda_1 the variance along the first principal axis; the default
is min((sd / 2)^2, lambda_1 / 20)).
"input's neighbours" averages the distance along the tree over each cell's 30 nearest
cells in the input instead (the cell included; as DPT and Palantir average over a kNN
graph of the input), "input's top 10 PCs' neighbours" over those in its first 10
principal components; the tree and the states are those of the distance along the tree.

Scores: Spearman's correlation of pseudotime with the true time, dyneval's F1 of the states
against the true segments (``unfold.metrics.f1_labels``), the number of branch points.
Writes OUT/trajectory_knobs.csv (one row per data set and setting) and
OUT/trajectory_knobs.md (the summary per family and noise).
"""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.neighbors import NearestNeighbors

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402
import unfold.metrics as um  # noqa: E402

SEEDS = (1, 2)
SMOOTH_K = 30


def centres(n):
    """Monocle 2's number of centres (the default), for the lambda multiples."""
    return n if n < 100 else round(200 * np.log(n) / (np.log(n) + np.log(100)))


def knobs(x):
    """(name, extra CLI arguments) per setting, for the data `x`."""
    n = len(x)
    lam = 10.0 * n / centres(n)
    top = np.linalg.svd(x - x.mean(0), compute_uv=False)[0] ** 2 / n
    return [("defaults", []),
            ("distance along the tree", ["--pseudotime-neighbours", "1"]),
            ("lambda x 1/4", ["--lambda", str(lam / 4)]),
            ("lambda x 4", ["--lambda", str(lam * 4)]),
            ("lambda x 16", ["--lambda", str(lam * 16)]),
            ("K = 50", ["--ncenters", "50"]),
            ("d = 3", ["--dim", "3"]),
            ("d = 8", ["--dim", "8"]),
            ("sigma = lambda_1 / 50", ["--sigma", str(top / 50)]),
            ("sigma = lambda_1 / 100", ["--sigma", str(top / 100)])]


def top_pcs(x, m):
    """The first `m` principal components of `x` (scores)."""
    u, s, _ = np.linalg.svd(x - x.mean(0), full_matrices=False)
    return u[:, :m] * s[:m]


def segment_end(g, length, width, curved, u):
    """The latent point at the fraction `u` of segment `g` (from its start)."""
    v = np.zeros(width)
    if not curved:
        v[g] = u * length
        return v
    radius = length / (np.pi / 2)
    v[2 * g] = radius * np.sin(u * np.pi / 2)
    v[2 * g + 1] = radius * (1.0 - np.cos(u * np.pi / 2))
    return v


def isotropic(shape, n, dim, noise, seed, curved):
    """Cells on straight or curved segments of `shape`, isotropic noise: (x, time, segment)."""
    rng = np.random.default_rng(seed)
    parents = peers.SHAPES[shape]
    s = len(parents)
    lengths, weights = peers.UNEVEN if shape.endswith("uneven") else ([1.0] * s, [1.0] * s)
    width = 2 * s if curved else s
    start, t0 = np.zeros((s, width)), np.zeros(s)
    for c in range(1, s):
        a = parents[c]
        start[c] = start[a] + segment_end(a, lengths[a], width, curved, 1.0)
        t0[c] = t0[a] + lengths[a]
    seg = rng.choice(s, size=n, p=np.asarray(weights) / sum(weights))
    u = rng.random(n)
    latent = np.array([start[g] + segment_end(g, lengths[g], width, curved, ui)
                       for g, ui in zip(seg, u)])
    basis, _ = np.linalg.qr(rng.normal(size=(dim, width)))
    x = latent @ basis.T + rng.normal(0.0, noise, (n, dim))
    return x, t0[seg] + u * np.asarray(lengths)[seg], seg


def datasets():
    """(family, noise, shape, n, genes or D, seed, x, time, segment) for the matrix."""
    for seed in SEEDS:
        for n in (2000, 4000):
            for genes in (200, 2000):
                for noise in ("low", "high"):
                    for shape in peers.SHAPES:
                        adata, t, seg = peers.simulate(shape, n, genes, noise, seed)
                        x = np.asarray(adata.obsm["X_pca"], dtype=np.float64)
                        yield ("counts", f"{noise}, {genes} genes", shape, n, genes, seed,
                               x, t, seg)
        for curved in (False, True):
            for noise in (0.02, 0.05, 0.1):
                for shape in peers.SHAPES:
                    x, t, seg = isotropic(shape, 4000, 50, noise, seed, curved)
                    yield ("curved" if curved else "straight", f"sd {noise}", shape, 4000,
                           50, seed, x, t, seg)


def fit(binary, work, x, root, extra):
    """Pseudotime, states and the number of branch points of one fit."""
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "x.npy", np.ascontiguousarray(x))
    subprocess.run([binary, "fit", "--method", "ddrtree", "--input", str(work / "x.npy"),
                    "--root-cell", str(root), "--out", str(work / "e.csv"),
                    "--report", str(work / "r.json"), *extra], check=True, capture_output=True)
    notes = dict(json.loads((work / "r.json").read_text())["notes"])
    order = np.loadtxt(work / "e.order.csv", delimiter=",", skiprows=1)
    bp = 0 if notes["branch_points"] == "none" else len(notes["branch_points"].split(", "))
    return order[:, 0], order[:, 1].astype(int), bp


def score(row, name, pseudotime, states, bp, t, seg):
    return {**row, "setting": name, "spearman": spearmanr(pseudotime, t).correlation,
            "f1": um.f1_labels(states, seg).f1, "branch_points": bp}


def summary(df):
    """Per family, noise and setting: mean and lowest Spearman, the data sets where it
    moves by more than 0.01 from the defaults', F1 >= 0.8 and the right branch points."""
    base = df[df.setting == "defaults"].set_index("key").spearman
    df = df.assign(delta=df.spearman - df.key.map(base))
    rows = []
    for (family, noise, setting), g in df.groupby(["family", "noise", "setting"], sort=False):
        rows.append({"family": family, "noise": noise, "setting": setting, "data sets": len(g),
                     "Spearman mean": round(g.spearman.mean(), 3),
                     "Spearman min": round(g.spearman.min(), 3),
                     "up / down by > 0.01": f"{(g.delta > 0.01).sum()} / {(g.delta < -0.01).sum()}",
                     "F1 >= 0.8": int((g.f1 >= 0.8).sum()),
                     "right branch points": int((g.branch_points == g.true_branch_points).sum())})
    return pd.DataFrame(rows)


def main(out, binary):
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with ThreadPoolExecutor(2) as pool:
        for family, noise, shape, n, p, seed, x, t, seg in datasets():
            key = f"{family}|{noise}|{shape}|{n}|{seed}"
            row = {"key": key, "family": family, "noise": noise, "shape": shape, "n": n,
                   "p": p, "seed": seed,
                   "true_branch_points": peers.branch_points(peers.SHAPES[shape])}
            root = int(np.argmin(t))
            settings = knobs(x)
            work = [out / "work" / f"{i}" for i in range(len(settings))]
            fits = list(pool.map(lambda a: fit(binary, a[0], x, root, a[1][1]),
                                 zip(work, settings)))
            for (name, _), (pt, states, bp) in zip(settings, fits):
                rows.append(score(row, name, pt, states, bp, t, seg))
            pt, states, bp = fits[1]
            for name, space in (("input's neighbours", x),
                                ("input's top 10 PCs' neighbours", top_pcs(x, 10))):
                _, idx = NearestNeighbors(n_neighbors=SMOOTH_K).fit(space).kneighbors(space)
                rows.append(score(row, name, pt[idx].mean(axis=1), states, bp, t, seg))
            print(key, flush=True)
    df = pd.DataFrame(rows)
    df.drop(columns="key").round({"spearman": 4, "f1": 4}).to_csv(
        out / "trajectory_knobs.csv", index=False)
    table = summary(df)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in table.itertuples(index=False)]
    (out / "trajectory_knobs.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
