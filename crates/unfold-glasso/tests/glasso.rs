//! Closed forms, KKT conditions, masks, warm starts, screening and errors.

use nalgebra::DMatrix;
use unfold_glasso::{graphical_lasso, Error, GlassoFit, GlassoOptions, Penalty};

/// Deterministic normal draws (splitmix64 + Box–Muller) so the tests need no extra crates.
struct Normal(u64);
impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Sample covariance (divided by n) of n draws from N(0, A A^T) with a random A.
fn random_cov(p: usize, n: usize, seed: u64) -> DMatrix<f64> {
    let mut g = Normal(seed);
    let a = DMatrix::from_fn(p, p, |r, c| g.next() * if r == c { 1.0 } else { 0.3 });
    let z = DMatrix::from_fn(n, p, |_, _| g.next());
    let y = z * a.transpose();
    let mean = y.row_mean();
    let yc = DMatrix::from_fn(n, p, |r, c| y[(r, c)] - mean[c]);
    (yc.transpose() * &yc) / n as f64
}

/// Duality-gap tolerance of the accurate fits. An objective gap eps bounds the error of Theta
/// only by O(sqrt(eps)), hence the KKT tolerance below.
const TOL: f64 = 1e-9;
/// Tolerance on the KKT conditions and on W Theta = I for fits at gap TOL (a wrong formula,
/// e.g. a penalty off by 10%, violates them by ~1e-3).
const KKT: f64 = 2e-5;

fn tight() -> GlassoOptions {
    GlassoOptions {
        tol: TOL,
        inner_tol: 1e-12,
        max_iter: 1000,
        ..Default::default()
    }
}

/// KKT of the penalised likelihood at Theta, with Sigma = Theta^{-1}:
/// off-diagonal free entries: Sigma_ij - S_ij = rho_ij sign(Theta_ij) if Theta_ij != 0,
/// |Sigma_ij - S_ij| <= rho_ij if 0; diagonal Sigma_ii = S_ii + rho_ii (or S_ii).
/// Returns the largest violation.
fn kkt_violation(fit: &GlassoFit, s: &DMatrix<f64>, rho: &DMatrix<f64>, pen_diag: bool) -> f64 {
    let sigma = fit.precision.clone().try_inverse().unwrap();
    let p = s.nrows();
    let mut worst = 0.0f64;
    for j in 0..p {
        for i in 0..p {
            let d = sigma[(i, j)] - s[(i, j)];
            let t = fit.precision[(i, j)];
            let v = if i == j {
                (d - if pen_diag { rho[(i, i)] } else { 0.0 }).abs()
            } else if rho[(i, j)].is_infinite() {
                assert_eq!(t, 0.0, "masked entry ({i},{j}) = {t}");
                0.0
            } else if t != 0.0 {
                (d - rho[(i, j)] * t.signum()).abs()
            } else {
                (d.abs() - rho[(i, j)]).max(0.0)
            };
            worst = worst.max(v);
        }
    }
    worst
}

fn max_abs(a: &DMatrix<f64>) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

#[test]
fn diagonal_s_has_the_closed_form() {
    let s = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![1.0, 2.5, 0.3, 4.0]));
    for pen_diag in [false, true] {
        for screen in [true, false] {
            let o = GlassoOptions {
                penalize_diagonal: pen_diag,
                screen,
                ..tight()
            };
            let fit = graphical_lasso(&s, &Penalty::Scalar(0.2), &o).unwrap();
            for i in 0..4 {
                let expect = 1.0 / (s[(i, i)] + if pen_diag { 0.2 } else { 0.0 });
                assert!((fit.precision[(i, i)] - expect).abs() < 1e-14);
                for j in 0..4 {
                    if i != j {
                        assert_eq!(fit.precision[(i, j)], 0.0);
                    }
                }
            }
            assert!(fit.converged && fit.duality_gap.abs() < 1e-12);
            let expect_obj: f64 = (0..4)
                .map(|i| -(s[(i, i)] + if pen_diag { 0.2 } else { 0.0 }).ln() - 1.0)
                .sum();
            assert!((fit.objective - expect_obj).abs() < 1e-12);
        }
    }
}

