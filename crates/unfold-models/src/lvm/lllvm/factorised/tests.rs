use super::*;
use crate::lvm::lllvm::{LlLvmPosterior, LlLvmProblem, MeanSolve, Posterior};
use crate::method::Declared;
use unfold_core::{seeded_rng, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};
use unfold_vem::{run_from, VemOptions};

fn roll(n: usize, seed: u64) -> DMatrix<f64> {
    unfold_data::synthetic::swiss_roll(n, 0.0, seed)
        .unwrap()
        .points
}

fn knn(y: &DMatrix<f64>, k: usize) -> NeighbourGraph {
    GraphSpec::knn(k)
        .build(y, Weighting::Binary, "test", &unfold_core::Silent)
        .unwrap()
        .1
}

/// The per-point problem in the caller's order of the points, so that its posteriors and
/// the full family's index the points alike, and the full family's problem.
fn problems(
    y: &DMatrix<f64>,
    g: &NeighbourGraph,
    params: &LlLvmParams,
) -> (FactorisedProblem, LlLvmProblem) {
    let checked = params.clone().check().unwrap();
    (
        FactorisedProblem::with_order(y, g, &checked, callers_order).unwrap(),
        LlLvmProblem::new(y, g, &checked).unwrap(),
    )
}

fn callers_order(adj: &[Vec<usize>]) -> Vec<usize> {
    (0..adj.len()).collect()
}

/// EM options that run exactly `max_iter` iterations.
fn iterations(max_iter: usize) -> VemOptions {
    VemOptions {
        max_iter,
        abs_tol: 0.0,
        rel_tol: 0.0,
        ..VemOptions::default()
    }
}

/// The exact family's posterior with the per-point one's block-diagonal covariances, in
/// its coordinate-major layout (index `r n + i`).
fn block_diagonal(q: &FactorisedPosterior) -> LlLvmPosterior {
    let (n, dx) = q.m.shape();
    let dy = q.mt.ncols();
    let mut sigma_x = DMatrix::zeros(n * dx, n * dx);
    let mut sigma_c = DMatrix::zeros(n * dx, n * dx);
    for i in 0..n {
        for r in 0..dx {
            for s in 0..dx {
                sigma_x[(r * n + i, s * n + i)] = q.s[i][(r, s)];
                sigma_c[(r * n + i, s * n + i)] = q.t[i][(r, s)];
            }
        }
    }
    LlLvmPosterior {
        mu_x: q.m.clone(),
        sigma_x,
        mu_c: DMatrix::from_fn(dy, n * dx, |a, c| q.mt[((c % n) * dx + c / n, a)]),
        sigma_c,
        stats: Default::default(),
    }
}

/// A random symmetric positive definite dx x dx block.
fn random_spd(dx: usize, rng: &mut Rng) -> DMatrix<f64> {
    let a: DMatrix<f64> = DMatrix::from_fn(dx, dx, |_, _| StandardNormal.sample(rng));
    &a * a.transpose() * 0.1 + DMatrix::identity(dx, dx) * 0.05
}

/// A random posterior in the family (not one EM would reach).
fn random_posterior(n: usize, dx: usize, dy: usize, seed: u64) -> FactorisedPosterior {
    let mut rng = seeded_rng(seed);
    let mut normal = |r: usize, c: usize| -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |_, _| StandardNormal.sample(&mut rng))
    };
    let (m, mt) = (normal(n, dx), normal(n * dx, dy) * 0.5);
    let mut rng = seeded_rng(seed + 1);
    FactorisedPosterior {
        m,
        s: (0..n).map(|_| random_spd(dx, &mut rng)).collect(),
        mt,
        t: (0..n).map(|_| random_spd(dx, &mut rng)).collect(),
        stats: Stats::default(),
    }
}

fn bound(p: &FactorisedProblem, q: &mut FactorisedPosterior, h: &LlLvmHyper) -> f64 {
    p.refresh_stats(q);
    p.elbo(q, h).unwrap().value
}

