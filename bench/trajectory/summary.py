"""The per-data-set table and the counts of `bench/results/trajectory_peers.md`, from the
CSV that `peers.py` writes:

    python summary.py OUT/trajectory_peers.csv

"best peer": the highest Spearman of DPT, Palantir and scFates (defaults or tuned);
"fastest equal peer / unfold": the time of the fastest peer whose Spearman is at least
unfold's minus 0.01, over unfold's; "fastest peer / unfold": the fastest peer whatever its
accuracy.
"""

import sys

import numpy as np
import pandas as pd

UNFOLD = "unfold (defaults)"
HARD = "unfold (defaults, sigma 1e-3)"
PEERS = ["scanpy DPT", "Palantir", "scFates ppt (defaults)", "scFates ppt (tuned)"]


def fmt(v, digits=3):
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{digits}f}"


def main():
    table = pd.read_csv(sys.argv[1])
    papers = [m for m in table.method.unique() if m.startswith("unfold (papers")][0]
    keys = ["shape", "N", "genes", "noise", "seed"]
    lines = [
        "| shape | N | genes | noise | unfold Spearman | sigma 1e-3 | papers' settings | best peer "
        "| best peer is | unfold F1 | scFates F1 (best) | unfold branch points | unfold s "
        "| fastest equal peer / unfold | fastest peer / unfold | within 0.01 of best |",
        "|" + "---|" * 16,
    ]
    rows = []
    for key, cell in table.groupby(keys, sort=False):
        by = cell.set_index("method")
        u = by.loc[UNFOLD]
        peers = by.loc[[m for m in PEERS if m in by.index]]
        ok = peers[np.isfinite(peers.spearman)]
        best = ok.spearman.idxmax() if len(ok) else None
        best_rho = ok.spearman.max() if len(ok) else np.nan
        equal = ok[ok.spearman >= u.spearman - 0.01]
        fastest_equal = equal.seconds.min() / u.seconds if len(equal) else np.nan
        fastest = ok.seconds.min() / u.seconds if len(ok) else np.nan
        scf = peers[peers.index.str.startswith("scFates")]
        scf_f1 = scf.loc[scf.spearman.idxmax(), "f1"] if len(scf.dropna(subset=["spearman"])) else np.nan
        within = bool(u.spearman >= best_rho - 0.01) if np.isfinite(best_rho) else True
        rows.append(dict(zip(keys, key), rho=u.spearman, hard=by.loc[HARD, "spearman"],
                         papers=by.loc[papers, "spearman"], best=best_rho, f1=u.f1,
                         bp=u.branch_points, seconds=u.seconds, fastest_equal=fastest_equal,
                         fastest=fastest, within=within, best_is=best, scf_f1=scf_f1))
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fmt(u.spearman)} "
            f"| {fmt(by.loc[HARD, 'spearman'])} | {fmt(by.loc[papers, 'spearman'])} "
            f"| {fmt(best_rho)} | {best or ''} | {fmt(u.f1)} | {fmt(scf_f1)} | {u.branch_points} "
            f"| {u.seconds:.3f} | {fmt(fastest_equal, 1)} | {fmt(fastest, 1)} | {within} |")
    print("\n".join(lines))
    r = pd.DataFrame(rows)
    ident = r[(r.noise == "low") & (r.genes >= 200)]
    print()
    print(f"within 0.01 of the best peer: {r.within.sum()} of {len(r)}; "
          f"low noise, 200 or 2000 genes: {ident.within.sum()} of {len(ident)}")
    gap = ident.rho - ident.best
    print(f"  gap to best peer there: median {gap.median():+.3f}, min {gap.min():+.3f}")
    print(f"  F1 median there: unfold {ident.f1.median():.3f}, scFates best {ident.scf_f1.median():.3f}")
    right = ident.bp.map(lambda b: b.split("/")[0] == b.split("/")[1])
    print(f"  right number of branch points there: {right.sum()} of {len(ident)}")
    d = r.rho - r.hard
    print(f"defaults against sigma 1e-3: up > 0.005 in {(d > 0.005).sum()}, down < -0.005 in "
          f"{(d < -0.005).sum()} of {len(r)}; median {d.median():+.3f}")
    for name, g in [("low noise, 200/2000 genes", ident),
                    ("high noise, 200 genes", r[(r.noise == "high") & (r.genes == 200)]),
                    ("high noise, 2000 genes", r[(r.noise == "high") & (r.genes == 2000)]),
                    ("20 genes", r[r.genes == 20])]:
        dd = g.rho - g.hard
        print(f"  {name}: median {dd.median():+.3f}, min {dd.min():+.3f}, max {dd.max():+.3f}; "
              f"unfold {g.rho.min():.2f}-{g.rho.max():.2f}, best peer {g.best.min():.2f}-{g.best.max():.2f}")
    print(f"defaults against the papers' settings: up in {(r.rho > r.papers).sum()} of {len(r)}")
    small = table[table.N <= 4000]
    med = small.groupby("method").seconds.median()
    print("median seconds at N <= 4000: " + ", ".join(f"{m} {v:.3f}" for m, v in med.items()))
    low = r[(r.noise == "low")]
    print(f"fastest equal peer / unfold, low noise: median {low.fastest_equal.median():.1f}, "
          f"min {low.fastest_equal.min():.2f}")
    print(f"fastest peer / unfold: median {r.fastest.median():.1f}, range "
          f"{r.fastest.min():.2f}-{r.fastest.max():.1f}")


if __name__ == "__main__":
    main()
