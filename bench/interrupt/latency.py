"""Time from Ctrl-C (SIGINT) to KeyboardInterrupt for long fits of each estimator.

Each run is a fresh interpreter: the estimator with its defaults (and the parameters of
its case), SIGINT from a timer thread `delay` seconds into the fit. The first table sends
the signal 2 s in; the second sends it at several times into fits whose long work
includes single library calls (sparse numeric factorisations, dense eigenvalues), to
show the stop wherever the signal lands. Writes bench/results/interrupt.md (one run per
cell; the machine is shared, so read the columns as orders of magnitude).

    python bench/interrupt/latency.py              # every case and sweep
    python bench/interrupt/latency.py --sweeps     # the sweeps only (the first table kept)
    python bench/interrupt/latency.py --first      # the first table only (the sweeps kept)
    python bench/interrupt/latency.py --child 3 2  # case 3, signal after 2 s
"""
import os
import signal
import subprocess
import sys
import threading
import time

#: (estimator, points, data, parameters other than the defaults, the long work).
CASES = [
    ("Isomap", 20000, "roll", {}, "all-pairs Dijkstra"),
    ("LaplacianEigenmaps", 60000, "roll", {},
     "Lanczos, then the likelihood's golden-section search"),
    ("LLE", 40000, "roll", {}, "Lanczos, then the likelihood's golden-section search"),
    ("MEU", 100000, "roll", {}, "L-BFGS-B on the sparse field"),
    ("LLLVM", 2000, "roll", {}, "EM, full family"),
    ("DRTree", 200000, "roll", {}, "alternations"),
    ("LLEPL", 100000, "roll", {}, "the field search"),
    ("SPL", 8000, "roll", {}, "dual search"),
    ("MPME", 8000, "roll", {}, "dual search"),
    ("KernelPCA", 20000, "roll", {}, "dense kernel, Lanczos"),
    ("CMDS", 20000, "roll", {}, "dense distances, Lanczos"),
    ("LLLVM", 3000, "roll", {"posterior": "full"},
     "EM, full family: dense eigenvalues of L and L^+, inverses of order 6000"),
    ("LLLVM", 30000, "sheet50", {"posterior": "factorised"},
     "EM, per-point family: sparse LDL^T of K_C (order n (dx + dy))"),
    ("LLLVM", 100000, "sheet50, noise 0.001", {"posterior": "factorised"},
     "EM, per-point family: sparse LDL^T of K_C (order n (dx + dy))"),
    ("select:lllvm", 30000, "sheet50", {"k": (8, 9), "posterior": "factorised"},
     "a sweep of two per-point fits in parallel, one on each core: sparse LDL^T of K_C"),
]
DELAY = 2.0
#: Case index -> the delays (s) of its sweep.
SWEEPS = {
    3: [1, 2, 3, 4, 5, 6, 8],
    11: [0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10],
    12: [5, 10, 15, 20, 25, 30, 35, 40],
    13: [20, 40, 60, 80, 100, 120, 140, 160],
    14: [5, 10, 15, 20, 25, 30, 40, 50],
}
#: Cases run in the sweeps only.
SWEEP_ONLY = {13, 14}


def data(kind, n):
    import numpy as np

    rng = np.random.default_rng(0)
    if kind == "roll":
        t = rng.uniform(0, 3 * np.pi, n)
        h = rng.uniform(0, 10, n)
        return np.c_[t * np.cos(t), h, t * np.sin(t)] + 0.05 * rng.standard_normal((n, 3))
    # A wavy sheet lifted to 50 dimensions by a random orthonormal map, with noise 0.01 per
    # coordinate, or 0.001 where asked: at 10^5 points 0.01 is ten times the points'
    # spacing on the sheet, the kNN graph is close to random, and LL-LVM's per-point fit
    # refuses it after about 140 s (its sparse factor would overflow 32-bit indices).
    noise = 0.001 if kind.endswith("noise 0.001") else 0.01
    u, v = rng.random(n), rng.random(n)
    sheet = np.c_[u, v, 0.3 * np.sin(3 * np.pi * u) * np.cos(2 * np.pi * v)]
    lift = np.linalg.qr(rng.normal(size=(50, 3)))[0]
    return sheet @ lift.T + noise * rng.normal(size=(n, 50))


