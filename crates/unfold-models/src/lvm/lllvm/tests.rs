use super::moments::row_by_edge_sums;
use super::*;
use crate::method::Declared;
use crate::traits::{Embedding, OutOfSample};
use unfold_core::Silent;
use unfold_linalg::symmetrised;
use unfold_vem::{run_from, VemOptions};

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
    let params = LlLvmParams::new(2, 8).scaling(Preprocess::CentreMaxAbs);
    let problem = LlLvmProblem::new(&y, &g, &params.check().unwrap()).unwrap();
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
            rel < 2e-9,
            "iteration {}: bound {} vs {want}; {:?}; gamma {}",
            t + 1,
            e.value,
            e.terms,
            run.hyper.gamma
        );
    }
    let gamma_rel = (run.hyper.gamma - reference[(29, 2)]).abs() / reference[(29, 2)];
    assert!(
        gamma_rel < 2e-9,
        "gamma {} vs {}",
        run.hyper.gamma,
        reference[(29, 2)]
    );
    let x_ref = csv(FIXTURE_X);
    let diff = (&run.posterior.mu_x - &x_ref).amax();
    assert!(diff < 2e-9 * x_ref.amax(), "mean x differs by {diff}");
}

/// The expected forms' evaluation order (a bandwidth-reducing order of the points, panels,
/// lanes) changes no bit of a fit: bounds and their terms, gamma, means and covariances of
/// q(x) and q(C) on the fixture, against the points' own order.
#[test]
fn the_locality_order_changes_no_bit_of_a_fit() {
    let y = csv(FIXTURE_Y);
    let g = NeighbourGraph::from_adjacency(&csv(FIXTURE_G)).unwrap();
    let c0 = csv(FIXTURE_C0);
    let params = LlLvmParams::new(2, 8);
    let local = LlLvmProblem::new(&y, &g, &params.check().unwrap()).unwrap();
    let mut own = local.clone();
    let n = y.nrows();
    own.graph = moments::Graph::with_order(
        local.graph.adj.clone(),
        local.graph.pinv(),
        (0..n).collect(),
    );
    let options = VemOptions {
        max_iter: 6,
        abs_tol: 0.0,
        rel_tol: 0.0,
        ..VemOptions::default()
    };
    let fit = |p: &LlLvmProblem| {
        let (q, h) = p.start_from_mean_c(&c0).unwrap();
        run_from(p, q, h, &options, 0, &Silent).unwrap()
    };
    let (a, b) = (fit(&local), fit(&own));
    let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (s, t) in a.trace.iter().zip(&b.trace) {
        assert_eq!(s.value.to_bits(), t.value.to_bits());
        for ((_, u), (_, v)) in s.terms.iter().zip(&t.terms) {
            assert_eq!(u.to_bits(), v.to_bits());
        }
    }
    assert_eq!(a.hyper.gamma.to_bits(), b.hyper.gamma.to_bits());
    let (p, q) = (&a.posterior, &b.posterior);
    for (u, v) in [
        (&p.mu_x, &q.mu_x),
        (&p.sigma_x, &q.sigma_x),
        (&p.mu_c, &q.mu_c),
        (&p.sigma_c, &q.sigma_c),
    ] {
        assert_eq!(bits(u), bits(v));
    }
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
    let problem = LlLvmProblem::new(&y, &g, &params.check().unwrap()).unwrap();
    let gamma = 1.7;
    let c = tiny_data(dy, n * dx, 2);
    let adj = &problem.graph.adj;
    let ae = a_e(adj, &c, gamma, dx);
    let lap = laplacian(adj);
    let lt = (lap * (2.0 * gamma)).add_scalar(0.3).try_inverse().unwrap();
    let sigma_y = lt.kronecker(&DMatrix::<f64>::identity(dy, dy));
    let a_def = ae.transpose() * &sigma_y * &ae;
    let zero = DMatrix::zeros(n * dx, n * dx);
    let a_ours = to_point_major(
        &problem.graph.form(&c, &zero, 1.0, 0.5 * gamma, Form::A),
        n,
        dx,
    );
    assert!(
        (&a_def - &a_ours).amax() < 1e-10 * a_def.amax(),
        "{a_def}\n{a_ours}"
    );
    let yv = DVector::from_iterator(n * dy, problem.data.y.transpose().iter().copied());
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
    let problem = LlLvmProblem::new(&y, &g, &params.check().unwrap()).unwrap();
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
    let x_row = DMatrix::from_row_slice(1, n * dx, x.as_slice());
    let gamma_hat = problem.graph.form(
        &x_row,
        &DMatrix::zeros(n * dx, n * dx),
        1.0,
        1.0,
        Form::Gamma,
    );
    let ours = 0.5 * gamma * gamma_hat.dot(&c.tr_mul(&c));
    assert!((quad - ours).abs() < 1e-10 * quad.abs(), "{quad} vs {ours}");
    let yv = DVector::from_iterator(n * dy, problem.data.y.transpose().iter().copied());
    let lin = yv.dot(&e);
    let h = problem.h_mean(&x);
    assert!((lin - gamma * c.dot(&h)).abs() < 1e-10 * lin.abs());
}

