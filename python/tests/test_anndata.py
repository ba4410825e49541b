"""AnnData helpers: results land where scanpy users look for them."""

import numpy as np
import pytest

import unfold
from conftest import swiss_roll

anndata = pytest.importorskip("anndata")


def test_embed_writes_obsm_obsp_and_uns():
    X = swiss_roll(150, seed=8)
    adata = anndata.AnnData(X=X.astype(np.float32))
    adata.obsm["X_pca"] = X
    est = unfold.tl.embed(adata, method="meu", n_neighbors=8)
    assert np.array_equal(adata.obsm["X_meu"], est.embedding_)
    assert adata.obsp["meu_connectivities"].shape == (150, 150)
    uns = adata.uns["meu"]
    assert uns["use_rep"] == "X_pca" and uns["evidence"]["kind"] == "log_likelihood"
    assert uns["params"]["n_neighbors"] == 8
    # The stored model file restores the fitted model.
    model = unfold.load_model(uns["model"].tobytes())
    assert np.array_equal(model.embedding(), est.embedding_)
    # The same fit as on the array itself.
    assert np.array_equal(unfold.MEU(n_neighbors=8).fit(X).embedding_, est.embedding_)


def test_embed_fits_lllvm_in_the_family_asked_for_and_names_it():
    X = swiss_roll(150, seed=8)
    adata = anndata.AnnData(X=X)
    est = unfold.tl.embed(adata, method="lllvm", use_rep="X", n_neighbors=8, max_iter=5,
                          posterior="factorised")
    uns = adata.uns["lllvm"]
    assert uns["params"]["posterior"] == "factorised"
    assert uns["evidence"]["kind"] == "elbo"
    assert uns["evidence"]["value"] == est.evidence_.value
    assert adata.obsm["X_lllvm"].shape == (150, 2)
    # The stored model restores the per-point fit: the same embedding.
    model = unfold.load_model(uns["model"].tobytes())
    assert np.array_equal(model.embedding(), est.embedding_)
    # The full family on the same cells: a higher bound, as the per-point one is its
    # special case.
    full = unfold.tl.embed(adata, method="lllvm", use_rep="X", key_added="lllvm_full",
                           n_neighbors=8, max_iter=5, posterior="full")
    assert full.evidence_.value > est.evidence_.value
    assert adata.uns["lllvm_full"]["params"]["posterior"] == "full"


def test_ddrtree_writes_the_tree_and_each_cells_centre():
    X = swiss_roll(200, seed=9)
    adata = anndata.AnnData(X=X)
    out = unfold.tl.ddrtree(adata, use_rep="X", copy=True, ncenters=20)
    assert "X_ddrtree" not in adata.obsm  # copy=True leaves the input alone
    centres = out.uns["ddrtree"]["centres"]
    tree = out.uns["ddrtree"]["tree"]
    assert tree.shape == (centres.shape[0] - 1, 3)  # a spanning tree of the centres
    nearest = out.obs["ddrtree_centre"].to_numpy()
    assert nearest.min() >= 0 and nearest.max() < centres.shape[0]
    z = out.obsm["X_ddrtree"]
    d = ((z[5] - centres) ** 2).sum(axis=1)
    assert nearest[5] == np.argmin(d)
    pseudotime = out.obs["ddrtree_pseudotime"].to_numpy()
    root = out.uns["ddrtree"]["root_cell"]
    assert pseudotime[root] == 0.0 and np.all(pseudotime >= 0)
    assert out.obs["ddrtree_state"].min() == 1
    # A given root cell starts the pseudotime there.
    again = unfold.tl.ddrtree(adata, use_rep="X", copy=True, ncenters=20, root_cell=17)
    assert again.obs["ddrtree_pseudotime"].iloc[17] == 0.0
    # With the R package's conventions, pseudotime runs along Monocle 2's tree over the
    # cells, every edge raised by the smallest distance: only the root is at 0, where along
    # the centres' tree the cells projected onto the root's position are too.
    monocle = unfold.tl.ddrtree(adata, use_rep="X", copy=True, ncenters=20, compat="r")
    pt = monocle.obs["ddrtree_pseudotime"].to_numpy()
    root = monocle.uns["ddrtree"]["root_cell"]
    assert pt[root] == 0.0 and np.count_nonzero(pt == 0.0) == 1


def test_missing_representation_is_named():
    adata = anndata.AnnData(X=swiss_roll(50, seed=1))
    with pytest.raises(KeyError, match="X_umap"):
        unfold.tl.embed(adata, use_rep="X_umap")


