"""LL-LVM's two variational families side by side, the per-point family's cost at scale,
and which start the bound prefers.

    python families.py OUT UNFOLD_BIN [scale|solves|families|starts ...]

Every fit runs through the command line (`unfold fit --method lllvm`); its seconds are the
fit's own, from the report. Writes OUT/lllvm_families.md (the tables of the parts asked
for, all by default) and OUT/lllvm_families.csv, replacing the rows of the parts run and
keeping the others; `python families.py OUT table` rewrites the tables from
OUT/lllvm_families.csv.

Data (numpy, seeded):
- roll: the LL-LVM paper's Swiss roll, t = 3 pi / 2 (1 + 2 u), height 21 v, dy = 3;
- s-curve: scikit-learn's `make_s_curve` with noise 0.05, dy = 3;
- sheet, sheet50: a wavy sheet (u, v, 0.3 sin(3 pi u) cos(2 pi v)) lifted by a random
  orthogonal map to D = 10 or 50, plus noise 0.01 (0.001 in the mean-solve part at
  n = 10^5, where noise of 0.01 per coordinate is ten times the points' spacing on the
  sheet and the kNN graph is random: its 2-hop pattern then overflows a sparse factor);
- digits: the first n images of scikit-learn's `load_digits` (dy = 64).
Trustworthiness is scikit-learn's with 10 neighbours.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, make_s_curve
from sklearn.manifold import trustworthiness


def generate(name, n, seed=0, noise=0.01):
    rng = np.random.default_rng(seed)
    if name == "roll":
        t = 1.5 * np.pi * (1 + 2 * rng.random(n))
        h = 21 * rng.random(n)
        return np.c_[t * np.cos(t), h, t * np.sin(t)]
    if name == "s-curve":
        return make_s_curve(n, noise=0.05, random_state=seed)[0]
    if name in ("sheet", "sheet50"):
        dim = 10 if name == "sheet" else 50
        u, v = rng.random(n), rng.random(n)
        sheet = np.c_[u, v, 0.3 * np.sin(3 * np.pi * u) * np.cos(2 * np.pi * v)]
        lift = np.linalg.qr(rng.normal(size=(dim, 3)))[0]
        return sheet @ lift.T + noise * rng.normal(size=(n, dim))
    if name == "digits":
        return load_digits().data[:n].astype(float)
    raise ValueError(name)


def real_data():
    """The real data sets at n <= 2000: all 1218 USHCN stations (12 monthly precipitation
    averages, scaled to largest entry 1) and all 1797 of scikit-learn's digits (dy = 64)."""
    root = Path(__file__).resolve().parents[2]
    u = pd.read_csv(root / "crates/unfold-data/data/ushcn_prcp_2005_2014.csv")
    ushcn = u[[f"prcp_m{m:02d}" for m in range(1, 13)]].to_numpy(float)
    return {"ushcn": ushcn / np.abs(ushcn).max(), "digits": load_digits().data.astype(float)}


def fit(binary, work, y, **options):
    """One fit through the command line: (report, embedding)."""
    x_path = work / "y.npy"
    np.save(x_path, np.ascontiguousarray(y, dtype=float))
    cmd = [binary, "fit", "--method", "lllvm", "--input", str(x_path),
           "--out", str(work / "e.csv"), "--report", str(work / "r.json")]
    for key, value in options.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    subprocess.run(cmd, check=True, capture_output=True)
    report = json.loads((work / "r.json").read_text())
    emb = np.loadtxt(work / "e.csv", delimiter=",", skiprows=1)
    return report, emb


def freed(report):
    """The per-point family's bound before the factor its report frees, and which factor
    (nothing for the full family)."""
    gains = [(name, value) for name, value in report["evidence"]["terms"]
             if name.startswith("gain_freeing_")]
    if not gains:
        return {}
    name, gain = gains[0]
    return dict(per_point_bound=report["evidence"]["value"] - gain,
                freed="q(x)" if name.endswith("_x") else "q(C)")


def peak_mib(binary, work, y, **options):
    """Seconds and peak resident memory of a whole fit (GNU time)."""
    x_path = work / "y.npy"
    np.save(x_path, np.ascontiguousarray(y, dtype=float))
    cmd = ["/usr/bin/time", "-f", "%M", binary, "fit", "--method", "lllvm",
           "--input", str(x_path), "--out", str(work / "e.csv"),
           "--report", str(work / "r.json")]
    for key, value in options.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    report = json.loads((work / "r.json").read_text())
    return report, int(done.stderr.strip().splitlines()[-1]) / 1024


