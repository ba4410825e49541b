"""LL-LVM's per-point family on real data at 10^4 to 10^5 points: high-contrast image
patches of scikit-learn's two sample photographs.

    python real_scale.py OUT UNFOLD_BIN

Data: every 3 x 3 (dy = 9) or 5 x 5 (dy = 25) patch of `load_sample_images()` (two
427 x 640 photographs shipped with scikit-learn), preprocessed as Lee, Pedersen and
Mumford (2003) do: log intensity of the grey level, the patch's mean removed, divided by
its contrast (the "D-norm": the root of the summed squared differences of 4-neighbour
pixels). Only the 20% of patches with the highest contrast are kept (108,000 per patch
size); of those, a seeded sample of min(all, n / 0.3) patches, and of that the n densest
(smallest distance to the 15th neighbour), the "core" that concentrates near the circle of
edge orientations. At n = 10^5 that keeps 93% of the high-contrast patches.

Every fit runs through `unfold fit --method lllvm --posterior factorised --k 9` with the
default start and mean solve, as `families.py`'s scale part does: seconds per EM iteration
are the difference between a 4-iteration and a 1-iteration fit over 3, from the fits' own
reports; peak memory is the 4-iteration process's (GNU time), with `--max-memory 8G`
(the issue's budget). A fit that is refused is reported with its message, its wall-clock
seconds and its peak. Writes OUT/lllvm_real_scale.md and .csv.
"""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_sample_images
from sklearn.neighbors import NearestNeighbors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from families import peak_mib  # noqa: E402

KEEP_CONTRAST = 0.2
KEEP_DENSITY = 0.3
K_DENSITY = 15


def patches(n, size, seed=0):
    """The n densest high-contrast `size` x `size` patches (module docs), n x size^2."""
    grey = [np.log1p(img.astype(float) @ [0.299, 0.587, 0.114])
            for img in load_sample_images().images]
    p = np.vstack([np.lib.stride_tricks.sliding_window_view(g, (size, size))
                   .reshape(-1, size * size) for g in grey])
    p = p - p.mean(1, keepdims=True)
    idx = np.arange(size * size).reshape(size, size)
    pairs = np.r_[np.c_[idx[:, :-1].ravel(), idx[:, 1:].ravel()],
                  np.c_[idx[:-1, :].ravel(), idx[1:, :].ravel()]]
    contrast = np.sqrt(((p[:, pairs[:, 0]] - p[:, pairs[:, 1]]) ** 2).sum(1))
    high = contrast >= np.quantile(contrast, 1 - KEEP_CONTRAST)
    p = p[high] / contrast[high, None]
    rng = np.random.default_rng(seed)
    p = p[rng.choice(len(p), min(len(p), int(n / KEEP_DENSITY)), replace=False)]
    dist = NearestNeighbors(n_neighbors=K_DENSITY + 1).fit(p).kneighbors(p)[0][:, -1]
    return p[np.argsort(dist, kind="stable")[:n]]


def main():
    out, binary = Path(sys.argv[1]), sys.argv[2]
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in [3, 5]:
        for n in [10000, 20000, 50000, 100000]:
            y = patches(n, size)
            row = dict(data=f"patches {size}x{size}", n=len(y), dy=y.shape[1], k=9)
            options = dict(k=9, posterior="factorised", max_memory="8G")
            start = time.perf_counter()
            try:
                one, _ = peak_mib(binary, work, y, max_iter=1, **options)
                four, peak = peak_mib(binary, work, y, max_iter=4, **options)
            except subprocess.CalledProcessError as e:
                lines = e.stderr.strip().splitlines()
                message = next((line for line in lines if line.startswith("error")), lines[-1])
                row.update(refused=message[:160], refused_s=time.perf_counter() - start,
                           refused_peak_mib=int(lines[-1]) / 1024)
            else:
                per = (four["seconds"] - one["seconds"]) / (four["iterations"] - 1)
                row.update(setup_s=one["seconds"] - per, s_per_iteration=per, peak_mib=peak,
                           bound=four["evidence"]["value"])
            rows.append(row)
            print(row, flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "lllvm_real_scale.csv", index=False)
    lines = ["| data | n | dy | k | setup s | s per EM iteration | peak MiB | "
             "bound after 4 iterations |", "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        if isinstance(getattr(r, "refused", None), str):
            lines.append(f"| {r.data} | {r.n} | {r.dy} | {r.k} | refused after "
                         f"{r.refused_s:.1f} s, peak {r.refused_peak_mib:.0f} MiB: "
                         f"{r.refused} | | | |")
        else:
            lines.append(f"| {r.data} | {r.n} | {r.dy} | {r.k} | {r.setup_s:.1f} | "
                         f"{r.s_per_iteration:.2f} | {r.peak_mib:.0f} | {r.bound:.1f} |")
    (out / "lllvm_real_scale.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
