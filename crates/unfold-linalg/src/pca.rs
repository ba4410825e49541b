//! Principal components of a data matrix, exact or randomized: the one PCA kernel of the
//! workspace (the `pca` method and the `--preprocess pca` step).
//!
//! The data `Y` (n x p, points as rows) are centred, `Yc = Y - 1 mu^T`; the q principal
//! axes are the top eigenvectors `V` of the covariance `Yc^T Yc / (n - 1)`, the
//! coordinates are `X = Yc V` and the variances the eigenvalues.
//!
//! - **Exact**: the smaller of the two eigenproblems, the covariance (p x p, one pass over
//!   the data) when `p <= n`, else the Gram matrix `Yc Yc^T` (n x n) with
//!   `V = Yc^T U Lambda^{-1/2}`.
//! - **Randomized** (Halko, Martinsson & Tropp 2011, Algorithm 4.4, randomized subspace
//!   iteration): a Gaussian test matrix `Omega` (p x l, `l = q + 10`), `Q = orth(Yc Omega)`,
//!   then `i` power iterations `Q = orth(Yc orth(Yc^T Q))`, and the exact PCA of the small
//!   `B = Q^T Yc` (l x p): `B B^T = U S^2 U^T`, `V = B^T U S^{-1}`, `X = Yc V`. It costs
//!   `O(n p l)` per pass instead of `O(n p min(n, p))`, and is accurate to rounding when
//!   the spectrum has a gap after q (the error decays as `(s_{l+1} / s_q)^{2i+1}`,
//!   their Theorem 9.2 and §10.4). The centring is never formed: `Yc Z = Y Z - 1 (mu^T Z)`
//!   and `Yc^T W = Y^T W - mu (1^T W)`.
//!
//! - **Sparse** ([`principal_components_sparse`]): the covariance as an operator of the
//!   implicitly centred sparse matrix, never formed, and its top eigenpairs by block
//!   Lanczos; exact like the covariance path, in `O(nnz)` per product.
//!
//! [`PcaSolver::Auto`] takes the exact covariance path when `p <= 1000` and `n >= 10 p`
//! (one pass, as cheap as any), the exact path for small inputs (`max(n, p) <= 500`) or
//! many components (`q >= 0.8 min(n, p)`), and randomized otherwise.

use crate::dense_eigen::sym_eigen;
use crate::gemm::{centred_mul, centred_tr_mul_self, mul, mul_with, tr_mul};
use crate::view::{as_faer, par_for, to_nalgebra};
use crate::{
    column_means, fix_signs, largest_eigenpairs, partial_sym_eigen, PartialEigenOptions,
    SparseIndex, SparseRows, SparseValue, SymMatrix, SymOperator, Which,
};
use faer::MatRef;
use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};
use unfold_core::{Error, Result};

/// How the principal components are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcaSolver {
    /// By the shape of the data and q (the module's rule).
    Auto,
    /// The covariance or Gram eigenproblem, whichever is smaller.
    Exact,
    /// Randomized subspace iteration.
    Randomized,
}

impl PcaSolver {
    /// `auto`, `exact` or `randomized`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "auto" => Ok(PcaSolver::Auto),
            "exact" => Ok(PcaSolver::Exact),
            "randomized" => Ok(PcaSolver::Randomized),
            other => Err(Error::invalid(
                "solver",
                format!("{other:?} is not a PCA solver; use auto, exact or randomized"),
            )),
        }
    }

    /// The solver [`PcaSolver::Auto`] picks for n points in p dimensions and q components.
    pub fn resolve(self, n: usize, p: usize, q: usize) -> PcaSolver {
        match self {
            PcaSolver::Auto => {
                let small = n.max(p) <= 500 || 5 * q >= 4 * n.min(p);
                if small || (p <= 1000 && n >= 10 * p) {
                    PcaSolver::Exact
                } else {
                    PcaSolver::Randomized
                }
            }
            given => given,
        }
    }
}

/// Extra columns of the randomized test matrix beyond q.
const OVERSAMPLE: usize = 10;

