//! The dense symmetric eigensolver on faer and what every eigensolver of the crate shares:
//! the [`SymEigen`] result and the sign convention of eigenvectors ([`fix_signs`]). Both
//! [`crate::eigen`] and [`crate::lanczos`] build on this module, which depends on neither.

use crate::check::check_dense_symmetric;
use crate::view::{as_faer, as_faer_mut, par};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self, ComputeEigenvectors};
use faer::Par;
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};

/// Eigenpairs of a symmetric matrix: `A vectors[:, i] = values[i] vectors[:, i]`, with
/// orthonormal eigenvector columns. The order of the values is stated by the function
/// that returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct SymEigen {
    /// Eigenvalues.
    pub values: DVector<f64>,
    /// Eigenvectors as columns, in the order of `values`.
    pub vectors: DMatrix<f64>,
}

/// The full eigendecomposition of a symmetric matrix on faer (Householder
/// tridiagonalisation and divide and conquer), eigenvalues in ASCENDING order.
///
/// # Errors
/// [`Error::Empty`], [`Error::DimensionMismatch`] (not square), [`Error::NonFinite`],
/// [`Error::InvalidParameter`] (not symmetric), or [`Error::Numerical`] if the QR
/// iteration fails to converge.
///
/// Runs on rayon's threads in the fixed parts of [`crate::view::par`], so the result is the
/// same to the bit on any number of threads.
pub fn sym_eigen(a: &DMatrix<f64>) -> Result<SymEigen> {
    check_dense_symmetric(a, "symmetric eigendecomposition input")?;
    full_sym_eigen(a, par())
}

pub(crate) fn full_sym_eigen(a: &DMatrix<f64>, p: Par) -> Result<SymEigen> {
    let (values, mut vectors) = faer_sym_eigen(a, p)?;
    fix_signs(&mut vectors);
    Ok(SymEigen { values, vectors })
}

/// The eigendecomposition of a small projected matrix (sequential, no input checks).
pub(crate) fn small_sym_eigen(a: &DMatrix<f64>) -> Result<(DVector<f64>, DMatrix<f64>)> {
    faer_sym_eigen(a, Par::Seq)
}

fn faer_sym_eigen(a: &DMatrix<f64>, p: Par) -> Result<(DVector<f64>, DMatrix<f64>)> {
    let n = a.nrows();
    let mut s = DMatrix::<f64>::zeros(n, 1);
    let mut u = DMatrix::<f64>::zeros(n, n);
    let mut mem = MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::Yes,
        p,
        Default::default(),
    ));
    evd::self_adjoint_evd(
        as_faer(a),
        as_faer_mut(&mut s).col_mut(0).as_diagonal_mut(),
        Some(as_faer_mut(&mut u)),
        p,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|e| Error::numerical("symmetric eigendecomposition", format!("{e:?}")))?;
    Ok((DVector::from_column_slice(s.as_slice()), u))
}

/// Signs each column so that its entry of largest magnitude (the first, on ties) is
/// positive: eigenvectors are defined up to sign, and this makes repeated fits agree to
/// the bit. A zero column (or one of NaNs) is left as it is. The one sign rule of the
/// workspace: every eigensolver here applies it, and models apply it again to columns
/// they rearrange or rescale.
pub fn fix_signs(vectors: &mut DMatrix<f64>) {
    for mut c in vectors.column_iter_mut() {
        let mut best = 0.0f64;
        let mut sign = 1.0;
        for &x in c.iter() {
            if x.abs() > best {
                best = x.abs();
                sign = x.signum();
            }
        }
        if sign < 0.0 {
            c.neg_mut();
        }
    }
}