def scale(binary, work, rows):
    """Seconds per EM iteration of the per-point family: a 1-iteration and a 4-iteration
    fit, the difference over the extra iterations (the setup is the first's rest)."""
    for data in ["roll", "sheet"]:
        for n in [2000, 5000, 10000, 20000]:
            y = generate(data, n)
            one, _ = peak_mib(binary, work, y, k=9, posterior="factorised", max_iter=1)
            four, peak = peak_mib(binary, work, y, k=9, posterior="factorised", max_iter=4)
            per = (four["seconds"] - one["seconds"]) / (four["iterations"] - 1)
            rows.append(dict(part="scale", data=data, n=n, dy=y.shape[1], k=9,
                             family="factorised", setup_s=one["seconds"] - per,
                             s_per_iteration=per, peak_mib=peak,
                             bound=four["evidence"]["value"]))
            print(rows[-1], flush=True)


def solves(binary, work, rows):
    """The q(x) mean solve: conjugate gradients against the factorised K_x, at 10^4 and
    10^5 points, where the direct solve fits in this machine's memory and time."""
    cells = [("roll", 100000, True, 0.01), ("sheet50", 100000, False, 0.001),
             ("sheet", 100000, False, 0.001), ("roll", 10000, True, 0.01),
             ("sheet", 10000, True, 0.01), ("sheet50", 10000, False, 0.01)]
    skip = int(os.environ.get("SOLVES_SKIP", "0"))  # cells already measured
    for data, n, direct, noise in cells[skip:]:
        y = generate(data, n, noise=noise)
        for solve in ["cg", "direct"] if direct else ["cg"]:
            one, _ = peak_mib(binary, work, y, k=9, posterior="factorised",
                              mean_solve=solve, max_iter=1)
            four, peak = peak_mib(binary, work, y, k=9, posterior="factorised",
                                  mean_solve=solve, max_iter=4)
            per = (four["seconds"] - one["seconds"]) / (four["iterations"] - 1)
            rows.append(dict(part="solves", data=data, n=n, dy=y.shape[1], k=9,
                             noise=noise if data != "roll" else None,
                             family="factorised", mean_solve=solve,
                             setup_s=one["seconds"] - per, s_per_iteration=per,
                             peak_mib=peak, bound=four["evidence"]["value"]))
            print(rows[-1], flush=True)


def families(binary, work, rows):
    """Both families from the same start: the bound per point, trustworthiness and the
    argmax of the bound over k."""
    for data, n in [("roll", 400), ("s-curve", 400), ("sheet", 400), ("digits", 400),
                    ("roll", 1000)]:
        y = generate(data, n)
        for k in [6, 8, 10, 12]:
            for family in ["full", "factorised"]:
                try:
                    report, emb = fit(binary, work, y, k=k, posterior=family,
                                      init="spectral", max_iter=50)
                except subprocess.CalledProcessError as e:
                    # A graph that is not connected at this k is reported, not fatal.
                    reason = e.stderr.decode().strip().splitlines()[-1][:80]
                    rows.append(dict(part="families", data=data, n=n, dy=y.shape[1], k=k,
                                     family=family, note=f"failed: {reason}"))
                    print(rows[-1], flush=True)
                    continue
                rows.append(dict(part="families", data=data, n=n, dy=y.shape[1], k=k,
                                 family=family, bound=report["evidence"]["value"],
                                 **freed(report),
                                 seconds=report["seconds"],
                                 iterations=report["iterations"],
                                 trustworthiness=trustworthiness(y, emb, n_neighbors=10)))
                print(rows[-1], flush=True)


def starts(binary, work, rows):
    """The random and the spectral start over 20 seeds, both families, at k = 9."""
    for data in ["roll", "s-curve", "sheet"]:
        y = generate(data, 400)
        for family in ["full", "factorised"]:
            for init in ["random", "spectral"]:
                for seed in range(20):
                    report, emb = fit(binary, work, y, k=9, posterior=family, init=init,
                                      seed=seed, max_iter=50)
                    rows.append(dict(part="starts", data=data, n=400, dy=y.shape[1], k=9,
                                     family=family, init=init, seed=seed,
                                     bound=report["evidence"]["value"],
                                     trustworthiness=trustworthiness(y, emb, n_neighbors=10)))
                    print(rows[-1], flush=True)


