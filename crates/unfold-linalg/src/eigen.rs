//! Symmetric eigenproblems: the full decomposition on faer, and the extreme eigenpairs that
//! spectral methods need, choosing between the full decomposition and the partial solver
//! ([`crate::lanczos`]) by size.

use crate::check::{check_dense_symmetric, check_q, check_sparse_symmetric};
use crate::cholesky::Cholesky;
use crate::lanczos::{self, PartialEigenOptions, ResidualScale, Which};
use crate::operator::{ShiftInvert, ShiftedFactor, SymOperator};
use crate::sparse::CsrMatrix;
use crate::sparse_cholesky::SparseCholesky;
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

/// A symmetric matrix given densely or sparsely; the argument of the eigenpair functions.
#[derive(Clone, Copy, Debug)]
pub enum SymMatrix<'a> {
    /// A dense symmetric matrix.
    Dense(&'a DMatrix<f64>),
    /// A sparse symmetric matrix (both triangles stored).
    Sparse(&'a CsrMatrix),
}

impl SymMatrix<'_> {
    /// The dimension `n`.
    pub fn dim(&self) -> usize {
        match self {
            SymMatrix::Dense(a) => a.nrows(),
            SymMatrix::Sparse(a) => a.nrows(),
        }
    }

    fn check(&self, context: &str) -> Result<()> {
        match self {
            SymMatrix::Dense(a) => check_dense_symmetric(a, context),
            SymMatrix::Sparse(a) => check_sparse_symmetric(a, context),
        }
    }

    fn operator(&self) -> &dyn SymOperator {
        match self {
            SymMatrix::Dense(a) => *a,
            SymMatrix::Sparse(a) => *a,
        }
    }

    fn to_dense(self) -> DMatrix<f64> {
        match self {
            SymMatrix::Dense(a) => a.clone(),
            SymMatrix::Sparse(a) => a.to_dense(),
        }
    }

    /// `max_i sum_j |a_ij|`, an upper bound on the spectral norm.
    fn inf_norm(&self) -> f64 {
        match self {
            SymMatrix::Dense(a) => a
                .row_iter()
                .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
                .fold(0.0, f64::max),
            SymMatrix::Sparse(a) => (0..a.nrows())
                .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
                .fold(0.0, f64::max),
        }
    }
}

/// Largest dimension handled by the full decomposition regardless of `q`.
const FULL_MAX_N: usize = 300;

/// Whether the full decomposition is the better choice: small matrices, or a wanted
/// fraction of the spectrum above one fifth.
fn use_full(n: usize, q: usize) -> bool {
    n <= FULL_MAX_N || 5 * q > n
}

