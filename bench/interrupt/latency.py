"""Time from Ctrl-C (SIGINT) to KeyboardInterrupt for long fits of each estimator.

Each case runs in a fresh interpreter: a noisy Swiss roll of n points in 3-D, the
estimator with its defaults, SIGINT from a timer thread `delay` seconds into the fit.
Writes the table to bench/results/interrupt.md (one run per case; the machine is shared,
so read the column as an order of magnitude).

    python bench/interrupt/latency.py            # all cases
    python bench/interrupt/latency.py --child Isomap 20000 2
"""
import os
import signal
import subprocess
import sys
import threading
import time

CASES = [
    ("Isomap", 20000, "all-pairs Dijkstra"),
    ("LaplacianEigenmaps", 60000, "Lanczos, then the likelihood's golden-section search"),
    ("LLE", 40000, "Lanczos, then the likelihood's golden-section search"),
    ("MEU", 100000, "L-BFGS-B on the sparse field"),
    ("LLLVM", 2000, "EM, full family"),
    ("DRTree", 200000, "alternations"),
    ("LLEPL", 100000, "the field search"),
    ("SPL", 8000, "dual search"),
    ("MPME", 8000, "dual search"),
    ("KernelPCA", 20000, "dense kernel, Lanczos"),
    ("CMDS", 20000, "dense distances, Lanczos"),
    ("LLLVM", 3000, "EM, full family (posterior='full'): dense inverses of order 6000"),
]
#: Parameters other than the defaults, by (estimator, points).
PARAMS = {("LLLVM", 3000): dict(posterior="full")}
DELAY = 2.0


def child(name, n, delay):
    import numpy as np
    import unfold

    rng = np.random.default_rng(0)
    t = rng.uniform(0, 3 * np.pi, n)
    h = rng.uniform(0, 10, n)
    Y = np.c_[t * np.cos(t), h, t * np.sin(t)] + 0.05 * rng.standard_normal((n, 3))
    est = getattr(unfold, name)(**PARAMS.get((name, n), {}))
    sent = {}

    def fire():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(delay, fire).start()
    start = time.monotonic()
    try:
        est.fit(Y)
    except KeyboardInterrupt:
        print(f"stopped {time.monotonic() - sent['t']:.2f}")
        return
    print(f"finished {time.monotonic() - start:.2f}", flush=True)
    try:
        time.sleep(2 * delay)  # the timer fires after the fit
    except KeyboardInterrupt:
        pass


def main():
    rows = []
    for name, n, work in CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, str(n), str(DELAY)],
            capture_output=True, text=True,
        ).stdout.split()
        if out and out[0] == "stopped":
            result = f"{out[1]} s"
        elif out and out[0] == "finished":
            result = f"the fit ended first, in {out[1]} s"
        else:
            result = "failed"

        rows.append(f"| {name} | {n:,} | {work} | {result} |")
        print(rows[-1], flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "results", "interrupt.md")
    with open(path, "w") as f:
        f.write(
            "# Ctrl-C: time from SIGINT to KeyboardInterrupt\n\n"
            f"`python bench/interrupt/latency.py`: a noisy 3-D Swiss roll, each estimator's "
            f"defaults, SIGINT {DELAY:.0f} s into the fit, one run per case on two cores.\n\n"
            "| estimator | points | long work | stopped after the signal |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        main()