#[test]
fn zero_penalty_gives_the_inverse() {
    let s = random_cov(12, 60, 1);
    let inv = s.clone().try_inverse().unwrap();
    for screen in [true, false] {
        let fit = graphical_lasso(
            &s,
            &Penalty::Scalar(0.0),
            &GlassoOptions { screen, ..tight() },
        )
        .unwrap();
        assert!(fit.converged);
        let err = max_abs(&(&fit.precision - &inv)) / max_abs(&inv);
        assert!(err < KKT, "relative error {err}");
        assert!(max_abs(&(&fit.covariance - &s)) < KKT * max_abs(&s));
        let ld = inv
            .clone()
            .cholesky()
            .unwrap()
            .l()
            .diagonal()
            .map(|v| 2.0 * v.ln())
            .sum();
        assert!((fit.objective - (ld - 12.0)).abs() < 10.0 * TOL);
    }
}

#[test]
fn large_penalty_gives_a_diagonal_precision() {
    let s = random_cov(10, 40, 2);
    let rho = (0..10)
        .flat_map(|i| (0..10).filter(move |&j| j != i).map(move |j| (i, j)))
        .map(|(i, j)| s[(i, j)].abs())
        .fold(0.0, f64::max);
    for screen in [true, false] {
        let o = GlassoOptions { screen, ..tight() };
        let fit = graphical_lasso(&s, &Penalty::Scalar(rho * 1.0001), &o).unwrap();
        for i in 0..10 {
            assert!((fit.precision[(i, i)] - 1.0 / s[(i, i)]).abs() < 1e-12);
            for j in 0..10 {
                if i != j {
                    assert_eq!(fit.precision[(i, j)], 0.0);
                }
            }
        }
        assert_eq!(fit.components, if screen { 10 } else { 1 });
    }
    // Just below the largest |S_ij|, one pair enters.
    let fit = graphical_lasso(&s, &Penalty::Scalar(rho * 0.99), &tight()).unwrap();
    let nnz = fit.precision.iter().filter(|v| **v != 0.0).count();
    assert_eq!(nnz, 12);
}

#[test]
fn kkt_holds_on_random_problems() {
    for (seed, p, n, rho, pen_diag) in [
        (3, 20, 40, 0.1, false),
        (4, 25, 15, 0.2, false), // n < p: S singular, the penalty makes it solvable
        (5, 15, 30, 0.05, true),
        (6, 30, 100, 0.3, true),
    ] {
        let s = random_cov(p, n, seed);
        let o = GlassoOptions {
            penalize_diagonal: pen_diag,
            ..tight()
        };
        let fit = graphical_lasso(&s, &Penalty::Scalar(rho), &o).unwrap();
        assert!(fit.converged, "seed {seed}");
        assert!(fit.duality_gap.abs() <= TOL);
        let rho_m = DMatrix::from_element(p, p, rho);
        let v = kkt_violation(&fit, &s, &rho_m, pen_diag);
        assert!(v < KKT, "seed {seed}: KKT violation {v}");
        // W Theta = I and W is exact on the diagonal.
        let e = &fit.covariance * &fit.precision - DMatrix::identity(p, p);
        assert!(
            max_abs(&e) < KKT,
            "seed {seed}: |W Theta - I| = {}",
            max_abs(&e)
        );
        for i in 0..p {
            let d = s[(i, i)] + if pen_diag { rho } else { 0.0 };
            assert_eq!(fit.covariance[(i, i)], d);
        }
        // The fit is sparse but not trivial.
        let nnz = fit.precision.iter().filter(|v| **v != 0.0).count();
        assert!(nnz > p && nnz < p * p, "seed {seed}: nnz {nnz}");
        // Objective: no better point nearby (it is the maximiser of a concave function).
        let mut g = Normal(seed + 100);
        for _ in 0..5 {
            let d = DMatrix::from_fn(p, p, |_, _| g.next() * 1e-4);
            let t2 = &fit.precision + (&d + d.transpose());
            let ld: f64 = t2
                .clone()
                .cholesky()
                .unwrap()
                .l()
                .diagonal()
                .map(|v| 2.0 * v.ln())
                .sum();
            let l1: f64 = (0..p)
                .flat_map(|i| (0..p).map(move |j| (i, j)))
                .map(|(i, j)| {
                    if i != j || pen_diag {
                        rho * t2[(i, j)].abs()
                    } else {
                        0.0
                    }
                })
                .sum();
            let f2 = ld - (&s * &t2).trace() - l1;
            assert!(
                f2 <= fit.objective + 1e-12,
                "seed {seed}: {f2} > {}",
                fit.objective
            );
        }
    }
}

