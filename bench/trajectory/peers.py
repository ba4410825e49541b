"""Trajectory inference side by side: unfold's DDRTree ordering against the tools a
single-cell user would pick instead (Palantir, scFates, scanpy's DPT), on simulated count
data from trees of cell states.

    python peers.py OUT UNFOLD_BIN [quick]

Each data set: cells on a tree of segments (each segment along its own latent direction,
as ``unfold_data::synthetic::tree``), gene programs ``log mu = b + A x``, library sizes,
gamma-Poisson counts with dispersion ``phi`` and dropout; then scanpy's normalize_total,
log1p and 50 principal components. Every method gets the same ``X_pca`` and the same root
cell (the earliest cell). Timed: fit plus ordering only, each method warmed up once (JIT)
on a small data set; unfold's seconds are the fit's own, from its report. Scores:
Spearman's correlation of pseudotime with the true time, and for the methods that assign
cells to branches (unfold's states, scFates' segments) dyneval's F1 of those groups
against the true segments (``unfold.metrics.f1_labels``). Writes OUT/trajectory_peers.md.
"""

import contextlib
import io
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd
import scanpy as sc

import unfold.metrics as um

warnings.filterwarnings("ignore")
sc.settings.verbosity = 0

SHAPES = {
    "linear": [0],
    "bifurcation": [0, 0, 0],
    "trifurcation": [0, 0, 0, 0],
    "two-level": [0, 0, 0, 1, 1],
    "binary, 3 branch points": [0, 0, 0, 1, 1, 2, 2],
    "two-level, uneven": [0, 0, 0, 1, 1],
}
UNEVEN = ([1.0, 0.4, 1.5, 0.6, 1.0], [1.0, 0.3, 2.0, 0.5, 1.0])
NOISE = {"low": (0.1, 0.0), "high": (0.5, 0.3)}  # dispersion phi, dropout


def branch_points(parents):
    kids = np.bincount(np.asarray(parents[1:], dtype=int), minlength=len(parents))
    return int((kids >= 2).sum())


def simulate(shape, n, genes, noise, seed):
    """Counts from the tree `shape`, preprocessed to 50 PCs: (adata, time, segment)."""
    rng = np.random.default_rng(seed)
    parents = SHAPES[shape]
    s = len(parents)
    lengths, weights = UNEVEN if shape.endswith("uneven") else ([1.0] * s, [1.0] * s)
    start, t0 = np.zeros((s, s)), np.zeros(s)
    for c in range(1, s):
        a = parents[c]
        start[c] = start[a]
        start[c, a] += lengths[a]
        t0[c] = t0[a] + lengths[a]
    seg = rng.choice(s, size=n, p=np.asarray(weights) / sum(weights))
    u = rng.random(n)
    x = start[seg].copy()
    x[np.arange(n), seg] += u * np.asarray(lengths)[seg]
    time_ = t0[seg] + u * np.asarray(lengths)[seg]
    phi, dropout = NOISE[noise]
    # Baselines that put about 3000 counts in a cell whatever the number of genes.
    b = rng.normal(0.0, 1.0, genes) + np.log(3000.0 / genes) - 0.5
    a = rng.normal(0.0, 1.5, (genes, s)) * (rng.random((genes, s)) < 0.3)
    library = rng.lognormal(0.0, 0.3, n)
    mu = np.exp(b + x @ a.T) * library[:, None]
    lam = rng.gamma(1.0 / phi, mu * phi)
    counts = rng.poisson(lam).astype(np.float64)
    counts[rng.random(counts.shape) < dropout] = 0.0
    adata = ad.AnnData(counts)
    adata.obs_names = [f"c{i}" for i in range(n)]
    sc.pp.normalize_total(adata, target_sum=1e4)
    sc.pp.log1p(adata)
    sc.tl.pca(adata, n_comps=min(50, genes - 1))
    return adata, time_, seg


def run_unfold(adata, root, binary, work, extra):
    x = np.ascontiguousarray(adata.obsm["X_pca"], dtype=np.float64)
    np.save(work / "x.npy", x)
    cmd = [binary, "fit", "--method", "ddrtree", "--input", str(work / "x.npy"),
           "--root-cell", str(root), "--out", str(work / "e.csv"),
           "--report", str(work / "r.json"), *extra]
    subprocess.run(cmd, check=True, capture_output=True)
    report = json.loads((work / "r.json").read_text())
    order = np.loadtxt(work / "e.order.csv", delimiter=",", skiprows=1)
    notes = dict(report["notes"])
    bp = 0 if notes["branch_points"] == "none" else len(notes["branch_points"].split(", "))
    return report["seconds"], order[:, 0], order[:, 1], bp, f"d = {report['dim']}"


def run_dpt(adata, root):
    a = adata.copy()
    start = time.perf_counter()
    sc.pp.neighbors(a, use_rep="X_pca")
    sc.tl.diffmap(a)
    a.uns["iroot"] = root
    sc.tl.dpt(a)
    return time.perf_counter() - start, a.obs["dpt_pseudotime"].to_numpy(), None, None, ""


