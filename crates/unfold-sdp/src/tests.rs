//! Small SDPs with closed-form optima.

use super::*;
use nalgebra::{DMatrix, DVector};

fn tight() -> SdpOptions {
    SdpOptions {
        tol: 1e-9,
        ..SdpOptions::default()
    }
}

#[test]
fn trace_constraint_gives_the_smallest_eigenvalue() {
    // min <C, X> s.t. tr X = 1: the optimum is lambda_min(C) at X = v v^T, and the dual
    // y = lambda_min(C).
    let c = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0]);
    let eig = c.clone().symmetric_eigen();
    let (imin, &lmin) = eig
        .eigenvalues
        .iter()
        .enumerate()
        .min_by(|a: &(usize, &f64), b| a.1.total_cmp(b.1))
        .unwrap();
    let a = DenseConstraints::new(vec![DMatrix::identity(3, 3)]).unwrap();
    let sol = solve(&c, &a, &[1.0], &tight()).unwrap();
    assert!(
        (sol.primal_objective - lmin).abs() < 1e-8,
        "{}",
        sol.primal_objective
    );
    assert!(
        (sol.dual_objective - lmin).abs() < 1e-8,
        "{}",
        sol.dual_objective
    );
    let v = eig.eigenvectors.column(imin);
    let expected = v * v.transpose();
    assert!((&sol.x - expected).norm() < 1e-6, "{}", sol.x);
    assert!(sol.relative_gap < 1e-9 && sol.primal_infeasibility < 1e-9);
}

#[test]
fn two_point_max_cut() {
    // min 2 X_12 s.t. X_11 = X_22 = 1: X = [1 -1; -1 1], optimum -2, dual y = (-1, -1).
    let c = DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 1.0, 0.0]);
    let e = |i: usize| DMatrix::from_fn(2, 2, |r, s| if r == i && s == i { 1.0 } else { 0.0 });
    let a = DenseConstraints::new(vec![e(0), e(1)]).unwrap();
    let sol = solve(&c, &a, &[1.0, 1.0], &tight()).unwrap();
    assert!((sol.primal_objective + 2.0).abs() < 1e-8);
    assert!(
        (&sol.y - DVector::from_element(2, -1.0)).amax() < 1e-7,
        "{}",
        sol.y
    );
    let expected = DMatrix::from_row_slice(2, 2, &[1.0, -1.0, -1.0, 1.0]);
    assert!((&sol.x - expected).amax() < 1e-6, "{}", sol.x);
    // Z = C - A^T(y) is PSD and complementary to X.
    assert!(sol.z.clone().symmetric_eigen().eigenvalues.min() > -1e-9);
    assert!((&sol.x * &sol.z).amax() < 1e-6);
}

/// Rank-one constraints `u_k^T X u_k = b_k` with the Hadamard-product Schur complement
/// `(U^T X U) o (U^T Z^{-1} U)`, as MVU's edge constraints use.
struct RankOne {
    u: DMatrix<f64>,
}

impl Constraints for RankOne {
    fn len(&self) -> usize {
        self.u.ncols()
    }
    fn apply(&self, x: &DMatrix<f64>) -> DVector<f64> {
        (self.u.transpose() * x * &self.u).diagonal()
    }
    fn adjoint(&self, y: &DVector<f64>) -> DMatrix<f64> {
        &self.u * DMatrix::from_diagonal(y) * self.u.transpose()
    }
    fn schur(&self, x: &DMatrix<f64>, z_inv: &DMatrix<f64>) -> DMatrix<f64> {
        let ut = self.u.transpose();
        (&ut * x * &self.u).component_mul(&(&ut * z_inv * &self.u))
    }
    fn norm_bound(&self) -> f64 {
        self.u
            .column_iter()
            .map(|c| c.norm_squared())
            .fold(0.0, f64::max)
    }
}

#[test]
fn rank_one_constraints_agree_with_dense_ones() {
    // max tr X s.t. X_11 - 2 X_12 + X_22 = 1, X_22 - 2 X_23 + X_33 = 4, X_11 = 1: three
    // distance-like constraints on a 3 x 3 Gram matrix. Both forms reach the same optimum.
    let u = DMatrix::from_row_slice(3, 3, &[1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 0.0, -1.0, 0.0]);
    let b = [1.0, 4.0, 1.0];
    let c = -DMatrix::<f64>::identity(3, 3);
    let structured = solve(&c, &RankOne { u: u.clone() }, &b, &tight()).unwrap();
    let dense =
        DenseConstraints::new(u.column_iter().map(|c| c * c.transpose()).collect()).unwrap();
    let plain = solve(&c, &dense, &b, &tight()).unwrap();
    assert!((structured.primal_objective - plain.primal_objective).abs() < 1e-7);
    assert!((&structured.x - &plain.x).amax() < 1e-5);
    // Feasible: the constraints hold.
    assert!((RankOne { u }.apply(&structured.x) - DVector::from_column_slice(&b)).amax() < 1e-8);
}

#[test]
fn bad_input_and_the_iteration_limit_are_errors() {
    let c = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0]);
    let a = DenseConstraints::new(vec![DMatrix::identity(2, 2)]).unwrap();
    assert!(matches!(
        solve(&c, &a, &[1.0, 2.0], &tight()),
        Err(Error::Malformed { .. })
    ));
    let c3 = DMatrix::<f64>::identity(3, 3);
    assert!(matches!(
        solve(&c3, &a, &[1.0], &tight()),
        Err(Error::Malformed { .. })
    ));
    assert!(DenseConstraints::new(vec![]).is_err());
    let mixed = vec![DMatrix::identity(2, 2), DMatrix::identity(3, 3)];
    assert!(DenseConstraints::new(mixed).is_err());
    let bad = SdpOptions {
        tol: 0.0,
        ..SdpOptions::default()
    };
    assert!(matches!(
        solve(&c, &a, &[1.0], &bad),
        Err(Error::InvalidOption { name: "tol", .. })
    ));
    let short = SdpOptions {
        max_iter: 1,
        ..tight()
    };
    match solve(&c, &a, &[1.0], &short) {
        Err(Error::NotConverged {
            iterations: 1,
            report,
        }) => {
            assert!(report.contains("relative gap"), "{report}")
        }
        other => panic!("expected NotConverged, got {other:?}"),
    }
}
