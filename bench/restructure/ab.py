"""Old against new: the same `unfold fit` commands with two builds, in turn.

    python ab.py OLD_BIN NEW_BIN [REPS] [METHOD,METHOD,...]

Generates the data sets below (seeded), then for every case runs OLD and NEW in turn
(old, new, old, new, ...) REPS times each and reads the fit's own seconds from the JSON
report (`seconds`: the fit only, not reading the file or writing the outputs). The ratio
new/old is taken pair by pair and its median reported, so a drift of the machine's speed
during the run moves both sides of a pair alike. The embeddings and the evidence of the
two builds are compared too: "same" means the output CSV files are byte for byte equal.
Prints a Markdown table.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np


def roll(n, noise, seed):
    r = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1 + 2 * r.random(n))
    h = 21 * r.random(n)
    y = np.c_[t * np.cos(t), h, t * np.sin(t)]
    return y + noise * r.standard_normal(y.shape)


def s_curve(n, noise, seed):
    r = np.random.default_rng(seed)
    t = 3 * np.pi * (r.random(n) - 0.5)
    y = np.c_[np.sin(t), 2 * r.random(n), np.sign(t) * (np.cos(t) - 1)]
    return y + noise * r.standard_normal(y.shape)


def lifted(n, d, seed):
    """The roll mapped linearly into d dimensions, plus noise 0.05."""
    r = np.random.default_rng(seed + 1)
    a = r.standard_normal((3, d)) / np.sqrt(3)
    return roll(n, 0.0, seed) @ a + 0.05 * r.standard_normal((n, d))


def branches(n, d, nbranch, noise, seed):
    """A tree of nbranch segments from one point, then mapped linearly into d dimensions."""
    r = np.random.default_rng(seed)
    dirs = r.standard_normal((nbranch, 3))
    which = r.integers(0, nbranch, n)
    t = r.random(n)
    z = dirs[which] * t[:, None] * 5
    a = r.standard_normal((3, d)) / np.sqrt(3)
    return z @ a + noise * r.standard_normal((n, d))


DATA = {
    "roll-2000": lambda: roll(2000, 0.05, 0),
    "s-curve-2000 (noise 0.1)": lambda: s_curve(2000, 0.1, 1),
    "roll-D50-2000": lambda: lifted(2000, 50, 2),
    "roll-400": lambda: roll(400, 0.05, 3),
    "roll-300": lambda: roll(300, 0.05, 4),
    "tree-20000-D50": lambda: branches(20000, 50, 3, 0.05, 5),
    "tree-5000-D500": lambda: branches(5000, 500, 6, 0.1, 6),
}

# method | data | flags, one case per line.
CASES = [
    (method.strip(), data.strip(), flags.split())
    for method, data, flags in (line.split("|") for line in """
pca | roll-D50-2000 |
cmds | roll-2000 |
kpca | roll-2000 |
le | roll-2000 |
le | s-curve-2000 (noise 0.1) |
lle | roll-2000 |
isomap | roll-2000 |
isomap | roll-D50-2000 |
mvu | roll-300 | --k 6
meu | roll-2000 |
meu | s-curve-2000 (noise 0.1) |
meu | roll-D50-2000 |
alle | roll-2000 |
lle-pl | roll-2000 |
drill | roll-300 |
lllvm | roll-400 | --max-iter 5
spl | roll-300 |
mpme | roll-300 |
drtree | roll-2000 |
ddrtree | roll-2000 |
ddrtree | tree-20000-D50 | --ncenters 200
ddrtree | tree-20000-D50 | --ncenters 200 --compat r --order
ddrtree | tree-5000-D500 | --ncenters 100
""".strip().splitlines())
]


def fit(binary, method, path, flags, out):
    report = out + ".json"
    cmd = [binary, "fit", "--method", method, "--input", path, "--out", out,
           "--report", report] + flags
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as f:
        r = json.load(f)
    with open(out, "rb") as f:
        return r["seconds"], f.read(), r["evidence"]["value"]


def main():
    old, new = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    work = tempfile.mkdtemp()
    paths = {}
    for name, make in DATA.items():
        paths[name] = os.path.join(work, name.split()[0] + ".csv")
        np.savetxt(paths[name], make(), delimiter=",")
    print("| method | data | flags | old s | new s | new / old (median of pairs) | outputs |")
    print("|---|---|---|---|---|---|---|")
    only = sys.argv[4].split(",") if len(sys.argv) > 4 else None
    for method, data, flags in CASES:
        if only and method not in only:
            continue
        a, b, ratios, same = [], [], [], True
        for _ in range(reps):
            try:
                ta, ea, va = fit(old, method, paths[data], flags, os.path.join(work, "a.csv"))
                tb, eb, vb = fit(new, method, paths[data], flags, os.path.join(work, "b.csv"))
            except subprocess.CalledProcessError as e:
                print(f"| {method} | {data} | {' '.join(flags) or '-'} | - | - | - "
                      f"| the {'old' if e.cmd[0] == old else 'new'} build's fit failed |", flush=True)
                break
            a.append(ta)
            b.append(tb)
            ratios.append(tb / ta)
            same = same and ea == eb and va == vb
        if not a:
            continue
        print(f"| {method} | {data} | {' '.join(flags) or '-'} | {statistics.median(a):.4f} "
              f"| {statistics.median(b):.4f} | {statistics.median(ratios):.3f} "
              f"| {'same' if same else 'DIFFER'} |", flush=True)


if __name__ == "__main__":
    main()
