//! The three dense matrix helpers of the solver, on unfold-linalg's kernels.

use nalgebra::DMatrix;
use unfold_linalg::gemm::mul_with;
use unfold_linalg::symmetrised;
use unfold_linalg::view::{as_faer, par};

/// `op(a) op(b)` ([`mul_with`] on all threads), `op` the transpose when the flag is set.
pub fn mul(a: &DMatrix<f64>, ta: bool, b: &DMatrix<f64>, tb: bool) -> DMatrix<f64> {
    let (fa, fb) = (as_faer(a), as_faer(b));
    let fa = if ta { fa.transpose() } else { fa };
    let fb = if tb { fb.transpose() } else { fb };
    mul_with(fa, fb, par())
}

/// `(a + a^T) / 2` ([`symmetrised`]).
pub fn sym(a: &DMatrix<f64>) -> DMatrix<f64> {
    symmetrised(a.clone())
}

/// `<a, b> = tr(a^T b)`.
pub fn inner(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    a.iter().zip(b.iter()).map(|(x, y)| x * y).sum()
}