/// Power iterations of the randomized solver: 7 when q is a small part of the spectrum,
/// where more iterations cost little against the gap they need to resolve, else 4.
fn power_iterations(n: usize, p: usize, q: usize) -> usize {
    if 10 * q < n.min(p) {
        7
    } else {
        4
    }
}

/// A fitted PCA: the mean, the principal axes (p x q, orthonormal columns, each with its
/// largest entry positive), the variance along each axis (descending) and the coordinates
/// of the points (n x q).
#[derive(Clone, Debug)]
pub struct PrincipalComponents {
    /// Column means, p.
    pub mean: DVector<f64>,
    /// Principal axes, p x q.
    pub components: DMatrix<f64>,
    /// Variance along each axis (divisor n - 1), descending.
    pub variances: DVector<f64>,
    /// Coordinates of the points, n x q.
    pub coords: DMatrix<f64>,
    /// The solver that ran (never `Auto`).
    pub solver: PcaSolver,
}

/// The top-q principal components of the rows of `y`; `seed` seeds the randomized test
/// matrix. Errors: q = 0 or q > min(n - 1, p) is the caller's to check; data of rank
/// below q give [`Error::DimensionTooLarge`].
pub fn principal_components(
    y: &DMatrix<f64>,
    q: usize,
    solver: PcaSolver,
    seed: u64,
) -> Result<PrincipalComponents> {
    principal_components_of(as_faer(y), q, solver, seed)
}

/// [`principal_components`] of the rows of a faer view of any layout: a row-major view of
/// a C-order NumPy array is read where it lies, without a column-major copy.
pub fn principal_components_of(
    y: MatRef<'_, f64>,
    q: usize,
    solver: PcaSolver,
    seed: u64,
) -> Result<PrincipalComponents> {
    let (n, p) = (y.nrows(), y.ncols());
    if q == 0 || q > p || n < 2 {
        return Err(Error::invalid(
            "dim",
            format!("{q} components of {n} points in {p} dimensions: need 1 <= q <= p and n >= 2"),
        ));
    }
    let mean = column_means(y);
    let solver = solver.resolve(n, p, q);
    let mut components = match solver {
        PcaSolver::Randomized if q + OVERSAMPLE < n.min(p) => randomized(y, &mean, q, seed)?,
        _ => exact(y, &mean, q)?,
    };
    fix_signs(&mut components);
    // The coordinates as the projection of the points, `Yc V`, so that projecting a
    // training point returns its own coordinates.
    let coords = centred_mul(y, &mean, &components);
    let scale = 1.0 / (n as f64 - 1.0);
    let variances = DVector::from_fn(q, |j, _| coords.column(j).norm_squared() * scale);
    if variances.iter().any(|&v| v <= 0.0) {
        return Err(rank_error(q));
    }
    Ok(PrincipalComponents {
        mean,
        components,
        variances,
        coords,
        solver,
    })
}

fn rank_error(q: usize) -> Error {
    Error::DimensionTooLarge {
        dim: q,
        limit: q,
        reason: "the centred data have rank below the requested dimension".to_string(),
    }
}

/// `Y - 1 mu^T`.
fn centred(y: MatRef<'_, f64>, mean: &DVector<f64>) -> DMatrix<f64> {
    DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j])
}

/// The exact covariance path takes the whole eigendecomposition when q is more than
/// `p / FULL_EIGEN_RATIO` (measured: at p = 500 the whole one took 0.19 s against 0.08 s
/// for Lanczos at q = 2, 0.39 s against 0.92 s at q = 50; at p = 1000, q = 30: 0.34 s
/// against 0.62 s), and block Lanczos otherwise.
const FULL_EIGEN_RATIO: usize = 50;

