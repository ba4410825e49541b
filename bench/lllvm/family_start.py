"""Is the per-point family's trustworthiness gap at small k a matter of its start or of the
family? On each data set and seed, three fits of 50 EM iterations on the same kNN graph
(`crates/unfold-models/examples/lllvm_starts.rs`): the full family from the spectral
start, the per-point family from the same start, and the per-point family started from
the full fit's marginals (each point's blocks of its covariances, its means and
hyperparameters). Prints one CSV row per data set, k and seed: the three bounds (the
per-point ones before a factor is freed) and the three trustworthiness scores (10
neighbours, against the data).

Data: all 1218 USHCN stations at k = 8 and 10, all 1797 of scikit-learn's digits at
k = 6 and 10 (`families.real_data`), and the LL-LVM paper's Swiss roll of 1000 points at
k = 6 (`families.generate`); seeds 1 to 3.

    cargo build --release -p unfold-models --example lllvm_starts
    python family_start.py target/release/examples/lllvm_starts WORK_DIR
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import families as fam  # noqa: E402

example, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
real = fam.real_data()
data = {"ushcn": real["ushcn"], "digits": real["digits"], "roll": fam.generate("roll", 1000)}
cells = [("ushcn", 8), ("ushcn", 10), ("digits", 6), ("digits", 10), ("roll", 6)]
columns = ["full_bound", "own_bound", "warm_bound", "full_trust", "own_trust", "warm_trust"]
print("data,n,k,seed," + ",".join(columns))
for name, k in cells:
    y_path = work / f"{name}.npy"
    np.save(y_path, np.ascontiguousarray(data[name], dtype=float))
    for seed in [1, 2, 3]:
        out = subprocess.run([example, "family", str(y_path), str(k), str(seed), "50"],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        values = [f"{r[c]:.1f}" if c.endswith("bound") else f"{r[c]:.4f}" for c in columns]
        print(f"{name},{data[name].shape[0]},{k},{seed}," + ",".join(values), flush=True)