#[test]
fn infinite_penalty_mask_gives_exact_zeros_and_covariance_selection() {
    // A ring graph: only (i, i±1 mod p) are free. With zero penalty on the ring this is
    // Dempster's covariance selection: (Theta^{-1})_ij = S_ij on the ring and the diagonal.
    let p = 12;
    let s = random_cov(p, 50, 7);
    let ring = |i: usize, j: usize| i == j || (i + 1) % p == j || (j + 1) % p == i;
    for rho in [0.0, 0.05] {
        let pm = DMatrix::from_fn(p, p, |i, j| if ring(i, j) { rho } else { f64::INFINITY });
        let fit = graphical_lasso(&s, &Penalty::Matrix(pm.clone()), &tight()).unwrap();
        assert!(fit.converged);
        let v = kkt_violation(&fit, &s, &pm, false);
        assert!(v < KKT, "rho {rho}: KKT {v}");
        for i in 0..p {
            for j in 0..p {
                if !ring(i, j) {
                    assert_eq!(fit.precision[(i, j)], 0.0);
                }
            }
        }
        if rho == 0.0 {
            let sigma = fit.precision.clone().try_inverse().unwrap();
            for i in 0..p {
                for j in 0..p {
                    if ring(i, j) {
                        assert!((sigma[(i, j)] - s[(i, j)]).abs() < KKT);
                    }
                }
            }
        }
    }
}

#[test]
fn drill_like_singular_s_with_a_knn_mask() {
    // n = 40 "points" in 5 dimensions: S = Yc Yc^T / 5 is 40 x 40 of rank <= 4.
    let (n, d) = (40, 5);
    let mut g = Normal(11);
    let y = DMatrix::from_fn(n, d, |_, _| g.next());
    let mean = y.column_mean();
    let yc = DMatrix::from_fn(n, d, |r, c| y[(r, c)] - mean[c]);
    let s = &yc * yc.transpose() / d as f64;
    // Symmetrised 3-NN mask.
    let mut nb = DMatrix::from_element(n, n, false);
    for i in 0..n {
        let mut dist: Vec<(f64, usize)> = (0..n)
            .filter(|&j| j != i)
            .map(|j| ((yc.row(i) - yc.row(j)).norm_squared(), j))
            .collect();
        dist.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(_, j) in &dist[..3] {
            nb[(i, j)] = true;
            nb[(j, i)] = true;
        }
    }
    let pm = DMatrix::from_fn(n, n, |i, j| {
        if i == j || nb[(i, j)] {
            0.01
        } else {
            f64::INFINITY
        }
    });
    // Nearly singular: Theta's error is O(sqrt(gap) * condition), so ask for a smaller gap.
    let o = GlassoOptions {
        tol: 1e-12,
        max_iter: 5000,
        ..tight()
    };
    let fit = graphical_lasso(&s, &Penalty::Matrix(pm.clone()), &o).unwrap();
    assert!(fit.converged);
    let v = kkt_violation(&fit, &s, &pm, false);
    assert!(
        v < KKT,
        "KKT {v} gap {} sweeps {}",
        fit.duality_gap,
        fit.iterations
    );
    // Warm starts from much larger (penalised-diagonal) penalties, whose W is not dual
    // feasible here, still reach the same fit.
    let od = GlassoOptions {
        penalize_diagonal: true,
        ..tight()
    };
    let cold = graphical_lasso(&s, &Penalty::Matrix(pm.clone()), &od).unwrap();
    for factor in [4.0, 16.0] {
        let big = graphical_lasso(&s, &Penalty::Matrix(pm.map(|v| v * factor)), &od).unwrap();
        let warm = GlassoOptions {
            warm_start: Some((big.covariance, big.precision)),
            ..od.clone()
        };
        let fit = graphical_lasso(&s, &Penalty::Matrix(pm.clone()), &warm).unwrap();
        assert!(fit.converged);
        assert!((fit.objective - cold.objective).abs() < 10.0 * TOL);
    }
    // Zero penalty with full support and singular S has no solution.
    let err = graphical_lasso(&s, &Penalty::Scalar(0.0), &GlassoOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoSolution { .. }), "{err}");
    assert!(err.to_string().contains("increase rho"));
}

