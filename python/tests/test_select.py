"""Selection from Python, serial and on a Dask cluster of process workers."""

import numpy as np
import pandas as pd
import pytest

import unfold
from conftest import swiss_roll

COLUMNS = ["k", "graph", "dim", "restart", "seed", "kind", "value", "best", "error"]


def test_select_marks_the_best_setting_and_keeps_failures():
    X = swiss_roll(150, seed=6)
    table = unfold.select("lllvm", X, k=[2, 6, 9], restarts=2, max_iter=4, connect="off")
    assert list(table.columns) == [
        "k", "graph", "dim", "restart", "seed", "kind", "value", "seconds", "best", "error", "method", "score", "sweep"
    ]
    assert (table["method"] == "lllvm").all() and (table["score"] == "evidence").all()
    assert len(table) == 6
    failed = table[table["k"] == 2]
    assert failed["value"].isna().all() and failed["error"].str.contains("connected").all()
    ok = table[table["k"] != 2]
    means = ok.groupby("k")["value"].mean()
    assert set(table[table["best"] == 1]["k"]) == {means.idxmax()}
    assert (table["kind"] == "elbo").all()


def test_select_takes_sparse_points_as_their_values_within_the_memory_limit():
    """A sparse matrix is swept as its dense values (the same table), and a dense copy
    above the memory limit is refused naming the PCA route, not with a TypeError."""
    import scipy.sparse as sp

    X = swiss_roll(120, seed=2)
    X[X < 0] = 0.0
    cols = ["k", "kind", "value", "best"]
    dense = unfold.select("le", X, k=[6, 8])[cols]
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        pd.testing.assert_frame_equal(unfold.select("le", fmt(X), k=[6, 8])[cols], dense)
    unfold.set_max_memory("1K")
    try:
        with pytest.raises(MemoryError, match="unfold.PCA"):
            unfold.select("le", sp.csr_matrix(X), k=[6, 8])
    finally:
        unfold.set_max_memory(None)


def test_select_refuses_a_plan_the_method_cannot_run():
    X = swiss_roll(60, seed=6)
    with pytest.raises(ValueError, match="no neighbourhood graph"):
        unfold.select("pca", X)
    with pytest.raises(ValueError, match="no method"):
        unfold.select("nope", X)


