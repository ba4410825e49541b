"""Model selection from Python: the table of ``unfold select``, serial or on Dask."""

import io
import os
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils import check_array

from . import _native
from ._estimators import RENAME, _dense, _graph_edges

_FROM_PYTHON = {v: k for k, v in RENAME.items()}


def _method_name(method):
    """A registry name from a name or an estimator class/instance."""
    info = getattr(method, "_info", None)
    if info is not None:
        return info["name"]
    names = [m["name"] for m in _native.methods()]
    if method not in names:
        raise ValueError(f"no method `{method}`; the methods are {', '.join(names)}")
    return method


def _as_list(v):
    if v is None:
        return []
    if isinstance(v, (int, float, str, np.integer, np.floating)):
        return [v]
    return list(v)


def _plan(X, k, n_components, graph, radius, graphs, restarts, seed, score, holdout):
    return {
        "ks": [int(v) for v in _as_list(k)],
        "symmetrisations": [str(s) for s in _as_list(graph)],
        "dims": [int(v) for v in _as_list(n_components)],
        "radii": [float(r) for r in _as_list(radius)],
        "graphs": [_graph_edges(g, X.shape[0]) for g in (graphs or [])],
        "restarts": int(restarts),
        "seed": int(seed),
        "score": str(score),
        "holdout": float(holdout),
    }


def _table(csv):
    # `round_trip` parses each value to the double the Rust side printed.
    return pd.read_csv(
        io.StringIO(csv),
        float_precision="round_trip",
        dtype={"graph": str, "kind": str, "error": str, "method": str, "score": str, "sweep": str},
        keep_default_na=False,
        na_values={"value": [""], "k": [""]},
    )


def _trial(method, X, settings, plan, index):
    return _native.sweep_trial(method, X, settings, plan, index)


