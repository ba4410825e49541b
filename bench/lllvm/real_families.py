"""Both LL-LVM families on real data at n <= 2000, from the same (spectral) start and 50 EM
iterations: all 1218 USHCN stations (12 monthly precipitation averages, scaled to largest
entry 1) at k = 8 to 14, and all 1797 of scikit-learn's digits (dy = 64) at k = 6 to 12.
Prints one markdown row per k: both bounds (the per-point family's before and after the
factor its report frees), the gap per point of the reported one, trustworthiness (10
neighbours, against the data) and seconds.

    python real_families.py UNFOLD_BIN WORK_DIR
"""

import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import families as fam
from sklearn.manifold import trustworthiness
B, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
real = fam.real_data()
ushcn, digits = real["ushcn"], real["digits"]
for name, y, ks in [("ushcn", ushcn, [8, 10, 12, 14]), ("digits", digits, [6, 8, 10, 12])]:
    for k in ks:
        row = {}
        for family in ["full", "factorised"]:
            r, emb = fam.fit(B, work, y, k=k, posterior=family, init="spectral", max_iter=50)
            row[family] = (r["evidence"]["value"], trustworthiness(y, emb, n_neighbors=10),
                           r["seconds"], fam.freed(r))
        n = y.shape[0]
        (fb, ft, fs, _), (pb, pt, ps, freed) = row["full"], row["factorised"]
        print(f"| {name} | {n} | {y.shape[1]} | {k} | {fb:.1f} | {freed['per_point_bound']:.1f} | "
              f"{pb:.1f} ({freed['freed']}) | {(fb - pb) / n:.3f} | {ft:.3f} | {pt:.3f} | "
              f"{fs:.1f} | {ps:.1f} |", flush=True)
