"""Is the per-point family's trustworthiness gap at small k an artefact of stopping at 50
EM iterations? Both LL-LVM families on all 1218 USHCN stations at k = 8 and all 1797 of
scikit-learn's digits at k = 6 (the data and k where `real_seeds.py` found the gap), seeds
1 and 2, after 50 and after 150 EM iterations from the spectral start. Prints one CSV row
per fit: data, k, seed, family, iterations, trustworthiness (10 neighbours, against the
data), the reported bound and the fit's seconds.

    python real_iterations.py UNFOLD_BIN WORK_DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import families as fam  # noqa: E402
from sklearn.manifold import trustworthiness  # noqa: E402

binary, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
real = fam.real_data()
print("data,k,seed,family,iterations,trustworthiness,bound,seconds")
for name, k in [("ushcn", 8), ("digits", 6)]:
    y = real[name]
    for seed in [1, 2]:
        for family in ["factorised", "full"]:
            for iterations in [50, 150]:
                report, emb = fam.fit(binary, work, y, k=k, posterior=family,
                                      init="spectral", max_iter=iterations, seed=seed)
                print(f"{name},{k},{seed},{family},{iterations},"
                      f"{trustworthiness(y, emb, n_neighbors=10):.4f},"
                      f"{report['evidence']['value']:.1f},{report['seconds']:.1f}", flush=True)
