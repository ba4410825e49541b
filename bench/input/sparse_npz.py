"""Peak memory of `unfold fit` on a sparse matrix saved by `scipy.sparse.save_npz`, against
the matrix's own size and against scipy reading the same file:

    python sparse_npz.py OUT UNFOLD_BIN [N P DENSITY VALUE COMPRESSED] ...

Each case: counts-like values (1-4) at `DENSITY` in a CSR matrix of `N x P` with int32
indices and `VALUE` values (float32 or float64), saved stored or deflated. unfold runs
`fit --method pca --dim 2 --preprocess log1p,pca:50` (the exact sparse PCA to 50
components, then PCA of those) in a fresh process; its peak resident memory is
`/usr/bin/time`'s. scipy: `scipy.sparse.load_npz` alone, in a fresh process. "matrix" is
the bytes of its three arrays, "output" the 50 components' coordinates (N x 50 doubles).
Writes OUT/sparse_npz.md.
"""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DEFAULT = [(100000, 20000, 0.05, "float32", False), (50000, 10000, 0.05, "float64", True)]


def make(path, n, p, density, value, compressed):
    rng = np.random.default_rng(1)
    # Each row's columns: draws with replacement, the repeats dropped (sorted, as scipy
    # keeps them).
    rows = [np.unique(rng.integers(0, p, k)).astype(np.int32)
            for k in rng.binomial(p, density, n)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int32)
    indices = np.concatenate(rows)
    del rows
    data = rng.integers(1, 5, indptr[-1]).astype(value)
    m = sp.csr_matrix((data, indices, indptr), shape=(n, p))
    sp.save_npz(path, m, compressed=compressed)
    return data.nbytes + indices.nbytes + indptr.nbytes


def peak(cmd):
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    kib = next(int(l.split()[-1]) for l in run.stderr.splitlines() if "Maximum resident" in l)
    return kib / 1024 / 1024, seconds


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    out.mkdir(parents=True, exist_ok=True)
    args = sys.argv[3:]
    cases = [(int(args[i]), int(args[i + 1]), float(args[i + 2]), args[i + 3], args[i + 4] == "deflated")
             for i in range(0, len(args), 5)] or DEFAULT
    lines = ["| N | P | non-zeros | values | archive | file GB | matrix GB | output GB | unfold peak GB "
             "| unfold peak / (matrix + output) | unfold s | scipy load_npz peak GB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, p, density, value, compressed in cases:
        path = out / f"m_{n}_{p}_{value}_{int(compressed)}.npz"
        matrix = make(path, n, p, density, value, compressed)
        output = n * 50 * 8
        nnz = sp.load_npz(path).nnz
        unfold_gb, seconds = peak([binary, "fit", "--method", "pca", "--dim", "2", "--input", str(path),
                                   "--preprocess", "log1p,pca:50", "--out", str(out / "e.csv")])
        scipy_gb, _ = peak([sys.executable, "-c",
                            f"import scipy.sparse as sp; sp.load_npz({str(path)!r})"])
        gb = 1024 ** 3
        lines.append(
            f"| {n} | {p} | {nnz:,} | {value} | {'deflated' if compressed else 'stored'} "
            f"| {path.stat().st_size / gb:.2f} | {matrix / gb:.2f} | {output / gb:.3f} "
            f"| {unfold_gb:.2f} | {unfold_gb / ((matrix + output) / gb):.2f} | {seconds:.0f} "
            f"| {scipy_gb:.2f} |")
        print(lines[-1], flush=True)
        path.unlink()
    (out / "sparse_npz.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
