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
