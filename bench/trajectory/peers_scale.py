"""The peers of ``peers.py`` at N = 20,000 to 100,000 cells: the binary tree with three
branch points, 2000 genes, low noise, reduced to 50 principal components as ``peers.py``
reduces them. Each method gets the same ``X_pca`` and root cell and is timed on its fit plus
ordering only (JIT warmed on 5000 cells); the counts are dropped before the methods run, as none of them
reads them.

    python peers_scale.py OUT UNFOLD_BIN [N ...]

Writes OUT/trajectory_peers_scale.md.
"""

import contextlib
import io
import sys
import warnings
from pathlib import Path

import anndata as ad
import numpy as np

import unfold.metrics as um
from peers import SHAPES, branch_points, run_dpt, run_palantir, run_scfates, run_unfold, simulate

warnings.filterwarnings("ignore")
SHAPE = "binary, 3 branch points"


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    sizes = [int(v) for v in sys.argv[3:]] or [20000, 50000, 100000]
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    # Above 4096 cells scanpy's neighbors switch to pynndescent, whose JIT is warmed too.
    small, t_small, _ = simulate("bifurcation", 5000, 100, "low", 0)
    runs = [
        ("unfold (defaults)", lambda a, r: run_unfold(a, r, binary, work, [])),
        ("scanpy DPT", run_dpt),
        ("Palantir", run_palantir),
        ("scFates ppt (tuned)", lambda a, r: run_scfates(a, r, True)),
    ]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for _, run in runs:
            run(small, int(np.argmin(t_small)))
    lines = ["| N | method | Spearman | F1 | branch points | seconds |", "|---|---|---|---|---|---|"]
    for n in sizes:
        full, truth, seg = simulate(SHAPE, n, 2000, "low", 1)
        adata = ad.AnnData(np.zeros((n, 0)), obs=full.obs)
        adata.obsm["X_pca"] = full.obsm["X_pca"]
        del full
        root = int(np.argmin(truth))
        for name, run in runs:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                seconds, pt, groups, bp, _ = run(adata, root)
            rho = um.pseudotime_correlation(pt, truth)
            f1 = um.f1_labels(groups, seg).f1 if groups is not None else float("nan")
            bp_text = "" if bp is None else f"{bp}/{branch_points(SHAPES[SHAPE])}"
            f1_text = "" if np.isnan(f1) else f"{f1:.3f}"
            lines.append(f"| {n} | {name} | {rho:.3f} | {f1_text} | {bp_text} | {seconds:.2f} |")
            print(lines[-1], flush=True)
    (out / "trajectory_peers_scale.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
