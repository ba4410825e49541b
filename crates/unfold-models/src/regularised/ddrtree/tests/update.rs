//! The update (31) by Proposition 5: against the dense `Q` of (33), stationary in each
//! block, never raising the paper's objective; the implicit centring; the residual term
//! without the N x D residual, and the R package's.

use super::*;

/// The paper's centring done inside the products ([`Problem::centred`]) gives what the
/// centred copy gives: `Y^T Y`, the update (31) and the objective's terms, to
/// round-off, on data far from the origin, through both layouts of `R^T Y` (lanes for
/// narrow data, dense blocks from `DENSE_PRODUCT_COLS` columns on).
#[test]
fn implicit_centring_matches_the_centred_copy() {
    for p in [5, DENSE_PRODUCT_COLS + 4] {
        let y = branching(240, p, 7).add_scalar(40.0) + noise(240, p, 8) * 0.05;
        let mean = y.row_mean().transpose();
        let yc = centred(y.clone());
        let (copy, (edges, lap, assign)) = first_iteration(&yc, 10, 0.2);
        let implicit = Problem::centred(as_faer(&y), &mean, copy.lambda, 0.2, copy.gamma, 2);
        let close = |a: &DMatrix<f64>, b: &DMatrix<f64>, what: &str| {
            let rel = (a - b).amax() / b.amax();
            assert!(rel < 1e-11, "p = {p}, {what}: relative difference {rel:e}");
        };
        close(&implicit.yty, &copy.yty, "Y^T Y");
        let w = top_eigenvectors(&copy.yty, 2).unwrap();
        close(&implicit.y_mul(&w), &(&yc * &w), "Y W");
        let want = copy.update_wzc(&lap, &assign, false).unwrap().0;
        let got = implicit.update_wzc(&lap, &assign, false).unwrap().0;
        close(&got.w, &want.w, "W");
        close(&got.z, &want.z, "Z");
        close(&got.c, &want.c, "C");
        let terms = |problem: &Problem<'_>| problem.objective_terms(&want, &edges, &assign);
        let residual = (&yc - &want.z * want.w.transpose()).norm_squared();
        for ((name, a), (_, b)) in terms(&implicit).iter().zip(terms(&copy).iter()) {
            assert!(
                (a - b).abs() <= 1e-11 * b.abs(),
                "p = {p}, {name}: {a} vs {b}"
            );
        }
        assert!((terms(&implicit)[0].1 - residual).abs() <= 1e-11 * residual);
    }
}

#[test]
fn woodbury_update_equals_dense_q() {
    let y = centred(branching(24, 5, 1));
    let (problem, (_, lap, assign)) = first_iteration(&y, 6, 0.5);
    let got = problem.update_wzc(&lap, &assign, false).unwrap().0;
    // Proposition 5 with the N x N Q formed explicitly.
    let (g, r) = (problem.gamma, &assign.to_dense());
    let sums: Vec<f64> = r.column_iter().map(|c| c.sum()).collect();
    let m = problem.centre_system(&lap, &sums);
    let a = m * ((1.0 + g) / g) - r.transpose() * r;
    let q = (DMatrix::identity(24, 24) + r * a.try_inverse().unwrap() * r.transpose()) / (1.0 + g);
    // Q also equals ((1+gamma) I - gamma R M^{-1} R^T)^{-1} (the proof of Prop. 5).
    let m_inv = problem.centre_system(&lap, &sums).try_inverse().unwrap();
    let q_direct = (DMatrix::identity(24, 24) * (1.0 + g) - r * m_inv * r.transpose() * g)
        .try_inverse()
        .unwrap();
    assert!((&q - &q_direct).norm() < 1e-10 * q.norm());
    let yqy = symmetrised(y.transpose() * &q * &y);
    let w = top_eigenvectors(&yqy, 2).unwrap();
    for j in 0..2 {
        let s = w.column(j).dot(&got.w.column(j)).signum();
        assert!((w.column(j) * s - got.w.column(j)).norm() < 1e-9);
    }
    assert!((&q * &y * &got.w - &got.z).norm() < 1e-9 * got.z.norm());
    let c = problem.centre_system(&lap, &sums).try_inverse().unwrap() * r.transpose() * &got.z;
    assert!((c - &got.c).norm() < 1e-9 * got.c.norm());
}