/// The full eigendecomposition of a symmetric matrix on faer (Householder
/// tridiagonalisation and divide and conquer), eigenvalues in ASCENDING order.
///
/// # Errors
/// [`Error::Empty`], [`Error::DimensionMismatch`] (not square), [`Error::NonFinite`],
/// [`Error::InvalidParameter`] (not symmetric), or [`Error::Numerical`] if the QR
/// iteration fails to converge.
pub fn sym_eigen(a: &DMatrix<f64>) -> Result<SymEigen> {
    check_dense_symmetric(a, "symmetric eigendecomposition input")?;
    let (values, mut vectors) = faer_sym_eigen(a, par())?;
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
/// positive: eigenvectors are defined up to sign, and this makes results comparable.
pub(crate) fn fix_signs(vectors: &mut DMatrix<f64>) {
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

/// The `q` largest eigenpairs of a symmetric matrix, values in DESCENDING order (default
/// options). See [`largest_eigenpairs_with`].
pub fn largest_eigenpairs(a: SymMatrix<'_>, q: usize) -> Result<SymEigen> {
    largest_eigenpairs_with(a, q, &PartialEigenOptions::default())
}

/// The `q` largest eigenpairs, values in DESCENDING order.
///
/// Uses the full decomposition when `n <= 300` or `q > n / 5`, and block Lanczos on `A`
/// otherwise (`O(n^2)` per block product for dense input instead of `O(n^3)`).
///
/// # Errors
/// Invalid input as in [`sym_eigen`] (sparse input likewise), `q = 0` or `q > n`,
/// or [`Error::NotConverged`] from the partial solver.
pub fn largest_eigenpairs_with(
    a: SymMatrix<'_>,
    q: usize,
    opts: &PartialEigenOptions,
) -> Result<SymEigen> {
    a.check("matrix of largest_eigenpairs")?;
    let n = a.dim();
    check_q(q, n)?;
    if use_full(n, q) {
        let full = sym_eigen(&a.to_dense())?;
        let idx: Vec<usize> = (0..q).map(|j| n - 1 - j).collect();
        return Ok(select(&full, &idx));
    }
    lanczos::run(
        a.operator(),
        q,
        Which::Largest,
        opts,
        ResidualScale::Spectrum,
    )
}

/// The `q` smallest eigenpairs of a symmetric matrix, values in ASCENDING order (default
/// options). See [`smallest_eigenpairs_with`].
pub fn smallest_eigenpairs(a: SymMatrix<'_>, q: usize) -> Result<SymEigen> {
    smallest_eigenpairs_with(a, q, &PartialEigenOptions::default())
}

/// The `q` smallest eigenpairs, values in ASCENDING order.
///
/// Uses the full decomposition when `n <= 300` or `q > n / 5`. Otherwise it runs block
/// Lanczos on the shift-invert operator `(A + s I)^{-1}` (dense or sparse Cholesky), whose
/// largest eigenvalues `1 / (lambda + s)` are those wanted and are well separated even
/// when the gaps of `A` at the bottom are tiny (graph Laplacians, LLE's
/// `M = (I - W)^T (I - W)`). The shift is `s = 1e-9 ||A||_inf` for positive semi-definite
/// `A`, raised to `1e-6 ||A||_inf` and then to `1.01 ||A||_inf` (always positive definite)
/// if the factorisation fails. The returned values are Rayleigh quotients of `A` itself
/// (a final Rayleigh-Ritz step on `A`), with residuals `||A x - lambda x||` of about
/// `tol ||A||`.
///
/// # Errors
/// As [`largest_eigenpairs_with`].
pub fn smallest_eigenpairs_with(
    a: SymMatrix<'_>,
    q: usize,
    opts: &PartialEigenOptions,
) -> Result<SymEigen> {
    a.check("matrix of smallest_eigenpairs")?;
    let n = a.dim();
    check_q(q, n)?;
    if use_full(n, q) {
        let full = sym_eigen(&a.to_dense())?;
        let idx: Vec<usize> = (0..q).collect();
        return Ok(select(&full, &idx));
    }
    let norm = match a.inf_norm() {
        s if s > 0.0 => s,
        _ => 1.0,
    };
    let mut last_err = None;
    for rel in [1e-9, 1e-6, 1.01] {
        let op = match shift_invert(a, rel * norm) {
            Ok(op) => op,
            Err(e @ Error::NotPositiveDefinite { .. }) => {
                last_err = Some(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let inv = lanczos::run(&op, q, Which::Largest, opts, ResidualScale::RitzValue)?;
        return rayleigh_ritz(a.operator(), &inv.vectors);
    }
    Err(last_err.expect("at least one shift was tried"))
}

/// Factorises `A + shift I` for the shift-invert operator.
fn shift_invert(a: SymMatrix<'_>, shift: f64) -> Result<ShiftInvert> {
    let context = "shift-invert factorisation of A + s I";
    let factor = match a {
        SymMatrix::Dense(a) => {
            let mut s = a.clone();
            for i in 0..s.nrows() {
                s[(i, i)] += shift;
            }
            ShiftedFactor::Dense(Cholesky::factor_owned(s, context)?)
        }
        SymMatrix::Sparse(a) => ShiftedFactor::Sparse(Box::new(SparseCholesky::new(
            &a.add_to_diagonal(shift),
            context,
        )?)),
    };
    Ok(ShiftInvert { factor })
}

/// Rayleigh-Ritz of `A` on the span of the orthonormal columns of `x`: eigenvalues of
/// `x^T A x` in ascending order and the rotated vectors.
fn rayleigh_ritz(a: &dyn SymOperator, x: &DMatrix<f64>) -> Result<SymEigen> {
    let mut ax = DMatrix::zeros(x.nrows(), x.ncols());
    a.apply(x, &mut ax);
    let g = x.tr_mul(&ax);
    let g = (&g + g.transpose()) * 0.5;
    let (values, y) = small_sym_eigen(&g)?;
    let mut vectors = x * y;
    fix_signs(&mut vectors);
    Ok(SymEigen { values, vectors })
}

/// The eigenpairs at positions `idx`, in that order.
fn select(full: &SymEigen, idx: &[usize]) -> SymEigen {
    SymEigen {
        values: DVector::from_iterator(idx.len(), idx.iter().map(|&i| full.values[i])),
        vectors: DMatrix::from_fn(full.vectors.nrows(), idx.len(), |r, c| {
            full.vectors[(r, idx[c])]
        }),
    }
}

/// The `q` smallest eigenpairs of the generalised problem `A f = mu D f` with `D =
/// diag(d)` positive (default options); see [`smallest_generalized_eigenpairs_with`].
pub fn smallest_generalized_eigenpairs(a: SymMatrix<'_>, d: &[f64], q: usize) -> Result<SymEigen> {
    smallest_generalized_eigenpairs_with(a, d, q, &PartialEigenOptions::default())
}

/// The `q` smallest eigenpairs of `A f = mu D f` with `D = diag(d)`, `d > 0` (Laplacian
/// eigenmaps: `L f = mu D f`, Belkin & Niyogi 2003). Reduced to the standard problem
/// `D^{-1/2} A D^{-1/2} v = mu v` and mapped back by `f = D^{-1/2} v`, so the returned
/// vectors are `D`-orthonormal (`F^T D F = I`); `mu` in ASCENDING order.
///
/// # Errors
/// As [`smallest_eigenpairs_with`], plus [`Error::DimensionMismatch`] if `d` has the
/// wrong length and [`Error::InvalidParameter`] if an entry of `d` is not positive and
/// finite (a zero degree means an isolated vertex).
pub fn smallest_generalized_eigenpairs_with(
    a: SymMatrix<'_>,
    d: &[f64],
    q: usize,
    opts: &PartialEigenOptions,
) -> Result<SymEigen> {
    let n = a.dim();
    if d.len() != n {
        return Err(Error::DimensionMismatch(format!(
            "the diagonal D has {} entries but the matrix is {n} x {n}",
            d.len()
        )));
    }
    if let Some(i) = d.iter().position(|&x| !(x.is_finite() && x > 0.0)) {
        return Err(Error::invalid(
            "d",
            format!(
                "entry {i} of the diagonal D is {}, but it must be positive and finite \
                 (a zero degree means vertex {i} is isolated: connect it or remove it)",
                d[i]
            ),
        ));
    }
    let s: Vec<f64> = d.iter().map(|x| 1.0 / x.sqrt()).collect();
    let mut eig = match a {
        SymMatrix::Dense(a) => {
            let b = DMatrix::from_fn(n, n, |i, j| a[(i, j)] * s[i] * s[j]);
            smallest_eigenpairs_with(SymMatrix::Dense(&b), q, opts)?
        }
        SymMatrix::Sparse(a) => {
            let b = a.scale_symmetric(&s);
            smallest_eigenpairs_with(SymMatrix::Sparse(&b), q, opts)?
        }
    };
    for (i, mut row) in eig.vectors.row_iter_mut().enumerate() {
        row *= s[i];
    }
    fix_signs(&mut eig.vectors);
    Ok(eig)
}
