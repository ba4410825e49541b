//! Symmetric eigenproblems: the full decomposition on faer, and the extreme eigenpairs that
//! spectral methods need, choosing between the full decomposition and the partial solver
//! ([`crate::lanczos`]) by size.

use crate::check::{check_dense_symmetric, check_q, check_sparse_symmetric};
use crate::cholesky::Cholesky;
use crate::lanczos::{self, Convergence, Known, PartialEigenOptions, Which};
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
///
/// Runs on all of rayon's threads; faer's parallel tridiagonalisation can change the last
/// bits of the result with the number of threads (the partial solvers do not).
pub fn sym_eigen(a: &DMatrix<f64>) -> Result<SymEigen> {
    check_dense_symmetric(a, "symmetric eigendecomposition input")?;
    full_sym_eigen(a, par())
}

fn full_sym_eigen(a: &DMatrix<f64>, p: Par) -> Result<SymEigen> {
    let (values, mut vectors) = faer_sym_eigen(a, p)?;
    fix_signs(&mut vectors);
    Ok(SymEigen { values, vectors })
}

/// The full decomposition for the eigenpair functions: sequential (hence independent of
/// the thread count) up to `FULL_MAX_N`, where it costs milliseconds.
fn dispatch_full(a: SymMatrix<'_>) -> Result<SymEigen> {
    let p = if a.dim() <= FULL_MAX_N {
        Par::Seq
    } else {
        par()
    };
    full_sym_eigen(&a.to_dense(), p)
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
        let full = dispatch_full(a)?;
        let idx: Vec<usize> = (0..q).map(|j| n - 1 - j).collect();
        return Ok(select(&full, &idx));
    }
    // A dense block product streams the whole matrix from memory whatever the block width,
    // so wide blocks (fewer products) pay off there; see `DENSE_BLOCK`.
    let mut opts = opts.clone();
    if matches!(a, SymMatrix::Dense(_)) && opts.block_size.is_none() {
        opts.block_size = Some(q.max(DENSE_BLOCK));
    }
    lanczos::run(
        a.operator(),
        q,
        Which::Largest,
        &opts,
        Convergence::Spectrum,
        None,
    )
}

/// Default Lanczos block width for dense products: for the top 2 eigenpairs of a dense
/// n = 5000 centred kernel, 0.46 s against 1.5 s with blocks of 2.
const DENSE_BLOCK: usize = 8;

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
/// `M = (I - W)^T (I - W)`). The shift is `s = 1e-8 ||A||_inf` for positive semi-definite
/// `A`, raised to `1e-5 ||A||_inf` and then to `1.01 ||A||_inf` (always positive definite)
/// if the factorisation fails. The huge eigenvalue `1 / s` of a null vector is locked and
/// purged from the Krylov basis as soon as it converges (see [`crate::lanczos`]), so it
/// does not limit the accuracy of the others. The returned pairs come from a Rayleigh-Ritz
/// step with `A` itself on the Krylov basis, with residuals
/// `||A x - lambda x|| <= tol ||A||_inf`.
///
/// # Errors
/// As [`largest_eigenpairs_with`].
pub fn smallest_eigenpairs_with(
    a: SymMatrix<'_>,
    q: usize,
    opts: &PartialEigenOptions,
) -> Result<SymEigen> {
    let n = a.dim();
    smallest_with_null_candidate(a, q, opts, DVector::from_element(n, 1.0))
}