#[test]
fn each_closed_form_update_is_stationary() {
    let y = centred(branching(40, 6, 2));
    let (problem, (edges, lap, assign)) = first_iteration(&y, 8, 0.3);
    let best = problem.update_wzc(&lap, &assign, false).unwrap().0;
    let f = |s: &State| sum_terms(&problem.objective_terms(s, &edges, &assign));
    let f0 = f(&best);
    let eps = 1e-3;
    for trial in 0..4u64 {
        for sign in [-1.0, 1.0] {
            let mut s = best.clone();
            s.z += noise(40, 2, 10 + trial) * (sign * eps);
            assert!(f(&s) > f0, "perturbing Z lowered the objective");
            let mut s = best.clone();
            s.c += noise(8, 2, 20 + trial) * (sign * eps);
            assert!(f(&s) > f0, "perturbing C lowered the objective");
            // Rotate W within the Stiefel manifold: W' = exp(eps A) W, A skew.
            let a = noise(6, 6, 30 + trial);
            let skew = (&a - a.transpose()) * (sign * eps);
            let rot = skew.exp();
            let mut s = best.clone();
            s.w = rot * &best.w;
            assert!(f(&s) > f0, "rotating W lowered the objective");
        }
    }
}

#[test]
fn objective_never_increases() {
    let y = branching(90, 5, 3) + noise(90, 5, 4) * 0.1;
    for ncenters in [None, Some(12)] {
        let params = DdrTreeParams {
            lambda: Some(2.0),
            sigma: Some(0.05),
            ncenters,
            max_iter: 25,
            tol: 0.0,
            ..DdrTreeParams::new(2)
        };
        let fit = params.fit(&y).unwrap();
        assert_eq!(fit.convergence.trace.len(), 25);
        for pair in fit.convergence.trace.windows(2) {
            assert!(pair[1] <= pair[0] * (1.0 + 1e-12), "{pair:?}");
        }
        let k = ncenters.unwrap_or(90);
        assert_eq!(fit.centres.shape(), (k, 2));
        assert_eq!(fit.edges.len(), k - 1);
        assert_eq!(fit.coords().shape(), (90, 2));
        let wtw = fit.w.tr_mul(&fit.w);
        assert!((wtw - DMatrix::identity(2, 2)).norm() < 1e-10);
    }
}

/// The residual term from `Y^T Y`, `Y^T Z` and `Z^T Z` equals the one from the formed
/// residual, with `d < D` (singular vectors) and `d >= D` (largest singular value),
/// and near-exact fits take the direct path.
#[test]
fn residual_term_without_the_residual_matches_the_formed_one() {
    let y = noise(300, 6, 11);
    for dim in [2, 6] {
        let problem = Problem::new(as_faer(&y), 1.0, 0.1, 1.0, dim);
        let w = top_eigenvectors(&problem.yty, dim.min(3)).unwrap();
        for z in [&y * &w, (&y * &w) * 0.5 + noise(300, dim.min(3), 2) * 0.1] {
            let direct = r_residual_term(&(&y - &z * w.transpose()), dim).unwrap();
            let cheap = problem.r_residual_term(&z, &w, &y.tr_mul(&z)).unwrap();
            assert!(
                (cheap - direct).abs() < 1e-10 * direct.abs(),
                "{cheap} vs {direct}"
            );
        }
    }
    // Y = Z W^T exactly: the guard falls back to forming E, whose term is ~0.
    let w = top_eigenvectors(&tr_mul_self(&y), 2).unwrap();
    let exact = (&y * &w) * w.transpose();
    let problem = Problem::new(as_faer(&exact), 1.0, 0.1, 1.0, 6);
    let z = &exact * &w;
    let got = problem.r_residual_term(&z, &w, &exact.tr_mul(&z)).unwrap();
    assert!(
        got.abs() < 1e-40 * tr_mul_self(&exact).trace().powi(2),
        "{got}"
    );
}

/// The residual term an update returns (from `Z^T Z` by small products and `Y V` in
/// the pass that forms `Y W`) is the term of the formed residual at the new state.
#[test]
fn update_returns_the_residual_term_of_its_state() {
    let y = branching(60, 5, 7) + noise(60, 5, 8) * 0.05;
    let (problem, (_, lap, assign)) = first_iteration(&y, 9, 0.2);
    let (state, residual) = problem.update_wzc(&lap, &assign, true).unwrap();
    let want = r_residual_term(&(&y - &state.z * state.w.transpose()), 2).unwrap();
    let got = residual.unwrap();
    assert!((got - want).abs() < 1e-10 * want.abs(), "{got} vs {want}");
    assert!(problem
        .update_wzc(&lap, &assign, false)
        .unwrap()
        .1
        .is_none());
}

#[test]
fn r_residual_term_follows_the_package() {
    let e = noise(9, 4, 5);
    let svd = e.clone().svd(true, false);
    let mut order: Vec<usize> = (0..4).collect();
    order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    let u = svd.u.unwrap();
    let top2 = order[..2]
        .iter()
        .map(|&j| u.column(j).amax())
        .fold(0.0, f64::max);
    assert!((r_residual_term(&e, 2).unwrap() - top2 * top2).abs() < 1e-10);
    let s = svd.singular_values.max();
    assert!((r_residual_term(&e, 4).unwrap() - s.powi(4)).abs() < 1e-9 * s.powi(4));
}
