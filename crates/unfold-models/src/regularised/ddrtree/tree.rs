//! The tree step (28) and the tree term: the minimum spanning tree of the centres, its
//! Laplacian, and `Tr(C^T L C)`.

use nalgebra::DMatrix;
use unfold_core::Result;
use unfold_graph::{minimum_spanning_tree_dense, Laplacian};
use unfold_linalg::pairwise_sq_dists;

/// `lambda`-free tree term `Tr(C^T L C) = sum over edges ||c_a - c_b||^2`.
pub(crate) fn tree_energy(c: &DMatrix<f64>, edges: &[(usize, usize, f64)]) -> f64 {
    edges
        .iter()
        .map(|&(a, b, _)| (c.row(a) - c.row(b)).norm_squared())
        .sum()
}

/// Minimum spanning tree (Prim) of the rows of `c` under squared Euclidean distances
/// (the S-step (28); spec P10).
pub(crate) fn spanning_tree(c: &DMatrix<f64>) -> Result<Vec<(usize, usize, f64)>> {
    if c.nrows() == 1 {
        return Ok(Vec::new());
    }
    minimum_spanning_tree_dense(&pairwise_sq_dists(c))
}

/// Dense Laplacian `diag(S 1) - S` of a tree with unit edge weights over `k` nodes.
pub(crate) fn tree_laplacian(edges: &[(usize, usize, f64)], k: usize) -> DMatrix<f64> {
    Laplacian::new(k).dense(edges.iter().map(|&(a, b, _)| (a, b, 1.0)))
}