fn tiny_problem(params: &LlLvmParams) -> (LlLvmProblem, LlLvmPosterior, LlLvmHyper) {
    let y = tiny_data(6, 3, 7);
    let problem = LlLvmProblem::new(&y, &tiny_graph(), &params.clone().check().unwrap()).unwrap();
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
    let yv = DVector::from_iterator(n * dy, problem.data.y.transpose().iter().copied());
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

/// The 200-point roll (seed 2) and its LL-LVM fit from the spectral start (k = 8, 30
/// iterations), shared by the projection tests.
fn spectral_roll_fit() -> (DMatrix<f64>, LlLvm) {
    let y = roll(200, 2);
    let fit = LlLvmParams::new(2, 8)
        .init(LlLvmInit::Spectral)
        .max_iter(30)
        .fit(&y)
        .unwrap();
    (y, fit)
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
            .restarts(2)
            .seed(5)
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
    let (y, fit) = spectral_roll_fit();
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
    let off = unfold_graph::GraphSpec::knn(5).connect(unfold_graph::Connect::Off);
    let err = LlLvmParams::new(2, 5)
        .graph(off)
        .fit(&two)
        .unwrap_err()
        .to_string();
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

/// The per-point projection before the batch path (the test oracle): one dense Cholesky
/// factor of the augmented Laplacian per point for the rows of `L'^+`, and row `*` of each
/// expected form by the edge-pair sums at every alternation.
fn project_by_edge_sums(
    fit: &LlLvm,
    ys: &DVector<f64>,
    nbrs: &[usize],
    k_old: &DMatrix<f64>,
    s_old: &DMatrix<f64>,
) -> LlLvmProjection {
    let (n, dx) = fit.coords.shape();
    let dy = fit.y.ncols();
    let star = n;
    let gamma = fit.hyper.gamma;
    let mut adj: Vec<Vec<usize>> = (0..n).map(|i| fit.graph.neighbours(i).0.to_vec()).collect();
    for &j in nbrs {
        adj[j].push(star);
    }
    adj.push(nbrs.to_vec());
    let pinv_rows = augmented_pinv_rows(&adj, nbrs);
    let m = |i: usize, p: usize| {
        let slot = if i == star {
            0
        } else {
            1 + nbrs
                .iter()
                .position(|&j| j == i)
                .expect("edge endpoints are neighbours")
        };
        pinv_rows[(slot, p)]
    };
    let maps: Vec<DMatrix<f64>> = (0..n).map(|i| fit.map_scaled(i)).collect();
    let deg = nbrs.len() as f64;
    let coords_row = DMatrix::from_row_slice(1, n * dx, fit.coords.as_slice());

    // Start C* from the neighbours' maps and their covariances.
    let mut mu_c: DMatrix<f64> = nbrs
        .iter()
        .map(|&j| &maps[j])
        .fold(DMatrix::zeros(dy, dx), |a, c| a + c)
        / deg;
    let mut sigma_c = DMatrix::from_fn(dx, dx, |r, s| {
        nbrs.iter()
            .map(|&j| fit.sigma_c.stored()[(r * n + j, s * n + j)])
            .sum::<f64>()
            / deg
    });
    let mut mu_x = DVector::zeros(dx);
    let mut cov_x = DMatrix::zeros(dx, dx);
    for sweep in 0..project::MAX_SWEEPS {
        // x* given C*.
        let k_star = mu_c.tr_mul(&mu_c) + &sigma_c * dy as f64;
        let kk = Augmented {
            old: k_old,
            means: &fit.mu_c,
            mean_star: &mu_c,
            star: &k_star,
            n,
        };
        let row = row_by_edge_sums(&adj, star, dx, Form::A, m, |u, v, r, s| kk.get(u, v, r, s));
        let mut p_ss = DMatrix::from_fn(dx, dx, |r, s| 0.5 * gamma * row[(r, s * (n + 1) + star)]);
        for r in 0..dx {
            p_ss[(r, r)] += fit.hyper.alpha + 2.0 * deg;
        }
        let mut rhs = DVector::zeros(dx);
        for &j in nbrs {
            let dyj = ys - fit.y.row(j).transpose();
            for r in 0..dx {
                rhs[r] += gamma * (mu_c.column(r) + maps[j].column(r)).dot(&dyj);
                // The prior's off-diagonal -2 eta_{*j}.
                rhs[r] += 2.0 * fit.coords[(j, r)];
            }
        }
        for b in 0..n {
            for r in 0..dx {
                for s in 0..dx {
                    rhs[r] -= 0.5 * gamma * row[(r, s * (n + 1) + b)] * fit.coords[(b, s)];
                }
            }
        }
        let px = Cholesky::new(&symmetrised(p_ss), "x*").unwrap();
        let new_mu_x = px.solve_vec(&rhs);
        cov_x = px.inverse().unwrap();
        let change = (&new_mu_x - &mu_x).amax();
        mu_x = new_mu_x;

        // C* given x*.
        let s_star = &mu_x * mu_x.transpose() + &cov_x;
        let x_row = DMatrix::from_row_slice(1, dx, mu_x.as_slice());
        let ss = Augmented {
            old: s_old,
            means: &coords_row,
            mean_star: &x_row,
            star: &s_star,
            n,
        };
        let row = row_by_edge_sums(&adj, star, dx, Form::Gamma, m, |u, v, r, s| {
            ss.get(u, v, r, s)
        });
        let mut p_ss = DMatrix::from_fn(dx, dx, |r, s| 0.5 * gamma * row[(r, s * (n + 1) + star)]);
        for r in 0..dx {
            p_ss[(r, r)] += fit.epsilon + 2.0 * deg;
        }
        // gamma <H'>_* - sum_b mu_Cb P_{b,*}.
        let mut rhs = DMatrix::zeros(dy, dx);
        for &j in nbrs {
            let dyj = fit.y.row(j).transpose() - ys;
            for r in 0..dx {
                let dxr = fit.coords[(j, r)] - mu_x[r];
                rhs.column_mut(r).axpy(gamma * dxr, &dyj, 1.0);
            }
        }
        for b in 0..n {
            let eta = if nbrs.contains(&b) { 1.0 } else { 0.0 };
            let p_bs = DMatrix::from_fn(dx, dx, |s, r| {
                0.5 * gamma * row[(r, s * (n + 1) + b)]
                    + if r == s { fit.epsilon - 2.0 * eta } else { 0.0 }
            });
            rhs -= &maps[b] * p_bs;
        }
        let pc = Cholesky::new(&symmetrised(p_ss), "C*").unwrap();
        sigma_c = pc.inverse().unwrap();
        mu_c = rhs * &sigma_c;
        if sweep > 0 && change <= 1e-12 * (1.0 + mu_x.amax()) {
            break;
        }
    }
    LlLvmProjection {
        mean_x: mu_x,
        cov_x,
        mean_c: mu_c * fit.scale,
    }
}

/// A second moment of the training points augmented by a new point (index `n`) with no
/// cross-covariance: old blocks from `old`, the new point's block `star`, and products of
/// means across. `means` holds the old means coordinate-major (d x n dx: the maps, or the
/// latent positions as one row) and `mean_star` the new point's (d x dx).
struct Augmented<'a> {
    old: &'a DMatrix<f64>,
    means: &'a DMatrix<f64>,
    mean_star: &'a DMatrix<f64>,
    star: &'a DMatrix<f64>,
    n: usize,
}

impl Augmented<'_> {
    /// Entry (r, s) of block (u, v).
    fn get(&self, u: usize, v: usize, r: usize, s: usize) -> f64 {
        let n = self.n;
        match (u == n, v == n) {
            (false, false) => self.old[(r * n + u, s * n + v)],
            (true, true) => self.star[(r, s)],
            (true, false) => self.mean_star.column(r).dot(&self.means.column(s * n + v)),
            (false, true) => self.means.column(r * n + u).dot(&self.mean_star.column(s)),
        }
    }
}

