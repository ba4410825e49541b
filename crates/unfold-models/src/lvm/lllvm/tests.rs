use super::*;
use crate::traits::{Embedding, OutOfSample};
use unfold_vem::{run_from, Silent};

fn csv(text: &str) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

const FIXTURE_Y: &str = include_str!("../../../tests/fixtures/lllvm_swiss_n200/Y.csv");
const FIXTURE_G: &str = include_str!("../../../tests/fixtures/lllvm_swiss_n200/G.csv");
const FIXTURE_C0: &str = include_str!("../../../tests/fixtures/lllvm_swiss_n200/mean_c0.csv");
const FIXTURE_REF: &str = include_str!("../../../tests/fixtures/lllvm_swiss_n200/reference.csv");
const FIXTURE_X: &str =
    include_str!("../../../tests/fixtures/lllvm_swiss_n200/reference_mean_x.csv");

/// The authors' MATLAB code (under Octave) on a 200-point Swiss roll: the same inputs give
/// the same 30 bounds and gammas, and the same final posterior mean of x. The code divides
/// the centred data by its largest absolute entry before fitting (`Preprocess::CentreMaxAbs`).
#[test]
fn reproduces_the_authors_code_on_the_fixture() {
    let y = csv(FIXTURE_Y);
    let g = NeighbourGraph::from_adjacency(&csv(FIXTURE_G)).unwrap();
    let c0 = csv(FIXTURE_C0);
    let reference = csv(FIXTURE_REF.split_once('\n').unwrap().1);
    let params = LlLvmParams::new(2, 8).preprocess(Preprocess::CentreMaxAbs);
    let problem = LlLvmProblem::new(&y, &g, &params).unwrap();
    let (q, h) = problem.start_from_mean_c(&c0).unwrap();
    let options = VemOptions {
        max_iter: 30,
        abs_tol: 0.0,
        rel_tol: 0.0,
        ..VemOptions::default()
    };
    let run = run_from(&problem, q, h, &options, 0, &Silent).unwrap();
    assert_eq!(run.trace.len(), 30);

    for (t, e) in run.trace.iter().enumerate() {
        let want = reference[(t, 1)];
        let rel = (e.value - want).abs() / want.abs();
        assert!(
            rel < 1e-6,
            "iteration {}: bound {} vs {want}; {:?}; gamma {}",
            t + 1,
            e.value,
            e.terms,
            run.hyper.gamma
        );
    }
    let gamma_rel = (run.hyper.gamma - reference[(29, 2)]).abs() / reference[(29, 2)];
    assert!(
        gamma_rel < 1e-6,
        "gamma {} vs {}",
        run.hyper.gamma,
        reference[(29, 2)]
    );
    let x_ref = csv(FIXTURE_X);
    let diff = (&run.posterior.mu_x - &x_ref).amax();
    assert!(diff < 1e-6 * x_ref.amax(), "mean x differs by {diff}");
}

/// A tiny connected graph with a cycle and a pendant vertex.
fn tiny_graph() -> NeighbourGraph {
    let edges = [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (4, 5), (1, 4)];
    let e: Vec<(usize, usize, f64)> = edges.iter().map(|&(i, j)| (i, j, 1.0)).collect();
    NeighbourGraph::from_edges(6, &e).unwrap()
}

fn tiny_data(n: usize, dy: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, dy, |_, _| StandardNormal.sample(&mut rng))
}

/// `A_E` of spec §3.2 (point-major, (n dy) x (n dx)) for a given C (dy x n dx,
/// coordinate-major) and gamma.
fn a_e(adj: &[Vec<usize>], c: &DMatrix<f64>, gamma: f64, dx: usize) -> DMatrix<f64> {
    let n = adj.len();
    let dy = c.nrows();
    let ci = |i: usize| DMatrix::from_fn(dy, dx, |a, r| c[(a, r * n + i)]);
    let mut m = DMatrix::zeros(n * dy, n * dx);
    for (i, nb) in adj.iter().enumerate() {
        for &j in nb {
            let off = (ci(j) + ci(i)) * gamma;
            let mut blk = m.view_mut((i * dy, j * dx), (dy, dx));
            blk -= &off;
            let mut diag = m.view_mut((i * dy, i * dx), (dy, dx));
            diag += &off;
        }
    }
    m
}

/// Converts a coordinate-major (n dx) square matrix to point-major.
fn to_point_major(m: &DMatrix<f64>, n: usize, dx: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n * dx, n * dx, |u, v| {
        let (i, r) = (u / dx, u % dx);
        let (j, s) = (v / dx, v % dx);
        m[(r * n + i, s * n + j)]
    })
}