#[test]
fn no_solution_is_detected_inside_the_sweeps() {
    // Variables 0,1,2 are perfectly correlated (S rank-deficient on them); the pair (0,2)
    // is masked and the free pairs (0,1), (1,2) are unpenalised: the completion is singular.
    let v = [1.0, 1.0, 1.0, 0.0];
    let mut s = DMatrix::from_fn(4, 4, |i, j| v[i] * v[j]);
    s[(3, 3)] = 1.0;
    s[(0, 3)] = 0.3;
    s[(3, 0)] = 0.3;
    let inf = f64::INFINITY;
    let pm = DMatrix::from_row_slice(
        4,
        4,
        &[
            0.0, 0.0, inf, 0.1, //
            0.0, 0.0, 0.0, inf, //
            inf, 0.0, 0.0, inf, //
            0.1, inf, inf, 0.0,
        ],
    );
    let err = graphical_lasso(&s, &Penalty::Matrix(pm), &GlassoOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoSolution { .. }), "{err}");
}

#[test]
fn screening_and_warm_starts_agree_with_a_plain_solve() {
    // Two independent groups of variables: screening splits them.
    let a = random_cov(8, 30, 8);
    let b = random_cov(7, 30, 9);
    let mut s = DMatrix::zeros(15, 15);
    s.view_mut((0, 0), (8, 8)).copy_from(&a);
    s.view_mut((8, 8), (7, 7)).copy_from(&b);
    let pen = Penalty::Scalar(0.08);
    let on = graphical_lasso(&s, &pen, &tight()).unwrap();
    let off = graphical_lasso(
        &s,
        &pen,
        &GlassoOptions {
            screen: false,
            ..tight()
        },
    )
    .unwrap();
    assert!(on.components >= 2);
    assert!(max_abs(&(&on.precision - &off.precision)) < KKT);
    assert!((on.objective - off.objective).abs() < 10.0 * TOL);
    // Warm start from a nearby penalty converges to the same point; from the solution
    // itself it stops after one sweep.
    let near = graphical_lasso(&s, &Penalty::Scalar(0.09), &tight()).unwrap();
    let warm = GlassoOptions {
        warm_start: Some((near.covariance.clone(), near.precision.clone())),
        ..tight()
    };
    let w = graphical_lasso(&s, &pen, &warm).unwrap();
    assert!(w.converged);
    assert!(max_abs(&(&w.precision - &on.precision)) < KKT);
    let again = GlassoOptions {
        warm_start: Some((on.covariance.clone(), on.precision.clone())),
        ..tight()
    };
    let w = graphical_lasso(&s, &pen, &again).unwrap();
    assert_eq!(w.iterations, 1);
    assert!(max_abs(&(&w.precision - &on.precision)) < KKT);
}

#[test]
fn non_convergence_is_reported_not_raised() {
    let s = random_cov(20, 40, 10);
    let o = GlassoOptions {
        max_iter: 1,
        tol: 1e-14,
        ..Default::default()
    };
    let fit = graphical_lasso(&s, &Penalty::Scalar(0.05), &o).unwrap();
    assert!(!fit.converged);
    assert_eq!(fit.iterations, 1);
}