/// The per-point bound is the exact family's §3.5 formula at block-diagonal covariances:
/// at random states of the family, and along EM from the random start (every term).
#[test]
fn the_bound_equals_the_exact_formula_at_block_diagonal_covariances() {
    let y = roll(60, 3);
    let g = knn(&y, 6);
    let params = LlLvmParams::new(2, 6)
        .alpha(AlphaRule::Fixed(0.3))
        .epsilon(0.02);
    let (fp, dense) = problems(&y, &g, &params);
    let h = LlLvmHyper {
        alpha: 0.3,
        gamma: 7.0,
    };
    for seed in 0..3 {
        let mut q = random_posterior(60, 2, 3, 10 * seed);
        let ours = bound(&fp, &mut q, &h);
        let exact = dense.bound_at(&mut block_diagonal(&q), &h).unwrap().value;
        assert!(
            (ours - exact).abs() < 1e-9 * exact.abs().max(1.0),
            "random state {seed}: {ours} vs {exact}"
        );
    }
    let (mut q, mut h) = fp.init(&mut seeded_rng(4)).unwrap();
    for it in 0..6 {
        fp.e_step(&mut q, &h).unwrap();
        fp.m_step(&q, &mut h).unwrap();
        let ours = fp.elbo(&q, &h).unwrap();
        let exact = dense.bound_at(&mut block_diagonal(&q), &h).unwrap();
        for ((name, a), (_, b)) in ours.terms.iter().zip(&exact.terms) {
            assert!(
                (a - b).abs() < 1e-9 * b.abs().max(1.0),
                "iteration {it}, {name}: {a} vs {b}"
            );
        }
    }
}

/// The reported bound frees one factor: with q(C) (or q(x)) freed it equals the exact
/// family's §3.5 formula at the per-point q(x) (q(C)) and the exact family's optimal q(C)
/// (q(x)) for it, a full Gaussian; both lie above the per-point bound. Checked after EM
/// iterations, for both mean solves (conjugate gradients factorise `K_x` for it).
#[test]
fn a_freed_factor_gives_the_exact_formula_at_its_full_optimum() {
    let y = roll(60, 5);
    let g = knn(&y, 6);
    for mean_solve in [MeanSolve::Direct, MeanSolve::Cg] {
        let params = LlLvmParams::new(2, 6)
            .alpha(AlphaRule::Fixed(0.3))
            .epsilon(0.02)
            .mean_solve(mean_solve);
        let checked = params.clone().check().unwrap();
        let (fp, dense) = problems(&y, &g, &params);
        let (mut q, mut h) = fp.init(&mut seeded_rng(2)).unwrap();
        for _ in 0..4 {
            fp.e_step(&mut q, &h).unwrap();
            fp.m_step(&q, &mut h).unwrap();
        }
        let per_point = fp.elbo(&q, &h).unwrap().value;
        let freed_c = fp.freed_c(&q, &h).unwrap();
        let mut exact = block_diagonal(&q);
        dense.update_c(&mut exact, &h).unwrap();
        let want_c = dense.bound_at(&mut exact, &h).unwrap().value;
        let freed_x = fp.freed_x(&q, &h, &checked).unwrap().unwrap();
        let mut exact = block_diagonal(&q);
        dense.update_x(&mut exact, &h).unwrap();
        let want_x = dense.bound_at(&mut exact, &h).unwrap().value;
        for (name, ours, want, term) in [
            ("q(C)", &freed_c, want_c, FREED_C),
            ("q(x)", &freed_x, want_x, FREED_X),
        ] {
            assert!(
                (ours.value - want).abs() < 1e-9 * want.abs(),
                "{mean_solve:?}, {name} freed: {} vs {want}",
                ours.value
            );
            let gain = ours.terms.iter().find(|(t, _)| t == term).unwrap().1;
            assert!(gain > 1.0, "{name}: gain {gain}");
            assert!(ours.value > per_point + gain - 1e-6, "{name}");
        }
        let reported = fp.reported_bound(&q, &h, &checked).unwrap();
        assert_eq!(reported.value, freed_c.value.max(freed_x.value));
        // Where K_x's factor would not fit the memory limit, only q(C) is freed.
        let tight = params
            .memory_limit(Some(unfold_core::MemoryLimit::given(
                1 << 10,
                "the test's limit",
            )))
            .check()
            .unwrap();
        if mean_solve == MeanSolve::Cg {
            assert!(fp.freed_x(&q, &h, &tight).unwrap().is_none());
            assert_eq!(fp.reported_bound(&q, &h, &tight).unwrap(), freed_c);
        }
    }
}