/// The expected quadratic forms equal their definitions `A_E^T Sigma_y A_E` and `b = A_E^T y`
/// for a point-mass q(C), with `Sigma_y = (eps 1 1^T + 2 gamma L)^{-1} (x) I`.
#[test]
fn a_and_b_match_their_definitions() {
    let g = tiny_graph();
    let (n, dy, dx) = (6, 3, 2);
    let y = tiny_data(n, dy, 1);
    let params = LlLvmParams::new(dx, 2).epsilon(0.3);
    let problem = LlLvmProblem::new(&y, &g, &params).unwrap();
    let gamma = 1.7;
    let c = tiny_data(dy, n * dx, 2);
    let adj = &problem.graph.adj;
    let ae = a_e(adj, &c, gamma, dx);
    let lap = laplacian(adj);
    let lt = (lap * (2.0 * gamma)).add_scalar(0.3).try_inverse().unwrap();
    let sigma_y = lt.kronecker(&DMatrix::<f64>::identity(dy, dy));
    let a_def = ae.transpose() * &sigma_y * &ae;
    let k = c.tr_mul(&c);
    let a_ours = to_point_major(
        &(problem.graph.form(&k, dx, Form::A) * (0.5 * gamma)),
        n,
        dx,
    );
    assert!(
        (&a_def - &a_ours).amax() < 1e-10 * a_def.amax(),
        "{a_def}\n{a_ours}"
    );
    let yv = DVector::from_iterator(n * dy, problem.y.transpose().iter().copied());
    let b_def = ae.transpose() * yv;
    let b_ours = problem.b_mean(&c, gamma);
    for i in 0..n {
        for r in 0..dx {
            assert!((b_def[i * dx + r] - b_ours[r * n + i]).abs() < 1e-10);
        }
    }
}

/// For point masses, `e^T Sigma_y e = (gamma/2) Tr(<Qhat L^+ Qhat^T> C^T C)` and
/// `y^T e = gamma Tr(C^T H)` with `e = A_E x` (spec §3.3).
#[test]
fn gamma_and_h_match_their_definitions() {
    let g = tiny_graph();
    let (n, dy, dx) = (6, 3, 2);
    let y = tiny_data(n, dy, 3);
    let params = LlLvmParams::new(dx, 2).epsilon(0.3);
    let problem = LlLvmProblem::new(&y, &g, &params).unwrap();
    let gamma = 0.8;
    let c = tiny_data(dy, n * dx, 4);
    let x = tiny_data(n, dx, 5);
    let adj = &problem.graph.adj;
    let ae = a_e(adj, &c, gamma, dx);
    let xv = DVector::from_iterator(n * dx, x.transpose().iter().copied());
    let e = &ae * xv;
    let lap = laplacian(adj);
    let lt = (lap * (2.0 * gamma)).add_scalar(0.3).try_inverse().unwrap();
    let sigma_y = lt.kronecker(&DMatrix::<f64>::identity(dy, dy));
    let quad = (e.transpose() * &sigma_y * &e)[0];
    let xs = DVector::from_column_slice(x.as_slice());
    let s = &xs * xs.transpose();
    let gamma_hat = problem.graph.form(&s, dx, Form::Gamma);
    let ours = 0.5 * gamma * gamma_hat.dot(&c.tr_mul(&c));
    assert!((quad - ours).abs() < 1e-10 * quad.abs(), "{quad} vs {ours}");
    let yv = DVector::from_iterator(n * dy, problem.y.transpose().iter().copied());
    let lin = yv.dot(&e);
    let h = problem.h_mean(&x);
    assert!((lin - gamma * c.dot(&h)).abs() < 1e-10 * lin.abs());
}

fn tiny_problem(params: &LlLvmParams) -> (LlLvmProblem, LlLvmPosterior, LlLvmHyper) {
    let y = tiny_data(6, 3, 7);
    let problem = LlLvmProblem::new(&y, &tiny_graph(), params).unwrap();
    let (mut q, mut h) = problem.init(&mut unfold_core::seeded_rng(3)).unwrap();
    for _ in 0..3 {
        problem.e_step(&mut q, &h).unwrap();
        problem.m_step(&q, &mut h).unwrap();
    }
    (problem, q, h)
}