#[test]
fn bad_inputs_are_errors() {
    let s = random_cov(4, 20, 12);
    let o = GlassoOptions::default();
    let sc = Penalty::Scalar(0.1);
    assert_eq!(
        graphical_lasso(&DMatrix::zeros(0, 0), &sc, &o).unwrap_err(),
        Error::Empty
    );
    assert!(matches!(
        graphical_lasso(&DMatrix::zeros(3, 4), &sc, &o),
        Err(Error::NotSquare { rows: 3, cols: 4 })
    ));
    let mut bad = s.clone();
    bad[(1, 2)] = f64::NAN;
    assert!(matches!(
        graphical_lasso(&bad, &sc, &o),
        Err(Error::NonFinite { row: 1, col: 2, .. })
    ));
    let mut bad = s.clone();
    bad[(0, 3)] += 0.1;
    assert!(matches!(
        graphical_lasso(&bad, &sc, &o),
        Err(Error::NotSymmetric { row: 0, col: 3, .. })
    ));
    let mut bad = s.clone();
    bad[(2, 2)] = -1.0;
    assert!(matches!(
        graphical_lasso(&bad, &sc, &o),
        Err(Error::NegativeVariance { index: 2, .. })
    ));
    for r in [-0.1, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            graphical_lasso(&s, &Penalty::Scalar(r), &o),
            Err(Error::BadPenalty { .. })
        ));
    }
    let mut pm = DMatrix::from_element(4, 4, 0.1);
    pm[(1, 0)] = -0.2;
    pm[(0, 1)] = -0.2;
    assert!(matches!(
        graphical_lasso(&s, &Penalty::Matrix(pm), &o),
        Err(Error::BadPenalty { row: 1, col: 0, .. })
    ));
    let mut pm = DMatrix::from_element(4, 4, 0.1);
    pm[(0, 1)] = 0.3;
    assert!(matches!(
        graphical_lasso(&s, &Penalty::Matrix(pm), &o),
        Err(Error::PenaltyNotSymmetric { .. })
    ));
    assert!(matches!(
        graphical_lasso(&s, &Penalty::Matrix(DMatrix::zeros(3, 3)), &o),
        Err(Error::PenaltyShape {
            rows: 3,
            cols: 3,
            p: 4
        })
    ));
    // Infinite diagonal: ignored when unpenalised, an error when penalised.
    let pm = DMatrix::from_fn(4, 4, |i, j| if i == j { f64::INFINITY } else { 0.1 });
    assert!(graphical_lasso(&s, &Penalty::Matrix(pm.clone()), &o).is_ok());
    let od = GlassoOptions {
        penalize_diagonal: true,
        ..Default::default()
    };
    assert!(matches!(
        graphical_lasso(&s, &Penalty::Matrix(pm), &od),
        Err(Error::BadPenalty { .. })
    ));
    // A constant variable with an unpenalised diagonal.
    let mut z = s.clone();
    for k in 0..4 {
        z[(1, k)] = 0.0;
        z[(k, 1)] = 0.0;
    }
    assert!(matches!(
        graphical_lasso(&z, &sc, &o),
        Err(Error::NoSolution { .. })
    ));
    assert!(graphical_lasso(&z, &sc, &od).is_ok());
    for (name, opt) in [
        (
            "tol",
            GlassoOptions {
                tol: 0.0,
                ..Default::default()
            },
        ),
        (
            "inner_tol",
            GlassoOptions {
                inner_tol: f64::NAN,
                ..Default::default()
            },
        ),
        (
            "max_iter",
            GlassoOptions {
                max_iter: 0,
                ..Default::default()
            },
        ),
    ] {
        match graphical_lasso(&s, &sc, &opt) {
            Err(Error::InvalidOption { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let ws = GlassoOptions {
        warm_start: Some((DMatrix::zeros(3, 3), DMatrix::zeros(4, 4))),
        ..Default::default()
    };
    assert!(matches!(
        graphical_lasso(&s, &sc, &ws),
        Err(Error::BadWarmStart { .. })
    ));
}

#[test]
fn the_gap_trace_has_one_value_per_sweep() {
    let s = random_cov(12, 30, 3);
    let fit = graphical_lasso(&s, &Penalty::Scalar(0.05), &tight()).unwrap();
    assert!(fit.converged && fit.iterations > 0);
    assert_eq!(fit.gap_trace.len(), fit.iterations);
    assert!(fit.gap_trace.last().unwrap().abs() <= tight().tol);
}
