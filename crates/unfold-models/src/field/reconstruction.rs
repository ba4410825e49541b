//! Local linear reconstruction (spec `meu_alle_drill.md` §4.2): the weights that rebuild a
//! point from its neighbours, and the sparse cost matrix `(I - W)^T S (I - W)` they define.
//! LLE's embedding and the local regressions of ALLE and lle-pl share them.

use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};
use unfold_linalg::{sparse_difference, sparse_dot, CsrMatrix, SparsePoints, SparseRow};

/// Reconstruction weights of `y0` from the rows `nbrs` of `y` (sum to one). `who` names the
/// point in error messages.
pub fn reconstruction_weights(
    y: &DMatrix<f64>,
    y0: &DVector<f64>,
    nbrs: &[usize],
    reg: f64,
    who: usize,
) -> Result<Vec<f64>> {
    let z = DMatrix::from_fn(nbrs.len(), y.ncols(), |a, j| y[(nbrs[a], j)] - y0[j]);
    weights_from_gram(&z * z.transpose(), nbrs, reg, who)
}

/// [`reconstruction_weights`] of the sparse row `y0` from the rows `nbrs` of sparse points:
/// the local Gram matrix from the differences `y_a - y0` on the union of their columns.
pub fn reconstruction_weights_sparse(
    y: &SparsePoints<'_>,
    y0: SparseRow<'_>,
    nbrs: &[usize],
    reg: f64,
    who: usize,
) -> Result<Vec<f64>> {
    let z: Vec<(Vec<i32>, Vec<f64>)> = nbrs
        .iter()
        .map(|&a| sparse_difference(y.row(a), y0))
        .collect();
    let row = |a: usize| (&z[a].0[..], &z[a].1[..]);
    let k = nbrs.len();
    let c = DMatrix::from_fn(k, k, |a, b| sparse_dot(row(a), row(b)));
    weights_from_gram(c, nbrs, reg, who)
}

/// The weights of [`reconstruction_weights`] from the local Gram matrix `C = Z Z^T` of the
/// differences to the neighbours `nbrs`: `C + reg tr(C) I` solved against ones, scaled to
/// sum to one.
fn weights_from_gram(
    mut c: DMatrix<f64>,
    nbrs: &[usize],
    reg: f64,
    who: usize,
) -> Result<Vec<f64>> {
    let k = nbrs.len();
    let trace = c.trace();
    if trace == 0.0 {
        return Err(Error::DuplicatePoints {
            first: who,
            second: nbrs[0],
            method: format!("LLE (the point coincides with all {k} of its neighbours)"),
        });
    }
    let ridge = if reg > 0.0 { reg * trace } else { 0.0 };
    for a in 0..k {
        c[(a, a)] += ridge;
    }
    let chol = c.cholesky().ok_or_else(|| Error::NotPositiveDefinite {
        context: format!("LLE local Gram matrix of point {who}"),
        pivot: 0,
        advice: "k exceeds the local dimension of the data; use reg > 0 (e.g. 1e-3)".to_string(),
    })?;
    let w = chol.solve(&DVector::from_element(k, 1.0));
    let total = w.sum();
    if !(total.is_finite() && total != 0.0) {
        return Err(Error::numerical(
            format!("LLE weights of point {who}"),
            "the local Gram matrix is numerically singular; increase reg",
        ));
    }
    Ok(w.iter().map(|v| v / total).collect())
}

/// `M = (I - W)^T S (I - W) = sum_i s_i (e_i - w_i)(e_i - w_i)^T` as a sparse matrix, where
/// row i of W holds `weights[i]` at the columns `nbrs[i]` and `S = diag(scale)` (the
/// identity when `scale` is `None`). In the paper's column convention this is `M M^T` with
/// `m_ii^2 = s_i` (spec §4.2).
pub fn cost_matrix(nbrs: &[Vec<usize>], weights: &[Vec<f64>], scale: Option<&[f64]>) -> CsrMatrix {
    let n = nbrs.len();
    let width = nbrs.iter().map(Vec::len).max().unwrap_or(0);
    let mut triplets = Vec::with_capacity(n * (1 + width).pow(2));
    for (i, (idx, w)) in nbrs.iter().zip(weights).enumerate() {
        let s = scale.map_or(1.0, |s| s[i]);
        triplets.push((i, i, s));
        for (&a, &wa) in idx.iter().zip(w) {
            triplets.push((i, a, -s * wa));
            triplets.push((a, i, -s * wa));
            for (&b, &wb) in idx.iter().zip(w) {
                triplets.push((a, b, s * wa * wb));
            }
        }
    }
    CsrMatrix::from_triplets(n, n, &triplets)
}
