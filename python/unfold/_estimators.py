"""scikit-learn estimators, one per registered method, generated from the registry.

Each class's ``__init__`` is generated from the method's declared parameters (their names,
defaults and help come from the Rust registry), so a method added to the registry is an
estimator here without a line of Python. Registry names become scikit-learn's where
scikit-learn has one: ``dim`` is ``n_components``, ``k`` is ``n_neighbors``, ``seed`` is
``random_state``; ``lambda`` (a Python keyword) is ``lambda_``.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _native
from ._progress import Listener

#: Registry name -> Python parameter name.
RENAME = {"dim": "n_components", "k": "n_neighbors", "seed": "random_state", "lambda": "lambda_"}

#: Registry method name -> class name (other methods: the name in capitals).
CLASS_NAMES = {
    "pca": "PCA",
    "cmds": "CMDS",
    "kpca": "KernelPCA",
    "le": "LaplacianEigenmaps",
    "lle": "LLE",
    "isomap": "Isomap",
    "mvu": "MVU",
    "meu": "MEU",
    "alle": "ALLE",
    "lle-pl": "LLEPL",
    "drill": "DRILL",
    "lllvm": "LLLVM",
    "spl": "SPL",
    "mpme": "MPME",
    "drtree": "DRTree",
    "ddrtree": "DDRTree",
}

#: A model's evidence: its kind (``log_likelihood``, ``elbo``, ``pseudo_log_likelihood``,
#: ``objective`` or ``none``) and value.
Evidence = namedtuple("Evidence", ["kind", "value"])

#: Projected new points: the mean (m x q) and, where the model defines one, a q x q
#: covariance per point (m x q x q), else ``None``.
Projection = namedtuple("Projection", ["mean", "covariance"])


class NotProjectableError(NotImplementedError, AttributeError):
    """The method has no out-of-sample rule (``transform`` is absent from its estimator)."""


def _same_points(X, Y):
    """Whether two point sets, dense or sparse, are the same."""
    if X.shape != Y.shape:
        return False
    if sp.issparse(X) or sp.issparse(Y):
        return (sp.csr_matrix(X) != sp.csr_matrix(Y)).nnz == 0
    return np.array_equal(X, Y)


def _projecting_methods():
    return ", ".join(m["name"] for m in _native.methods() if m["projects"])


def _dense(X):
    """Sparse input (scipy.sparse) as the dense C-order float64 array the methods compute
    on, refused with a MemoryError that names the fix when the copy would not fit the
    memory limit (``unfold.set_max_memory``); dense input as it is."""
    if not sp.issparse(X):
        return X
    _native.check_dense_copy(*X.shape)
    return np.ascontiguousarray(X.toarray(), dtype=np.float64)


def _sparse_rows(X):
    """A scipy CSR matrix of float64 values in the canonical form the neighbour methods
    read where it lies: columns ascending within each row, none twice (a copy only when it
    is not), 32-bit column indices."""
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.indices.dtype != np.int32:
        if X.shape[1] > np.iinfo(np.int32).max:
            raise ValueError(
                f"sparse points with {X.shape[1]} features; the neighbour methods take at "
                f"most {np.iinfo(np.int32).max} (reduce them with unfold.PCA first)"
            )
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    return X


def _graph_edges(graph, n):
    """A given graph as edge arrays ``(i, j)``: a square scipy.sparse or dense adjacency
    matrix (its non-zero pattern, upper triangle), or an (m, 2) array of index pairs."""
    if sp.issparse(graph) or (isinstance(graph, np.ndarray) and graph.shape == (n, n)):
        a = sp.coo_matrix(graph)
        if a.shape != (n, n):
            raise ValueError(f"the graph's adjacency matrix is {a.shape}, expected ({n}, {n})")
        keep = a.row < a.col
        i, j = a.row[keep], a.col[keep]
    else:
        pairs = np.asarray(graph)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
            raise TypeError(
                "a graph is a square adjacency matrix (scipy.sparse or dense) or an (m, 2) "
                "integer array of point index pairs"
            )
        i, j = pairs[:, 0], pairs[:, 1]
    return (np.asarray(i, dtype=np.int64).tolist(), np.asarray(j, dtype=np.int64).tolist())


def _graph_matrix(edges):
    if edges is None:
        return None
    n, i, j, w = edges
    a = sp.coo_matrix((w, (i, j)), shape=(n, n))
    return (a + a.T).tocsr()


class UnfoldEstimator(TransformerMixin, BaseEstimator):
    """What every unfold estimator shares; the generated subclasses add the parameters."""

    _info = None  # the registry's description of the method, set per subclass

    def _settings(self):
        settings = {}
        for p in self._info["params"]:
            value = getattr(self, RENAME.get(p["name"], p["name"]))
            if value is None:
                continue
            if isinstance(value, np.generic):
                value = value.item()
            settings[p["name"]] = value
        return settings

    def _check_x(self, X, reset):
        X = validate_data(
            self, X, reset=reset, dtype=np.float64, ensure_min_samples=2, order="C",
            accept_sparse=("csr", "csc", "coo"),
        )
        return _dense(X)

    def fit(self, X, y=None, graph=None):
        """Fit the model to the points ``X`` (n_samples x n_features).

        ``graph``, for methods that fit on a given graph, is a square adjacency matrix
        (scipy.sparse or dense; its non-zero pattern) or an (m, 2) integer array of index
        pairs; otherwise the method builds its kNN graph from ``n_neighbors``.

        A fit that fails or is stopped (Ctrl-C, or a ``callback`` returning False to a
        method that cannot keep an iterate) leaves the estimator as it was before.
        """
        before = {a: getattr(self, a) for a in ("n_features_in_", "feature_names_in_") if hasattr(self, a)}
        try:
            self._fit(X, graph)
        except BaseException:
            for a in ("n_features_in_", "feature_names_in_"):
                if a in before:
                    setattr(self, a, before[a])
                elif hasattr(self, a):
                    delattr(self, a)
            raise
        return self

    def _fit(self, X, graph):
        if sp.issparse(X) and self._info["name"] == "pca":
            return self._fit_sparse_pca(X)
        if sp.issparse(X) and self._info["sparse_points"]:
            X = _sparse_rows(
                validate_data(
                    self, X, reset=True, dtype=np.float64, accept_sparse="csr",
                    ensure_min_samples=2,
                )
            )
            points = (X.shape, X.indptr.astype(np.int64, copy=False), X.indices, X.data)
            fit = _native.fit_sparse
        else:
            X = self._check_x(X, reset=True)
            points = (X,)
            fit = _native.fit
        edges = None
        if graph is not None:
            if not self._info["takes_graph"]:
                takes = ", ".join(m["name"] for m in _native.methods() if m["takes_graph"])
                raise ValueError(
                    f"{self._info['name']} builds its own graph; given graphs are fitted by {takes}"
                )
            edges = _graph_edges(graph, X.shape[0])
        listener = Listener(self._info["name"], self.verbose, self.progress, self.callback)
        try:
            model = fit(
                self._info["name"], *points, self._settings(), edges, self.verbose,
                listener if listener.wanted() else None,
            )
        finally:
            listener.close()
        self._set_fitted(model, X)

    def _fit_sparse_pca(self, X):
        """PCA of sparse points without a dense copy: block Lanczos on the covariance of
        the implicitly centred matrix, read where it lies (exact; ``solver`` does not
        apply)."""
        if not np.issubdtype(X.dtype, np.floating) or X.dtype == np.float16:
            # Counts are exact in single precision up to 2^24.
            small = X.nnz == 0 or np.abs(X.data).max() < 2**24
            X = X.astype(np.float32 if small and X.dtype != np.float16 else np.float64)
        X = validate_data(
            self, X, reset=True, dtype=(np.float64, np.float32), accept_sparse="csr",
            ensure_min_samples=2,
        )
        indices = X.indices
        indptr = X.indptr.astype(indices.dtype, copy=False)
        seed = 0 if self.random_state is None else int(self.random_state)
        model, mean, axes, variances = _native.pca_sparse(
            X.shape, indptr, indices, X.data, int(self.n_components), seed
        )
        self._set_fitted(model, None)

    def _set_fitted(self, model, X):
        self.model_ = model
        self.embedding_ = model.embedding()
        kind, value, terms = model.evidence()
        self.evidence_ = Evidence(kind, value)
        self.evidence_terms_ = dict(terms)
        c = model.convergence()
        self.n_iter_ = c["iterations"]
        self.converged_ = c["converged"]
        self.stopped_by_ = c["stopped_by"]
        self.trace_ = c["trace"]
        self.tables_ = {name: (header, rows) for name, header, rows in model.tables()}
        if self._info["name"] == "pca":
            # scikit-learn's names: the axes as rows, their means and variances.
            _, axes = self.tables_["axes"]
            self.mean_ = axes[:, 0].copy()
            self.components_ = axes[:, 1:].T.copy()
            self.explained_variance_ = self.tables_["variance"][1][:, 0].copy()
        # The training points, for `score` and `transform` of them (None after a sparse
        # PCA, which keeps no dense copy).
        self._fit_X = X

    @property
    def graph_(self):
        """The graph the model fitted or learned, as a symmetric ``scipy.sparse`` matrix
        (``None`` for methods without one); built from the model on each access."""
        check_is_fitted(self)
        return _graph_matrix(self.model_.edges())

    def fit_transform(self, X, y=None, graph=None):
        """Fit the model and return the embedding of ``X`` (``embedding_``)."""
        return self.fit(X, y, graph=graph).embedding_

    def score(self, X, y=None):
        """The model's evidence (``evidence_.kind``): on the training points its
        log-likelihood, bound or objective; on new points (methods that project) the log
        predictive density of the points at their projected positions, under the GP-LVM
        score's Gaussian process from the embedding to the training data."""
        check_is_fitted(self)
        if self._fit_X is None:
            raise ValueError(
                "this PCA was fitted to sparse points and keeps no dense copy to score against"
            )
        X = validate_data(
            self, X, reset=False, dtype=np.float64, order="C",
            accept_sparse="csr" if sp.issparse(self._fit_X) else False,
        )
        if _same_points(X, self._fit_X):
            return self.evidence_.value
        if not self._info["projects"]:
            raise NotProjectableError(
                f"{self._info['name']} scores only its training points (it has no "
                f"out-of-sample rule); the methods that score new points are "
                f"{_projecting_methods()}"
            )
        return self.model_.heldout_log_density(_dense(self._fit_X), _dense(X))

    def __getattr__(self, name):
        # Only reached for names the class does not have: `transform` and `project` of a
        # method without an out-of-sample rule get an error that says which methods have
        # one (an AttributeError too, so `hasattr` is False, as scikit-learn expects).
        if name in ("transform", "project"):
            raise NotProjectableError(
                f"{self._info['name']} has no out-of-sample rule, so {type(self).__name__} "
                f"has no {name}; the methods that project new points are {_projecting_methods()}"
            )
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __sklearn_is_fitted__(self):
        return hasattr(self, "model_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # fitted as its values (``_dense``)
        return tags


class ProjectingEstimator(UnfoldEstimator):
    """An estimator whose method projects new points: ``transform`` and ``project``."""

    def transform(self, X):
        """Project new points (out of sample): the mean of each point's position."""
        return self.project(X).mean

    def project(self, X):
        """Project new points: their mean positions and, for the probabilistic models
        (MEU, ALLE, lle-pl, LL-LVM), a q x q covariance per point."""
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, dtype=np.float64, order="C", accept_sparse=("csr", "csc", "coo")
        )
        if sp.issparse(X) and self._info["name"] == "pca":
            # (X - 1 mean^T) V without the dense X.
            V = self.components_.T
            return Projection(np.asarray(X @ V) - self.mean_ @ V, None)
        mean, covariance = self.model_.project(_dense(X))
        return Projection(mean, covariance)


