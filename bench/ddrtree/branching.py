"""The branching trajectories of the DDRTree benches (`matrix.py`, `scale.py`): a trunk
into one branch point, BRANCHES arms spread over 240 degrees, a random orthonormal map into
D dimensions plus isotropic noise of standard deviation NOISE; the same design as
`unfold_data::synthetic::branching`, written in NumPy so that both sides read one file."""
import numpy as np


def branching(n, d, branches, noise, seed):
    rng = np.random.default_rng(seed)
    seg = rng.integers(0, branches + 1, n)
    s = rng.uniform(0, 1, n)
    trunk_dir = np.array([1.0, 0.0])
    angles = np.deg2rad(-120 + 240 * (np.arange(branches) + 0.5) / branches)
    arms = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    plane = np.where(
        (seg == 0)[:, None],
        (s - 1)[:, None] * trunk_dir,
        s[:, None] * arms[np.maximum(seg - 1, 0)],
    )
    basis, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return plane @ basis.T + noise * rng.standard_normal((n, d))
