"""The estimators on NumPy arrays: fit, project, pickle, clone, fitted attributes."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import unfold
from conftest import swiss_roll


def test_every_registered_method_has_an_estimator():
    names = {m["name"] for m in unfold.methods()}
    assert {c._info["name"] for c in unfold.ESTIMATORS.values()} == names
    assert unfold.MEU().get_params()["n_neighbors"] == 10
    assert unfold.DDRTree().get_params()["lambda_"] is None  # computed from the data
    assert "n_components" in unfold.LLLVM().get_params()


@pytest.mark.parametrize("cls", ["MEU", "LLLVM", "DDRTree"])
def test_fit_project_pickle_reload_gives_identical_output(cls, roll):
    params = {"LLLVM": {"max_iter": 5, "n_neighbors": 8}}.get(cls, {})
    est = getattr(unfold, cls)(**params)
    Z = est.fit_transform(roll)
    assert Z.shape == (200, 2) and np.all(np.isfinite(Z))
    assert np.array_equal(Z, est.embedding_)
    assert est.evidence_.kind in ("log_likelihood", "elbo", "objective")
    assert np.isfinite(est.evidence_.value)
    assert est.n_iter_ >= 1 and len(est.trace_) >= 1
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.embedding_, Z)
    assert again.evidence_ == est.evidence_
    new = swiss_roll(7, seed=9)
    if hasattr(est, "transform"):
        P = est.transform(new)
        assert P.shape == (7, 2)
        assert np.array_equal(again.transform(new), P)
        proj = est.project(new)
        assert proj.covariance.shape == (7, 2, 2)
        # Each covariance is symmetric positive definite.
        assert np.all(np.linalg.eigvalsh(proj.covariance) > 0)
    else:
        with pytest.raises(NotImplementedError, match="the methods that project new points are"):
            est.transform(new)


def test_lllvm_per_point_family_fits_projects_and_pickles(roll):
    kw = dict(n_neighbors=8, max_iter=5)
    full = unfold.LLLVM(posterior="full", **kw).fit(roll)
    per_point = unfold.LLLVM(posterior="factorised", **kw).fit(roll)
    assert per_point.evidence_.kind == "elbo" and np.isfinite(per_point.evidence_.value)
    # A special case of the full family: its bound is the lower one.
    assert per_point.evidence_.value < full.evidence_.value
    new = swiss_roll(7, seed=9)
    P = per_point.transform(new)
    assert P.shape == (7, 2) and np.all(np.isfinite(P))
    again = pickle.loads(pickle.dumps(per_point))
    assert np.array_equal(again.transform(new), P)
    # Its means by the default (q(x)'s by conjugate gradients), by conjugate gradients for
    # both factors and by the factorised systems reach the same bound to far below the
    # printed digits.
    direct = unfold.LLLVM(posterior="factorised", mean_solve="direct", **kw).fit(roll)
    assert abs(direct.evidence_.value - per_point.evidence_.value) < 1e-3
    both = unfold.LLLVM(posterior="factorised", mean_solve="cg", **kw).fit(roll)
    assert abs(both.evidence_.value - per_point.evidence_.value) < 1e-3
    with pytest.raises(ValueError, match="posterior"):
        unfold.LLLVM(posterior="diagonal", **kw).fit(roll)
    with pytest.raises(ValueError, match="mean_solve"):
        unfold.LLLVM(posterior="factorised", mean_solve="lu", **kw).fit(roll)


def test_meu_fitted_attributes_and_the_evidence_terms(roll):
    est = unfold.MEU(n_neighbors=8).fit(roll)
    assert est.n_features_in_ == 3
    g = est.graph_
    assert sp.issparse(g) and g.shape == (200, 200)
    assert (g != g.T).nnz == 0 and g.diagonal().sum() == 0
    assert g.nnz >= 200 * 8  # every point has its 8 neighbours (union graph)
    assert est.evidence_.kind == "log_likelihood"
    # The model's own score on its training points is its evidence.
    assert est.score(roll) == est.evidence_.value
    # On new points: the held-out log density, finite and per the GP-LVM score.
    assert np.isfinite(est.score(swiss_roll(20, seed=5)))


def test_clone_and_set_params():
    est = unfold.MEU(n_neighbors=7, gamma=1e-3)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    twin.set_params(n_neighbors=9)
    assert twin.n_neighbors == 9 and est.n_neighbors == 7


def test_given_graph_as_sparse_matrix_and_index_pairs(roll):
    base = unfold.MEU(n_neighbors=8).fit(roll)
    again = unfold.MEU(n_neighbors=8).fit(roll, graph=base.graph_)
    assert np.array_equal(again.embedding_, base.embedding_)
    pairs = np.array(sp.triu(base.graph_).nonzero()).T
    third = unfold.MEU(n_neighbors=8).fit(roll, graph=pairs)
    assert np.array_equal(third.embedding_, base.embedding_)
    with pytest.raises(ValueError, match="builds its own graph"):
        unfold.Isomap().fit(roll, graph=pairs)


def test_lists_and_int_arrays_are_read_as_floats(roll):
    ints = np.round(roll * 10).astype(np.int64)
    a = unfold.PCA().fit_transform(ints)
    b = unfold.PCA().fit_transform(ints.astype(np.float64))
    c = unfold.PCA().fit_transform(ints.tolist())
    assert np.array_equal(a, b) and np.array_equal(a, c)
    # Fortran order (copied into Rust) and C order (read in place) give the same fit, to
    # rounding: the sums run in another order.
    f, c = unfold.PCA().fit_transform(np.asfortranarray(roll)), unfold.PCA().fit_transform(roll)
    assert np.allclose(f, c, rtol=1e-12, atol=1e-12 * np.abs(c).max())


def test_bad_input_gives_python_exceptions_with_the_rust_message(roll):
    bad = roll.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        unfold.MEU().fit(bad)
    with pytest.raises(ValueError):
        unfold.MEU().fit(roll[:, 0])  # 1-D
    with pytest.raises(ValueError, match="gamma"):
        unfold.MEU(gamma=-1.0).fit(roll)
    with pytest.raises(TypeError, match="n_neighbors|`k`"):
        unfold.MEU(n_neighbors="ten").fit(roll)
    with pytest.raises(ValueError, match="points"):
        unfold.MEU(n_neighbors=50).fit(roll[:20])
    with pytest.raises(ValueError, match="duplicate"):
        unfold.MEU(duplicates="error").fit(np.vstack([roll, roll[:1]]))
    with pytest.warns(UserWarning, match="repeats another point"):
        unfold.MEU().fit(np.vstack([roll, roll[:1]]))
    with pytest.raises(ValueError, match="features|feature"):
        unfold.MEU().fit(roll).transform(roll[:, :2])


def test_corrupt_state_and_model_files_are_refused(roll):
    est = unfold.MEU(n_neighbors=8).fit(roll)
    data = est.model_.to_bytes()
    with pytest.raises(ValueError, match="corrupt|truncated|model"):
        unfold.load_model(data[: len(data) // 2])
    with pytest.raises(ValueError):
        unfold.load_model(b"not a model file")


    class Truncated:
        # A pickle whose model state is cut short, as a damaged file would be.
        def __reduce__(self):
            return (unfold._native.NativeModel.from_bytes, (data[: len(data) - 9],))

    with pytest.raises(ValueError, match="corrupt|truncated"):
        pickle.loads(pickle.dumps(Truncated()))
    assert np.array_equal(unfold.load_model(data).embedding(), est.embedding_)


def test_max_memory_refuses_a_dense_fit_and_bad_sizes_by_name(roll):
    try:
        unfold.set_max_memory("1K")
        with pytest.raises(MemoryError, match="unfold.set_max_memory"):
            unfold.CMDS().fit(roll)
    finally:
        unfold.set_max_memory(None)
    assert unfold.CMDS().fit(roll).embedding_.shape == (len(roll), 2)
    with pytest.raises(ValueError, match="max_memory"):
        unfold.set_max_memory("lots")


def test_a_rust_panic_becomes_a_runtime_error():
    with pytest.raises(RuntimeError, match="internal error in unfold"):
        unfold._native._panic_for_tests()


def test_fits_in_threads_give_the_serial_numbers():
    from concurrent.futures import ThreadPoolExecutor

    X = swiss_roll(300, seed=2)
    serial = [unfold.MEU(n_neighbors=k).fit(X).evidence_.value for k in (7, 8, 9)]
    with ThreadPoolExecutor(3) as pool:
        threaded = list(pool.map(lambda k: unfold.MEU(n_neighbors=k).fit(X).evidence_.value, (7, 8, 9)))
    assert threaded == serial


def test_pipelines_and_grid_search_choose_k_by_held_out_evidence():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = swiss_roll(240, seed=11)
    pipe = make_pipeline(StandardScaler(), unfold.MEU())
    search = GridSearchCV(pipe, {"meu__n_neighbors": [6, 9]}, cv=3).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert search.best_params_["meu__n_neighbors"] == [6, 9][int(np.argmax(scores))]
    assert search.best_estimator_.transform(X[:4]).shape == (4, 2)


def test_iris_fits_with_every_estimator_by_default_and_the_changes_are_warned():
    """Iris repeats a row (101 = 142) and its setosa cluster is its own kNN component: every
    estimator fits it with its defaults; those with a kNN graph warn that it was joined,
    those that need distinct points warn that the copy was merged (and give both rows one
    embedding), the others say nothing; either change can be refused instead."""
    import warnings

    from sklearn.datasets import load_iris

    X = load_iris().data
    for name, cls in unfold.ESTIMATORS.items():
        params = cls().get_params()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            est = cls(n_components=2).fit(X)
        assert est.embedding_.shape == (150, 2), name
        assert np.isfinite(est.embedding_).all(), name
        text = [str(w.message) for w in said if issubclass(w.category, UserWarning)]
        expected = 0
        if "duplicates" in params:
            expected += 1
            assert any("fitted to the 149 distinct ones" in t for t in text), (name, text)
            np.testing.assert_array_equal(est.embedding_[101], est.embedding_[142])
            with pytest.raises(ValueError, match="identical"):
                cls(n_components=2, duplicates="error").fit(X)
        if "connect" in params:
            expected += 1
            assert any("2 separate components" in t for t in text), (name, text)
        assert len(text) == expected, (name, text)
    with pytest.raises(ValueError, match="connected components"):
        unfold.LaplacianEigenmaps(n_components=2, connect="off").fit(X)


def test_ctrl_c_stops_a_fit_and_the_session_goes_on():
    """SIGINT during a long MEU fit (20,000 points) raises the interpreter's
    KeyboardInterrupt, and the next fit runs as usual. That the fit itself stops at its next
    evaluation is checked in Rust (an observer asking to stop ends MEU's search and LL-LVM's
    EM): this test would also pass, only later, if the interrupt came after the fit."""
    import os
    import signal
    import threading

    rng = np.random.default_rng(0)
    t, s = rng.random(20000) * 6, rng.random(20000) * 3
    X = np.c_[t * np.cos(t), s, t * np.sin(t)]
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        unfold.MEU(n_components=2, n_neighbors=8).fit(X)
    small = unfold.MEU(n_components=2, n_neighbors=8).fit(X[:300])
    assert np.isfinite(small.embedding_).all()


def test_verbose_reports_the_fit_on_stderr(roll, capsys):
    """``verbose=1`` writes a line when the fit ends (and, for fits longer than a second,
    one about every second with the latest iteration); the default writes nothing."""
    unfold.MEU(n_components=2, n_neighbors=8).fit(roll)
    assert capsys.readouterr().err == ""
    est = unfold.MEU(n_components=2, n_neighbors=8, verbose=1).fit(roll)
    err = capsys.readouterr().err
    assert f"unfold meu: fitted {roll.shape[0]} points" in err
    assert "iterations, stopped by" in err and "log_likelihood" in err
    assert est.get_params()["verbose"] == 1


def test_sparse_input_fits_as_its_dense_values_and_a_dense_copy_is_refused_when_it_would_not_fit(roll):
    """scipy.sparse points (CSR, CSC, COO) fit and project as their dense values do, by
    the neighbour methods as they are and by the others as a dense copy; a dense copy above
    the memory limit is refused before it is made, naming the fix."""
    for cls in (unfold.Isomap, unfold.MEU):
        dense = cls(n_components=2, n_neighbors=8).fit(roll)
        for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
            est = cls(n_components=2, n_neighbors=8).fit(fmt(roll))
            np.testing.assert_allclose(est.embedding_, dense.embedding_, rtol=0, atol=1e-10)
            np.testing.assert_allclose(
                est.transform(fmt(roll[:5])), dense.transform(roll[:5]), rtol=0, atol=1e-10
            )
    unfold.set_max_memory("1K")
    try:
        with pytest.raises(MemoryError, match="unfold.PCA, unfold.tl.pca"):
            unfold.MEU(n_components=2).fit(sp.csr_matrix(roll))
    finally:
        unfold.set_max_memory(None)


def _sparse_sheet(n, p, seed):
    """Points on a square seen through ``p`` local bump features (about 0.5% non-zero)."""
    rng = np.random.default_rng(seed)
    t = rng.random((n, 2))
    centres = rng.random((p, 2))
    d2 = ((t[:, None, :] - centres[None]) ** 2).sum(-1)
    return sp.csr_matrix(np.where(d2 < 0.0016, np.exp(-d2 / 0.0008), 0.0))


def test_neighbour_methods_fit_sparse_points_without_a_dense_copy():
    """Isomap, Laplacian eigenmaps and LLE fit (and Isomap projects and scores) sparse
    points under a memory limit that refuses their dense copy, as MEU's refusal shows, with the
    embedding and evidence of the dense fit; a non-canonical matrix (unsorted, repeated
    columns) and int64 indices are read as their values."""
    S = _sparse_sheet(300, 40000, 1)
    assert S.nnz < 0.01 * S.shape[0] * S.shape[1]
    Y = S.toarray()  # 96 MB
    classes = (unfold.Isomap, unfold.LaplacianEigenmaps, unfold.LLE)
    dense = {cls: cls(n_components=2, n_neighbors=8).fit(Y) for cls in classes}
    unfold.set_max_memory("40M")
    try:
        with pytest.raises(MemoryError):
            unfold.MEU(n_components=2, n_neighbors=8).fit(S)
        for cls, want in dense.items():
            est = cls(n_components=2, n_neighbors=8).fit(S)
            # LLE's bottom eigenvectors magnify the rounding of its weights (its evidence,
            # which reads them directly, agrees to 1e-9).
            atol = 1e-6 if cls is unfold.LLE else 1e-10
            np.testing.assert_allclose(est.embedding_, want.embedding_, rtol=0, atol=atol)
            assert est.evidence_.kind == want.evidence_.kind
            if est.evidence_.kind != "none":
                assert abs(est.evidence_.value - want.evidence_.value) <= 1e-9 * abs(want.evidence_.value)
        iso = unfold.Isomap(n_components=2, n_neighbors=8).fit(S)
        np.testing.assert_allclose(iso.transform(S[:5]), iso.embedding_[:5], atol=1e-8)
        # The training points score as the fit's evidence, given sparse or dense.
        le = unfold.LaplacianEigenmaps(n_components=2, n_neighbors=8).fit(S)
        assert le.score(S) == le.score(Y) == le.evidence_.value
        # Every row's columns reversed and each given twice with half its value (summed,
        # as scipy does).
        indices, data, indptr = [], [], [0]
        for i in range(S.shape[0]):
            cols, vals = S.indices[S.indptr[i]:S.indptr[i + 1]], S.data[S.indptr[i]:S.indptr[i + 1]]
            indices += [cols[::-1], cols[::-1]]
            data += [vals[::-1] / 2, vals[::-1] / 2]
            indptr.append(indptr[-1] + 2 * len(cols))
        messy = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=S.shape)
        assert not messy.has_canonical_format
        wide = S.copy()
        wide.indices = wide.indices.astype(np.int64)
        wide.indptr = wide.indptr.astype(np.int64)
        for data in (messy, wide):
            est = unfold.Isomap(n_components=2, n_neighbors=8).fit(data)
            np.testing.assert_allclose(est.embedding_, iso.embedding_, rtol=0, atol=1e-10)
    finally:
        unfold.set_max_memory(None)


def test_sparse_input_as_it_comes_converts_or_is_refused_clearly(roll):
    """Float32 and integer sparse matrices, a pandas sparse frame and an empty row (a point
    at the origin) fit as their float64 values; float16 (which scipy.sparse cannot hold)
    fits from a dense array; NaN or Inf stored in a sparse matrix is refused by name."""
    import pandas as pd

    X = roll.copy()
    X[X < 0] = 0.0
    fit = lambda data: unfold.Isomap(n_components=2, n_neighbors=8).fit(data).embedding_
    single = X.astype(np.float32)
    for data, dense in (
        (sp.csr_matrix(single), single.astype(np.float64)),
        (pd.DataFrame.sparse.from_spmatrix(sp.csr_matrix(X)), X),
        (sp.csc_matrix(X), X),
    ):
        np.testing.assert_array_equal(fit(data), fit(dense))
    ints = np.rint(X * 10)
    np.testing.assert_array_equal(
        unfold.Isomap(n_components=2, n_neighbors=8).fit(sp.csr_matrix(ints.astype(np.int64))).embedding_,
        unfold.Isomap(n_components=2, n_neighbors=8).fit(ints).embedding_,
    )
    empty = sp.csr_matrix(np.vstack([X, np.zeros(3)]))
    assert unfold.Isomap(n_components=2, n_neighbors=8).fit(empty).embedding_.shape == (201, 2)
    half = unfold.Isomap(n_components=2, n_neighbors=8).fit(X.astype(np.float16))
    assert np.isfinite(half.embedding_).all()
    for bad in (np.nan, np.inf):
        S = sp.csr_matrix(X)
        S.data[5] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            unfold.Isomap(n_components=2, n_neighbors=8).fit(S)


def test_pca_of_sparse_points_is_never_densified_and_equals_the_dense_fit():
    """PCA of a scipy.sparse matrix (int32 or int64 indices, float32, float64 or integer
    values) gives the exact dense PCA's axes, coordinates and variances, projects
    sparse new points without a dense copy, and works under a memory limit that refuses
    the dense copy; the axes are scikit-learn's ``components_`` and match its PCA."""
    from sklearn.decomposition import PCA as SkPCA

    rng = np.random.default_rng(4)
    latent = rng.standard_normal((600, 4)) * [6.0, 4.0, 2.5, 1.5]
    counts = np.maximum(0, np.rint(latent @ rng.standard_normal((4, 300)) + 1.0))
    S = sp.csr_matrix(counts)
    dense = unfold.PCA(n_components=4, solver="exact").fit(counts)
    unfold.set_max_memory("1M")
    try:
        with pytest.raises(MemoryError):
            unfold.MEU(n_components=2).fit(S)
        for data in (S, S.astype(np.float32), S.astype(np.int64), sp.csc_matrix(S)):
            if data is S:
                data = data.copy()
                data.indices = data.indices.astype(np.int64)
                data.indptr = data.indptr.astype(np.int64)
            est = unfold.PCA(n_components=4).fit(data)
            tol = 1e-4 if data.dtype == np.float32 else 1e-8
            scale = np.abs(dense.embedding_).max()
            np.testing.assert_allclose(est.embedding_, dense.embedding_, atol=tol * scale)
            np.testing.assert_allclose(est.explained_variance_, dense.explained_variance_, rtol=tol)
        new = est.transform(S[:7])
    finally:
        unfold.set_max_memory(None)
    np.testing.assert_allclose(new, dense.transform(counts[:7]), atol=1e-8 * scale)
    sk = SkPCA(n_components=4).fit(counts)
    np.testing.assert_allclose(np.abs(est.components_), np.abs(sk.components_), atol=1e-6)
    np.testing.assert_allclose(est.explained_variance_, sk.explained_variance_, rtol=1e-6)
    with pytest.raises(ValueError, match="sparse"):
        est.score(counts)