/// The central difference of the bound along `dir` applied by `apply(q, t)`.
fn slope(
    p: &FactorisedProblem,
    q: &FactorisedPosterior,
    h: &LlLvmHyper,
    apply: &dyn Fn(&mut FactorisedPosterior, f64),
) -> f64 {
    let t = 1e-5;
    let mut plus = q.clone();
    apply(&mut plus, t);
    let mut minus = q.clone();
    apply(&mut minus, -t);
    (bound(p, &mut plus, h) - bound(p, &mut minus, h)) / (2.0 * t)
}

/// Every closed-form update is the exact optimum of its block: the bound's slope along a
/// random direction of the block is clearly non-zero before the update (from a perturbed
/// state) and vanishes after it.
#[test]
fn each_update_is_a_block_optimum() {
    let y = roll(50, 6);
    let g = knn(&y, 6);
    let (fp, _) = problems(&y, &g, &LlLvmParams::new(2, 6));
    let (n, dx, dy) = (50, 2, 3);
    let (mut q, mut h) = fp.init(&mut seeded_rng(1)).unwrap();
    for _ in 0..3 {
        fp.e_step(&mut q, &h).unwrap();
        fp.m_step(&q, &mut h).unwrap();
    }
    let mut rng = seeded_rng(9);
    let mut normal = |r: usize, c: usize| -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |_, _| StandardNormal.sample(&mut rng))
    };
    let dm = normal(n, dx);
    let dmt = normal(n * dx, dy);
    let sym = |a: DMatrix<f64>| symmetrised(a) * 0.01;
    let ds: Vec<DMatrix<f64>> = (0..n).map(|_| sym(normal(dx, dx))).collect();
    let dt: Vec<DMatrix<f64>> = (0..n).map(|_| sym(normal(dx, dx))).collect();
    let along_m = |q: &mut FactorisedPosterior, t: f64| q.m += &dm * t;
    let along_s = |q: &mut FactorisedPosterior, t: f64| {
        q.s.iter_mut().zip(&ds).for_each(|(s, d)| *s += d * t)
    };
    let along_mt = |q: &mut FactorisedPosterior, t: f64| q.mt += &dmt * t;
    let along_t = |q: &mut FactorisedPosterior, t: f64| {
        q.t.iter_mut().zip(&dt).for_each(|(s, d)| *s += d * t)
    };
    // q(x): perturb, check the slopes, update, check again.
    let mut off = q.clone();
    along_m(&mut off, 0.3);
    along_s(&mut off, 1.0);
    let before = [
        slope(&fp, &off, &h, &along_m),
        slope(&fp, &off, &h, &along_s),
    ];
    fp.update_x(&mut off, &h).unwrap();
    let after = [
        slope(&fp, &off, &h, &along_m),
        slope(&fp, &off, &h, &along_s),
    ];
    for (name, b, a) in [("m", before[0], after[0]), ("S", before[1], after[1])] {
        assert!(
            b.abs() > 1e-2,
            "{name}: the slope before the update is only {b}"
        );
        assert!(
            a.abs() < 1e-5 * b.abs().max(1.0),
            "{name}: slope {a} after the update ({b} before)"
        );
    }
    // q(C) likewise.
    let mut off = q.clone();
    along_mt(&mut off, 0.3);
    along_t(&mut off, 1.0);
    let before = [
        slope(&fp, &off, &h, &along_mt),
        slope(&fp, &off, &h, &along_t),
    ];
    fp.update_c(&mut off, &h).unwrap();
    let after = [
        slope(&fp, &off, &h, &along_mt),
        slope(&fp, &off, &h, &along_t),
    ];
    for (name, b, a) in [("M", before[0], after[0]), ("T", before[1], after[1])] {
        assert!(
            b.abs() > 1e-2,
            "{name}: the slope before the update is only {b}"
        );
        assert!(
            a.abs() < 1e-5 * b.abs().max(1.0),
            "{name}: slope {a} after the update ({b} before)"
        );
    }
    // gamma: the M-step's closed form is the maximiser.
    fp.refresh_stats(&mut q);
    let gamma_slope = |h: &LlLvmHyper| {
        let e = 1e-6 * h.gamma;
        let at = |g: f64| fp.elbo(&q, &LlLvmHyper { gamma: g, ..*h }).unwrap().value;
        (at(h.gamma + e) - at(h.gamma - e)) / (2.0 * e)
    };
    let off = LlLvmHyper {
        gamma: 1.5 * h.gamma,
        ..h
    };
    let before = gamma_slope(&off);
    let mut fitted = off;
    fp.m_step(&q, &mut fitted).unwrap();
    let after = gamma_slope(&fitted);
    assert!(
        before.abs() > 1e-2 && after.abs() < 1e-5 * before.abs(),
        "gamma: {before} -> {after}"
    );
}