/// The exact axes, by the smaller eigenproblem.
fn exact(y: MatRef<'_, f64>, mean: &DVector<f64>, q: usize) -> Result<DMatrix<f64>> {
    let (n, p) = (y.nrows(), y.ncols());
    let components = if p <= n {
        let cov = centred_tr_mul_self(y, mean.as_slice());
        if FULL_EIGEN_RATIO * q > p {
            // Many of the p axes: the whole decomposition costs less than the restarted
            // Lanczos iteration.
            let full = sym_eigen(&cov)?;
            let mut top = DMatrix::zeros(p, q);
            for j in 0..q {
                top.set_column(j, &full.vectors.column(p - 1 - j));
            }
            top
        } else {
            largest_eigenpairs(SymMatrix::Dense(&cov), q)?.vectors
        }
    } else {
        let yc = centred(y, mean);
        let gram = mul(&yc, &yc.transpose());
        let eig = largest_eigenpairs(SymMatrix::Dense(&gram), q)?;
        let mut v = tr_mul(&yc, &eig.vectors);
        for (mut col, &lambda) in v.column_iter_mut().zip(eig.values.iter()) {
            if lambda <= 0.0 {
                return Err(rank_error(q));
            }
            col /= lambda.sqrt();
        }
        v
    };
    Ok(components)
}

/// `Yc^T w` without forming `Yc`.
fn centred_tr_mul(y: MatRef<'_, f64>, mean: &DVector<f64>, w: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = mul_with(y.transpose(), as_faer(w), par_for(y.nrows()));
    for (mut col, wcol) in out.column_iter_mut().zip(w.column_iter()) {
        col.axpy(-wcol.sum(), mean, 1.0);
    }
    out
}

/// Orthonormal columns spanning those of `a` (thin Householder QR).
fn orth(a: &DMatrix<f64>) -> DMatrix<f64> {
    to_nalgebra(as_faer(a).qr().compute_thin_Q().as_ref())
}

/// The randomized axes (module doc).
fn randomized(
    y: MatRef<'_, f64>,
    mean: &DVector<f64>,
    q: usize,
    seed: u64,
) -> Result<DMatrix<f64>> {
    let (n, p) = (y.nrows(), y.ncols());
    let l = q + OVERSAMPLE;
    let mut rng = unfold_core::seeded_rng(seed);
    let omega = DMatrix::from_fn(p, l, |_, _| StandardNormal.sample(&mut rng));
    let mut basis = orth(&centred_mul(y, mean, &omega));
    for _ in 0..power_iterations(n, p, q) {
        unfold_core::interrupt::check()?;
        let z = orth(&centred_tr_mul(y, mean, &basis));
        basis = orth(&centred_mul(y, mean, &z));
    }
    // B^T = Yc^T Q (p x l); B B^T = (B^T)^T B^T.
    let bt = centred_tr_mul(y, mean, &basis);
    let small = sym_eigen(&bt.tr_mul(&bt))?;
    let mut components = DMatrix::zeros(p, q);
    for j in 0..q {
        let k = l - 1 - j;
        let s2 = small.values[k];
        if s2 <= 0.0 {
            return Err(rank_error(q));
        }
        components.set_column(j, &(&bt * small.vectors.column(k) / s2.sqrt()));
    }
    Ok(components)
}

/// Entries up to which a sparse matrix too small for the Lanczos solver is densified for
/// the exact one: 50 million, 400 MB.
const SPARSE_DENSE_MAX: usize = 50_000_000;

/// Vectors per block of the sparse solver's Lanczos iteration. Measured on counts-like data
/// (20,000 x 5,000, 5% non-zeros, q = 50, a flat spectrum past the 20th component): 17.3 s
/// with blocks of 1, 12.7 s of 2, 9.8 s of 4, 21.0 s of 16 and 33.5 s of 50 (the default
/// `max(q, 2)`); a basis of 160 vectors instead of 108 gained nothing.
const SPARSE_BLOCK: usize = 4;

/// The covariance `Yc^T Yc / (n - 1)` of a sparse matrix as an operator, never formed:
/// `Yc^T (Yc x) = Y^T (Y x - 1 (mu^T x)) - mu (1^T (Y x - 1 (mu^T x)))`.
struct SparseCovariance<'s, 'a, I, T> {
    y: &'s SparseRows<'a, I, T>,
    mean: DVector<f64>,
}