def test_plot_helper_draws_one_line_per_restart():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    X = swiss_roll(120, seed=6)
    table = unfold.select(unfold.MEU, X, k=range(6, 9), restarts=2)
    ax = unfold.plot_selection(table)
    assert len(ax.get_lines()) == 3  # two restarts and the best-k marker


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    distributed = pytest.importorskip("dask.distributed")
    import dask

    # Dask's scratch space goes under pytest's temporary directory, not the system's.
    with dask.config.set({"temporary-directory": str(tmp_path_factory.mktemp("dask"))}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = distributed.Client(cluster)
        yield client
        client.close()
        cluster.close()


@pytest.mark.parametrize("method, params", [("lllvm", {"max_iter": 4}), ("meu", {})])
def test_dask_gives_the_serial_table(client, method, params):
    X = swiss_roll(150, seed=7, noise=0.05)
    serial = unfold.select(method, X, k=range(5, 13), restarts=2, **params)
    distributed = unfold.select(method, X, k=range(5, 13), restarts=2, client=client, **params)
    assert len(serial) == 16
    pd.testing.assert_frame_equal(serial[COLUMNS], distributed[COLUMNS], check_exact=True)
    assert np.array_equal(serial["value"].to_numpy(), distributed["value"].to_numpy(), equal_nan=True)


def _partial(full_csv, rows, path):
    """The table of a sweep stopped early: the header, `rows` of the complete table in the
    order they finished with `best` not yet known, and a row cut off mid-write."""
    lines = full_csv.read_text().splitlines()
    kept = []
    for i in rows:
        fields = lines[1 + i].split(",")
        fields[8] = ""  # best is marked only at the end
        kept.append(",".join(fields))
    path.write_text("\n".join([lines[0], *kept]) + "\n" + lines[1 + rows[-1] + 1][:17])


SWEEP = dict(k=[2, 6, 9], restarts=2, max_iter=4)
BUT_TIME = ["k", "graph", "dim", "restart", "seed", "kind", "value", "best", "error", "method", "score", "sweep"]


@pytest.mark.parametrize("family", [{}, {"posterior": "factorised"}])
def test_a_resumed_sweep_equals_an_uninterrupted_one(tmp_path, family):
    X = swiss_roll(150, seed=6)
    full_csv = tmp_path / "full.csv"
    full = unfold.select("lllvm", X, out=full_csv, **SWEEP, **family)
    pd.testing.assert_frame_equal(full, unfold._select._table(full_csv.read_text()), check_exact=True)
    part = tmp_path / "part.csv"
    _partial(full_csv, [3, 0, 4], part)
    resumed = unfold.select("lllvm", X, out=part, resume=True, **SWEEP, **family)
    pd.testing.assert_frame_equal(full[BUT_TIME], resumed[BUT_TIME], check_exact=True)
    # The finished rows were not fitted again: their times are the table's.
    assert (resumed["seconds"][[0, 3, 4]] == full["seconds"][[0, 3, 4]]).all()
    pd.testing.assert_frame_equal(resumed, unfold._select._table(part.read_text()), check_exact=True)


def test_resuming_another_sweeps_table_is_refused(tmp_path):
    X = swiss_roll(150, seed=6)
    out = tmp_path / "t.csv"
    unfold.select("lllvm", X, out=out, **SWEEP)
    with pytest.raises(ValueError, match="ranked by `evidence`, this sweep's by `trustworthiness`"):
        unfold.select("lllvm", X, out=out, resume=True, score="trustworthiness", **SWEEP)
    with pytest.raises(ValueError, match="other data, method options"):
        unfold.select("lllvm", X, out=out, resume=True, k=[2, 6, 9], restarts=2, max_iter=5)
    with pytest.raises(ValueError, match="a sweep of `lllvm`, this sweep is of `meu`"):
        unfold.select("meu", X, out=out, resume=True, k=[2, 6, 9], restarts=2)
    with pytest.raises(ValueError, match="give out=PATH"):
        unfold.select("lllvm", X, resume=True, **SWEEP)


def test_dask_appends_as_tasks_complete_and_resumes_to_the_serial_table(client, tmp_path):
    X = swiss_roll(150, seed=6)
    full_csv = tmp_path / "full.csv"
    serial = unfold.select("lllvm", X, out=full_csv, **SWEEP)
    out = tmp_path / "dask.csv"
    distributed = unfold.select("lllvm", X, out=out, client=client, **SWEEP)
    pd.testing.assert_frame_equal(serial[BUT_TIME], distributed[BUT_TIME], check_exact=True)
    pd.testing.assert_frame_equal(distributed, unfold._select._table(out.read_text()), check_exact=True)
    # A sweep stopped after three candidates, resumed on the cluster.
    _partial(full_csv, [5, 1, 2], out)
    resumed = unfold.select("lllvm", X, out=out, client=client, resume=True, **SWEEP)
    pd.testing.assert_frame_equal(serial[BUT_TIME], resumed[BUT_TIME], check_exact=True)
    assert (resumed["seconds"][[1, 2, 5]] == serial["seconds"][[1, 2, 5]]).all()
    pd.testing.assert_frame_equal(resumed, unfold._select._table(out.read_text()), check_exact=True)


def test_a_table_started_by_the_command_line_resumes_in_python(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    cli = Path(os.environ.get("UNFOLD_BIN", root / "target" / "release" / "unfold"))
    if not cli.exists():
        pytest.skip(f"the unfold binary is not built at {cli}")
    X = swiss_roll(150, seed=6)
    data = tmp_path / "x.csv"
    # repr gives the shortest text that reads back to the same double.
    data.write_text("a,b,c\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in X) + "\n")
    out = tmp_path / "t.csv"
    args = ["select", "--method", "lllvm", "--input", data, "--k", "2,6,9", "--restarts", "2"]
    subprocess.run([cli, *args, "--max-iter", "4", "--out", out], check=True, capture_output=True)
    theirs = unfold._select._table(out.read_text())
    ours = unfold.select("lllvm", X, out=out, resume=True, **SWEEP)
    # Same fingerprint, so every row was taken from the table, times included.
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