def test_ddrtree_reports_its_defaults_and_draws_its_trajectory():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    X = swiss_roll(200, seed=9)
    adata = anndata.AnnData(X=X)
    unfold.tl.ddrtree(adata, use_rep="X", ncenters=20)
    defaults = adata.uns["ddrtree"]["defaults"]
    # The number of centres was given; the rest were chosen from the data, with why.
    assert set(defaults) == {
        "dim", "lambda", "sigma", "restarts", "min_branch", "pseudotime_neighbours"
    }
    assert defaults["restarts"]["value"] == "5"
    assert "consensus" in defaults["restarts"]["reason"]
    assert int(defaults["dim"]["value"]) == adata.obsm["X_ddrtree"].shape[1]
    # The bandwidth from the spectrum: a quarter of the variance beyond the plane, at most a
    # twentieth of the first axis's.
    s = np.linalg.svd(X - X.mean(0), compute_uv=False) ** 2 / len(X)
    assert float(defaults["sigma"]["value"]) == pytest.approx(min(s[2] / 4, s[0] / 20), rel=1e-6)
    assert "noise" in defaults["sigma"]["reason"]
    assert "singular values" in defaults["dim"]["reason"]
    # As many neighbours as one centre stands for: 200 cells over 20 centres.
    assert defaults["pseudotime_neighbours"]["value"] == "10"
    assert float(defaults["lambda"]["value"]) == pytest.approx(10.0 * 200 / 20)
    ax = unfold.pl.trajectory(adata)
    # One line per edge of the tree over the 20 centres; one ringed dot per branch point.
    assert len(ax.get_lines()) == 19
    branch = adata.uns["ddrtree"]["branch_points"]
    assert sum(len(c.get_offsets()) for c in ax.collections) == 200 + len(branch)
    by_state = unfold.pl.trajectory(adata, color="state")
    states = adata.obs["ddrtree_state"].nunique()
    assert len(by_state.get_legend().get_texts()) == states
    with pytest.raises(KeyError, match="colour by"):
        unfold.pl.trajectory(adata, color="nothing")
    with pytest.raises(KeyError, match="tl.ddrtree"):
        unfold.pl.trajectory(anndata.AnnData(X=X))
    matplotlib.pyplot.close("all")


def test_ddrtree_takes_the_iteration_controls():
    X = swiss_roll(150, seed=4)
    est = unfold.DDRTree(max_iter=3, tol=0.0, ncenters=15).fit(X)
    assert est.n_iter_ == 3 and not est.converged_
    with pytest.raises(ValueError, match="max_iter"):
        unfold.DDRTree(max_iter=0).fit(X)


def test_embed_takes_sparse_counts_as_their_values():
    """A sparse ``adata.X`` (single-cell counts) is read as its values, by Laplacian
    eigenmaps without a dense copy; the embedding equals the dense matrix's."""
    import scipy.sparse as sp

    X = swiss_roll(120, seed=4)
    dense = anndata.AnnData(X)
    sparse = anndata.AnnData(sp.csr_matrix(X))
    a = unfold.tl.embed(dense, method="le", use_rep="X", n_neighbors=8)
    b = unfold.tl.embed(sparse, method="le", use_rep="X", n_neighbors=8)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    assert sp.issparse(sparse.X)


def test_tl_pca_reads_sparse_counts_without_a_dense_copy():
    """``tl.pca`` on a sparse ``adata.X`` writes scanpy's layout under a memory limit that
    refuses the dense copy, and ``tl.ddrtree`` then reads ``X_pca``."""
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0, 1, 400))
    means = np.c_[np.outer(t, rng.uniform(0, 8, 60)), np.outer(1 - t, rng.uniform(0, 8, 60))]
    counts = sp.csr_matrix(rng.poisson(means).astype(np.float32))
    adata = anndata.AnnData(counts)
    unfold.set_max_memory("100K")
    try:
        with pytest.raises(MemoryError, match="tl.pca"):
            unfold.tl.embed(adata, method="meu", use_rep="X")
        est = unfold.tl.pca(adata, n_comps=10)
    finally:
        unfold.set_max_memory(None)
    assert adata.obsm["X_pca"].shape == (400, 10) and adata.varm["PCs"].shape == (120, 10)
    np.testing.assert_array_equal(adata.uns["pca"]["variance"], est.explained_variance_)
    assert np.all(np.diff(adata.uns["pca"]["variance"]) <= 0)
    unfold.tl.ddrtree(adata, root_cell=int(np.argmin(t)))
    from scipy.stats import spearmanr

    assert spearmanr(adata.obs["ddrtree_pseudotime"], t)[0] > 0.9
