//! Procrustes analysis: the best similarity transform from an embedding onto a known truth.

use crate::check::paired_points;
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};

/// The best similarity transform of `x` onto `truth` found by [`procrustes`].
///
/// `aligned = scale * x * rotation + 1 translation^T` (rows are points). When `x` and
/// `truth` have different numbers of columns, the narrower one is padded with zero columns
/// to `d = max(p, q)` columns first (as SciPy does), so `rotation` is `d x d`, `translation`
/// has `d` entries and `aligned` is `n x d`.
#[derive(Clone, Debug, PartialEq)]
pub struct Procrustes {
    /// `||T_c - s X_c R||_F^2 / ||T_c||_F^2` with `T_c`, `X_c` the column-centred inputs; in
    /// `[0, 1]`, 0 for a perfect match.
    pub error: f64,
    /// Orthogonal `d x d` matrix `R` (`R^T R = I`); a rotation or a reflection.
    pub rotation: DMatrix<f64>,
    /// Isotropic scale `s > 0`.
    pub scale: f64,
    /// Translation `t` (length `d`) added to every row after scaling and rotating.
    pub translation: DVector<f64>,
    /// `s x R + 1 t^T`, the embedding mapped onto the truth (`n x d`).
    pub aligned: DMatrix<f64>,
}

/// Fits the similarity transform (translation, orthogonal rotation/reflection, isotropic
/// scale) that maps the rows of `x` (n x q) closest to the rows of `truth` (n x p) in the
/// least-squares sense.
///
/// With `X_c`, `T_c` the column-centred inputs (zero-padded to `d = max(p, q)` columns),
/// `M = X_c^T T_c = U S V^T` (SVD), the minimiser of `||T_c - s X_c R||_F` is
/// `R = U V^T` and `s = tr(S) / ||X_c||_F^2` (Gower 1975; Schönemann 1966), and
/// `t = mean(truth) - s R^T mean(x)`. The error is
/// `||T_c - s X_c R||_F^2 / ||T_c||_F^2 = 1 - tr(S)^2 / (||X_c||_F^2 ||T_c||_F^2)`, which lies
/// in `[0, 1]` and is symmetric in its two arguments. It equals the `disparity` returned by
/// `scipy.spatial.procrustes(truth, x)` (SciPy scales both inputs to unit Frobenius norm, so
/// its disparity is exactly this ratio).
///
/// Errors: empty or non-finite input, different numbers of points, fewer than two points,
/// or all points of `x` (or of `truth`) identical, where no scale or error is defined.
pub fn procrustes(x: &DMatrix<f64>, truth: &DMatrix<f64>) -> Result<Procrustes> {
    paired_points(x, "embedding", truth, "truth")?;
    let d = x.ncols().max(truth.ncols());
    let (xc, x_mean) = centred_padded(x, d);
    let (tc, t_mean) = centred_padded(truth, d);
    let x_norm2 = xc.norm_squared();
    let t_norm2 = tc.norm_squared();
    for (norm2, what) in [(x_norm2, "embedding"), (t_norm2, "truth")] {
        if norm2 == 0.0 {
            return Err(Error::invalid(
                what,
                "all points are identical, so no Procrustes scale or error is defined; \
                 give at least two distinct points",
            ));
        }
    }

    let svd = (xc.transpose() * &tc).svd(true, true);
    let (u, v_t) = match (svd.u, svd.v_t) {
        (Some(u), Some(v_t)) => (u, v_t),
        _ => {
            return Err(Error::numerical(
                "procrustes",
                "the SVD of the cross-covariance did not return its singular vectors",
            ))
        }
    };
    let rotation = u * v_t;
    let scale = svd.singular_values.sum() / x_norm2;
    let translation = &t_mean - scale * rotation.transpose() * &x_mean;

    let residual = &tc - scale * &xc * &rotation;
    let error = residual.norm_squared() / t_norm2;
    let mut aligned = scale * padded(x, d) * &rotation;
    for mut row in aligned.row_iter_mut() {
        row += translation.transpose();
    }
    Ok(Procrustes {
        error,
        rotation,
        scale,
        translation,
        aligned,
    })
}

/// The Procrustes error of [`procrustes`] alone.
pub fn procrustes_error(x: &DMatrix<f64>, truth: &DMatrix<f64>) -> Result<f64> {
    procrustes(x, truth).map(|p| p.error)
}

/// `a` with zero columns appended up to `d` columns.
fn padded(a: &DMatrix<f64>, d: usize) -> DMatrix<f64> {
    DMatrix::from_fn(
        a.nrows(),
        d,
        |i, j| if j < a.ncols() { a[(i, j)] } else { 0.0 },
    )
}