/// EM never lowers the per-point bound, from both starts and with alpha optimised.
#[test]
fn the_bound_never_decreases() {
    let y = roll(150, 1);
    let g = knn(&y, 8);
    for (init, alpha) in [
        (LlLvmInit::Random, AlphaRule::Fixed(1e-3)),
        (LlLvmInit::Spectral, AlphaRule::Optimise),
    ] {
        let params = LlLvmParams::new(2, 8).init(init).alpha(alpha);
        let (fp, _) = problems(&y, &g, &params);
        let (q, h) = fp.init(&mut seeded_rng(2)).unwrap();
        let options = iterations(25);
        let run = run_from(&fp, q, h, &options, 0, &Silent).unwrap();
        let trace: Vec<f64> = run.trace.iter().map(|e| e.value).collect();
        assert_eq!(trace.len(), 25);
        for w in trace.windows(2) {
            assert!(
                w[1] >= w[0] - 1e-9 * w[0].abs(),
                "{init:?}: {} after {}",
                w[1],
                w[0]
            );
        }
        assert!(
            trace[24] > trace[0] + 1.0,
            "{init:?}: EM did not move: {trace:?}"
        );
    }
}

/// An update of one factor of the per-point posterior.
type Update = fn(&FactorisedProblem, &mut FactorisedPosterior, &LlLvmHyper) -> Result<()>;

/// The means an update sets.
type Means = fn(&FactorisedPosterior) -> &DMatrix<f64>;

/// Conjugate gradients on `Lam_x` and on `Lam_C` reach the direct solves' block optima:
/// from the same state, the bound they leave unclaimed is below their 1e-6 tolerance (a
/// wrong product would converge elsewhere, far below), and EM with them follows the direct
/// run's bound.
#[test]
fn the_means_by_conjugate_gradients_reach_the_direct_solve() {
    let y = roll(200, 5);
    let g = knn(&y, 8);
    let params = LlLvmParams::new(2, 8);
    let (direct, _) = problems(&y, &g, &params.clone().mean_solve(MeanSolve::Direct));
    let (cg, _) = problems(&y, &g, &params.clone().mean_solve(MeanSolve::Cg));
    let (mut q, h) = direct.init(&mut seeded_rng(1)).unwrap();
    direct.e_step(&mut q, &h).unwrap();
    // The latent means moved away from their optimum so that the solve has work to do, then
    // the maps.
    q.m.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v += 0.05 * (i as f64).sin());
    let same_optimum = |q: &FactorisedPosterior, update: Update, means: Means, what: &str| {
        let (mut by_direct, mut by_cg) = (q.clone(), q.clone());
        update(&direct, &mut by_direct, &h).unwrap();
        update(&cg, &mut by_cg, &h).unwrap();
        let (best, ours) = (
            bound(&direct, &mut by_direct, &h),
            bound(&direct, &mut by_cg, &h),
        );
        let before = bound(&direct, &mut q.clone(), &h);
        assert!(
            best - before > 1.0,
            "{what}: the start was already optimal: {before} vs {best}"
        );
        let unclaimed = best - ours;
        assert!(
            unclaimed > -1e-9 * best.abs() && unclaimed < 1e-5,
            "{what}: conjugate gradients leave {unclaimed} nats of {best}"
        );
        let (a, b) = (means(&by_direct), means(&by_cg));
        let gap = (a - b).amax() / a.amax();
        assert!(gap < 1e-4, "{what}: means differ by {gap} relative");
    };
    same_optimum(&q, |p, q, h| p.update_x(q, h), |q| &q.m, "q(x)");
    q.mt.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v += 0.05 * (i as f64).cos());
    same_optimum(
        &q,
        |p, q, h| p.update_c(q, h).map(|_| ()),
        |q| &q.mt,
        "q(C)",
    );
    let fit = |p: &FactorisedProblem| {
        let (q, h) = p.init(&mut seeded_rng(1)).unwrap();
        let options = iterations(10);
        run_from(p, q, h, &options, 0, &Silent)
            .unwrap()
            .evidence
            .value
    };
    let (a, b) = (fit(&direct), fit(&cg));
    assert!(
        (a - b).abs() < 1e-4,
        "after 10 iterations: direct {a}, cg {b}"
    );
}

