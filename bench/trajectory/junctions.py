"""Branch points and states of unfold's DDRTree defaults, two builds side by side, on the
peers bench's simulated counts (``peers.py``): N = 2000 and 4000, 200 and 2000 genes, low
and high noise, six shapes, seed 1. Accuracy only (no timing).

    python junctions.py OUT BEFORE_BIN AFTER_BIN

Writes OUT/trajectory_junctions.md: per data set, Spearman, F1 of the states against the
true segments, and branch points found / true, for each build.
"""

import sys
import warnings
from pathlib import Path

import numpy as np

import peers as P
import unfold.metrics as um

warnings.filterwarnings("ignore")


def main():
    out, before, after = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    lines = ["| N | genes | noise | shape | before: Spearman | F1 | branch points "
             "| after: Spearman | F1 | branch points |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    right = {before: 0, after: 0}
    f1s = {before: [], after: []}
    for n, genes in [(2000, 200), (2000, 2000), (4000, 200), (4000, 2000)]:
        for noise in ["low", "high"]:
            for shape in P.SHAPES:
                adata, truth, seg = P.simulate(shape, n, genes, noise, 1)
                root = int(np.argmin(truth))
                true_bp = P.branch_points(P.SHAPES[shape])
                row = [str(n), str(genes), noise, shape]
                for binary in (before, after):
                    _, pt, states, bp, _ = P.run_unfold(adata, root, binary, work, [])
                    f1 = um.f1_labels(states.astype(int).astype(str), seg).f1
                    right[binary] += bp == true_bp
                    f1s[binary].append(f1)
                    row += [f"{um.pseudotime_correlation(pt, truth):.3f}", f"{f1:.2f}",
                            f"{bp}/{true_bp}"]
                lines.append("| " + " | ".join(row) + " |")
                print(lines[-1], flush=True)
    total = len(f1s[before])
    lines += ["", "| build | right number of branch points | median F1 | mean F1 |",
              "|---|---|---|---|"]
    for name, binary in [("before", before), ("after", after)]:
        lines.append(f"| {name} | {right[binary]}/{total} | {np.median(f1s[binary]):.3f} "
                     f"| {np.mean(f1s[binary]):.3f} |")
    (out / "trajectory_junctions.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
