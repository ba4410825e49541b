"""Where the principal tree's ordering trails diffusion pseudotime (20 genes, or high noise
with 200): is it the components the dimension rule keeps?

    python dims.py OUT UNFOLD_BIN

The data sets are those of ``peers.py`` (its ``simulate``, seed 1) with 20 and 200 genes:
six shapes, N = 2000 and 4000, low and high noise. Each is fitted with ``unfold fit
--method ddrtree --root-cell R`` and nothing else (the latent dimension d chosen by the
Gavish-Donoho rule), and scanpy's DPT (neighbors 15, diffmap, dpt; as ``peers.py``) is run
on the first d principal components, the first 10, and all of them (50, or 19 with 20
genes). Spearman's correlation of each pseudotime with the true time, and that of the first
principal component alone (its absolute value), are written to OUT/dims.csv and a
markdown table to OUT/dims.md.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import peers

warnings.filterwarnings("ignore")


def dpt(adata, root, dims):
    """DPT's pseudotime (``peers.run_dpt``) on the first `dims` principal components."""
    a = adata.copy()
    a.obsm["X_pca"] = np.ascontiguousarray(a.obsm["X_pca"][:, :dims])
    return peers.run_dpt(a, root)[1]


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for genes in [20, 200]:
        for noise in ["low", "high"]:
            for n in [2000, 4000]:
                for shape in peers.SHAPES:
                    adata, t, _ = peers.simulate(shape, n, genes, noise, 1)
                    root = int(np.argmin(t))
                    _, pt, _, _, _ = peers.run_unfold(adata, root, binary, work, [])
                    d = json.loads((work / "r.json").read_text())["dim"]
                    all_dims = adata.obsm["X_pca"].shape[1]
                    rho = lambda p: spearmanr(p, t)[0]  # noqa: E731
                    row = dict(shape=shape, n=n, genes=genes, noise=noise, d=d,
                               unfold=rho(pt), dpt_d=rho(dpt(adata, root, d)),
                               dpt_10=rho(dpt(adata, root, 10)),
                               dpt_all=rho(dpt(adata, root, all_dims)),
                               pc1=abs(rho(adata.obsm["X_pca"][:, 0])))
                    rows.append(row)
                    print(row, flush=True)
    pd.DataFrame(rows).to_csv(out / "dims.csv", index=False)
    lines = ["| shape | N | genes | noise | d chosen | unfold | DPT on d PCs | DPT on 10 | "
             "DPT on all | abs(PC1) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['n']} | {r['genes']} | {r['noise']} | {r['d']} | "
                     f"{r['unfold']:.3f} | {r['dpt_d']:.3f} | {r['dpt_10']:.3f} | "
                     f"{r['dpt_all']:.3f} | {r['pc1']:.3f} |")
    (out / "dims.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