def table(rows):
    """The markdown tables of whichever parts were run."""
    t = pd.DataFrame(rows)
    lines = []
    if "scale" in set(t.part):
        s = t[t.part == "scale"]
        lines += ["## The per-point family at scale", "",
                  "| data | n | dy | k | setup s | s per EM iteration | peak MiB | bound after 4 iterations |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in s.itertuples():
            lines.append(f"| {r.data} | {r.n} | {r.dy} | {r.k} | {r.setup_s:.2f} | "
                         f"{r.s_per_iteration:.2f} | {r.peak_mib:.0f} | {r.bound:.1f} |")
        lines.append("")
    if "solves" in set(t.part):
        s = t[t.part == "solves"]
        lines += ["## The q(x) mean solve: conjugate gradients and the factorised K_x", "",
                  "| data | noise | n | dy | k | mean solve | setup s | s per EM iteration | "
                  "peak MiB | bound after 4 iterations |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in s.itertuples():
            noise = "" if pd.isna(r.noise) else f"{r.noise:g}"
            lines.append(f"| {r.data} | {noise} | {r.n} | {r.dy} | {r.k} | {r.mean_solve} | "
                         f"{r.setup_s:.1f} | {r.s_per_iteration:.2f} | {r.peak_mib:.0f} | "
                         f"{r.bound:.4f} |")
        lines.append("")
    if "families" in set(t.part):
        f = t[t.part == "families"]
        lines += ["## Both families from the same start", "",
                  "| data | n | dy | k | full bound | per-point bound | reported (factor freed) | "
                  "gap per point, reported | "
                  "full trustworthiness | per-point trustworthiness | full s | per-point s |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        argmax = []
        for (data, n), g in f.groupby(["data", "n"], sort=False):
            if "note" in g:
                for r in g[g.note.notna()].drop_duplicates("k").itertuples():
                    lines.append(f"| {data} | {n} | {r.dy} | {r.k} | {r.note} | | | | | | | |")
                g = g[g.note.isna()] if "note" in g else g
            full = g[g.family == "full"].set_index("k")
            pp = g[g.family == "factorised"].set_index("k")
            for k in full.index:
                a, b = full.loc[k], pp.loc[k]
                lines.append(f"| {data} | {n} | {a.dy} | {k} | {a.bound:.1f} | "
                             f"{b.per_point_bound:.1f} | {b.bound:.1f} ({b.freed}) | "
                             f"{(a.bound - b.bound) / n:.3f} | {a.trustworthiness:.3f} | "
                             f"{b.trustworthiness:.3f} | {a.seconds:.1f} | {b.seconds:.1f} |")
            kf, kp, kr = full.bound.idxmax(), pp.per_point_bound.idxmax(), pp.bound.idxmax()
            ranked = full.bound.sort_values(ascending=False)
            argmax.append(f"| {data} | {n} | {kf} | {kp} | {kr} | "
                          f"{(ranked.iloc[0] - ranked.iloc[1]) / n:.3f} |")
        lines += ["", "| data | n | argmax k (full) | argmax k (per-point bound) | "
                  "argmax k (reported per-point bound) | "
                  "full bound's lead over its runner-up, per point |",
                  "|---|---|---|---|---|---|", *argmax, ""]
    if "starts" in set(t.part):
        st = t[t.part == "starts"]
        lines += ["## The random and the spectral start (20 seeds, k = 9, n = 400, 50 iterations)", "",
                  "| data | family | mean bound, random | mean bound, spectral | seeds where spectral is higher | "
                  "mean trustworthiness, random | mean trustworthiness, spectral |",
                  "|---|---|---|---|---|---|---|"]
        for (data, family), g in st.groupby(["data", "family"], sort=False):
            r = g[g.init == "random"].set_index("seed")
            sp = g[g.init == "spectral"].set_index("seed")
            wins = int((sp.bound > r.bound.reindex(sp.index)).sum())
            lines.append(f"| {data} | {family} | {r.bound.mean():.1f} | {sp.bound.mean():.1f} | "
                         f"{wins} / {len(sp)} | {r.trustworthiness.mean():.3f} | "
                         f"{sp.trustworthiness.mean():.3f} |")
        lines.append("")
    return "\n".join(lines)


def main():
    out = Path(sys.argv[1])
    if sys.argv[2:] == ["table"]:
        rows = pd.read_csv(out / "lllvm_families.csv").to_dict("records")
        (out / "lllvm_families.md").write_text(table(rows))
        return
    binary = sys.argv[2]
    parts = sys.argv[3:] or ["scale", "solves", "families", "starts"]
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    kept = []
    if (out / "lllvm_families.csv").exists():
        old = pd.read_csv(out / "lllvm_families.csv")
        kept = old[~old.part.isin(parts)].to_dict("records")
    rows = []
    for part in parts:
        {"scale": scale, "solves": solves, "families": families,
         "starts": starts}[part](binary, work, rows)
        every = pd.DataFrame(kept + rows)
        order = ["scale", "solves", "families", "starts"]
        every = every.sort_values("part", key=lambda p: p.map(order.index), kind="stable")
        every.to_csv(out / "lllvm_families.csv", index=False)
        (out / "lllvm_families.md").write_text(table(every.to_dict("records")))


if __name__ == "__main__":
    main()