def select(
    method,
    X,
    k=range(5, 13),
    n_components=(2,),
    graph=("union",),
    radius=None,
    graphs=None,
    restarts=1,
    random_state=0,
    score="evidence",
    holdout=0.1,
    client=None,
    out=None,
    resume=False,
    verbose=0,
    **params,
):
    """Compare a method's evidence over neighbourhood graphs, latent dimensions and
    restarts, as ``unfold select`` does.

    Parameters
    ----------
    method : str or estimator class
        A registered method (``"meu"``, ``"lllvm"``, ...) or its estimator class.
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        A sweep computes on dense points: sparse ones are copied dense within the memory
        limit (``unfold.set_max_memory``; a copy that would not fit raises ``MemoryError``
        naming the PCA route).
    k : int or iterable of int
        Neighbourhood sizes of the kNN graphs.
    n_components : int or iterable of int
        Latent dimensions.
    graph : str or iterable of str
        Symmetrisations of the kNN graph (``union``, ``mutual``).
    radius : float or iterable of float, optional
        Compare epsilon-ball graphs of these radii instead of kNN graphs.
    graphs : list, optional
        Compare these given graphs instead (adjacency matrices or index pairs).
    restarts : int
        Seeded restarts per setting (seeds ``random_state``, ``random_state + 1``, ...).
    score : {"evidence", "gplvm", "trustworthiness", "heldout"}
        What ranks the candidates (see ``unfold select --help``).
    holdout : float
        Fraction of points left out for ``score="heldout"``.
    client : dask.distributed.Client, optional
        Run one task per candidate (setting x restart) on this Dask cluster, with the data
        scattered once; the table is the serial one to the bit (order by candidate).
    out : str or path, optional
        Keep the table in this CSV file as the sweep runs, as ``unfold select --out``
        does: each finished candidate's row is appended (and synced to disk) as soon as it
        completes (on Dask, by this process as each task returns), and at the end the
        complete table replaces it. An interrupted sweep loses at most the candidates that
        were running.
    resume : bool
        Continue the sweep whose table is ``out``: the candidates already in it are not
        fitted (or submitted) again, a half-written last row is dropped, and a table of
        another sweep (method, score, data or options) is refused with what differs. The
        result equals an uninterrupted sweep's, but for the ``seconds`` column. Ctrl-C
        stops a sweep run in this process within about a second: the finished candidates
        stay in ``out``, and ``resume=True`` continues it.
    verbose : int
        1 or more: a line on standard error for each finished candidate (in this process;
        on Dask, Dask's own dashboard shows the tasks).
    **params
        The method's own parameters (its estimator's names, e.g. ``max_iter=100``).

    Returns
    -------
    pandas.DataFrame
        One row per candidate: ``k, graph, dim, restart, seed, kind, value, seconds, best,
        error, method, score, sweep``; ``best`` is 1 on the rows of the best setting
        (highest mean value), a candidate that failed (a disconnected graph at small k)
        has its error and no value, and ``sweep`` is the fingerprint of the method's
        options, the score and the data that ``resume`` checks.
    """
    name = _method_name(method)
    if sp.issparse(X):
        X = _dense(X.tocsr())
    X = check_array(X, dtype=np.float64, order="C", ensure_min_samples=2)
    settings = {_FROM_PYTHON.get(key, key): value for key, value in params.items()}
    plan = _plan(X, k, n_components, graph, radius, graphs, restarts, random_state, score, holdout)
    if resume and out is None:
        raise ValueError("resume=True continues the table kept in `out`; give out=PATH")
    out = None if out is None else os.fspath(out)
    if client is None:
        return _table(
            _native.sweep_table(name, X, settings, plan, out, bool(resume), int(verbose))
        )
    from dask.distributed import as_completed

    count = _native.sweep_size(name, X, settings, plan)
    table = None if out is None else _native.SweepTable(name, X, settings, plan, out, bool(resume))
    trials = [] if table is None else list(table.finished())
    done = {t[0] for t in trials}
    # A fresh key for each sweep: scattering the same (hashed) data again just after the
    # previous sweep released it can hang (dask/distributed#8576).
    [data] = client.scatter([X], broadcast=True, hash=False)
    futures = {
        client.submit(_trial, name, data, settings, plan, i, pure=False): i
        for i in range(count)
        if i not in done
    }
    lost = 0
    for future in as_completed(futures):
        i = futures[future]
        try:
            trial = future.result()
        except Exception as e:  # a worker lost or killed: the candidate failed
            trials.append((i, None, None, f"the task failed: {type(e).__name__}: {e}", 0.0))
            lost += 1
            continue
        if table is not None:
            table.append(trial)
        trials.append(trial)
    if table is not None and lost == 0:
        return _table(table.finish(trials))
    if table is not None:
        # The lost tasks' candidates stay out of the file, so that resuming runs them.
        warnings.warn(
            f"{lost} task(s) were lost; the table returned marks them failed, and {out} keeps "
            "the finished candidates: select(..., out=..., resume=True) runs the lost ones again",
            RuntimeWarning,
            stacklevel=2,
        )
    return _table(_native.sweep_assemble(name, X, settings, plan, trials))


def plot_selection(table, ax=None):
    """The value against k (or the graph's position) for the best setting's dimension and
    symmetrisation, one line per restart, the best setting marked; returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    best = table[table["best"] == 1].iloc[0]
    rows = table[(table["dim"] == best["dim"]) & (table["graph"].str.split("=").str[0] == best["graph"].split("=")[0])]
    knn = table["k"].notna().all()
    x_of = (lambda r: r["k"]) if knn else (lambda r: float(r["graph"].split("=")[1]))
    for restart, part in rows.groupby("restart"):
        ok = part[part["value"].notna()]
        ax.plot([x_of(r) for _, r in ok.iterrows()], ok["value"], marker="o", label=f"restart {restart}")
    ax.axvline(x_of(best), color="grey", linestyle="--", label="best")
    ax.set_xlabel("k" if knn else best["graph"].split("=")[0])
    ax.set_ylabel(str(best["kind"]))
    ax.legend()
    return ax
