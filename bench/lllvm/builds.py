"""Seconds per EM iteration of LL-LVM's per-point family for two builds of unfold, in
turns, on the generators of `families.py` and the image patches of `real_scale.py`.

    python builds.py OUT UNFOLD_BIN_BEFORE UNFOLD_BIN_AFTER [CELLS]

For every data set, the two binaries run one after the other (before, after) as
`families.py`'s scale part runs them: a 1-iteration and a 4-iteration fit of
`unfold fit --method lllvm --posterior factorised --k 9` with the default start and mean
solve, `--max-memory 8G`; seconds per EM iteration are the difference of the two fits'
own seconds over 3, the setup the 1-iteration fit's rest, the peak the 4-iteration
process's resident memory (GNU time). The bounds after 4 iterations of the two builds are
printed side by side. CELLS (optional) is a comma-separated list of cell names to run;
all by default. Writes OUT/lllvm_builds.csv and OUT/lllvm_builds.md.
"""

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from families import generate, peak_mib  # noqa: E402
from real_scale import patches  # noqa: E402

# name: (data, n, noise); noise None where the generator has none.
CELLS = {
    "roll-1e4": ("roll", 10000, None),
    "sheet-1e4": ("sheet", 10000, 0.01),
    "sheet50-1e4": ("sheet50", 10000, 0.01),
    "patches5-1e4": ("patches 5x5", 10000, None),
    "roll-1e5": ("roll", 100000, None),
    "sheet50-1e5": ("sheet50", 100000, 0.001),
}


def data(name, n, noise):
    if name.startswith("patches"):
        return patches(n, int(name.split()[1][0]))
    if noise is None:
        return generate(name, n)
    return generate(name, n, noise=noise)


def main():
    out, before, after = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    chosen = sys.argv[4].split(",") if len(sys.argv) > 4 else list(CELLS)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    options = dict(k=9, posterior="factorised", max_memory="8G")
    for cell in chosen:
        name, n, noise = CELLS[cell]
        y = data(name, n, noise)
        fits = {}
        for iterations in [1, 4]:
            for build, binary in [("before", before), ("after", after)]:
                fits[build, iterations] = peak_mib(binary, work, y, max_iter=iterations,
                                                   **options)
        for build in ["before", "after"]:
            (one, _), (four, peak) = fits[build, 1], fits[build, 4]
            per = (four["seconds"] - one["seconds"]) / (four["iterations"] - 1)
            rows.append(dict(data=name, noise=noise, n=n, dy=y.shape[1], k=9, build=build,
                             setup_s=one["seconds"] - per, s_per_iteration=per,
                             peak_mib=peak, bound=four["evidence"]["value"]))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "lllvm_builds.csv", index=False)
    lines = ["| data | noise | n | dy | s per EM iteration, before | after | ratio | "
             "setup s, before | after | peak MiB, before | after | bound after 4 "
             "iterations, before | after |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, pair in table.groupby(["data", "n"], sort=False):
        b, a = pair.iloc[0], pair.iloc[1]
        noise = "" if pd.isna(b.noise) else f"{b.noise:g}"
        lines.append(f"| {b.data} | {noise} | {b.n} | {b.dy} | {b.s_per_iteration:.2f} | "
                     f"{a.s_per_iteration:.2f} | {b.s_per_iteration / a.s_per_iteration:.2f} | "
                     f"{b.setup_s:.1f} | {a.setup_s:.1f} | {b.peak_mib:.0f} | "
                     f"{a.peak_mib:.0f} | {b.bound:.4f} | {a.bound:.4f} |")
    (out / "lllvm_builds.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