def _python_name(name):
    return RENAME.get(name, name)


def _doc(info):
    lines = [f"{info['about']} (unfold method ``{info['name']}``, {info['family']}).", ""]
    lines.append(
        f"Evidence: ``{info['evidence']}``; projects new points: "
        f"{'yes' if info['projects'] else 'no'}; fits on a given graph: "
        f"{'yes' if info['takes_graph'] else 'no'}."
    )
    lines += ["", "Parameters", "----------"]
    for p in info["params"]:
        default = p["default"] if p["auto"] is None else None
        lines.append(f"{_python_name(p['name'])} : {p['kind']}, default={default!r}")
        text = p["help"] + f" ({p['allowed']}"
        text += f"; None: {p['auto']})" if p["auto"] is not None else ")"
        lines.append(f"    {text}")
    lines.append("verbose : int, default=0")
    lines.append(
        "    1: a line on standard error about once a second with the fit's latest iteration "
        "and its evidence, and one when the fit ends; 2: a line per iteration"
    )
    lines.append("progress : bool or None, default=None")
    lines.append(
        "    A tqdm progress bar of the iterations (needs tqdm); None: in Jupyter notebooks only"
    )
    lines.append("callback : callable or None, default=None")
    lines.append(
        "    Called as callback(iteration, objective) after each iteration (a search's: each "
        "evaluation), behind the fit by at most a tenth of a second; returning False ends "
        "the fit at the next iteration it reaches and keeps that iterate (stopped_by_ is "
        "'caller'). MVU, whose iterates are not a fit before it converges, raises "
        "unfold.FitStopped instead and leaves the estimator as it was"
    )
    return "\n".join(lines)


