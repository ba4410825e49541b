//! Input checks shared by the factorisations and eigensolvers: square, finite, symmetric.

use crate::sparse::CsrMatrix;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{check_finite, Error, Result};

/// Relative asymmetry `|a_ij - a_ji| / max|a|` above which a matrix is rejected as
/// not symmetric. Products such as `X X^T` computed in floating point are symmetric to
/// about 1e-16, so this only catches genuinely non-symmetric input.
const SYMMETRY_TOL: f64 = 1e-10;

/// Side of the square tiles the symmetry check compares, so that both `a_ij` and `a_ji`
/// are read from cache rather than with a stride of n.
const TILE: usize = 64;

/// A dense matrix must be non-empty, square, finite and symmetric.
///
/// One parallel pass over tiles of the lower triangle, each compared with its mirror
/// tile: a matrix of n = 5000 is checked at memory speed.
pub(crate) fn check_dense_symmetric(a: &DMatrix<f64>, context: &str) -> Result<()> {
    check_square(a.nrows(), a.ncols(), context)?;
    check_finite(a, context)?;
    let scale = a
        .as_slice()
        .par_iter()
        .fold(|| 0.0f64, |m, v| m.max(v.abs()))
        .reduce(|| 0.0, f64::max);
    let n = a.nrows();
    let tiles = n.div_ceil(TILE);
    let bad = (0..tiles).into_par_iter().find_map_first(|tj| {
        let (j0, j1) = (tj * TILE, ((tj + 1) * TILE).min(n));
        for ti in tj..tiles {
            let (i0, i1) = (ti * TILE, ((ti + 1) * TILE).min(n));
            for j in j0..j1 {
                for i in i0.max(j + 1)..i1 {
                    if (a[(i, j)] - a[(j, i)]).abs() > SYMMETRY_TOL * scale {
                        return Some((i, j));
                    }
                }
            }
        }
        None
    });
    match bad {
        Some((i, j)) => Err(not_symmetric(context, i, j, a[(i, j)], a[(j, i)])),
        None => Ok(()),
    }
}

/// A sparse matrix must be non-empty, square, finite and symmetric (same pattern and
/// values on both sides of the diagonal, up to rounding).
pub(crate) fn check_sparse_symmetric(a: &CsrMatrix, context: &str) -> Result<()> {
    check_square(a.nrows(), a.ncols(), context)?;
    let (_, _, values) = a.parts();
    let scale = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    what: context.to_string(),
                    row: i,
                    col: j,
                });
            }
            let w = a.get(j, i);
            if (v - w).abs() > SYMMETRY_TOL * scale {
                return Err(not_symmetric(context, i, j, v, w));
            }
        }
    }
    Ok(())
}

fn check_square(nrows: usize, ncols: usize, context: &str) -> Result<()> {
    if nrows == 0 || ncols == 0 {
        return Err(Error::Empty(context.to_string()));
    }
    if nrows != ncols {
        return Err(Error::DimensionMismatch(format!(
            "{context}: the matrix must be square but is {nrows} x {ncols}"
        )));
    }
    Ok(())
}

fn not_symmetric(context: &str, i: usize, j: usize, aij: f64, aji: f64) -> Error {
    Error::invalid(
        context,
        format!(
            "the matrix must be symmetric but entry ({i}, {j}) = {aij:e} differs from \
             ({j}, {i}) = {aji:e}; symmetrise it with (A + A^T) / 2 if the asymmetry is rounding"
        ),
    )
}

/// Validates the number of wanted eigenpairs: `1 <= q <= n`.
pub(crate) fn check_q(q: usize, n: usize) -> Result<()> {
    if q == 0 {
        return Err(Error::invalid(
            "q",
            "the number of eigenpairs must be at least 1",
        ));
    }
    if q > n {
        return Err(Error::invalid(
            "q",
            format!("asked for {q} eigenpairs of a {n} x {n} matrix, which has only {n}"),
        ));
    }
    Ok(())
}
