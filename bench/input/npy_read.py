"""Reading `.npy` files: two builds of `bench_read` (unfold's `read_points`, as `unfold fit
--input` calls it) on the same files, in alternating pairs of whole processes.

    python bench/input/npy_read.py OUT_DIR OLD_BENCH_READ NEW_BENCH_READ

OLD and NEW are `bench_read` built from two commits (`cargo build --release --example
bench_read` in a `git worktree` of each). Each file is read once untimed (the page cache is
warm for all), then seven pairs OLD, NEW; the table gives the medians of wall time and of
the pairs' ratios (wall time of the whole process), and each side's peak resident memory
(`/usr/bin/time`), which includes the matrix. Needs NumPy to write the files.
"""
import statistics
import subprocess
import sys
import time

import numpy as np

OUT, OLD, NEW = sys.argv[1:4]
PAIRS = 7
# (rows, cols, dtype, order): C and Fortran order, wide and narrow, float64 and float32.
FILES = [
    (20000, 2000, "<f8", "C"),
    (20000, 2000, "<f8", "F"),
    (100000, 50, "<f8", "C"),
    (1000000, 10, "<f8", "C"),
    (5000, 5000, "<f4", "C"),
    (200000, 200, "<f4", "F"),
]


def run(binary, path):
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", binary, path], check=True,
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    return wall, int(r.stderr.strip().splitlines()[-1]) / 1024


rows = []
rng = np.random.default_rng(7)
for n, p, dtype, order in FILES:
    path = f"{OUT}/{n}x{p}_{dtype[1:]}_{order}.npy"
    y = rng.standard_normal((n, p)).astype(dtype)
    np.save(path, np.asfortranarray(y) if order == "F" else y)
    mib = y.nbytes / 2**20
    del y
    run(NEW, path)
    old, new = [], []
    for _ in range(PAIRS):
        old.append(run(OLD, path))
        new.append(run(NEW, path))
    ratio = statistics.median(b[0] / a[0] for a, b in zip(old, new))
    rows.append((n, p, dtype, order, mib, statistics.median(t for t, _ in old),
                 statistics.median(t for t, _ in new), ratio,
                 max(m for _, m in old), max(m for _, m in new)))
    print(rows[-1], flush=True)
    subprocess.run(["rm", "-f", path], check=True)

with open(f"{OUT}/npy_read.md", "w") as f:
    f.write("| N | p | dtype | order | data MiB | old read (s) | new read (s) | new / old "
            "(median of pairs) | old peak MiB | new peak MiB |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for n, p, dtype, order, mib, t_old, t_new, ratio, m_old, m_new in rows:
        f.write(f"| {n} | {p} | {dtype} | {order} | {mib:.0f} | {t_old:.3f} | {t_new:.3f} | "
                f"{ratio:.2f} | {m_old:.0f} | {m_new:.0f} |\n")