/// The per-point family end to end, beside the full family on the same data and start:
/// its bound is lower by a fraction of a nat per point, the embeddings are alike, training
/// points project back near their positions, and the model survives its file's encoding.
#[test]
fn the_per_point_family_fits_projects_and_saves() {
    use crate::method::{decode, Encode};
    use crate::traits::{Embedding, OutOfSample};
    let y = roll(200, 2);
    let params = LlLvmParams::new(2, 8)
        .init(LlLvmInit::Spectral)
        .max_iter(30)
        .abs_tol(0.0);
    let per_point = params
        .clone()
        .posterior(Posterior::Factorised)
        .fit(&y)
        .unwrap();
    let full = params.posterior(Posterior::Full).fit(&y).unwrap();
    assert_eq!(per_point.posterior(), Posterior::Factorised);
    assert_eq!(full.posterior(), Posterior::Full);
    let gap = (full.evidence().value - per_point.evidence().value) / 200.0;
    assert!(gap > 0.0 && gap < 1.0, "gap per point {gap}");
    let tw = |fit: &LlLvm| unfold_eval::trustworthiness(&y, fit.coords(), 10).unwrap();
    let (tw_pp, tw_full) = (tw(&per_point), tw(&full));
    assert!(
        (tw_pp - tw_full).abs() < 0.02,
        "trustworthiness {tw_pp} vs {tw_full}"
    );
    let x = per_point.coords().clone();
    let edges = per_point.graph().unwrap().edges();
    let typical = edges
        .iter()
        .map(|&(i, j, _)| (x.row(i) - x.row(j)).norm())
        .sum::<f64>()
        / edges.len() as f64;
    let idx = [0, 17, 53, 101, 160];
    let new = DMatrix::from_fn(idx.len(), 3, |t, c| y[(idx[t], c)]);
    let proj = per_point.project(&new).unwrap();
    for (t, &i) in idx.iter().enumerate() {
        let d = (proj.mean.row(t) - x.row(i)).norm();
        assert!(
            d < 0.5 * typical,
            "point {i}: {d} vs typical edge {typical}"
        );
    }
    let back = decode::<LlLvm>(&per_point.encode().unwrap()).unwrap();
    assert_eq!(back.coords(), per_point.coords());
    assert_eq!(
        back.out_of_sample().unwrap().project(&new).unwrap().mean,
        proj.mean
    );
}

/// A short-circuit edge across the roll's turns lowers the per-point bound (spec §5.2,
/// the scale spec's table E).
#[test]
fn a_short_circuit_edge_lowers_the_per_point_bound() {
    let y = unfold_data::synthetic::swiss_roll(250, 0.0, 0).unwrap();
    let g = knn(&y.points, 9);
    let t = y.latent.as_ref().unwrap().column(0).into_owned();
    // The closest pair on different turns (|t_i - t_j| > pi) that is not an edge.
    let mut best = (f64::INFINITY, 0, 0);
    for i in 0..250 {
        for j in i + 1..250 {
            let d = (y.points.row(i) - y.points.row(j)).norm();
            if (t[i] - t[j]).abs() > std::f64::consts::PI
                && d < best.0
                && !g.neighbours(i).0.contains(&j)
            {
                best = (d, i, j);
            }
        }
    }
    let mut edges = g.edges();
    edges.push((best.1, best.2, 1.0));
    let shorted = NeighbourGraph::from_edges(250, &edges).unwrap();
    let params = LlLvmParams::new(2, 9)
        .posterior(Posterior::Factorised)
        .max_iter(50);
    let bounds = params.compare_graphs(&y.points, &[g, shorted]).unwrap();
    assert!(
        bounds[1].mean() < bounds[0].mean(),
        "with the shortcut {} >= without {}",
        bounds[1].mean(),
        bounds[0].mean()
    );
}