impl<I: SparseIndex, T: SparseValue> SparseCovariance<'_, '_, I, T> {
    /// `Yc z` without forming `Yc`.
    fn centred_mul(&self, z: &DMatrix<f64>) -> DMatrix<f64> {
        let mut out = self.y.mul(z);
        let shift = z.tr_mul(&self.mean);
        for (mut col, &s) in out.column_iter_mut().zip(shift.iter()) {
            col.add_scalar_mut(-s);
        }
        out
    }

    /// `Yc^T w` without forming `Yc`.
    fn centred_tr_mul(&self, w: &DMatrix<f64>) -> DMatrix<f64> {
        let mut out = self.y.tr_mul(w);
        for (mut col, wcol) in out.column_iter_mut().zip(w.column_iter()) {
            col.axpy(-wcol.sum(), &self.mean, 1.0);
        }
        out
    }
}

impl<I: SparseIndex, T: SparseValue> SymOperator for SparseCovariance<'_, '_, I, T> {
    fn dim(&self) -> usize {
        self.y.shape().1
    }

    fn apply(&self, x: &DMatrix<f64>, out: &mut DMatrix<f64>) {
        let scale = 1.0 / (self.y.shape().0 as f64 - 1.0);
        *out = self.centred_tr_mul(&self.centred_mul(x)) * scale;
    }
}

