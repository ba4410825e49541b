"""Reading data and PCA at the shapes single-cell users bring: unfold against NumPy's
`loadtxt`, pandas' `read_csv` (C engine) and scikit-learn's `PCA`.

Run through `bench/input/run.sh`. CSV: unfold (a whole process, `bench_read`) and pandas
read each file in turn, seven pairs, the medians and the median of the pairs' ratios;
then `loadtxt`, three rounds, the median (the file is in the page cache for all of them:
a first untimed read warms it). PCA: `fit` only on an in-memory float64 array, unfold and
scikit-learn in turn, seven pairs, the medians and the median ratio, scikit-learn's default
solver choice (`svd_solver="auto"`) against unfold's (`solver="auto"`, through the Python
package, which reads a C-order array in place; the fit's own seconds inside Rust,
`model_.fit_seconds`, are reported beside), each call after an untimed pause of `PAUSE`
seconds.
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA

import unfold

OUT, BIN, DIR = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = 3
PAIRED_ROUNDS = 7
# OpenBLAS's worker threads spin for about 2^28 cycles (0.1 s here) after each call before
# they sleep; on 2 cores, a fit started in that time shares its cores with them (measured:
# unfold's 10,000 x 500 fits took 1.4x to 1.6x their time alone when started right after
# scikit-learn's). Each PCA fit therefore starts after a pause longer than that.
PAUSE = 0.3


def median_time(f):
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired(ours, peer, rounds=PAIRED_ROUNDS, pause=0.0):
    """Times `ours` and `peer` in turn, `rounds` times: the median of each and the median of
    the ratios of each pair (pairing keeps the ratio steady while the machine's speed
    drifts). `pause` seconds (untimed) go before each call, so that the threads the other
    side left spinning have gone to sleep."""
    a, b = [], []
    for _ in range(rounds):
        time.sleep(pause)
        start = time.perf_counter()
        ours()
        a.append(time.perf_counter() - start)
        time.sleep(pause)
        start = time.perf_counter()
        peer()
        b.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def data(n, p, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "counts":  # sparse-ish counts, as expression matrices are
        return rng.poisson(rng.gamma(0.3, 2.0, p), (n, p)).astype(np.float64)
    if kind == "lowrank":  # a rank-20 signal plus noise
        return rng.standard_normal((n, 20)) @ rng.standard_normal((20, p)) + 0.1 * rng.standard_normal((n, p))
    return rng.standard_normal((n, p))


rows_csv = []
for n, p, kind, fmt in [(20000, 500, "gauss", "%.17g"), (20000, 500, "counts", "%d"),
                        (100000, 50, "gauss", "%.6f"), (5000, 2000, "lowrank", "%.8g"),
                        (20000, 200, "lowrank", "%.18e")]:
    y = data(n, p, kind, seed=n + p)
    path = f"{DIR}/{kind}_{n}x{p}.csv"
    np.savetxt(path, y, delimiter=",", fmt=fmt)
    size_mb = os.path.getsize(path) / 1e6
    inside = []
    ours = lambda: inside.append(float(subprocess.run([BIN, path], check=True, capture_output=True,
                                                        text=True).stdout.split()[0]))
    ours()  # warm the page cache
    inside.clear()
    t_ours, t_pd, ratio = paired(ours, lambda: pd.read_csv(path, header=None, dtype=np.float64).to_numpy())
    t_np = median_time(lambda: np.loadtxt(path, delimiter=","))
    rows_csv.append((n, p, f"{kind}, `{fmt}`", size_mb, t_ours, statistics.median(inside), t_np, t_pd, ratio))
    print(rows_csv[-1], flush=True)

rows_pca = []
for n, p, q, kind in [(10000, 500, 2, "lowrank"), (10000, 500, 50, "gauss"), (20000, 2000, 50, "lowrank"),
                      (100000, 50, 10, "gauss"), (5000, 5000, 10, "lowrank"), (50000, 1000, 30, "counts")]:
    y = data(n, p, kind, seed=n * 3 + p)
    inside = []
    t_un, t_sk, ratio = paired(lambda: inside.append(unfold.PCA(n_components=q).fit(y).model_.fit_seconds),
                               lambda: PCA(n_components=q).fit(y), pause=PAUSE)
    t_in = statistics.median(inside)
    solver = PCA(n_components=q).fit(y)._fit_svd_solver
    rows_pca.append((n, p, q, kind, solver, t_sk, t_un, ratio, t_in))
    print(rows_pca[-1], flush=True)

with open(OUT, "w") as f:
    f.write("| N | p | data, format | MB | unfold read, whole process (s) | unfold read, in process (s) | "
            "numpy loadtxt (s) | pandas read_csv (s) | unfold / pandas (median of pairs) | unfold MB/s |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for n, p, kind, mb, t_ours, inner, t_np, t_pd, ratio in rows_csv:
        f.write(f"| {n} | {p} | {kind} | {mb:.0f} | {t_ours:.3f} | {inner:.3f} | {t_np:.2f} | "
                f"{t_pd:.3f} | {ratio:.2f} | {mb / inner:.0f} |\n")
    f.write("\n| N | p | q | data | scikit-learn solver | scikit-learn fit (s) | unfold fit (s) | "
            "unfold / scikit-learn (median of pairs) | unfold fit inside Rust (s) | inside / scikit-learn |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for n, p, q, kind, solver, t_sk, t_un, ratio, t_in in rows_pca:
        f.write(f"| {n} | {p} | {q} | {kind} | {solver} | {t_sk:.3f} | {t_un:.3f} | "
                f"{ratio:.2f} | {t_in:.3f} | {t_in / t_sk:.2f} |\n")