/// The locality order of the points changes only rounding: from either start, a fit with
/// the points in it gives the same bounds, means and covariances, back in the caller's
/// order, as a fit in the caller's order. A start drawn in the problem's order, or a
/// fitted model not put back, would differ at once.
#[test]
fn the_points_order_changes_only_rounding() {
    let y = roll(300, 6);
    let g = knn(&y, 8);
    for (init, solve) in [
        (LlLvmInit::Random, MeanSolve::Direct),
        (LlLvmInit::Spectral, MeanSolve::Cg),
    ] {
        let params = LlLvmParams::new(2, 8)
            .init(init)
            .mean_solve(solve)
            .check()
            .unwrap();
        let local = FactorisedProblem::new(&y, &g, &params).unwrap();
        let own = FactorisedProblem::with_order(&y, &g, &params, callers_order).unwrap();
        let moved = local.order().iter().enumerate().filter(|(a, &i)| *a != i);
        assert!(
            moved.count() > 250,
            "the locality order is nearly the caller's"
        );
        let fit = |p: FactorisedProblem| {
            let (q, h) = p.init(&mut seeded_rng(3)).unwrap();
            let options = iterations(8);
            let run = run_from(&p, q, h, &options, 0, &Silent).unwrap();
            let trace: Vec<f64> = run.trace.iter().map(|e| e.value).collect();
            let evidence = run.evidence.clone();
            (trace, p.into_fitted(run, evidence, vec![], 8))
        };
        let ((trace_a, a), (trace_b, b)) = (fit(local), fit(own));
        for (s, t) in trace_a.iter().zip(&trace_b) {
            assert!((s - t).abs() < 1e-9 * t.abs(), "{init:?}: bound {s} vs {t}");
        }
        let close = |u: &DMatrix<f64>, v: &DMatrix<f64>, what: &str| {
            let gap = (u - v).amax() / v.amax();
            assert!(gap < 1e-7, "{init:?}: {what} differ by {gap} relative");
        };
        close(&a.coords, &b.coords, "the means of x");
        close(&a.mu_c, &b.mu_c, "the means of C");
        close(&a.y, &b.y, "the data");
        close(
            a.sigma_x.stored(),
            b.sigma_x.stored(),
            "the covariances of x",
        );
        close(
            a.sigma_c.stored(),
            b.sigma_c.stored(),
            "the covariances of C",
        );
        assert_eq!(a.graph.edges(), b.graph.edges());
    }
}

/// The fit is the same to the bit on one and on two threads, with each way of solving for
/// the means.
#[test]
fn the_bits_are_the_same_on_one_and_two_threads() {
    let y = roll(300, 4);
    for solve in [MeanSolve::Direct, MeanSolve::Auto, MeanSolve::Cg] {
        let params = LlLvmParams::new(2, 8)
            .posterior(Posterior::Factorised)
            .mean_solve(solve)
            .max_iter(5);
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| params.fit(&y).unwrap())
        };
        let (one, two) = (on(1), on(2));
        assert_eq!(one.convergence.trace, two.convergence.trace, "{solve:?}");
        assert_eq!(one.coords, two.coords, "{solve:?}");
    }
}

/// Bad input gets errors that name the fix, in the per-point family too.
#[test]
fn bad_input_is_refused_with_the_fix() {
    let y = roll(60, 3);
    let params = LlLvmParams::new(2, 6).posterior(Posterior::Factorised);
    // Two separate components.
    let mut edges = Vec::new();
    for i in 0..59 {
        if i != 29 {
            edges.push((i, i + 1, 1.0));
        }
    }
    let split = NeighbourGraph::from_edges(60, &edges).unwrap();
    let text = params.fit_graph(&y, &split).unwrap_err().to_string();
    assert!(text.contains("connected"), "{text}");
    // dx >= dy and dy = 1.
    assert!(params.clone().dim(3).fit(&y).is_err());
    let line = y.columns(0, 1).into_owned();
    assert!(params.clone().dim(1).fit(&line).is_err());
}

/// Where `K_C`'s factor would not fit the memory limit, the default solves q(C)'s means by
/// conjugate gradients instead of refusing the fit: its EM trace is that of `cg` to the
/// bit, and the reported bound frees no factor whose system would not fit.
#[test]
fn a_maps_factor_over_the_memory_limit_gives_way_to_conjugate_gradients() {
    let y = roll(200, 6);
    let g = knn(&y, 8);
    let limited = |bytes: u64| {
        LlLvmParams::new(2, 8)
            .max_iter(4)
            .memory_limit(Some(unfold_core::MemoryLimit::given(
                bytes,
                "the test's limit",
            )))
    };
    let problem = |params: &LlLvmParams| {
        FactorisedProblem::with_order(&y, &g, &params.clone().check().unwrap(), callers_order)
    };
    // The largest limit (in steps of 10%) under which K_C's factor no longer fits.
    let mut bytes = 1u64 << 30;
    let (params, fp) = loop {
        bytes = bytes * 10 / 11;
        assert!(
            bytes > 1 << 12,
            "no limit admits the fit without K_C's factor"
        );
        let params = limited(bytes);
        if let Ok(fp) = problem(&params) {
            if !fp.kc_fits {
                break (params, fp);
            }
            assert!(!fp.maps_by_cg, "the roll's K_C is cheap to factorise");
        }
    };
    assert!(fp.maps_by_cg);
    let cg = problem(&LlLvmParams::new(2, 8).mean_solve(MeanSolve::Cg)).unwrap();
    same_trace_as_cg_and_nothing_freed(&fp, &cg, &params.check().unwrap());
    // Below what conjugate gradients need, the fit is refused, naming the family.
    let err = problem(&limited(bytes / 8)).unwrap_err().to_string();
    assert!(err.contains("per-point family"), "{err}");
}

