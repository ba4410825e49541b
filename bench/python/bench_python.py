"""The Python layer's cost over the Rust fit, and a Dask sweep against the in-process one.

Writes a Markdown table to the path given as the first argument. Timing is of fits only
(no data generation, no cluster start-up), medians over repeats, all in one run.
"""

import os
import statistics
import sys
import time

import numpy as np

import unfold
from unfold import _native


def roll(n, seed, noise=0.0):
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.uniform(size=n))
    h = 21.0 * rng.uniform(size=n)
    X = np.c_[t * np.cos(t), h, t * np.sin(t)]
    return X + noise * rng.standard_normal(X.shape)


def s_curve(n, seed, noise=0.0):
    rng = np.random.default_rng(seed)
    t = 3.0 * np.pi * (rng.uniform(size=n) - 0.5)
    X = np.c_[np.sin(t), 2.0 * rng.uniform(size=n), np.sign(t) * (np.cos(t) - 1.0)]
    return X + noise * rng.standard_normal(X.shape)


def lifted(n, seed, p=50, noise=0.05):
    """The roll embedded linearly in p dimensions, with isotropic noise."""
    rng = np.random.default_rng(seed + 1)
    A = rng.standard_normal((3, p)) / np.sqrt(3)
    return roll(n, seed) @ A + noise * rng.standard_normal((n, p))


DATA = {
    "roll (D=3)": roll,
    "noisy s-curve (D=3, noise 0.1)": lambda n, s: s_curve(n, s, 0.1),
    "roll lifted to D=50 + noise": lifted,
}


def median_time(f, repeats):
    times, rust = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        seconds = f()
        times.append(time.perf_counter() - start)
        rust.append(seconds)
    return statistics.median(times), statistics.median(rust)


def overhead_rows():
    rows = []
    cases = [
        ("MEU", {"n_neighbors": 10}, 2000, 3),
        ("LLLVM", {"n_neighbors": 9, "max_iter": 3}, 500, 3),
        ("DDRTree", {"ncenters": 100}, 2000, 3),
        ("Isomap", {"n_neighbors": 10}, 2000, 3),
    ]
    for name, params, n, repeats in cases:
        for label, make in DATA.items():
            X = make(n, 0)
            cls = unfold.ESTIMATORS[name]

            def fit():
                return cls(**params).fit(X).model_.fit_seconds

            wall, rust = median_time(fit, repeats)
            rows.append((name, label, n, wall, rust))
    return rows


def tiny_rows(calls=300):
    rows = []
    for name, params, X in [
        ("PCA", {}, roll(20, 1)),
        ("MEU", {"n_neighbors": 5}, roll(30, 1)),
    ]:
        cls = unfold.ESTIMATORS[name]
        walls, rusts = [], []
        for _ in range(calls):
            start = time.perf_counter()
            est = cls(**params).fit(X)
            walls.append(time.perf_counter() - start)
            rusts.append(est.model_.fit_seconds)
        over = [w - r for w, r in zip(walls, rusts)]
        rows.append((name, X.shape, statistics.median(walls), statistics.median(rusts), statistics.median(over)))
    return rows


SWEEPS = [
    ("meu", {}, lambda: roll(1500, 2, 0.05)),
    ("lllvm", {"max_iter": 5}, lambda: roll(400, 3, 0.05)),
    ("meu", {}, lambda: lifted(1500, 4)),
]


def one_by_one(case):
    """Sweep `case` one candidate after another in this process: (seconds, values)."""
    method, params, make = SWEEPS[case]
    X = make()
    plan = unfold._select._plan(X, range(5, 13), (2,), ("union",), None, None, 2, 0, "evidence", 0.1)
    count = _native.sweep_size(method, X, params, plan)
    start = time.perf_counter()
    trials = [_native.sweep_trial(method, X, params, plan, i) for i in range(count)]
    return time.perf_counter() - start, [t[2] for t in trials]