/// The top-q principal components of the rows of a sparse matrix, never densified: block
/// Lanczos ([`partial_sym_eigen`], relative residual `1e-10`) on the covariance as an
/// operator of the implicitly centred matrix ([`SparseCovariance`]), `O(nnz b)` per block
/// product and `O(p b)` memory for the basis beyond the matrix. Exact as the dense
/// covariance path is, whatever the spectrum's gaps (unlike the randomized solver, which
/// needs a gap after q). A matrix with `min(n, p) <= 2 q + 10` is small in one dimension
/// and is densified for the exact dense solver if it has at most 50 million entries,
/// refused otherwise. Same result type as [`principal_components`].
///
/// # Errors
/// As [`principal_components`]; a narrow matrix too large to densify; the Lanczos
/// solver's [`Error::NotConverged`].
pub fn principal_components_sparse<I: SparseIndex, T: SparseValue>(
    y: &SparseRows<'_, I, T>,
    q: usize,
    seed: u64,
) -> Result<PrincipalComponents> {
    let (n, p) = y.shape();
    if q == 0 || q > p || n < 2 {
        return Err(Error::invalid(
            "dim",
            format!("{q} components of {n} points in {p} dimensions: need 1 <= q <= p and n >= 2"),
        ));
    }
    if 2 * q + OVERSAMPLE >= n.min(p) {
        if n.saturating_mul(p) > SPARSE_DENSE_MAX {
            return Err(Error::invalid(
                "dim",
                format!(
                    "{q} components of a sparse {n} x {p} matrix: the sparse solver needs \
                     2 q + 10 < min(n, p) = {}; ask for fewer components",
                    n.min(p)
                ),
            ));
        }
        return principal_components(&y.to_dense(), q, PcaSolver::Exact, seed);
    }
    let cov = SparseCovariance {
        y,
        mean: y.column_means(),
    };
    let options = PartialEigenOptions {
        seed,
        block_size: Some(SPARSE_BLOCK),
        ..PartialEigenOptions::default()
    };
    let eig = partial_sym_eigen(&cov, q, Which::Largest, &options)?;
    let mut components = eig.vectors;
    fix_signs(&mut components);
    let coords = cov.centred_mul(&components);
    let scale = 1.0 / (n as f64 - 1.0);
    let variances = DVector::from_fn(q, |j, _| coords.column(j).norm_squared() * scale);
    if variances.iter().any(|&v| v <= 0.0) {
        return Err(rank_error(q));
    }
    Ok(PrincipalComponents {
        mean: cov.mean,
        components,
        variances,
        coords,
        solver: PcaSolver::Exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::WIDE_ROWS;

    /// Points with a known spectrum: `U diag(s) W^T + noise`, singular values decaying
    /// geometrically, so the top axes are well separated.
    fn gapped(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        let mut gauss =
            |r: usize, c: usize| DMatrix::from_fn(r, c, |_, _| StandardNormal.sample(&mut rng));
        let r = 30.min(p);
        let u = gauss(n, r);
        let w = gauss(p, r).qr().q();
        let s = DMatrix::from_diagonal(&DVector::from_fn(r, |j, _| 10.0 * 0.7f64.powi(j as i32)));
        let mut y = u * s * w.transpose() + gauss(n, p) * 1e-3;
        y.column_mut(0).add_scalar_mut(5.0);
        y
    }

    /// `y` with about `keep` of its entries (a fixed pattern) as CSR arrays.
    fn sparsified(y: &DMatrix<f64>, keep: usize) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
        let (mut indptr, mut indices, mut data) = (vec![0i32], Vec::new(), Vec::new());
        for i in 0..y.nrows() {
            // Columns in descending order: the products must not need sorted rows.
            for j in (0..y.ncols()).rev() {
                if (i * 7 + j * 13) % keep == 0 {
                    indices.push(j as i32);
                    data.push(y[(i, j)]);
                }
            }
            indptr.push(indices.len() as i32);
        }
        (indptr, indices, data)
    }

    /// The sparse solver gives the exact dense PCA of the same matrix (to the Lanczos
    /// tolerance), also where the spectrum past q is flat and the randomized solver is not
    /// exact; a matrix too narrow for it gets the exact solver's components.
    #[test]
    fn sparse_pca_is_the_exact_pca_of_the_dense_matrix() {
        for (n, p, q, keep) in [(400, 150, 5, 4), (120, 900, 3, 4), (500, 200, 20, 2)] {
            let (indptr, indices, data) = sparsified(&gapped(n, p, 5), keep);
            let y = SparseRows::new(n, p, &indptr, &indices, &data).unwrap();
            let dense = y.to_dense();
            let got = principal_components_sparse(&y, q, 9).unwrap();
            let want = principal_components(&dense, q, PcaSolver::Exact, 9).unwrap();
            assert!((&got.mean - &want.mean).amax() < 1e-13);
            let v = (&got.variances - &want.variances).amax() / want.variances[0];
            assert!(v < 1e-12, "{n} x {p}: {v}");
            assert!(
                subspace_distance(&want.components, &got.components) < 1e-6,
                "{n} x {p}"
            );
            let rel = (&got.coords - &want.coords).amax() / want.coords.amax();
            assert!(rel < 1e-6, "{n} x {p}: {rel}");
        }
        let (indptr, indices, data) = sparsified(&gapped(60, 12, 2), 3);
        let y = SparseRows::new(60, 12, &indptr, &indices, &data).unwrap();
        let got = principal_components_sparse(&y, 4, 0).unwrap();
        let want = principal_components(&y.to_dense(), 4, PcaSolver::Exact, 0).unwrap();
        assert_eq!(got.components, want.components);
        assert!(principal_components_sparse(&y, 13, 0).is_err());
    }

    /// `|| (I - A A^T) B ||_F` for orthonormal A and B: the sines of the angles between
    /// the two subspaces, without the square-root floor of `sqrt(1 - cos^2)`.
    fn subspace_distance(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
        (b - a * a.tr_mul(b)).norm()
    }

    /// A row-major view of the points (a C-order array read in place) gives the fit of the
    /// column-major matrix, on every path: covariance, Gram and randomized.
    #[test]
    fn row_major_views_fit_as_the_matrix() {
        for (n, p, q, solver) in [
            (300, 12, 3, PcaSolver::Exact),
            (12, 40, 3, PcaSolver::Exact),
            (600, 80, 4, PcaSolver::Randomized),
            // Rows wide enough for the transposed product of `centred_mul`.
            (500, WIDE_ROWS + 40, 3, PcaSolver::Exact),
            (700, WIDE_ROWS + 50, 4, PcaSolver::Randomized),
        ] {
            let y = gapped(n, p, 5).add_scalar(3.0);
            let rows: Vec<f64> = y.transpose().as_slice().to_vec();
            let view = MatRef::from_row_major_slice(&rows, n, p);
            let a = principal_components(&y, q, solver, 1).unwrap();
            let b = principal_components_of(view, q, solver, 1).unwrap();
            assert_eq!(a.solver, b.solver);
            let rel = |x: &DMatrix<f64>, z: &DMatrix<f64>| (x - z).amax() / z.amax();
            assert!(rel(&b.components, &a.components) < 1e-10, "{n}x{p}");
            assert!(rel(&b.coords, &a.coords) < 1e-10, "{n}x{p}");
            assert!((&b.mean - &a.mean).amax() < 1e-13, "{n}x{p}");
            assert!(
                (&b.variances - &a.variances).amax() / a.variances[0] < 1e-12,
                "{n}x{p}"
            );
        }
    }

    #[test]
    fn exact_paths_agree_with_the_full_covariance_eigenproblem() {
        for (n, p) in [(80, 12), (12, 40)] {
            let y = gapped(n, p, 3);
            let q = 3;
            let pc = principal_components(&y, q, PcaSolver::Exact, 0).unwrap();
            let mean = DVector::from_fn(p, |j, _| y.column(j).mean());
            let yc = centred(as_faer(&y), &mean);
            let cov = yc.tr_mul(&yc) / (n as f64 - 1.0);
            let full = sym_eigen(&cov).unwrap();
            for j in 0..q {
                let k = p - 1 - j;
                let rel = (pc.variances[j] - full.values[k]).abs() / full.values[k];
                assert!(rel < 1e-10, "n={n} p={p} axis {j}: {rel:e}");
                let cos = pc.components.column(j).dot(&full.vectors.column(k)).abs();
                assert!((1.0 - cos) < 1e-10, "n={n} p={p} axis {j}: cos {cos}");
            }
            let back = &yc * &pc.components;
            assert!((back - &pc.coords).amax() < 1e-10);
        }
    }

    #[test]
    fn randomized_recovers_the_exact_components_on_a_gapped_spectrum() {
        for (n, p, q) in [(600, 120, 3), (90, 700, 5)] {
            let y = gapped(n, p, 11);
            let exact = principal_components(&y, q, PcaSolver::Exact, 0).unwrap();
            let fast = principal_components(&y, q, PcaSolver::Randomized, 7).unwrap();
            assert_eq!(fast.solver, PcaSolver::Randomized);
            let d = subspace_distance(&exact.components, &fast.components);
            assert!(d < 1e-9, "n={n} p={p}: subspace distance {d:e}");
            for j in 0..q {
                let rel = (exact.variances[j] - fast.variances[j]).abs() / exact.variances[j];
                assert!(rel < 1e-12, "n={n} p={p} axis {j}: variance {rel:e}");
                // The same sign convention, so the same coordinates.
                let diff = (exact.coords.column(j) - fast.coords.column(j)).amax();
                assert!(
                    diff < 1e-8 * exact.coords.column(j).amax(),
                    "axis {j}: {diff:e}"
                );
            }
            let again = principal_components(&y, q, PcaSolver::Randomized, 7).unwrap();
            assert_eq!(again.coords, fast.coords, "seeded: the same bits");
        }
    }

    #[test]
    fn auto_follows_the_shape_rule_and_errors_are_clear() {
        use PcaSolver::*;
        assert_eq!(Auto.resolve(10_000, 500, 2), Exact);
        assert_eq!(Auto.resolve(400, 300, 2), Exact);
        assert_eq!(Auto.resolve(20_000, 2000, 50), Randomized);
        assert_eq!(Auto.resolve(3000, 1000, 900), Exact);
        assert_eq!(Auto.resolve(600, 5000, 10), Randomized);
        assert_eq!(Randomized.resolve(10, 10, 2), Randomized);
        assert!(PcaSolver::parse("svd")
            .unwrap_err()
            .to_string()
            .contains("auto, exact or randomized"));
        let flat = DMatrix::from_fn(30, 4, |i, j| if j == 0 { i as f64 } else { 1.0 });
        for solver in [Exact, Randomized] {
            let e = principal_components(&flat, 2, solver, 0).unwrap_err();
            assert!(matches!(e, Error::DimensionTooLarge { .. }), "{e}");
        }
    }
}