def child(case, delay):
    import unfold

    # A shell that starts this in the background without job control has SIGINT ignored,
    # and Python then keeps it ignored: restore the handler that raises KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    name, n, kind, params, _ = CASES[case]
    Y = data(kind, n)
    if name.startswith("select:"):
        # `unfold.select` runs its candidates on the process's thread pool.
        method = name.split(":")[1]
        fit = lambda: unfold.select(method, Y, **params)  # noqa: E731
    else:
        fit = lambda: getattr(unfold, name)(**params).fit(Y)  # noqa: E731
    sent = {}

    def fire():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(delay, fire).start()
    start = time.monotonic()
    try:
        fit()
    except KeyboardInterrupt:
        print(f"stopped {time.monotonic() - sent['t']:.2f}")
        return
    print(f"finished {time.monotonic() - start:.2f}", flush=True)
    try:
        time.sleep(2 * delay)  # the timer fires after the fit
    except KeyboardInterrupt:
        pass


def run(case, delay):
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(case), str(delay)],
        capture_output=True, text=True,
    )
    out = done.stdout.split()
    if out and out[0] == "stopped":
        return out[1]
    if out and out[0] == "finished":
        return f"ended first ({out[1]} s)"
    # Say why: the child's last words, or how it ended.
    last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
    print(f"case {case} at {delay} s failed: {last[0]}", file=sys.stderr, flush=True)
    return "failed"


def describe(case):
    name, n, kind, params, work = CASES[case]
    given = ", ".join(f"{k}={v!r}" for k, v in params.items())
    data_name = "" if kind == "roll" else f" ({kind})"
    if name.startswith("select:"):
        name, given = "select", f"{name.split(':')[1]!r}, " + given
    return name + (f"({given})" if given else ""), f"{n:,}{data_name}", work


def main(sweeps_only, first_only):
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "results", "interrupt.md")
    if sweeps_only:
        with open(path) as f:
            first = f.read().split("\n## ")[0].rstrip() + "\n"
    else:
        rows = []
        for case in range(len(CASES)):
            if case in SWEEP_ONLY:
                continue
            result = run(case, DELAY)
            name, points, work = describe(case)
            cell = f"{result} s" if result[0].isdigit() else result
            rows.append(f"| {name} | {points} | {work} | {cell} |")
            print(rows[-1], flush=True)
        first = (
            "# Ctrl-C: time from SIGINT to KeyboardInterrupt\n\n"
            "`python bench/interrupt/latency.py`: a noisy 3-D Swiss roll (or the named data), "
            f"each estimator's defaults, SIGINT {DELAY:.0f} s into the fit, one run per case "
            f"on two cores. Run on {time.strftime('%Y-%m-%d at %H:%M UTC', time.gmtime())}.\n\n"
            "| estimator | points | long work | stopped after the signal |\n"
            "|---|---|---|---|\n" + "\n".join(rows) + "\n"
        )
    if first_only:
        with open(path) as f:
            rest = f.read().split("\n## ", 1)[1]
        with open(path, "w") as f:
            f.write(first + "\n## " + rest)
        return
    sections = []
    for case, delays in SWEEPS.items():
        name, points, work = describe(case)
        stops = []
        for delay in delays:
            stops.append(run(case, delay))
            print(name, points, delay, stops[-1], flush=True)
        sections.append(
            f"**{name}, {points} points** ({work}):\n\n"
            "| signal after (s) | " + " | ".join(str(d) for d in delays) + " |\n"
            + "|---" * (len(delays) + 1) + "|\n"
            "| stopped after (s) | " + " | ".join(stops) + " |\n"
        )
    with open(path, "w") as f:
        f.write(
            first + "\n## The signal at other times\n\n"
            "One run per cell, finished "
            f"{time.strftime('%Y-%m-%d at %H:%M UTC', time.gmtime())}.\n\n"
            + "\n".join(sections)
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), float(sys.argv[3]))
    else:
        main("--sweeps" in sys.argv, "--first" in sys.argv)
