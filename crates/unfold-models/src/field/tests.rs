use super::*;
use nalgebra::DMatrix;
use unfold_core::{Error, EvidenceKind, Result};
use unfold_linalg::CsrMatrix;

fn data(n: usize, p: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, p, |i, j| {
        ((i * 7 + j * 3) as f64 * 0.37).sin() + 0.1 * j as f64
    })
}

fn path_laplacian(n: usize, gamma: f64) -> CsrMatrix {
    let edges = (0..n - 1).map(|i| (i, i + 1, 1.0 + 0.1 * i as f64));
    unfold_graph::Laplacian::new(n).shift(gamma).sparse(edges)
}

/// Independent dense Gaussian log-density summed over the columns.
fn dense_log_density(prec: &DMatrix<f64>, y: &DMatrix<f64>) -> f64 {
    let n = y.nrows() as f64;
    let cov = prec.clone().try_inverse().unwrap();
    let chol = cov.clone().cholesky().unwrap();
    let log_det_cov = 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
    y.column_iter()
        .map(|c| {
            let c = c.into_owned();
            let q = (c.transpose() * prec * &c)[(0, 0)];
            -0.5 * n * LOG_TAU - 0.5 * log_det_cov - 0.5 * q
        })
        .sum()
}

#[test]
fn log_likelihood_equals_dense_density() {
    let y = data(9, 4);
    let l = path_laplacian(9, 0.3);
    let want = dense_log_density(&l.to_dense(), &y);
    for prec in [Precision::Sparse(l.clone()), Precision::Dense(l.to_dense())] {
        let e = field_log_likelihood(&prec, &y, "test").unwrap();
        assert!(
            (e.value - want).abs() < 1e-10 * want.abs(),
            "{} vs {want}",
            e.value
        );
    }
}

/// A field on the generic path (no hook overridden): one weight per edge of a path and
/// one shift of the diagonal, `P = sum_e theta_e A_e + theta_last I`.
struct PathField(DMatrix<f64>);

impl GaussianRandomField for PathField {
    fn data(&self) -> &DMatrix<f64> {
        &self.0
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(0.0, f64::INFINITY); self.0.nrows()]
    }
    fn precision(&self, t: &[f64]) -> Result<Precision> {
        let n = self.0.nrows();
        let mut trip: Vec<_> = (0..n).map(|i| (i, i, t[n - 1])).collect();
        for (e, &w) in t[..n - 1].iter().enumerate() {
            trip.extend([(e, e, w), (e + 1, e + 1, w), (e, e + 1, -w), (e + 1, e, -w)]);
        }
        Ok(Precision::Sparse(CsrMatrix::from_triplets(n, n, &trip)))
    }
    fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        let n = self.0.nrows();
        let mut d: Vec<_> = (0..n - 1)
            .map(|e| PrecisionDerivative::edge(e, e + 1, 1.0))
            .collect();
        d.push(PrecisionDerivative::new(
            (0..n).map(|i| (i, i, 1.0)).collect(),
        ));
        Ok(d)
    }
}

fn fd_check<F: GaussianRandomField>(field: &F, theta: &[f64], tol: f64) {
    let mut g = vec![0.0; theta.len()];
    let value = field.log_likelihood_gradient(theta, &mut g).unwrap();
    assert_eq!(value, field.log_likelihood(theta).unwrap().value);
    for e in 0..theta.len() {
        let h = 1e-6 * theta[e].abs().max(1e-3);
        let (mut tp, mut tm) = (theta.to_vec(), theta.to_vec());
        tp[e] += h;
        tm[e] -= h;
        let fd = (field.log_likelihood(&tp).unwrap().value
            - field.log_likelihood(&tm).unwrap().value)
            / (2.0 * h);
        assert!(
            (fd - g[e]).abs() <= tol * (1.0 + g[e].abs()),
            "param {e}: analytic {} vs numeric {fd}",
            g[e]
        );
    }
}

#[test]
fn generic_gradient_matches_finite_differences() {
    let (y, _) = unfold_data::centre(&data(7, 3));
    let field = PathField(y);
    let theta: Vec<f64> = (0..7).map(|e| 0.4 + 0.15 * e as f64).collect();
    fd_check(&field, &theta, 1e-6);
    // The trait's likelihood is the Gaussian density of the precision.
    let prec = field.precision(&theta).unwrap();
    let direct = field_log_likelihood(&prec, field.data(), "t")
        .unwrap()
        .value;
    assert_eq!(field.log_likelihood(&theta).unwrap().value, direct);
}