/// The zero-padded `a` with its column means removed, and those means.
fn centred_padded(a: &DMatrix<f64>, d: usize) -> (DMatrix<f64>, DVector<f64>) {
    let mut c = padded(a, d);
    let mean = c.row_mean().transpose();
    for mut row in c.row_iter_mut() {
        row -= mean.transpose();
    }
    (c, mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, p, |_, _| rng.random_range(-1.0..1.0))
    }

    #[test]
    fn recovers_rotation_reflection_scale_and_shift() {
        let truth = random(30, 3, 1);
        // Orthogonal matrix with determinant -1 (a rotation composed with a reflection).
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        let q = DMatrix::from_row_slice(3, 3, &[c, -s, 0.0, s, c, 0.0, 0.0, 0.0, -1.0]);
        let shift = DVector::from_vec(vec![4.0, -2.0, 0.5]);
        // x = (truth - 1 shift^T) q / 2.5, so truth = 2.5 x q^T + 1 shift^T.
        let mut x = truth.clone();
        for mut row in x.row_iter_mut() {
            row -= shift.transpose();
        }
        let x = x * &q / 2.5;
        let p = procrustes(&x, &truth).unwrap();
        assert!(p.error < 1e-28, "error {}", p.error);
        assert!((p.scale - 2.5).abs() < 1e-13);
        assert!((&p.rotation - q.transpose()).amax() < 1e-13);
        assert!((&p.translation - &shift).amax() < 1e-13);
        assert!((&p.aligned - &truth).amax() < 1e-13);
        assert!((p.rotation.determinant() + 1.0).abs() < 1e-13);
    }

    #[test]
    fn hand_computed_case() {
        let truth = DMatrix::from_row_slice(4, 2, &[0., 0., 1., 0., 0., 1., 1., 1.]);
        let x = DMatrix::from_row_slice(4, 2, &[0., 0., 1., 0., 0., 2., 1., 2.]);
        // X_c columns: (-1/2, 1/2, -1/2, 1/2), (-1, -1, 1, 1); T_c: (-1/2, 1/2, -1/2, 1/2),
        // (-1/2, -1/2, 1/2, 1/2). M = X_c^T T_c = diag(1, 2); ||X_c||^2 = 1 + 4 = 5,
        // ||T_c||^2 = 2. R = I, s = 3/5, error = 1 - 9 / (5 * 2) = 1/10.
        let p = procrustes(&x, &truth).unwrap();
        assert!((p.error - 0.1).abs() < 1e-15, "error {}", p.error);
        assert!((p.scale - 0.6).abs() < 1e-15);
        assert!((&p.rotation - DMatrix::identity(2, 2)).amax() < 1e-15);
        // Symmetric in its arguments.
        assert!((procrustes_error(&truth, &x).unwrap() - 0.1).abs() < 1e-15);
    }

    #[test]
    fn error_formula_matches_residual_and_lies_in_unit_interval() {
        let truth = random(25, 3, 2);
        let x = random(25, 2, 3);
        let p = procrustes(&x, &truth).unwrap();
        assert_eq!(p.rotation.shape(), (3, 3));
        assert_eq!(p.aligned.shape(), (25, 3));
        assert!((p.rotation.transpose() * &p.rotation - DMatrix::identity(3, 3)).amax() < 1e-12);
        let (tc, _) = centred_padded(&truth, 3);
        let direct = (&truth - &p.aligned).norm_squared() / tc.norm_squared();
        assert!((direct - p.error).abs() < 1e-13);
        assert!(p.error > 0.0 && p.error < 1.0);
        // No other orthogonal map does better: try perturbed rotations.
        for angle in [0.01, -0.01] {
            let (c, s) = (f64::cos(angle), f64::sin(angle));
            let g = DMatrix::from_row_slice(3, 3, &[c, -s, 0., s, c, 0., 0., 0., 1.]);
            let mut other = p.scale * centred_padded(&x, 3).0 * &p.rotation * g;
            other -= &tc;
            assert!(other.norm_squared() / tc.norm_squared() > p.error);
        }
    }

    #[test]
    fn wider_embedding_pads_the_truth() {
        // x has a third, constant-zero coordinate and is a rotated copy of the truth.
        let truth = random(10, 2, 6);
        let (c, s) = (1.1f64.cos(), 1.1f64.sin());
        let rotated = &truth * DMatrix::from_row_slice(2, 2, &[c, -s, s, c]);
        let x = DMatrix::from_fn(10, 3, |i, j| if j < 2 { rotated[(i, j)] } else { 0.0 });
        let p = procrustes(&x, &truth).unwrap();
        assert!(p.error < 1e-28);
        assert_eq!(p.aligned.shape(), (10, 3));
        assert!((p.aligned.columns(0, 2) - &truth).amax() < 1e-13);
        assert!(p.aligned.column(2).amax() < 1e-13);
    }

    #[test]
    fn rejects_bad_input() {
        let a = random(5, 2, 4);
        assert!(matches!(
            procrustes(&a, &random(6, 2, 5)),
            Err(Error::DimensionMismatch(_))
        ));
        let mut bad = a.clone();
        bad[(3, 1)] = f64::NAN;
        assert!(matches!(
            procrustes(&bad, &a),
            Err(Error::NonFinite { row: 3, col: 1, .. })
        ));
        let constant = DMatrix::from_element(5, 2, 1.0);
        assert!(matches!(
            procrustes(&constant, &a),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            procrustes(&DMatrix::zeros(0, 2), &DMatrix::zeros(0, 2)),
            Err(Error::Empty(_))
        ));
    }
}