def run_palantir(adata, root):
    import palantir

    a = adata.copy()
    start = time.perf_counter()
    palantir.utils.run_diffusion_maps(a, pca_key="X_pca")
    palantir.utils.determine_multiscale_space(a)
    palantir.core.run_palantir(a, a.obs_names[root], n_jobs=1)
    seconds = time.perf_counter() - start
    fates = a.obsm["palantir_fate_probabilities"].shape[1]
    return seconds, a.obs["palantir_pseudotime"].to_numpy(), None, None, f"{fates} fates"


def run_scfates(adata, root, tuned):
    import scFates as scf

    a = adata.copy()
    start = time.perf_counter()
    if tuned:
        # The tutorials' setting: sigma relative to the data's spread, stronger lambda.
        spread = np.median(np.linalg.norm(a.obsm["X_pca"] - a.obsm["X_pca"].mean(0), axis=1))
        scf.tl.tree(a, Nodes=200, use_rep="X_pca", method="ppt", ppt_lambda=100,
                    ppt_sigma=0.1 * spread, ppt_nsteps=200, seed=1)
    else:
        scf.tl.tree(a, Nodes=200, use_rep="X_pca", method="ppt", seed=1)
    graph = a.uns["graph"]
    tips = np.asarray(graph["tips"])
    f = np.asarray(graph["F"])  # dims x nodes
    x0 = a.obsm["X_pca"][root, : f.shape[0]]
    tip = int(tips[np.argmin(np.linalg.norm(f[:, tips].T - x0, axis=1))])
    scf.tl.root(a, tip)
    scf.tl.pseudotime(a, n_map=1, seed=1)
    seconds = time.perf_counter() - start
    bp = len(graph["forks"])
    return seconds, a.obs["t"].to_numpy(), a.obs["seg"].astype(str).to_numpy(), bp, ""


def methods(n):
    out = [
        ("unfold (defaults)", lambda a, r, b, w: run_unfold(a, r, b, w, [])),
        ("unfold (defaults, sigma 1e-3)",
         lambda a, r, b, w: run_unfold(a, r, b, w, ["--sigma", "0.001"])),
        ("unfold (papers' d = 2, lambda = 5 N, sigma 1e-3)",
         lambda a, r, b, w: run_unfold(a, r, b, w, ["--dim", "2", "--lambda", str(5 * n),
                                                    "--sigma", "0.001", "--min-branch", "0",
                                                    "--pseudotime-neighbours", "1",
                                                    "--restarts", "1"])),
        ("scanpy DPT", lambda a, r, b, w: run_dpt(a, r)),
        ("Palantir", lambda a, r, b, w: run_palantir(a, r)),
        ("scFates ppt (defaults)", lambda a, r, b, w: run_scfates(a, r, False)),
        ("scFates ppt (tuned)", lambda a, r, b, w: run_scfates(a, r, True)),
    ]
    return out


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    quick = len(sys.argv) > 3 and sys.argv[3] == "quick"
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    # Warm-up (numba JIT, imports) on a small data set, not timed.
    small, t_small, _ = simulate("bifurcation", 400, 100, "low", 0)
    for _, run in methods(400):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                run(small, int(np.argmin(t_small)), binary, work)
            except Exception:
                pass
    cells = [(shape, n, genes, noise, 1)
             for n in [2000, 4000]
             for genes in [20, 200, 2000]
             for noise in ["low", "high"]
             for shape in SHAPES
             if not (quick and (n, genes) != (4000, 2000))]
    if not quick:
        cells += [(shape, 20000, 2000, "low", 1)
                  for shape in ["two-level", "binary, 3 branch points"]]
    rows = []
    for shape, n, genes, noise, seed in cells:
        adata, truth, seg = simulate(shape, n, genes, noise, seed)
        root = int(np.argmin(truth))
        for name, run in methods(n):
            try:
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    seconds, pt, groups, bp, note = run(adata, root, binary, work)
                rho = um.pseudotime_correlation(pt, truth)
                f1 = um.f1_labels(groups, seg).f1 if groups is not None else float("nan")
                bp_text = "" if bp is None else f"{bp}/{branch_points(SHAPES[shape])}"
            except Exception as e:  # a peer that fails on a cell is reported, not fatal
                seconds, rho, f1, bp_text, note = float("nan"), float("nan"), float("nan"), "", \
                    f"failed: {type(e).__name__}"
            rows.append((shape, n, genes, noise, seed, name, rho, f1, bp_text, seconds, note))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows, columns=["shape", "N", "genes", "noise", "seed", "method",
                                        "spearman", "f1", "branch_points", "seconds", "note"])
    table.to_csv(out / "trajectory_peers.csv", index=False)
    lines = ["| shape | N | genes | noise | seed | method | Spearman | F1 | branch points | seconds | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(
            f"{v:.3f}" if isinstance(v, float) else str(v) for v in r) + " |")
    (out / "trajectory_peers.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
