//! The three dense matrix helpers of the solver.

use faer::linalg::matmul::matmul;
use faer::Accum;
use nalgebra::DMatrix;
use unfold_linalg::view::{as_faer, as_faer_mut, par};

/// `op(a) op(b)` on faer, `op` the transpose when the flag is set.
pub fn mul(a: &DMatrix<f64>, ta: bool, b: &DMatrix<f64>, tb: bool) -> DMatrix<f64> {
    let (fa, fb) = (as_faer(a), as_faer(b));
    let fa = if ta { fa.transpose() } else { fa };
    let fb = if tb { fb.transpose() } else { fb };
    let mut c = DMatrix::zeros(fa.nrows(), fb.ncols());
    matmul(as_faer_mut(&mut c), Accum::Replace, fa, fb, 1.0, par());
    c
}

/// `(a + a^T) / 2`.
pub fn sym(a: &DMatrix<f64>) -> DMatrix<f64> {
    (a + a.transpose()) * 0.5
}

/// `<a, b> = tr(a^T b)`.
pub fn inner(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    a.iter().zip(b.iter()).map(|(x, y)| x * y).sum()
}
