"""Python and the command line give the same bits for the same data and settings."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import unfold
from conftest import swiss_roll

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("UNFOLD_BIN", ROOT / "target" / "release" / "unfold"))


@pytest.fixture(scope="module")
def cli():
    if not BIN.exists():
        pytest.fail(f"the unfold binary is not built at {BIN}: run `cargo build --release --bin unfold` (tests/all.sh does)")
    return BIN


def write_csv(path, X):
    # repr gives the shortest text that reads back to the same double.
    lines = ["a,b,c"] + [",".join(repr(float(v)) for v in row) for row in X]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "method, cli_args, params",
    [
        ("meu", ["--k", "8"], {"n_neighbors": 8}),
        ("lllvm", ["--k", "8", "--max-iter", "4"], {"n_neighbors": 8, "max_iter": 4}),
        ("ddrtree", ["--ncenters", "30"], {"ncenters": 30}),
    ],
)
def test_fit_matches_the_command_line_bit_for_bit(tmp_path, cli, method, cli_args, params):
    X = swiss_roll(150, seed=3, noise=0.05)
    data = tmp_path / "x.csv"
    write_csv(data, X)
    out, report = tmp_path / "emb.csv", tmp_path / "report.json"
    subprocess.run(
        [cli, "fit", "--method", method, "--input", data, "--out", out, "--report", report, *cli_args],
        check=True,
        capture_output=True,
    )
    theirs = pd.read_csv(out, float_precision="round_trip").to_numpy()
    est = unfold.ESTIMATORS[unfold._estimators.CLASS_NAMES[method]](**params).fit(X)
    assert np.array_equal(est.embedding_, theirs)
    evidence = json.loads(report.read_text())["evidence"]
    assert evidence["value"] == est.evidence_.value
    assert evidence["kind"] == est.evidence_.kind


def test_select_matches_the_command_line(tmp_path, cli):
    X = swiss_roll(120, seed=4)
    data = tmp_path / "x.csv"
    write_csv(data, X)
    out = tmp_path / "select.csv"
    subprocess.run(
        [cli, "select", "--method", "meu", "--input", data, "--k", "5..8", "--restarts", "2", "--out", out],
        check=True,
        capture_output=True,
    )
    theirs = pd.read_csv(out, float_precision="round_trip", keep_default_na=False, na_values={"value": [""]})
    ours = unfold.select("meu", X, k=range(5, 9), restarts=2)
    cols = ["k", "graph", "dim", "restart", "seed", "kind", "value", "best"]
    pd.testing.assert_frame_equal(ours[cols], theirs[cols], check_exact=True, check_dtype=False)


def test_the_command_line_fits_and_projects_sparse_points_with_isomap_as_python_does(tmp_path, cli):
    """``unfold fit --method isomap`` and ``le`` take a matrix saved by
    ``scipy.sparse.save_npz`` as it is, with Python's bits for the same sparse matrix, and
    ``unfold project`` places sparse new points as Python's ``transform`` does."""
    import scipy.sparse as sp

    rng = np.random.default_rng(9)
    t = rng.random((260, 2))
    centres = rng.random((400, 2))
    d2 = ((t[:, None, :] - centres[None]) ** 2).sum(-1)
    Y = sp.csr_matrix(np.where(d2 < 0.01, np.exp(-d2 / 0.005), 0.0))
    train, new = Y[:240], Y[240:]
    sp.save_npz(tmp_path / "train.npz", train)
    sp.save_npz(tmp_path / "new.npz", new)
    for method, cls in (("isomap", unfold.Isomap), ("le", unfold.LaplacianEigenmaps)):
        out, model = tmp_path / f"{method}.csv", tmp_path / f"{method}.bin"
        run = subprocess.run(
            [str(cli), "fit", "--method", method, "--k", "8", "--input", str(tmp_path / "train.npz"),
             "--out", str(out), "--save", str(model)],
            capture_output=True, text=True,
        )
        assert run.returncode == 0, run.stderr
        est = cls(n_components=2, n_neighbors=8).fit(train)
        assert np.array_equal(pd.read_csv(out, float_precision="round_trip").to_numpy(), est.embedding_)
    placed = tmp_path / "placed.csv"
    run = subprocess.run(
        [str(cli), "project", "--model", str(tmp_path / "isomap.bin"), "--input", str(tmp_path / "new.npz"),
         "--out", str(placed)],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    want = unfold.Isomap(n_components=2, n_neighbors=8).fit(train).transform(new)
    assert np.array_equal(pd.read_csv(placed, float_precision="round_trip").to_numpy(), want)


def test_the_command_line_reduces_a_scipy_sparse_matrix_without_a_dense_copy(tmp_path, cli):
    """``unfold fit`` reads a matrix saved by ``scipy.sparse.save_npz`` and reduces it with
    ``--preprocess log1p,pca:Q`` (the exact sparse PCA): PCA of those coordinates is
    scikit-learn's PCA of the dense log1p counts; without a reduction a method that needs
    dense points says what to do, and another sparse format is refused naming the
    conversion."""
    import scipy.sparse as sp
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(8)
    means = np.exp(rng.standard_normal((300, 3)) @ rng.standard_normal((3, 80)) * 0.7)
    counts = sp.csr_matrix(rng.poisson(means).astype(np.float64))
    path = tmp_path / "counts.npz"
    sp.save_npz(path, counts)
    out = tmp_path / "x.csv"
    run = subprocess.run(
        [str(cli), "fit", "--method", "pca", "--dim", "2", "--input", str(path),
         "--preprocess", "log1p,pca:6", "--out", str(out)],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    want = PCA(n_components=2).fit_transform(np.log1p(counts.toarray()))
    np.testing.assert_allclose(np.abs(got), np.abs(want), atol=1e-7 * np.abs(want).max())
    run = subprocess.run(
        [str(cli), "fit", "--method", "meu", "--input", str(path)], capture_output=True, text=True
    )
    assert run.returncode != 0 and "--preprocess log1p,pca:50" in run.stderr
    sp.save_npz(tmp_path / "c.npz", counts.tocsc())
    run = subprocess.run(
        [str(cli), "fit", "--method", "pca", "--input", str(tmp_path / "c.npz"), "--preprocess", "pca:4"],
        capture_output=True, text=True,
    )
    assert run.returncode != 0 and "X.tocsr()" in run.stderr