/// Monte Carlo over q(x) q(C) of the normalised Gaussian log-likelihood
/// `log N(y | Sigma_y A_E x, Sigma_y)` agrees with the closed-form expected log-likelihood.
#[test]
fn expected_log_likelihood_matches_monte_carlo() {
    let params = LlLvmParams::new(2, 2).epsilon(0.2);
    let (problem, q, h) = tiny_problem(&params);
    let (n, dy, dx) = (6, 3, 2);
    let adj = &problem.graph.adj;
    let lap = laplacian(adj);
    let prec_small = (lap * (2.0 * h.gamma)).add_scalar(params.epsilon);
    let log_det_prec = dy as f64 * prec_small.clone().cholesky().unwrap().ln_determinant();
    let sigma_small = prec_small.clone().try_inverse().unwrap();
    let eye = DMatrix::<f64>::identity(dy, dy);
    let prec = prec_small.kronecker(&eye);
    let sigma_y = sigma_small.kronecker(&eye);
    let yv = DVector::from_iterator(n * dy, problem.y.transpose().iter().copied());
    let lx = q.sigma_x.clone().cholesky().unwrap().l();
    let lc = q.sigma_c.clone().cholesky().unwrap().l();
    let mut rng = unfold_core::seeded_rng(11);
    let samples = 40_000;
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for _ in 0..samples {
        let zx: DVector<f64> = DVector::from_fn(n * dx, |_, _| StandardNormal.sample(&mut rng));
        let x_cm = DVector::from_column_slice(q.mu_x.as_slice()) + &lx * zx;
        let zc: DMatrix<f64> = DMatrix::from_fn(dy, n * dx, |_, _| StandardNormal.sample(&mut rng));
        let c = &q.mu_c + zc * lc.transpose();
        // Point-major x for A_E.
        let x_pm = DVector::from_fn(n * dx, |u, _| x_cm[(u % dx) * n + u / dx]);
        let e = a_e(adj, &c, h.gamma, dx) * x_pm;
        let r = &yv - &sigma_y * e;
        let ll = -0.5 * (n * dy) as f64 * (2.0 * std::f64::consts::PI).ln() + 0.5 * log_det_prec
            - 0.5 * r.dot(&(&prec * &r));
        sum += ll;
        sum_sq += ll * ll;
    }
    let mean = sum / samples as f64;
    let se = ((sum_sq / samples as f64 - mean * mean) / samples as f64).sqrt();
    let ev = problem.elbo(&q, &h).unwrap();
    let closed = ev.terms[0].1;
    assert!(
        (mean - closed).abs() < 4.0 * se,
        "Monte Carlo {mean} +- {se} vs closed form {closed}"
    );
}

/// gamma's closed form and alpha's root find maximise the bound (finite differences).
#[test]
fn m_step_maximises_the_bound() {
    let params = LlLvmParams::new(2, 2).alpha(AlphaRule::Optimise);
    let (problem, q, mut h) = tiny_problem(&params);
    problem.m_step(&q, &mut h).unwrap();
    let at = |h: LlLvmHyper| problem.elbo(&q, &h).unwrap().value;
    let best = at(h);
    for f in [0.999, 1.001] {
        let g = LlLvmHyper {
            gamma: h.gamma * f,
            ..h
        };
        let a = LlLvmHyper {
            alpha: h.alpha * f,
            ..h
        };
        assert!(at(g) < best && at(a) < best);
    }
    // Stationarity to second order: the central difference of the derivative vanishes.
    let d = 1e-5;
    let dg = (at(LlLvmHyper {
        gamma: h.gamma * (1.0 + d),
        ..h
    }) - at(LlLvmHyper {
        gamma: h.gamma * (1.0 - d),
        ..h
    })) / (2.0 * d);
    let da = (at(LlLvmHyper {
        alpha: h.alpha * (1.0 + d),
        ..h
    }) - at(LlLvmHyper {
        alpha: h.alpha * (1.0 - d),
        ..h
    })) / (2.0 * d);
    assert!(dg.abs() < 1e-6 * best.abs().max(1.0), "d/dlog gamma = {dg}");
    assert!(da.abs() < 1e-6 * best.abs().max(1.0), "d/dlog alpha = {da}");
}

fn roll(n: usize, seed: u64) -> DMatrix<f64> {
    unfold_data::synthetic::swiss_roll(n, 0.0, seed)
        .unwrap()
        .points
}