def _make_class(info):
    names = [_python_name(p["name"]) for p in info["params"]] + ["verbose", "progress", "callback"]
    defaults = {"verbose": 0, "progress": None, "callback": None}
    for p in info["params"]:
        d = p["default"] if p["auto"] is None else None
        defaults[_python_name(p["name"])] = d
    args = ", ".join(f"{n}=_defaults[{n!r}]" for n in names)
    body = "\n".join(f"    self.{n} = {n}" for n in names) or "    pass"
    source = f"def __init__(self, *, {args}):\n{body}\n"
    namespace = {"_defaults": defaults}
    exec(compile(source, f"<unfold estimator {info['name']}>", "exec"), namespace)
    init = namespace["__init__"]
    class_name = CLASS_NAMES.get(info["name"], info["name"].upper().replace("-", "_"))
    init.__qualname__ = f"{class_name}.__init__"
    init.__module__ = "unfold"
    base = ProjectingEstimator if info["projects"] else UnfoldEstimator
    cls = type(
        class_name,
        (base,),
        {"__init__": init, "_info": info, "__doc__": _doc(info), "__module__": "unfold"},
    )
    return cls


def make_estimators():
    """One estimator class per registered method, by class name."""
    return {c.__name__: c for c in (_make_class(info) for info in _native.methods())}