/// Where `K_C`'s analysis would overflow 32-bit indices, the problem is set up without it
/// (`kc: None`, as [`FactorisedProblem::with_order`] leaves it then; no test-sized graph
/// overflows): q(C)'s means by conjugate gradients give `cg`'s EM trace to the bit, and the
/// reported bound frees no factor (neither `K_C`'s nor `K_x`'s, whose blocks are larger).
#[test]
fn without_the_maps_systems_analysis_the_fit_runs_by_conjugate_gradients() {
    let y = roll(200, 6);
    let g = knn(&y, 8);
    let params = LlLvmParams::new(2, 8);
    let checked = params.clone().check().unwrap();
    let mut fp = FactorisedProblem::with_order(&y, &g, &checked, callers_order).unwrap();
    assert!(fp.kc.is_some() && fp.kc_fits);
    (fp.kc, fp.kc_fits, fp.maps_by_cg) = (None, false, true);
    let cg = FactorisedProblem::with_order(
        &y,
        &g,
        &params.clone().mean_solve(MeanSolve::Cg).check().unwrap(),
        callers_order,
    )
    .unwrap();
    let (ours, reported) = same_trace_as_cg_and_nothing_freed(&fp, &cg, &checked);
    // With K_C analysed, the same posterior's report frees a factor.
    let freed = cg
        .reported_bound(&ours.posterior, &ours.hyper, &checked)
        .unwrap();
    assert!(freed.value > reported.value);
}

/// Four EM iterations of `fp` and of `cg` (`mean_solve = cg`) from the same start: the
/// traces are the same to the bit, and `fp`'s reported bound frees no factor. Returns
/// `fp`'s run and its reported bound.
fn same_trace_as_cg_and_nothing_freed(
    fp: &FactorisedProblem,
    cg: &FactorisedProblem,
    checked: &Checked<LlLvmParams>,
) -> (unfold_vem::Run<FactorisedPosterior, LlLvmHyper>, Evidence) {
    let run = |p: &FactorisedProblem| {
        let (q, h) = p.init(&mut seeded_rng(3)).unwrap();
        run_from(p, q, h, &iterations(4), 0, &Silent).unwrap()
    };
    let (ours, want) = (run(fp), run(cg));
    let values = |r: &unfold_vem::Run<_, _>| r.trace.iter().map(|e| e.value).collect::<Vec<_>>();
    assert_eq!(values(&ours), values(&want));
    let (q, h) = (&ours.posterior, &ours.hyper);
    let reported = fp.reported_bound(q, h, checked).unwrap();
    assert!(reported
        .terms
        .iter()
        .all(|(t, _)| t != FREED_C && t != FREED_X));
    assert_eq!(reported.value, fp.elbo(q, h).unwrap().value);
    (ours, reported)
}

/// `marginals_of` reads each point's blocks of the full family's layout and puts point
/// `order[a]` at `a`: the per-point blocks of a full posterior made from them come back.
#[test]
fn the_full_familys_marginals_come_back_in_the_problems_order() {
    let (n, dx, dy) = (7, 2, 3);
    let q = random_posterior(n, dx, dy, 11);
    let full = block_diagonal(&q);
    let order = [3, 0, 6, 1, 5, 2, 4];
    let p = FactorisedPosterior::marginals_of(&full, &order);
    for (a, &i) in order.iter().enumerate() {
        assert_eq!(p.m.row(a), q.m.row(i));
        assert_eq!(p.s[a], q.s[i]);
        assert_eq!(p.t[a], q.t[i]);
        assert_eq!(p.mt.rows(a * dx, dx), q.mt.rows(i * dx, dx));
    }
}
