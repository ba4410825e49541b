"""Selection from Python, serial and on a Dask cluster of process workers."""

import numpy as np
import pandas as pd
import pytest

import unfold
from conftest import swiss_roll

COLUMNS = ["k", "graph", "dim", "restart", "seed", "kind", "value", "best", "error"]


def test_select_marks_the_best_setting_and_keeps_failures():
    X = swiss_roll(150, seed=6)
    table = unfold.select("lllvm", X, k=[2, 6, 9], restarts=2, max_iter=4)
    assert list(table.columns) == ["k", "graph", "dim", "restart", "seed", "kind", "value", "seconds", "best", "error"]
    assert len(table) == 6
    failed = table[table["k"] == 2]
    assert failed["value"].isna().all() and failed["error"].str.contains("connected").all()
    ok = table[table["k"] != 2]
    means = ok.groupby("k")["value"].mean()
    assert set(table[table["best"] == 1]["k"]) == {means.idxmax()}
    assert (table["kind"] == "elbo").all()


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
def client():
    distributed = pytest.importorskip("dask.distributed")
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