/// [`smallest_eigenpairs_with`], where `candidate` may be a null vector of `A` (the
/// constant vector of a graph Laplacian or of LLE's `M`, the square root of the degrees
/// for a normalised Laplacian). If it is, to the solver's tolerance
/// (`||A u|| <= tol ||A||_inf` for `u` normalised), it is handed to the solver as a known
/// eigenvector: the Krylov basis stays orthogonal to it from the start, which saves the
/// solves that would find it and the restart that purges its `1 / s`. It is returned
/// among the `q` pairs, with its value from the final Rayleigh-Ritz step.
fn smallest_with_null_candidate(
    a: SymMatrix<'_>,
    q: usize,
    opts: &PartialEigenOptions,
    candidate: DVector<f64>,
) -> Result<SymEigen> {
    a.check("matrix of smallest_eigenpairs")?;
    let n = a.dim();
    check_q(q, n)?;
    if use_full(n, q) {
        let full = dispatch_full(a)?;
        let idx: Vec<usize> = (0..q).collect();
        return Ok(select(&full, &idx));
    }
    let norm = match a.inf_norm() {
        s if s > 0.0 => s,
        _ => 1.0,
    };
    let mut opts = opts.clone();
    if opts.block_size.is_none() {
        opts.block_size = Some(SHIFT_INVERT_BLOCK);
    }
    let null = null_vector(a, candidate, norm, opts.tol).filter(|_| q > 1);
    let mut last_err = None;
    for rel in [1e-8, 1e-5, 1.01] {
        let shift = rel * norm;
        let op = match shift_invert(a, shift) {
            Ok(op) => op,
            Err(e @ Error::NotPositiveDefinite { .. }) => {
                last_err = Some(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let known = null.as_ref().map(|u| Known {
            vectors: DMatrix::from_column_slice(n, 1, u.as_slice()),
            values: vec![1.0 / shift],
        });
        return lanczos::run(
            &op,
            q,
            Which::Largest,
            &opts,
            Convergence::Original {
                a: a.operator(),
                norm,
            },
            known,
        );
    }
    Err(last_err.expect("at least one shift was tried"))
}

/// `u / ||u||` if it is a null vector of `A` to the tolerance `||A u|| <= tol * norm`.
fn null_vector(a: SymMatrix<'_>, u: DVector<f64>, norm: f64, tol: f64) -> Option<DVector<f64>> {
    let length = u.norm();
    if !(length.is_finite() && length > 0.0) {
        return None;
    }
    let u = DMatrix::from_column_slice(u.len(), 1, (u / length).as_slice());
    let mut au = DMatrix::zeros(u.nrows(), 1);
    a.operator().apply(&u, &mut au);
    (au.norm() <= tol * norm).then(|| u.column(0).into_owned())
}

/// Default Lanczos block width with shift-invert. Each solve with the factor costs the
/// same per column whatever the block width, so narrow blocks waste fewer solves
/// (Laplacian eigenmaps at n = 5000: 28 ms against 31 ms with blocks of 3); two columns
/// rather than one so that a double eigenvalue (the cosine and sine modes of a ring) is
/// found without relying on rounding errors.
const SHIFT_INVERT_BLOCK: usize = 2;

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
        // `a` was checked by the caller; shifting its diagonal keeps it symmetric.
        SymMatrix::Sparse(a) => {
            ShiftedFactor::Sparse(Box::new(SparseCholesky::of_shifted(a, shift, context)?))
        }
    };
    Ok(ShiftInvert { factor })
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
    // `D^{1/2} 1` is the null vector of the scaled matrix when `A 1 = 0` (a Laplacian).
    let root_d = DVector::from_iterator(n, d.iter().map(|x| x.sqrt()));
    let mut eig = match a {
        SymMatrix::Dense(a) => {
            let b = DMatrix::from_fn(n, n, |i, j| a[(i, j)] * s[i] * s[j]);
            smallest_with_null_candidate(SymMatrix::Dense(&b), q, opts, root_d)?
        }
        SymMatrix::Sparse(a) => {
            let b = a.scale_symmetric(&s);
            smallest_with_null_candidate(SymMatrix::Sparse(&b), q, opts, root_d)?
        }
    };
    for (i, mut row) in eig.vectors.row_iter_mut().enumerate() {
        row *= s[i];
    }
    fix_signs(&mut eig.vectors);
    Ok(eig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use rand::Rng;
    use std::f64::consts::PI;

    /// Path graph Laplacian on n vertices: eigenvalues 2 - 2 cos(pi k / n) with
    /// eigenvectors cos(pi k (i + 1/2) / n), k = 0..n-1.
    fn path_laplacian(n: usize) -> CsrMatrix {
        let mut t = Vec::new();
        for i in 0..n - 1 {
            t.extend([
                (i, i, 1.0),
                (i + 1, i + 1, 1.0),
                (i, i + 1, -1.0),
                (i + 1, i, -1.0),
            ]);
        }
        CsrMatrix::from_triplets(n, n, &t)
    }

    fn path_eigenvalue(n: usize, k: usize) -> f64 {
        2.0 - 2.0 * (PI * k as f64 / n as f64).cos()
    }

    fn check_sparse_residual(a: &CsrMatrix, e: &SymEigen, tol: f64) {
        let mut ax = DMatrix::zeros(a.nrows(), e.vectors.ncols());
        a.apply(&e.vectors, &mut ax);
        for j in 0..e.vectors.ncols() {
            let r = (ax.column(j) - e.vectors.column(j) * e.values[j]).norm();
            assert!(r < tol, "residual {r:e} of pair {j}");
        }
        assert!(orthonormality_error(&e.vectors) < 1e-10);
    }

    #[test]
    fn full_decomposition_is_ascending_and_exact() {
        let a = random_sym(80, 1);
        let e = sym_eigen(&a).unwrap();
        assert!(e.values.as_slice().windows(2).all(|w| w[0] <= w[1]));
        assert!(max_residual(&a, &e.values, &e.vectors) < 1e-12 * e.values.amax() * 80.0);
        assert!(orthonormality_error(&e.vectors) < 1e-12);
        let rebuilt = &e.vectors * DMatrix::from_diagonal(&e.values) * e.vectors.transpose();
        assert!((rebuilt - &a).amax() < 1e-12 * 80.0);
    }

    #[test]
    fn ring_laplacian_double_eigenvalues_are_both_found() {
        // Cycle on n vertices: eigenvalues 2 - 2 cos(2 pi k / n), each k >= 1 twice.
        let n = 1000;
        let mut t = Vec::new();
        for i in 0..n {
            let j = (i + 1) % n;
            t.extend([(i, i, 2.0), (i, j, -1.0), (j, i, -1.0)]);
        }
        let l = CsrMatrix::from_triplets(n, n, &t);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 5).unwrap();
        let ring = |k: usize| 2.0 - 2.0 * (2.0 * PI * k as f64 / n as f64).cos();
        for (j, k) in [0, 1, 1, 2, 2].into_iter().enumerate() {
            assert!(
                (e.values[j] - ring(k)).abs() < 1e-10,
                "pair {j}: {} vs {}",
                e.values[j],
                ring(k)
            );
        }
        check_sparse_residual(&l, &e, 1e-9);
    }

    #[test]
    fn path_laplacian_smallest_match_closed_form() {
        let n = 2000;
        let l = path_laplacian(n);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 4).unwrap();
        for k in 0..4 {
            assert!(
                (e.values[k] - path_eigenvalue(n, k)).abs() < 1e-10,
                "k = {k}: {} vs {}",
                e.values[k],
                path_eigenvalue(n, k)
            );
            let exact = DMatrix::from_fn(n, 1, |i, _| {
                (PI * k as f64 * (i as f64 + 0.5) / n as f64).cos()
            });
            let exact = &exact / exact.norm();
            assert!(subspace_gap(&exact, &e.vectors.columns(k, 1).into_owned()) < 1e-6);
        }
        check_sparse_residual(&l, &e, 1e-9);
    }

    #[test]
    fn a_laplacian_null_vector_is_recognised_and_others_are_not() {
        let l = path_laplacian(400);
        let a = SymMatrix::Sparse(&l);
        let ones = DVector::from_element(400, 1.0);
        let u = null_vector(a, ones.clone(), 4.0, 1e-10).expect("L 1 = 0");
        assert!((u.norm() - 1.0).abs() < 1e-15 && (u[0] - 0.05).abs() < 1e-15);
        // Not a null vector: a shifted Laplacian, or another vector.
        let shifted = l.add_to_diagonal(1e-6);
        assert!(null_vector(SymMatrix::Sparse(&shifted), ones, 4.0, 1e-10).is_none());
        let ramp = DVector::from_fn(400, |i, _| i as f64);
        assert!(null_vector(a, ramp, 4.0, 1e-10).is_none());
        // With it known, the pairs after it are those of the full decomposition.
        let got = smallest_eigenpairs(a, 3).unwrap();
        for k in 0..3 {
            assert!((got.values[k] - path_eigenvalue(400, k)).abs() < 1e-12);
        }
    }

    #[test]
    fn disconnected_graph_has_a_double_zero_eigenvalue() {
        // Two paths of 300 and 250 vertices: eigenvalue 0 twice, then 2 - 2 cos(pi / 300).
        let (n1, n2) = (300, 250);
        let mut t = Vec::new();
        for (start, len) in [(0, n1), (n1, n2)] {
            for i in start..start + len - 1 {
                t.extend([
                    (i, i, 1.0),
                    (i + 1, i + 1, 1.0),
                    (i, i + 1, -1.0),
                    (i + 1, i, -1.0),
                ]);
            }
        }
        let l = CsrMatrix::from_triplets(n1 + n2, n1 + n2, &t);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 3).unwrap();
        assert!(e.values[0].abs() < 1e-12 && e.values[1].abs() < 1e-12);
        assert!((e.values[2] - path_eigenvalue(n1, 1)).abs() < 1e-12);
        check_sparse_residual(&l, &e, 1e-9);
        // The two null vectors span the component indicators.
        let ind = DMatrix::from_fn(n1 + n2, 2, |i, j| {
            let (inside, len) = if j == 0 { (i < n1, n1) } else { (i >= n1, n2) };
            if inside {
                1.0 / (len as f64).sqrt()
            } else {
                0.0
            }
        });
        assert!(subspace_gap(&ind, &e.vectors.columns(0, 2).into_owned()) < 1e-8);
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let l = random_graph_laplacian(3000, 4, 9);
        let y = random_matrix(1500, 4, 9);
        let g = &y * y.transpose();
        let small = random_spd(250, 9);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                (
                    smallest_eigenpairs(SymMatrix::Sparse(&l), 3).unwrap(),
                    largest_eigenpairs(SymMatrix::Dense(&g), 2).unwrap(),
                    smallest_eigenpairs(SymMatrix::Dense(&small), 3).unwrap(),
                )
            })
        };
        let (a1, b1, c1) = run(1);
        let (a2, b2, c2) = run(3);
        assert_eq!(a1, a2);
        assert_eq!(b1, b2);
        assert_eq!(c1, c2);
    }

    #[test]
    fn lle_cost_matrix_bottom_pairs_match_full() {
        // M = (I - W)^T (I - W) with rows of W summing to one over 6 neighbours on a ring:
        // positive semi-definite, M 1 = 0, small gaps at the bottom.
        let n = 500;
        let mut rng = unfold_core::seeded_rng(12);
        let mut w = DMatrix::<f64>::zeros(n, n);
        for i in 0..n {
            let raw: Vec<f64> = (0..6).map(|_| rng.random_range(0.2..1.0)).collect();
            let total: f64 = raw.iter().sum();
            for (o, r) in [1, 2, 3, n - 1, n - 2, n - 3].into_iter().zip(raw) {
                w[(i, (i + o) % n)] = r / total;
            }
        }
        let iw = DMatrix::identity(n, n) - w;
        let m = iw.transpose() * &iw;
        let m = (&m + m.transpose()) * 0.5;
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if m[(i, j)] != 0.0 {
                    t.push((i, j, m[(i, j)]));
                }
            }
        }
        let sparse = CsrMatrix::from_triplets(n, n, &t);
        let full = sym_eigen(&m).unwrap();
        for got in [
            smallest_eigenpairs(SymMatrix::Sparse(&sparse), 3).unwrap(),
            smallest_eigenpairs(SymMatrix::Dense(&m), 3).unwrap(),
        ] {
            assert!((&got.values - full.values.rows(0, 3)).amax() < 1e-10 * full.values[n - 1]);
            assert!(max_residual(&m, &got.values, &got.vectors) < 1e-9 * full.values[n - 1]);
            assert!(subspace_gap(&full.vectors.columns(0, 3).into_owned(), &got.vectors) < 1e-6);
        }
    }

    #[test]
    fn tiny_shift_does_not_stall_thanks_to_the_purge() {
        // With s = 1e-10 ||A|| the null vector's 1 / s dominates the inverse by ~1e9; without
        // purging the basis after locking it, residuals stall near 2e-10 (measured).
        let n = 900;
        let l = random_graph_laplacian(n, 3, 6);
        let s: Vec<f64> = (0..n).map(|i| 1.0 / l.get(i, i).sqrt()).collect();
        let b = l.scale_symmetric(&s).to_dense();
        let a = SymMatrix::Dense(&b);
        let norm = a.inf_norm();
        let op = shift_invert(a, 1e-10 * norm).unwrap();
        let opts = PartialEigenOptions {
            max_iter: 300,
            ..Default::default()
        };
        let conv = Convergence::Original {
            a: a.operator(),
            norm,
        };
        let e = lanczos::run(&op, 3, Which::Largest, &opts, conv, None).unwrap();
        let full = sym_eigen(&b).unwrap();
        assert!((&e.values - full.values.rows(0, 3)).amax() < 1e-12);
        assert!(max_residual(&b, &e.values, &e.vectors) < 1e-10 * norm);
    }

    #[test]
    fn eight_components_give_eight_zero_eigenvalues() {
        // Eight disjoint paths of 60 vertices: eigenvalue 0 eight times, then
        // 2 - 2 cos(pi / 60) eight times.
        let (parts, len) = (8, 60);
        let mut t = Vec::new();
        for p in 0..parts {
            for i in p * len..(p + 1) * len - 1 {
                t.extend([
                    (i, i, 1.0),
                    (i + 1, i + 1, 1.0),
                    (i, i + 1, -1.0),
                    (i + 1, i, -1.0),
                ]);
            }
        }
        let n = parts * len;
        let l = CsrMatrix::from_triplets(n, n, &t);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 10).unwrap();
        for k in 0..10 {
            let expect = if k < 8 { 0.0 } else { path_eigenvalue(len, 1) };
            assert!((e.values[k] - expect).abs() < 1e-10, "{}", e.values);
        }
        check_sparse_residual(&l, &e, 1e-9);
    }

    #[test]
    fn sparse_largest_match_full() {
        let l = random_graph_laplacian(700, 5, 8);
        let top = largest_eigenpairs(SymMatrix::Sparse(&l), 3).unwrap();
        let full = sym_eigen(&l.to_dense()).unwrap();
        for k in 0..3 {
            assert!((top.values[k] - full.values[699 - k]).abs() < 1e-8 * full.values[699]);
        }
        check_sparse_residual(&l, &top, 1e-8 * full.values[699]);
    }

    #[test]
    fn square_grid_laplacian_finds_the_double_eigenvalue() {
        // A 25 x 25 grid: eigenvalues mu_i + mu_j of two 25-vertex paths, so the
        // second-smallest is double (i, j) = (1, 0) and (0, 1).
        let (r, c) = (25, 25);
        let l = grid_laplacian(r, c);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 4).unwrap();
        let mut expect: Vec<f64> = (0..r)
            .flat_map(|i| (0..c).map(move |j| path_eigenvalue(r, i) + path_eigenvalue(c, j)))
            .collect();
        expect.sort_by(|a, b| a.total_cmp(b));
        for k in 0..4 {
            assert!(
                (e.values[k] - expect[k]).abs() < 1e-10,
                "{} vs {:?}",
                e.values,
                &expect[..4]
            );
        }
        assert!(e.values[0].abs() < 1e-10);
        check_sparse_residual(&l, &e, 1e-9);
        // A rectangular grid through the dense shift-invert path.
        let l2 = grid_laplacian(18, 23);
        let d2 = l2.to_dense();
        let e2 = smallest_eigenpairs(SymMatrix::Dense(&d2), 5).unwrap();
        let full = sym_eigen(&d2).unwrap();
        assert!((&e2.values - full.values.rows(0, 5)).amax() < 1e-10);
        assert!(subspace_gap(&full.vectors.columns(0, 5).into_owned(), &e2.vectors) < 1e-7);
    }

    #[test]
    fn dense_centred_gram_top_pairs_match_full() {
        // Kernel-PCA-like: a double-centred Gram matrix of 400 points in 5 dimensions.
        let n = 400;
        let y = random_matrix(n, 5, 2);
        let g = &y * y.transpose();
        let h = DMatrix::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
        let k = &h * g * &h;
        let k = (&k + k.transpose()) * 0.5;
        let e = largest_eigenpairs(SymMatrix::Dense(&k), 3).unwrap();
        let full = sym_eigen(&k).unwrap();
        for j in 0..3 {
            assert!((e.values[j] - full.values[n - 1 - j]).abs() < 1e-8 * full.values[n - 1]);
            let u = full.vectors.columns(n - 1 - j, 1).into_owned();
            // Signs are normalised, so the vectors agree directly.
            assert!((e.vectors.column(j) - u.column(0)).amax() < 1e-6);
        }
    }

    #[test]
    fn dense_psd_and_indefinite_smallest_match_full() {
        // Positive semi-definite with a null vector: a dense weighted graph Laplacian.
        let l = random_graph_laplacian(350, 6, 3).to_dense();
        let e = smallest_eigenpairs(SymMatrix::Dense(&l), 3).unwrap();
        let full = sym_eigen(&l).unwrap();
        assert!((&e.values - full.values.rows(0, 3)).amax() < 1e-10 * full.values.amax());
        assert!(subspace_gap(&full.vectors.columns(0, 3).into_owned(), &e.vectors) < 1e-7);
        // Indefinite: the first shifts fail and the always-definite one takes over.
        let a = random_sym(320, 4);
        let e = smallest_eigenpairs(SymMatrix::Dense(&a), 2).unwrap();
        let full = sym_eigen(&a).unwrap();
        assert!((&e.values - full.values.rows(0, 2)).amax() < 1e-8 * full.values.amax());
        assert!(max_residual(&a, &e.values, &e.vectors) < 1e-8 * full.values.amax());
    }

    #[test]
    fn small_problems_use_the_full_decomposition_in_the_stated_order() {
        let a = random_sym(50, 5);
        let full = sym_eigen(&a).unwrap();
        let top = largest_eigenpairs(SymMatrix::Dense(&a), 3).unwrap();
        let bottom = smallest_eigenpairs(SymMatrix::Dense(&a), 3).unwrap();
        for j in 0..3 {
            assert_eq!(top.values[j], full.values[49 - j]);
            assert_eq!(bottom.values[j], full.values[j]);
        }
        // Sparse input of the same small size.
        let l = path_laplacian(40);
        let e = smallest_eigenpairs(SymMatrix::Sparse(&l), 2).unwrap();
        assert!((e.values[1] - path_eigenvalue(40, 1)).abs() < 1e-12);
    }

    #[test]
    fn generalized_problem_is_solved_with_d_orthonormal_vectors() {
        for n in [120, 900] {
            let l = random_graph_laplacian(n, 3, 6);
            let d: Vec<f64> = (0..n).map(|i| l.get(i, i)).collect();
            let e = smallest_generalized_eigenpairs(SymMatrix::Sparse(&l), &d, 3).unwrap();
            let ld = l.to_dense();
            let dm = DMatrix::from_diagonal(&DVector::from_column_slice(&d));
            let f = &e.vectors;
            assert!((f.transpose() * &dm * f - DMatrix::identity(3, 3)).amax() < 1e-10);
            for j in 0..3 {
                let r = &ld * f.column(j) - &dm * f.column(j) * e.values[j];
                assert!(r.norm() < 1e-8, "n = {n}, pair {j}: {:e}", r.norm());
            }
            assert!(e.values[0].abs() < 1e-10 && e.values[1] > 1e-6);
            // Against the dense reduction solved by the full decomposition.
            let s = DVector::from_iterator(n, d.iter().map(|x| 1.0 / x.sqrt()));
            let reduced = DMatrix::from_fn(n, n, |i, j| ld[(i, j)] * s[i] * s[j]);
            let full = sym_eigen(&reduced).unwrap();
            assert!((&e.values - full.values.rows(0, 3)).amax() < 1e-10);
            let dense = smallest_generalized_eigenpairs(SymMatrix::Dense(&ld), &d, 3).unwrap();
            assert!((&dense.values - &e.values).amax() < 1e-10);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let a = random_spd(20, 7);
        let l = path_laplacian(20);
        for m in [SymMatrix::Dense(&a), SymMatrix::Sparse(&l)] {
            assert!(matches!(
                largest_eigenpairs(m, 0),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(matches!(
                smallest_eigenpairs(m, 21),
                Err(Error::InvalidParameter { .. })
            ));
        }
        let mut nan = a.clone();
        nan[(2, 5)] = f64::INFINITY;
        assert!(matches!(
            sym_eigen(&nan),
            Err(Error::NonFinite { row: 2, col: 5, .. })
        ));
        assert!(matches!(
            largest_eigenpairs(SymMatrix::Dense(&nan), 2),
            Err(Error::NonFinite { .. })
        ));
        let bad_sparse =
            CsrMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (1, 2, f64::NAN), (2, 1, f64::NAN)]);
        assert!(matches!(
            smallest_eigenpairs(SymMatrix::Sparse(&bad_sparse), 1),
            Err(Error::NonFinite { .. })
        ));
        let mut asym = a.clone();
        asym[(0, 1)] += 0.1;
        assert!(matches!(
            sym_eigen(&asym),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            sym_eigen(&DMatrix::zeros(3, 4)),
            Err(Error::DimensionMismatch(_))
        ));
        let mut d = vec![1.0; 20];
        assert!(matches!(
            smallest_generalized_eigenpairs(SymMatrix::Sparse(&l), &d[..19], 2),
            Err(Error::DimensionMismatch(_))
        ));
        d[7] = 0.0;
        match smallest_generalized_eigenpairs(SymMatrix::Sparse(&l), &d, 2) {
            Err(Error::InvalidParameter { message, .. }) => assert!(message.contains("entry 7")),
            other => panic!("unexpected {other:?}"),
        }
    }
}
