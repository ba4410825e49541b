//! The first term of the R package's objective (`Compat::R`), from small products (no
//! N x D residual), with the residual formed block by block where the subtraction would
//! lose digits; and the blocks of rows the residual is formed by.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatRef};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use std::ops::Range;
use unfold_core::Result;
use unfold_linalg::gemm::{lower_gram, mul, mul_with, sum_lower_and_mirror, tr_mul_self};
use unfold_linalg::view::{as_faer, as_faer_mut};
use unfold_linalg::{largest_eigenpairs, SymEigen, SymMatrix};

/// What [`r_residual_term`] needs once `E^T E` is known.
pub(super) enum ResidualPlan {
    /// The term itself (`d >= min(N, D)`: the largest eigenvalue of `E^T E`, squared).
    Value(f64),
    /// The top-`d` eigenpairs of `E^T E`: the term needs `E V`.
    Directions(SymEigen),
}

/// The first term of the R package's objective: with `E` the residual (N x D), the
/// package calls `get_major_eigenvalue(t(E), d)` and squares it. For `d >= min(N, D)` that
/// is `||E||_2^2`, squared again (`||E||_2^4`); otherwise it is the largest absolute entry
/// of the top-d left singular vectors of `E` (the package's right singular vectors of
/// `t(E)`), squared. Neither equals `||E||_F^2`; they are reproduced for agreement only.
pub fn r_residual_term(residual: &DMatrix<f64>, dim: usize) -> Result<f64> {
    let (n, p) = residual.shape();
    residual_term_from(n.min(p), dim, &tr_mul_self(residual), |v| mul(residual, v))
}

/// The rows `rows` of `E = Y - 1 mean^T - Z W^T` (no mean: `Y - Z W^T`).
pub(super) fn residual_block(
    y: MatRef<'_, f64>,
    mean: Option<&DVector<f64>>,
    z: &DMatrix<f64>,
    w: &DMatrix<f64>,
    rows: &Range<usize>,
) -> DMatrix<f64> {
    let mut e = DMatrix::zeros(rows.len(), y.ncols());
    as_faer_mut(&mut e).copy_from(y.subrows(rows.start, rows.len()));
    if let Some(mean) = mean {
        for (mut col, &m) in e.column_iter_mut().zip(mean.iter()) {
            col.add_scalar_mut(-m);
        }
    }
    matmul(
        as_faer_mut(&mut e),
        Accum::Add,
        as_faer(z).subrows(rows.start, rows.len()),
        as_faer(w).transpose(),
        -1.0,
        faer::Par::Seq,
    );
    e
}

/// [`r_residual_term`] of `E = Y - 1 mean^T - Z W^T`, formed by small blocks of rows.
pub(super) fn r_residual_term_of(
    y: MatRef<'_, f64>,
    mean: Option<&DVector<f64>>,
    z: &DMatrix<f64>,
    w: &DMatrix<f64>,
    dim: usize,
) -> Result<f64> {
    let (n, p) = (y.nrows(), y.ncols());
    let blocks = residual_blocks(n);
    let (residuals, parts): (Vec<DMatrix<f64>>, Vec<DMatrix<f64>>) = blocks
        .par_iter()
        .map(|rows| {
            let e = residual_block(y, mean, z, w, rows);
            let gram = lower_gram(as_faer(&e));
            (e, gram)
        })
        .unzip();
    let ete = sum_lower_and_mirror(parts);
    residual_term_from(n.min(p), dim, &ete, |v| {
        let parts: Vec<DMatrix<f64>> = residuals
            .par_iter()
            .map(|e| mul_with(as_faer(e), as_faer(v), faer::Par::Seq))
            .collect();
        let mut u = DMatrix::zeros(n, v.ncols());
        for (rows, part) in blocks.iter().zip(&parts) {
            u.rows_mut(rows.start, rows.len()).copy_from(part);
        }
        u
    })
}

/// The fixed blocks of [`RESIDUAL_ROWS`] rows of `0..n`.
pub(super) fn residual_blocks(n: usize) -> Vec<Range<usize>> {
    (0..n.div_ceil(RESIDUAL_ROWS))
        .map(|b| b * RESIDUAL_ROWS..((b + 1) * RESIDUAL_ROWS).min(n))
        .collect()
}

/// Rows per block of the residual in [`r_residual_term_of`] (small blocks stay in cache
/// and are allocated from the heap, not mapped afresh).
const RESIDUAL_ROWS: usize = 256;

/// [`r_residual_term`] from `E^T E` and `u_of(V) = E V`, for `rank = min(N, D)`.
fn residual_term_from<F>(rank: usize, dim: usize, ete: &DMatrix<f64>, u_of: F) -> Result<f64>
where
    F: FnOnce(&DMatrix<f64>) -> DMatrix<f64>,
{
    Ok(match residual_plan_of(rank, dim, ete)? {
        ResidualPlan::Directions(eig) => residual_term_of_u(&u_of(&eig.vectors), &eig.values),
        ResidualPlan::Value(v) => v,
    })
}

/// For `d >= rank = min(N, D)` the term (the largest eigenvalue of `E^T E`, squared),
/// otherwise the top-`d` eigenpairs of `E^T E`.
pub(super) fn residual_plan_of(
    rank: usize,
    dim: usize,
    ete: &DMatrix<f64>,
) -> Result<ResidualPlan> {
    if dim >= rank {
        let top = largest_eigenpairs(SymMatrix::Dense(ete), 1)?;
        return Ok(ResidualPlan::Value(top.values[0].max(0.0).powi(2)));
    }
    Ok(ResidualPlan::Directions(largest_eigenpairs(
        SymMatrix::Dense(ete),
        dim,
    )?))
}

/// The term from `u = E V` and the eigenvalues `s^2` of `E^T E`: the largest `|u_ij| / s_j`
/// (an entry of the left singular vectors), squared.
pub(super) fn residual_term_of_u(u: &DMatrix<f64>, values: &DVector<f64>) -> f64 {
    let mut largest = 0.0f64;
    for (col, &s2) in u.column_iter().zip(values.iter()) {
        let s = s2.max(0.0).sqrt();
        if s > 0.0 {
            largest = largest.max(col.amax() / s);
        }
    }
    largest * largest
}