#[test]
fn scaled_shape_gradient_matches_finite_differences() {
    let (y, _) = unfold_data::centre(&data(9, 2));
    let shape = path_laplacian(9, 0.0);
    let field = ScaledShapeField::new(&shape, 0.05, &y, "t").unwrap();
    fd_check(&field, &[0.7 * field.upper_scale()], 1e-6);
}

#[test]
fn pseudo_likelihood_is_the_product_of_full_conditionals() {
    let (y, _) = unfold_data::centre(&data(6, 2));
    let field = PathField(y.clone());
    let theta = [0.5, 1.0, 1.5, 0.7, 0.9, 0.3];
    let Precision::Sparse(p) = field.precision(&theta).unwrap() else {
        unreachable!()
    };
    let p = p.to_dense();
    let mut want = 0.0;
    for c in 0..y.ncols() {
        for i in 0..6 {
            let mean: f64 = (0..6)
                .filter(|&j| j != i)
                .map(|j| -p[(i, j)] * y[(j, c)])
                .sum::<f64>()
                / p[(i, i)];
            let r = y[(i, c)] - mean;
            want += -0.5 * LOG_TAU + 0.5 * p[(i, i)].ln() - 0.5 * p[(i, i)] * r * r;
        }
    }
    let got = field.pseudo_log_likelihood(&theta).unwrap();
    assert_eq!(got.kind, EvidenceKind::PseudoLogLikelihood);
    assert!(
        (got.value - want).abs() < 1e-12 * want.abs(),
        "{} vs {want}",
        got.value
    );
}

#[test]
fn fitted_scale_maximises_the_likelihood() {
    let (y, _) = unfold_data::centre(&data(8, 3));
    let shape = path_laplacian(8, 0.0);
    let gamma = 0.05;
    let (s, e) = fixed_shape_evidence(&shape, gamma, &y, "test").unwrap();
    let at = |t: f64| {
        let p = shape.to_dense() * t + DMatrix::identity(8, 8) * gamma;
        field_log_likelihood(&Precision::Dense(p), &y, "t")
            .unwrap()
            .value
    };
    assert!((at(s) - e.value).abs() < 1e-10 * e.value.abs());
    assert!(at(s * 1.001) < e.value && at(s * 0.999) < e.value);
}

#[test]
fn laplacian_embedding_matches_centred_covariance() {
    let n = 12;
    let gamma = 0.05;
    let l = path_laplacian(n, 0.0);
    let a = l.to_dense() + DMatrix::identity(n, n) * gamma;
    let k = a.try_inverse().unwrap();
    let fast = laplacian_embedding(&l, gamma, 2, FieldScaling::Eigenvalue).unwrap();
    let slow = covariance_embedding(k, 2, FieldScaling::Eigenvalue).unwrap();
    assert!((&fast.eigenvalues - &slow.eigenvalues).norm() < 1e-9 * slow.eigenvalues[0]);
    assert!((&fast.coords - &slow.coords).norm() < 1e-8 * slow.coords.norm());
}

#[test]
fn disconnected_field_puts_component_indicators_first() {
    // Two paths of 6 points, no edge between them: the dense H K H has the indicator
    // of the split as its top eigenvector, then the paths' smooth modes.
    let mut t = Vec::new();
    for (a, b) in [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (6, 7),
        (7, 8),
        (8, 9),
        (9, 10),
        (10, 11),
    ] {
        t.extend([(a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)]);
    }
    let l = CsrMatrix::from_triplets(12, 12, &t);
    let gamma = 1e-3;
    let k = (l.to_dense() + DMatrix::identity(12, 12) * gamma)
        .try_inverse()
        .unwrap();
    let fast = laplacian_embedding(&l, gamma, 2, FieldScaling::Eigenvalue).unwrap();
    let slow = covariance_embedding(k, 2, FieldScaling::Eigenvalue).unwrap();
    assert!((&fast.eigenvalues - &slow.eigenvalues).norm() < 1e-8 * slow.eigenvalues[0]);
    let (a, b) = (fast.coords.column(0), slow.coords.column(0));
    let gap = (a - b).norm().min((a + b).norm());
    assert!(gap < 1e-8 * b.norm(), "indicator axes differ by {gap}");
    // The second axis is degenerate (both paths have the same smooth mode), so only
    // the subspace is determined.
    assert!(laplacian_embedding(&l, 0.0, 2, FieldScaling::Eigenvalue).is_err());
}

#[test]
fn mismatched_rows_are_refused() {
    let prec = Precision::Sparse(path_laplacian(5, 1.0));
    assert!(matches!(
        field_log_likelihood(&prec, &data(4, 2), "t"),
        Err(Error::DimensionMismatch(_))
    ));
}
