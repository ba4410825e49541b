"""AnnData helpers in scanpy's style: ``unfold.tl.embed(adata, method="meu")`` and
``unfold.tl.ddrtree(adata)`` read the cells from ``adata.obsm[use_rep]`` (``X_pca`` when
present) or ``adata.X``, and write the embedding to ``adata.obsm["X_<method>"]``, the graph
to ``adata.obsp["<method>_connectivities"]`` and the fit's parameters and evidence to
``adata.uns["<method>"]``. ``anndata`` is an optional dependency.
"""

import numpy as np
import scipy.sparse as sp

from . import _estimators


def _points(adata, use_rep, keep_sparse=False):
    if use_rep is None:
        use_rep = "X_pca" if "X_pca" in adata.obsm else "X"
    if use_rep == "X":
        if sp.issparse(adata.X):
            # PCA and the neighbour methods (Isomap, Laplacian eigenmaps, LLE) read sparse
            # counts where they lie; the other methods need a dense copy, checked against
            # the memory limit (the refusal names ``tl.pca``).
            return (adata.X if keep_sparse else _estimators._dense(adata.X)), use_rep
        X = adata.X
    else:
        if use_rep not in adata.obsm:
            raise KeyError(
                f"adata.obsm has no `{use_rep}` (it has {', '.join(adata.obsm.keys()) or 'nothing'}); "
                "run a PCA first (scanpy.pp.pca) or pass use_rep='X'"
            )
        X = adata.obsm[use_rep]
    return np.asarray(X, dtype=np.float64), use_rep


def _estimator(method, params):
    classes = _estimators.make_estimators()
    for cls in classes.values():
        if cls._info["name"] == method:
            return cls(**params)
    names = ", ".join(c._info["name"] for c in classes.values())
    raise ValueError(f"no method `{method}`; the methods are {names}")


def embed(adata, method="meu", use_rep=None, key_added=None, copy=False, **params):
    """Fit ``method`` to the cells and store the result in ``adata``.

    Writes ``adata.obsm["X_<key>"]`` (the embedding), ``adata.obsp["<key>_connectivities"]``
    (the fitted or learned graph, if any) and ``adata.uns["<key>"]`` (``params``, the
    ``evidence`` kind and value, ``n_iter``, ``use_rep`` and the model file's ``model``
    bytes, from which ``unfold.load_model`` restores the fitted model). ``key`` is
    ``key_added`` or the method's name. Returns the fitted estimator, or the copy of
    ``adata`` when ``copy=True``.
    """
    adata = adata.copy() if copy else adata
    est = _estimator(method, params)
    sparse = method == "pca" or est._info["sparse_points"]
    X, rep = _points(adata, use_rep, keep_sparse=sparse)
    est.fit(X)
    key = key_added or method.replace("-", "_")
    adata.obsm[f"X_{key}"] = est.embedding_
    if est.graph_ is not None:
        adata.obsp[f"{key}_connectivities"] = est.graph_
    adata.uns[key] = {
        "method": method,
        "params": {k: v for k, v in est.get_params().items() if v is not None},
        "use_rep": rep,
        "evidence": {"kind": est.evidence_.kind, "value": float(est.evidence_.value)},
        "n_iter": int(est.n_iter_),
        "model": np.frombuffer(est.model_.to_bytes(), dtype=np.uint8),
    }
    return adata if copy else est


def pca(adata, n_comps=50, random_state=0, copy=False):
    """Principal components of ``adata.X`` in scanpy's layout: ``adata.obsm["X_pca"]``
    (cells x n_comps), ``adata.varm["PCs"]`` (genes x n_comps, the axes) and
    ``adata.uns["pca"]["variance"]``. Sparse counts are never densified: the randomized
    solver works on the implicitly centred matrix where it lies (memory about the matrix
    plus the output). The other tools then read ``X_pca`` by default. Returns the fitted
    ``unfold.PCA``, or the copy of ``adata`` when ``copy=True``.
    """
    adata = adata.copy() if copy else adata
    X = adata.X if sp.issparse(adata.X) else np.asarray(adata.X, dtype=np.float64)
    est = _estimator("pca", {"n_components": n_comps, "random_state": random_state}).fit(X)
    adata.obsm["X_pca"] = est.embedding_
    adata.varm["PCs"] = est.components_.T
    adata.uns["pca"] = {"variance": est.explained_variance_, "params": {"n_comps": n_comps}}
    return adata if copy else est


def ddrtree(adata, use_rep=None, key_added="ddrtree", copy=False, order=True, **params):
    """DDRTree on the cells: ``embed`` with ``method="ddrtree"``, plus the learned tree and
    the cells' ordering along it (Monocle 2's ``orderCells``).

    Besides ``embed``'s outputs, ``adata.uns[key]["centres"]`` holds the tree's centres in
    the latent space and ``adata.uns[key]["tree"]`` its edges (centre_i, centre_j, squared
    length). With ``order`` (the default; ``root_cell=`` or ``root_state=`` choose the
    root, else an end of the tree's diameter) ``adata.obs["<key>_pseudotime"]``,
    ``["<key>_state"]`` and ``["<key>_centre"]`` hold each cell's pseudotime, state and
    nearest centre, and ``adata.uns[key]["root_cell"]`` and ``["branch_points"]`` the root
    and the branch points (centres). ``adata.uns[key]["defaults"]`` names each setting the
    fit chose from the data (the latent dimension, ``lambda``, the number of centres, the
    smallest branch, the neighbours pseudotime is averaged over) with its ``value`` and
    ``reason``; ``pseudotime_neighbours=1`` gives the distance along the tree itself.
    ``unfold.pl.trajectory(adata)`` draws the result.
    """
    adata = adata.copy() if copy else adata
    if order and params.get("root_cell") is None and params.get("root_state") is None:
        params["order"] = True
    est = embed(adata, method="ddrtree", use_rep=use_rep, key_added=key_added, **params)
    centres = est.tables_["centres"][1]
    tree = est.tables_["tree"][1]
    adata.uns[key_added]["centres"] = centres
    adata.uns[key_added]["tree"] = tree
    notes = dict(est.model_.notes())
    adata.uns[key_added]["defaults"] = {
        name: {"value": notes[name], "reason": notes[f"{name}_reason"]}
        for name in notes
        if f"{name}_reason" in notes
    }
    if "order" in est.tables_:
        rows = est.tables_["order"][1]
        adata.obs[f"{key_added}_pseudotime"] = rows[:, 0]
        adata.obs[f"{key_added}_state"] = rows[:, 1].astype(np.int64)
        adata.obs[f"{key_added}_centre"] = rows[:, 2].astype(np.int64)
        adata.uns[key_added]["root_cell"] = int(notes["root_cell"])
        points = notes["branch_points"]
        adata.uns[key_added]["branch_points"] = [] if points == "none" else [int(c) for c in points.split(", ")]
    return adata if copy else est