/// Rows of `L'^+` at the new point (row 0) and at its neighbours (rows 1..), from one
/// Cholesky factor of `L' + 1 1^T / n'`.
fn augmented_pinv_rows(adj: &[Vec<usize>], nbrs: &[usize]) -> DMatrix<f64> {
    let n1 = adj.len();
    let c = 1.0 / n1 as f64;
    let mut shifted = DMatrix::from_element(n1, n1, c);
    for (i, nb) in adj.iter().enumerate() {
        shifted[(i, i)] += nb.len() as f64;
        for &j in nb {
            shifted[(i, j)] -= 1.0;
        }
    }
    let chol = Cholesky::new(&shifted, "augmented graph Laplacian").unwrap();
    let rows: Vec<usize> = std::iter::once(n1 - 1)
        .chain(nbrs.iter().copied())
        .collect();
    let mut e = DMatrix::zeros(n1, rows.len());
    for (t, &i) in rows.iter().enumerate() {
        e[(i, t)] = 1.0;
    }
    chol.solve_in_place(&mut e);
    e.add_scalar_mut(-c);
    e.transpose()
}

fn relative_gap(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

/// A fit to project into, the preprocessed new points of a second roll with their nearest
/// training points, and one made-up point whose neighbours lie far apart along the roll and
/// across its layers.
/// A preprocessed new point and its neighbours among the training points.
type NewPoint = (DVector<f64>, Vec<usize>);

fn projection_cases() -> (LlLvm, Vec<NewPoint>) {
    let (_, fit) = spectral_roll_fit();
    let new = roll(4, 9);
    let pre = DMatrix::from_fn(4, 3, |t, j| (new[(t, j)] - fit.mean[j]) / fit.scale);
    let nn = unfold_graph::knn_query(&fit.y, &pre, fit.k).unwrap();
    let mut cases: Vec<NewPoint> = (0..4)
        .map(|t| (pre.row(t).transpose(), nn.indices[t].clone()))
        .collect();
    let spread = vec![3, 47, 88, 120, 151, 199, 10, 170];
    let centre = spread
        .iter()
        .fold(DVector::zeros(3), |acc: DVector<f64>, &j| {
            acc + fit.y.row(j).transpose()
        })
        / spread.len() as f64;
    cases.push((centre, spread));
    (fit, cases)
}

/// The rows of `L'^+` on the new point's blanket, from `L^+` by the pendant vertex and the
/// Woodbury update, equal those of the dense factor of the augmented Laplacian, for one,
/// two and eight edges, near and spread-out neighbours.
#[test]
fn blanket_rows_of_the_augmented_pseudo_inverse_match_the_dense_factor() {
    let (fit, cases) = projection_cases();
    let frozen = project::Frozen::new(&fit).unwrap();
    let n = fit.coords.nrows();
    assert!(project::Blanket::new(&frozen, &[]).is_err());
    let mut nbr_sets: Vec<Vec<usize>> = cases.into_iter().map(|(_, nb)| nb).collect();
    nbr_sets.push(vec![17]);
    nbr_sets.push(vec![5, 160]);
    for nbrs in &nbr_sets {
        let mut adj: Vec<Vec<usize>> = (0..n).map(|i| fit.graph.neighbours(i).0.to_vec()).collect();
        for &j in nbrs {
            adj[j].push(n);
        }
        adj.push(nbrs.clone());
        let dense = augmented_pinv_rows(&adj, nbrs);
        let blanket = project::Blanket::new(&frozen, nbrs).unwrap();
        let fast = DMatrix::from_fn(dense.nrows(), n + 1, |t, p| blanket.rows[t][p]);
        let gap = relative_gap(&fast, &dense);
        assert!(gap < 1e-10, "neighbours {nbrs:?}: relative gap {gap}");
    }
}

/// The batch path gives the per-point path's projection: mean and covariance of x* and
/// mean of C*, to 1e-9 relative, for new points of another roll and for a point whose
/// neighbours are spread out over the roll.
#[test]
fn batch_projection_equals_the_per_point_path() {
    let (fit, cases) = projection_cases();
    let frozen = project::Frozen::new(&fit).unwrap();
    let k_old = c_moment(&fit.mu_c, fit.sigma_c.stored());
    let s_old = x_moment(&fit.coords, fit.sigma_x.stored());
    for (ys, nbrs) in &cases {
        let want = project_by_edge_sums(&fit, ys, nbrs, &k_old, &s_old);
        let got = fit.project_one(&frozen, ys, nbrs).unwrap();
        let pairs = [
            (
                DMatrix::from_column_slice(2, 1, got.mean_x.as_slice()),
                DMatrix::from_column_slice(2, 1, want.mean_x.as_slice()),
            ),
            (got.cov_x.clone(), want.cov_x.clone()),
            (got.mean_c.clone(), want.mean_c.clone()),
        ];
        for (g, w) in &pairs {
            let gap = relative_gap(g, w);
            assert!(
                gap < 1e-9,
                "neighbours {nbrs:?}: {g} vs {w} (relative gap {gap})"
            );
        }
    }
    // The public batch call gives the same as one point at a time (up to the round-off of
    // undoing the preprocessing here).
    let y_new = DMatrix::from_fn(4, 3, |t, j| cases[t].0[j] * fit.scale + fit.mean[j]);
    let batch = fit.project_points(&y_new).unwrap();
    for (t, p) in batch.iter().enumerate() {
        let one = fit.project_one(&frozen, &cases[t].0, &cases[t].1).unwrap();
        assert!(relative_gap(&p.cov_x, &one.cov_x) < 1e-12);
        assert!(relative_gap(&p.mean_c, &one.mean_c) < 1e-12);
        assert!((&p.mean_x - &one.mean_x).amax() < 1e-12 * one.mean_x.amax());
    }
}

// The moments formed whole, for the per-point projection oracle.
/// `<C^T C> = mu_C^T mu_C + dy Sigma_C` for q(C) = MN(mu_C, I_dy, Sigma_C) (spec pitfall 3:
/// the dy factor).
fn c_moment(mu_c: &DMatrix<f64>, sigma_c: &DMatrix<f64>) -> DMatrix<f64> {
    let mut k = mu_c.tr_mul(mu_c);
    let dy = mu_c.nrows() as f64;
    k.zip_apply(sigma_c, |a, b| *a += dy * b);
    k
}

/// `<x x^T> = mu_x mu_x^T + Sigma_x` with `mu_x` (n x dx) read coordinate-major.
fn x_moment(mu_x: &DMatrix<f64>, sigma_x: &DMatrix<f64>) -> DMatrix<f64> {
    let v = DVector::from_column_slice(mu_x.as_slice());
    let mut s = sigma_x.clone();
    s.ger(1.0, &v, &v, 1.0);
    s
}
