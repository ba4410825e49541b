"""Both LL-LVM families on real data over seeds: the spectral start's jitter is seeded, so
each seed is another start on the same data. All 1218 USHCN stations (12 monthly
precipitation averages, scaled to largest entry 1) at k = 8 to 14, and all 1797 of
scikit-learn's digits (dy = 64) at k = 6 and 10; 50 EM iterations. Prints one markdown row
per data set and k: the mean and range of trustworthiness (10 neighbours, against the data)
over the seeds for each family, the mean difference (per-point minus full) with its
range, and the seeds on which the per-point family is within 0.01 of the full family or
above it.

    python real_seeds.py UNFOLD_BIN WORK_DIR [SEEDS]
"""

import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import families as fam, numpy as np
from sklearn.manifold import trustworthiness
B, work = sys.argv[1], Path(sys.argv[2])
seeds = range(1, 1 + (int(sys.argv[3]) if len(sys.argv) > 3 else 5))
work.mkdir(parents=True, exist_ok=True)
real = fam.real_data()
ushcn, digits = real["ushcn"], real["digits"]
print("| data | k | seeds | full: mean (range) | per-point: mean (range) | "
      "per-point - full: mean (range) | seeds within 0.01 or above |")
print("|---|---|---|---|---|---|---|")
for name, y, ks in [("ushcn", ushcn, [8, 10, 12, 14]), ("digits", digits, [6, 10])]:
    for k in ks:
        t = {family: [] for family in ["full", "factorised"]}
        for seed in seeds:
            for family in t:
                _, emb = fam.fit(B, work, y, k=k, posterior=family, init="spectral",
                                 max_iter=50, seed=seed)
                t[family].append(trustworthiness(y, emb, n_neighbors=10))
        f, p = np.array(t["full"]), np.array(t["factorised"])
        d = p - f
        print(f"| {name} | {k} | {len(f)} | {f.mean():.3f} ({f.min():.3f}-{f.max():.3f}) | "
              f"{p.mean():.3f} ({p.min():.3f}-{p.max():.3f}) | {d.mean():+.3f} "
              f"({d.min():+.3f} to {d.max():+.3f}) | {(d >= -0.01).sum()} / {len(d)} |",
              flush=True)
