"""Topology side by side: the number of branch points (and, where a method assigns cells to
branches, dyneval's F1 of those groups) from unfold's DDRTree defaults, scFates' elastic
principal graph (``method="epg"``) and scanpy's PAGA, on the data sets of ``peers.py``:

    python topology.py OUT UNFOLD_BIN

- scFates epg: ``tl.tree(method="epg", Nodes=50)`` with its documented defaults; its
  branch points are the tree's forks. Its pseudotime is not scored: scFates 1.2.5's
  ``tl.pseudotime`` after epg fails inside elpigraph-python 0.3.4 (the version it requires),
  whose ``getProjection`` reads the edges in another layout (a TypeError).
- PAGA: neighbors (15), leiden (resolution 1), paga; its topology is the maximum spanning
  tree of the PAGA connectivities between the clusters (PAGA's own abstraction of a tree),
  and a branch point is a cluster of degree 3 or more in it. PAGA orders no cells.
Every method gets the same ``X_pca`` (and unfold the root cell); timed: unfold's fit plus
ordering, epg's tree, PAGA's neighbors, clustering and graph; each warmed up once. Writes OUT/trajectory_topology.md and .csv.
"""

import contextlib
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scanpy as sc
from scipy.sparse.csgraph import minimum_spanning_tree

import unfold.metrics as um
from peers import SHAPES, branch_points, run_unfold, simulate

warnings.filterwarnings("ignore")
sc.settings.verbosity = 0


def run_epg(adata):
    import scFates as scf

    a = adata.copy()
    start = time.perf_counter()
    scf.tl.tree(a, Nodes=50, use_rep="X_pca", method="epg", seed=1)
    seconds = time.perf_counter() - start
    return seconds, len(a.uns["graph"]["forks"])


def run_paga(adata):
    a = adata.copy()
    start = time.perf_counter()
    sc.pp.neighbors(a, n_neighbors=15, use_rep="X_pca")
    sc.tl.leiden(a, resolution=1.0, flavor="igraph", n_iterations=2, random_state=1)
    sc.tl.paga(a, groups="leiden")
    seconds = time.perf_counter() - start
    conn = a.uns["paga"]["connectivities"].toarray()
    # The maximum spanning tree of the connectivities: the minimum one of their complements.
    weights = np.where(conn > 0, 2.0 - conn, 0.0)
    tree = minimum_spanning_tree(weights).toarray()
    degree = ((tree + tree.T) > 0).sum(axis=1)
    return seconds, int((degree >= 3).sum()), conn.shape[0]


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    small, t_small, _ = simulate("bifurcation", 400, 100, "low", 0)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        run_epg(small)
        run_paga(small)
    rows = []
    for n in [2000, 4000]:
        for genes, noise in [(200, "low"), (2000, "low"), (2000, "high")]:
            for shape in SHAPES:
                adata, truth, seg = simulate(shape, n, genes, noise, 1)
                root = int(np.argmin(truth))
                true_bp = branch_points(SHAPES[shape])
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    s, pt, groups, bp, _ = run_unfold(adata, root, binary, work, [])
                rows.append((shape, n, genes, noise, "unfold (defaults)",
                             um.pseudotime_correlation(pt, truth), um.f1_labels(groups, seg).f1,
                             f"{bp}/{true_bp}", s, ""))
                try:
                    with contextlib.redirect_stdout(io.StringIO()), \
                            contextlib.redirect_stderr(io.StringIO()):
                        s, bp = run_epg(adata)
                    rows.append((shape, n, genes, noise, "scFates epg", np.nan, np.nan,
                                 f"{bp}/{true_bp}", s, "tree only"))
                except Exception as e:
                    rows.append((shape, n, genes, noise, "scFates epg", np.nan, np.nan, "",
                                 np.nan, f"failed: {type(e).__name__}"))
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    s, bp, clusters = run_paga(adata)
                rows.append((shape, n, genes, noise, "PAGA", np.nan, np.nan, f"{bp}/{true_bp}",
                             s, f"{clusters} clusters"))
                for r in rows[-3:]:
                    print(r, flush=True)
    table = pd.DataFrame(rows, columns=["shape", "N", "genes", "noise", "method", "spearman",
                                        "f1", "branch_points", "seconds", "note"])
    table.to_csv(out / "trajectory_topology.csv", index=False)
    lines = ["| shape | N | genes | noise | method | Spearman | F1 | branch points | seconds | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(
            ("" if np.isnan(v) else f"{v:.3f}") if isinstance(v, float) else str(v)
            for v in r) + " |")
    (out / "trajectory_topology.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
