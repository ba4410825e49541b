"""Side-by-side timing of unfold-glasso and scikit-learn's graphical_lasso.

Called by glasso_vs_sklearn.sh (which builds the Rust example and the virtual environment).
For each p, S is the empirical covariance (divided by n, centred) of n = 2p samples from a
Gaussian with a sparse random precision; both solvers get the same S, the same scalar penalty,
an unpenalised diagonal and the same duality-gap tolerance (scikit-learn's `tol` is the gap
tr(S Theta) - p + rho * sum_{i != j} |Theta_ij|, the same formula as unfold-glasso's).
Prints a markdown table.
"""
import subprocess
import sys
import tempfile
import time
import os

import numpy as np
import sklearn
from sklearn.covariance import empirical_covariance, graphical_lasso

BIN = sys.argv[1]
TOL = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
REPEATS = 5


def sklearn_gap(s, theta, rho):
    return np.sum(s * theta) - s.shape[0] + rho * (np.abs(theta).sum() - np.abs(np.diag(theta)).sum())


def objective(s, theta, rho):
    sign, logdet = np.linalg.slogdet(theta)
    if sign <= 0:
        return float("nan")
    return logdet - np.sum(s * theta) - rho * (np.abs(theta).sum() - np.abs(np.diag(theta)).sum())


def problem(p, seed):
    """Empirical covariance of n = 2p samples from N(0, Sigma), Sigma^{-1} sparse: about three
    off-diagonal entries +-U(0.2, 0.5) per row, the diagonal shifted so that the smallest
    eigenvalue is 0.2, then rescaled to unit variances."""
    rng = np.random.default_rng(seed)
    a = np.zeros((p, p))
    iu = np.triu_indices(p, 1)
    mask = rng.random(iu[0].size) < 3.0 / p
    vals = rng.uniform(0.2, 0.5, mask.sum()) * rng.choice([-1.0, 1.0], mask.sum())
    a[iu[0][mask], iu[1][mask]] = vals
    a = a + a.T
    prec = a + (0.2 - np.linalg.eigvalsh(a)[0]) * np.eye(p)
    cov = np.linalg.inv(prec)
    d = np.sqrt(np.diag(cov))
    cov = cov / np.outer(d, d)
    x = rng.multivariate_normal(np.zeros(p), cov, size=2 * p)
    return empirical_covariance(x)


def main():
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}; tol (duality gap) = {TOL:g}; "
          f"best of {REPEATS} runs each; diagonal unpenalised\n")
    print("| p | rho | unfold s | sklearn s | ratio | unfold gap | sklearn gap | objective diff | max abs Theta diff | nnz(Theta) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for p, rho in [(100, 0.1), (200, 0.1), (300, 0.1), (300, 0.05), (300, 0.02)]:
            s = problem(p, seed=p)
            s_path = os.path.join(tmp, f"S{p}.csv")
            t_path = os.path.join(tmp, f"T{p}.csv")
            np.savetxt(s_path, s, delimiter=",", fmt="%.17g")
            out = subprocess.run([BIN, s_path, str(rho), str(TOL), t_path, str(REPEATS)],
                                 check=True, capture_output=True, text=True).stdout
            fields = dict(kv.split("=") for kv in out.split())
            ours_s = float(fields["seconds"])
            theta_u = np.loadtxt(t_path, delimiter=",")
            best = float("inf")
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                _, theta_s = graphical_lasso(s, alpha=rho, mode="cd", tol=TOL, max_iter=1000)
                best = min(best, time.perf_counter() - t0)
            gap_u = sklearn_gap(s, theta_u, rho)
            gap_s = sklearn_gap(s, theta_s, rho)
            obj_diff = objective(s, theta_u, rho) - objective(s, theta_s, rho)
            diff = np.max(np.abs(theta_u - theta_s))
            nnz = int(np.count_nonzero(theta_u))
            print(f"| {p} | {rho:g} | {ours_s:.4f} | {best:.4f} | {best / ours_s:.1f}x | {gap_u:.2e} | "
                  f"{gap_s:.2e} | {obj_diff:+.2e} | {diff:.2e} | {nnz} |")


main()