def sweep_rows(client):
    import json
    import subprocess

    rows = []
    for case, (method, params, make) in enumerate(SWEEPS):
        X = make()
        kw = dict(k=range(5, 13), restarts=2, **params)
        # Serial: one candidate after another on one thread (a process whose rayon pool has
        # one thread), as a sweep without any parallelism runs.
        out = subprocess.run(
            [sys.executable, __file__, "--one-by-one", str(case)],
            env={**os.environ, "RAYON_NUM_THREADS": "1"},
            check=True,
            capture_output=True,
            text=True,
        )
        serial, serial_values = json.loads(out.stdout)
        start = time.perf_counter()
        in_process = unfold.select(method, X, **kw)
        parallel = time.perf_counter() - start
        start = time.perf_counter()
        dask = unfold.select(method, X, client=client, **kw)
        on_dask = time.perf_counter() - start
        values = in_process["value"].to_numpy()
        serial_values = np.array([np.nan if v is None else v for v in serial_values])
        same_dask = np.array_equal(values, dask["value"].to_numpy(), equal_nan=True)
        same_serial = np.array_equal(values, serial_values, equal_nan=True)
        rows.append((method, X.shape, len(values), serial, parallel, on_dask, same_dask, same_serial))
    return rows


def md_table(header, rows):
    """A Markdown table: the header's cells, then one line per row."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(str(c) for c in row) + " |" for row in rows
    ]


def main(out):
    from dask.distributed import Client, LocalCluster

    load = os.getloadavg()
    over = overhead_rows()
    tiny = tiny_rows()
    # One rayon thread per worker: two workers use the two cores, as one process does.
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        env={"RAYON_NUM_THREADS": "1"},
    )
    client = Client(cluster)
    client.run(lambda: __import__("unfold"))  # import once on each worker, outside the timing
    sweeps = sweep_rows(client)
    client.close()
    cluster.close()
    load_after = os.getloadavg()
    lines = [
        "# Python package: the layer's cost and Dask sweeps",
        "",
        f"Run on {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores with `bash bench/python/run.sh`"
        f" (load average {load[0]:.1f} before, {load_after[0]:.1f} after).",
        "",
        "## The Python layer over the Rust fit",
        "",
        "Median of 3 fits through the estimator (`Estimator(**params).fit(X)`: input checks, the",
        "copy into Rust, the fit, and the fitted attributes: embedding, evidence, graph as",
        "`scipy.sparse`, tables) against the fit's own seconds measured inside Rust.",
        "",
    ]
    lines += md_table(
        ["estimator", "data", "n", "Python call s", "Rust fit s", "layer s", "layer / fit"],
        [
            (name, label, n, f"{wall:.4f}", f"{rust:.4f}", f"{wall - rust:.4f}", f"{100 * (wall - rust) / rust:.2f}%")
            for name, label, n, wall, rust in over
        ],
    )
    lines += ["", "Tiny inputs, median over 300 calls:", ""]
    lines += md_table(
        ["estimator", "shape", "Python call ms", "Rust fit ms", "layer ms"],
        [
            (name, f"{shape[0]} x {shape[1]}", f"{1e3 * wall:.3f}", f"{1e3 * rust:.3f}", f"{1e3 * over_ms:.3f}")
            for name, shape, wall, rust, over_ms in tiny
        ],
    )
    lines += [
        "",
        "## Sweeps: k = 5..12, 2 restarts (16 candidates)",
        "",
        "- *serial*: one candidate after another on one thread (`RAYON_NUM_THREADS=1`);",
        "- *in process*: `unfold.select(...)`, candidates in parallel on rayon's pool (2 threads);",
        "- *Dask*: `unfold.select(..., client=client)` on a `LocalCluster` of 2 process workers",
        "  with 1 thread each (and one rayon thread each), data scattered once (cluster",
        "  start-up not timed).",
        "",
    ]
    lines += md_table(
        ["method", "data", "candidates", "serial s", "in process s", "Dask s",
         "Dask speed-up over serial", "Dask time / in-process time",
         "Dask values = in process", "serial values = in process"],
        [
            (method, f"{shape[0]} x {shape[1]}", count, f"{seq:.2f}", f"{inproc:.2f}", f"{dask:.2f}",
             f"{seq / dask:.2f}x", f"{dask / inproc:.2f}x",
             "yes" if same_dask else "no", "yes" if same_serial else "no")
            for method, shape, count, seq, inproc, dask, same_dask, same_serial in sweeps
        ],
    )
    lines += [
        "",
        "Values are compared to the bit. A sweep gives the same values on any route with the",
        "same number of rayon threads per fit (the Dask test in `python/tests` runs its",
        "workers with the main process's pool); where a method's reductions depend on the",
        "pool's size, a route with another thread count differs in the last digits",
        "(issue 18 asks for the same bits on any thread count).",
    ]
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    if sys.argv[1] == "--one-by-one":
        import json

        print(json.dumps(one_by_one(int(sys.argv[2]))))
    else:
        main(sys.argv[1])
