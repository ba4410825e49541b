"""SciPy L-BFGS-B on the problems of crates/unfold-lbfgsb/examples/lbfgsb_problems.rs.

Usage: python lbfgsb_problems.py PATH_TO_RUST_EXAMPLE_BINARY
Runs the Rust example (one line per problem: name f nfev nit status), runs
scipy.optimize.minimize(method='L-BFGS-B') on the same problems from the same starts with
the same settings (m = 10, pgtol = 1e-5, factr = 1e7), and prints a markdown table.
Every problem here mirrors the Rust definition; the gradients are checked by finite
differences before the run.
"""
import subprocess
import sys

import numpy as np
import scipy
from scipy.optimize import minimize

INF = np.inf


def rosenbrock(x):
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    g = np.zeros_like(x)
    g[:-1] += -400.0 * x[:-1] * a - 2.0 * b
    g[1:] += 200.0 * a
    return float(np.sum(100.0 * a * a + b * b)), g


def rosen_start(n):
    return np.array([-1.2 if i % 2 == 0 else 1.0 for i in range(n)])


def powell(x):
    f = 0.0
    g = np.zeros_like(x)
    for b in range(len(x) // 4):
        x1, x2, x3, x4 = x[4 * b : 4 * b + 4]
        t1, t2, t3, t4 = x1 + 10 * x2, x3 - x4, x2 - 2 * x3, x1 - x4
        f += t1 * t1 + 5 * t2 * t2 + t3**4 + 10 * t4**4
        g[4 * b] = 2 * t1 + 40 * t4**3
        g[4 * b + 1] = 20 * t1 + 4 * t3**3
        g[4 * b + 2] = 10 * t2 - 8 * t3**3
        g[4 * b + 3] = -10 * t2 - 40 * t4**3
    return float(f), g


def powell_start(n):
    return np.array([[3.0, -1.0, 0.0, 1.0][i % 4] for i in range(n)])


def beale(x):
    a, b = x
    f = 0.0
    g = np.zeros(2)
    for k, ck in enumerate([1.5, 2.25, 2.625]):
        p = k + 1
        r = ck - a * (1 - b**p)
        f += r * r
        g[0] += -2 * r * (1 - b**p)
        g[1] += 2 * r * a * p * b ** (p - 1)
    return float(f), g


def wood(x):
    x1, x2, x3, x4 = x
    a, b = x2 - x1 * x1, x4 - x3 * x3
    g = np.array(
        [
            -400 * x1 * a - 2 * (1 - x1),
            200 * a + 20.2 * (x2 - 1) + 19.8 * (x4 - 1),
            -360 * x3 * b - 2 * (1 - x3),
            180 * b + 20.2 * (x4 - 1) + 19.8 * (x2 - 1),
        ]
    )
    f = (
        100 * a * a
        + (1 - x1) ** 2
        + 90 * b * b
        + (1 - x3) ** 2
        + 10.1 * ((x2 - 1) ** 2 + (x4 - 1) ** 2)
        + 19.8 * (x2 - 1) * (x4 - 1)
    )
    return float(f), g


def brown_badly_scaled(x):
    r1, r2, r3 = x[0] - 1e6, x[1] - 2e-6, x[0] * x[1] - 2
    g = np.array([2 * r1 + 2 * r3 * x[1], 2 * r2 + 2 * r3 * x[0]])
    return float(r1 * r1 + r2 * r2 + r3 * r3), g


def freudenstein_roth(x):
    y = x[1]
    r1 = -13 + x[0] + ((5 - y) * y - 2) * y
    r2 = -29 + x[0] + ((y + 1) * y - 14) * y
    g = np.array(
        [2 * r1 + 2 * r2, 2 * r1 * (10 * y - 3 * y * y - 2) + 2 * r2 * (3 * y * y + 2 * y - 14)]
    )
    return float(r1 * r1 + r2 * r2), g


def himmelblau(x):
    a, b = x[0] ** 2 + x[1] - 11, x[0] + x[1] ** 2 - 7
    return float(a * a + b * b), np.array([4 * a * x[0] + 2 * b, 2 * a + 4 * b * x[1]])


def helical_valley(x):
    r2 = x[0] ** 2 + x[1] ** 2
    r = np.sqrt(r2)
    theta = np.arctan(x[1] / x[0]) / (2 * np.pi) + (0.5 if x[0] < 0 else 0.0)
    a, b = x[2] - 10 * theta, r - 1
    dth0, dth1 = -x[1] / (2 * np.pi * r2), x[0] / (2 * np.pi * r2)
    g = np.array(
        [
            200 * (a * (-10 * dth0) + b * x[0] / r),
            200 * (a * (-10 * dth1) + b * x[1] / r),
            200 * a + 2 * x[2],
        ]
    )
    return float(100 * (a * a + b * b) + x[2] ** 2), g


def trigonometric(x):
    n = len(x)
    i = np.arange(1, n + 1)
    r = n - np.sum(np.cos(x)) + i * (1 - np.cos(x)) - np.sin(x)
    g = 2 * np.sin(x) * np.sum(r) + 2 * r * (i * np.sin(x) - np.cos(x))
    return float(np.sum(r * r)), g


class Lcg:
    """The 64-bit LCG of the Rust example, bit for bit."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 11) / float(1 << 53) * 2.0 - 1.0


def box_qp(n, seed):
    rng = Lcg(seed)
    q = np.array([rng.next() for _ in range(n * n)]).reshape(n, n)
    a = q.T @ q + 0.5 * np.eye(n)
    x_star, g_star, bounds = np.zeros(n), np.zeros(n), []
    for i in range(n):
        lo, up = -1 + 0.2 * rng.next(), 1 + 0.2 * rng.next()
        bounds.append((lo, up))
        if i % 3 == 0:
            x_star[i], g_star[i] = lo, 0.5 + abs(rng.next())
        elif i % 3 == 1:
            x_star[i], g_star[i] = up, -0.5 - abs(rng.next())
        else:
            x_star[i] = 0.5 * rng.next()
    b = g_star - a @ x_star

    def f(x):
        ax = a @ x
        return float(x @ (0.5 * ax + b)), ax + b

    return f, bounds


def free(n):
    return [(-INF, INF)] * n


def problems():
    mixed100 = [[(-1.5, 0.9), (-INF, 0.8), (0.0, INF)][i % 3] for i in range(100)]
    qp30, qp30_b = box_qp(30, 1)
    qp100, qp100_b = box_qp(100, 2)
    qp200, qp200_b = box_qp(200, 3)
    return [
        ("rosenbrock2", rosenbrock, np.array([-1.2, 1.0]), free(2)),
        ("rosenbrock2_bound", rosenbrock, np.array([-1.2, 1.0]), [(-2.0, 0.5), (-INF, INF)]),
        ("rosenbrock2_corner", rosenbrock, np.array([2.5, -0.5]), [(1.5, 3.0), (-1.0, 1.0)]),
        ("rosenbrock10", rosenbrock, rosen_start(10), free(10)),
        ("rosenbrock10_box", rosenbrock, rosen_start(10), [(-2.0, 0.8)] * 10),
        ("rosenbrock100", rosenbrock, rosen_start(100), free(100)),
        ("rosenbrock100_mixed", rosenbrock, rosen_start(100), mixed100),
        ("powell4", powell, powell_start(4), free(4)),
        ("powell12", powell, powell_start(12), free(12)),
        ("powell4_box", powell, powell_start(4), [(0.1, 100.0)] + free(3)),
        ("beale", beale, np.array([1.0, 1.0]), free(2)),
        ("beale_box", beale, np.array([1.0, 1.0]), [(-4.5, 2.5), (-4.5, 4.5)]),
        ("wood", wood, np.array([-3.0, -1.0, -3.0, -1.0]), free(4)),
        ("wood_box", wood, np.array([-3.0, -1.0, -3.0, -1.0]), [(-INF, 0.9)] + free(3)),
        ("brown_badly_scaled", brown_badly_scaled, np.array([1.0, 1.0]), free(2)),
        ("freudenstein_roth", freudenstein_roth, np.array([0.5, -2.0]), free(2)),
        ("freudenstein_roth_box", freudenstein_roth, np.array([0.5, -2.0]), [(0.0, 20.0), (0.0, 10.0)]),
        ("himmelblau_box", himmelblau, np.array([1.0, 1.0]), [(0.0, 2.5), (0.0, 1.5)]),
        ("helical_valley", helical_valley, np.array([-1.0, 0.0, 0.0]), free(3)),
        ("trigonometric10", trigonometric, np.full(10, 0.1), free(10)),
        ("trigonometric50_box", trigonometric, np.full(50, 0.02), [(0.0, 0.05)] * 50),
        ("box_qp30", qp30, np.zeros(30), qp30_b),
        ("box_qp100", qp100, np.zeros(100), qp100_b),
        ("box_qp200", qp200, np.zeros(200), qp200_b),
    ]


def gradient_error(fun, x0):
    _, g = fun(x0)
    worst = 0.0
    for i in range(len(x0)):
        h = 1e-6 * max(abs(x0[i]), 1.0)
        a, b = x0.copy(), x0.copy()
        a[i] += h
        b[i] -= h
        fd = (fun(a)[0] - fun(b)[0]) / (2 * h)
        worst = max(worst, abs(fd - g[i]) / max(abs(g[i]), 1.0))
    return worst


def main():
    rust = {}
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, f, nfev, nit, status = line.split()
        rust[name] = (float(f), int(nfev), int(nit), status)
    print(f"SciPy {scipy.__version__}, NumPy {np.__version__}; m = 10, pgtol = 1e-5, factr = 1e7.\n")
    print("| problem | n | our f | scipy f | rel. diff | our nfev | scipy nfev | ours <= scipy? |")
    print("|---|---:|---:|---:|---:|---:|---:|:---:|")
    same = fewer = both = 0
    for name, fun, x0, bounds in problems():
        err = gradient_error(fun, x0)
        if err > 1e-4:
            print(f"warning: {name} gradient check error {err:.2e}", file=sys.stderr)
        res = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxcor": 10, "gtol": 1e-5, "ftol": 1e7 * 2.22e-16, "maxiter": 15000, "maxfun": 15000},
        )
        f_ours, nfev_ours, _, _ = rust[name]
        rel = abs(f_ours - res.fun) / max(abs(f_ours), abs(res.fun), 1.0)
        ok_f = rel <= 1e-6
        ok_n = nfev_ours <= res.nfev
        same += ok_f
        fewer += ok_n
        both += ok_f and ok_n
        print(
            f"| {name} | {len(x0)} | {f_ours:.10g} | {res.fun:.10g} | {rel:.1e} | {nfev_ours} | {res.nfev} | "
            f"{'yes' if ok_n else 'no'} |"
        )
    total = len(problems())
    print(
        f"\nSame optimum (relative difference <= 1e-6, relative to max(|f|, 1)): {same}/{total}; "
        f"no more evaluations than SciPy: {fewer}/{total}; both: {both}/{total}."
    )


if __name__ == "__main__":
    main()