/// EM never lowers the bound (the driver would fail), for both starts and both alpha rules,
/// and the restarts are reported.
#[test]
fn bound_is_monotone_on_a_swiss_roll() {
    let y = roll(150, 1);
    for (init, alpha) in [
        (LlLvmInit::Random, AlphaRule::Fixed(1e-3)),
        (LlLvmInit::Spectral, AlphaRule::Optimise),
    ] {
        let fit = LlLvmParams::new(2, 8)
            .init(init)
            .alpha(alpha)
            .max_iter(25)
            .restarts(2, 5)
            .fit(&y)
            .unwrap();
        assert!(fit
            .convergence
            .trace
            .windows(2)
            .all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
        assert_eq!(fit.restart_bounds.len(), 2);
        let best = fit.restart_bounds.iter().copied().fold(f64::MIN, f64::max);
        assert_eq!(fit.evidence().value, best);
        assert_eq!(fit.evidence().kind, EvidenceKind::Elbo);
    }
}

/// Projecting training points lands near their fitted positions, with a covariance; the
/// reconstruction of a fitted latent position returns close to the point itself.
#[test]
fn out_of_sample_and_reconstruction_of_training_points() {
    let y = roll(200, 2);
    let fit = LlLvmParams::new(2, 8)
        .init(LlLvmInit::Spectral)
        .max_iter(30)
        .fit(&y)
        .unwrap();
    let x = fit.coords().clone();
    // Typical neighbour distance in the embedding.
    let g = fit.graph().unwrap();
    let edges = g.edges();
    let typical = edges
        .iter()
        .map(|&(i, j, _)| (x.row(i) - x.row(j)).norm())
        .sum::<f64>()
        / edges.len() as f64;
    let idx = [0, 17, 53, 101, 160];
    let new = DMatrix::from_fn(idx.len(), 3, |t, c| y[(idx[t], c)]);
    let proj = fit.project(&new).unwrap();
    for (t, &i) in idx.iter().enumerate() {
        let d = (proj.mean.row(t) - x.row(i)).norm();
        assert!(
            d < 0.5 * typical,
            "point {i}: {d} vs typical edge {typical}"
        );
        let cov = &proj.covariance.as_ref().unwrap()[t];
        assert!(cov[(0, 0)] > 0.0 && cov[(1, 1)] > 0.0);
    }
    let xs = DMatrix::from_fn(idx.len(), 2, |t, c| x[(idx[t], c)]);
    let rec = fit.reconstruct(&xs, 1).unwrap();
    for (t, &i) in idx.iter().enumerate() {
        assert!((rec.row(t) - y.row(i)).norm() < 1e-12 * y.amax());
    }
    // With k = 6 the local maps must beat the plain mean of the same latent neighbours.
    let rec = fit.reconstruct(&xs, 6).unwrap();
    for (t, &i) in idx.iter().enumerate() {
        let xi = x.row(i);
        let mut order: Vec<(f64, usize)> = (0..x.nrows())
            .map(|j| ((x.row(j) - xi).norm_squared(), j))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let plain = order[..6]
            .iter()
            .fold(DVector::zeros(3), |acc: DVector<f64>, &(_, j)| {
                acc + y.row(j).transpose()
            })
            / 6.0;
        let with_maps = (rec.row(t) - y.row(i)).norm();
        let without = (plain.transpose() - y.row(i)).norm();
        assert!(with_maps < without, "point {i}: {with_maps} vs {without}");
    }
}

#[test]
fn bad_input_gets_clear_errors() {
    let y = roll(60, 3);
    // Two far-apart copies: the kNN graph falls apart.
    let mut two = DMatrix::zeros(120, 3);
    two.rows_mut(0, 60).copy_from(&y);
    two.rows_mut(60, 60).copy_from(&y.add_scalar(1e3));
    let err = LlLvmParams::new(2, 5).fit(&two).unwrap_err().to_string();
    assert!(err.contains("connected components"), "{err}");
    let err = LlLvmParams::new(3, 5).fit(&y).unwrap_err().to_string();
    assert!(err.contains("latent dimension"), "{err}");
    let err = LlLvmParams::new(2, 5)
        .epsilon(0.0)
        .fit(&y)
        .unwrap_err()
        .to_string();
    assert!(err.contains("epsilon"), "{err}");
    let err = LlLvmParams::new(2, 5)
        .alpha(AlphaRule::Fixed(-1.0))
        .fit(&y)
        .unwrap_err()
        .to_string();
    assert!(err.contains("alpha"), "{err}");
    let mut bad = y.clone();
    bad[(4, 1)] = f64::NAN;
    assert!(LlLvmParams::new(2, 5).fit(&bad).is_err());
    let fit = LlLvmParams::new(2, 5).max_iter(2).fit(&y).unwrap();
    assert!(fit.project(&DMatrix::zeros(1, 2)).is_err());
    assert!(fit.reconstruct(&DMatrix::zeros(1, 2), 0).is_err());
}

/// The fit reports its real EM iterations and the bound after each one.
#[test]
fn convergence_reports_every_iteration() {
    let fit = LlLvmParams::new(2, 8)
        .max_iter(10)
        .fit(&roll(80, 2))
        .unwrap();
    let c = &fit.convergence;
    assert!(c.iterations > 0, "{c:?}");
    assert_eq!(c.trace.len(), c.iterations);
    assert_eq!(*c.trace.last().unwrap(), fit.evidence().value);
}
