"""The wheel installs and works where there is no Rust toolchain: a fresh virtual
environment, a PATH without cargo or rustc, the wheel that ``tests/all.sh`` built (named by
``UNFOLD_WHEEL``) and its dependencies from the package index; then an estimator, ``select``
and ``tl.ddrtree`` run from it."""

import os
import shutil
import subprocess
import sys
import textwrap
import venv

import pytest

WHEEL = os.environ.get("UNFOLD_WHEEL")

SCRIPT = textwrap.dedent(
    """
    import shutil, sys
    import numpy as np
    import anndata
    import unfold
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
    assert "site-packages" in unfold.__file__, unfold.__file__
    rng = np.random.default_rng(0)
    t = rng.uniform(1.5 * np.pi, 4.5 * np.pi, 300)
    X = np.c_[t * np.cos(t), 10 * rng.uniform(size=300), t * np.sin(t)]
    est = unfold.MEU(n_components=2, n_neighbors=8).fit(X)
    assert est.embedding_.shape == (300, 2) and np.isfinite(est.embedding_).all()
    table = unfold.select("meu", X, k=[6, 8])
    assert table["value"].notna().all() and table["best"].sum() == 1
    adata = anndata.AnnData(X)
    unfold.tl.ddrtree(adata, root_cell=0)
    assert np.isfinite(adata.obs["ddrtree_pseudotime"]).all()
    print("wheel ok", unfold.__version__)
    """
)


@pytest.mark.skipif(WHEEL is None, reason="UNFOLD_WHEEL names the wheel built by tests/all.sh")
def test_the_wheel_installs_and_runs_without_a_rust_toolchain(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    # Only the new environment and the system's own programs: no ~/.cargo/bin.
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    env = {"PATH": path, "HOME": os.environ.get("HOME", str(tmp_path)), "LANG": "C.UTF-8"}
    python = str(bin_dir / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", WHEEL, "anndata"],
        check=True, env=env, cwd=tmp_path,
    )
    run = subprocess.run(
        [python, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "wheel ok" in run.stdout
