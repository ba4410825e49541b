import numpy as np
import pytest


def swiss_roll(n, seed=0, noise=0.0):
    """The LL-LVM paper's Swiss roll in 3-D, seeded."""
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.uniform(size=n))
    h = 21.0 * rng.uniform(size=n)
    X = np.c_[t * np.cos(t), h, t * np.sin(t)]
    return X + noise * rng.standard_normal(X.shape)


@pytest.fixture
def roll():
    return swiss_roll(200, seed=1)
