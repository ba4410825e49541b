"""The start of LL-LVM's noise precision: the paper's gamma0 = 1 against gamma0 fitted to the
spectral start (`crates/unfold-models/examples/lllvm_starts.rs`), in both families,
50 EM iterations each. Prints one CSV row per data set and seed: the fitted gamma0, and
for each family and start the bound and the trustworthiness (10 neighbours, against the
data).

Data: the roll, the S-curve and the sheet lifted to D = 10 at n = 400 with k = 9, seeds 0
to 19 (the spectral start's jitter; the data are those of `families.py`'s 20-seed start
table), and all 1218 USHCN stations at k = 8, seeds 1 to 3.

    cargo build --release -p unfold-models --example lllvm_starts
    python gamma_start.py target/release/examples/lllvm_starts WORK_DIR
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
cells = [(name, fam.generate(name, 400), 9, range(20)) for name in ["roll", "s-curve", "sheet"]]
cells.append(("ushcn", fam.real_data()["ushcn"], 8, [1, 2, 3]))
columns = ["fitted_gamma0"] + [f"{family}_{start}_{what}" for family in ["full", "per_point"]
                               for start in ["paper", "fitted"] for what in ["bound", "trust"]]
print("data,n,k,seed," + ",".join(columns))
for name, y, k, seeds in cells:
    y_path = work / f"{name}.npy"
    np.save(y_path, np.ascontiguousarray(y, dtype=float))
    for seed in seeds:
        out = subprocess.run([example, "gamma", str(y_path), str(k), str(seed), "50"],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        values = [f"{r[c]:.4f}" if c.endswith("trust") else f"{r[c]:.1f}" for c in columns]
        print(f"{name},{y.shape[0]},{k},{seed}," + ",".join(values), flush=True)
