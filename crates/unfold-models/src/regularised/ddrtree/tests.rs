//! Tests of DDRTree: the update against its dense form and its stationarity, the implicit
//! centring, the R package's residual term, the loop against each convention written out,
//! the stopping rules and the refusals, and the ordering on `krumsiek11`.

use super::iterate::sum_terms;
use super::*;
use crate::traits::Embedding;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use unfold_linalg::gemm::tr_mul_self;
use unfold_linalg::soft_assign::{Assignment, DENSE_PRODUCT_COLS};
use unfold_linalg::symmetrised;
use unfold_linalg::view::as_faer;

/// A noisy three-branch tree in 2-D, rotated into `p` dimensions, plus an offset.
pub(crate) fn branching(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    let basis = DMatrix::<f64>::from_fn(p, p, |_, _| StandardNormal.sample(&mut rng))
        .qr()
        .q();
    let dirs = [(1.0, 0.0), (-0.5, 0.8), (-0.5, -0.8)];
    DMatrix::from_fn(n, p, |_, _| 0.0).map_with_location(|i, j, _| {
        let (dx, dy) = dirs[i % 3];
        let t = (i / 3) as f64 / (n / 3) as f64 * 4.0;
        let latent = [t * dx, t * dy];
        let mut v = 1.5 + 0.05 * rng.random::<f64>();
        for (l, &x) in latent.iter().enumerate() {
            v += basis[(j, l)] * x;
        }
        v
    })
}

fn noise(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| StandardNormal.sample(&mut rng))
}

/// The tree, its Laplacian and the assignments of a first iteration.
type FirstStep = (Vec<(usize, usize, f64)>, DMatrix<f64>, Assignment);

/// A problem at its first iteration: state, tree, Laplacian and assignments.
fn first_iteration(y: &DMatrix<f64>, k: usize, sigma: f64) -> (Problem<'_>, FirstStep) {
    let problem = Problem::new(as_faer(y), 3.0, sigma, 2.0, 2);
    let w = top_eigenvectors(&problem.yty, 2).unwrap();
    let z = y * &w;
    let c = kmeans_evenly_started(&z, k).unwrap();
    let step = problem.tree_step(&State { w, z, c }, None).unwrap();
    (problem, (step.edges, step.lap, step.assign))
}

fn centred(y: DMatrix<f64>) -> DMatrix<f64> {
    let mean = y.row_mean();
    DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j])
}

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
fn automatic_centres_follow_monocle() {
    // Monocle 2's cal_ncenter: round(2 * 100 * log(n) / (log(n) + log(100))).
    assert_eq!(auto_centres(99), 99);
    assert_eq!(auto_centres(100), 100);
    assert_eq!(auto_centres(1000), 120);
    assert_eq!(auto_centres(20_000), 137);
    assert_eq!(auto_centres(100_000), 143);
    let y = branching(150, 5, 3) + noise(150, 5, 4) * 0.1;
    let fit = DdrTreeParams::new(2).fit(&y).unwrap();
    assert_eq!(fit.centres.nrows(), auto_centres(150));
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

#[test]
fn r_mode_stops_on_relative_change_and_keeps_data_uncentred() {
    let y = branching(60, 4, 6);
    let params = DdrTreeParams {
        compat: Compat::R,
        ncenters: Some(10),
        lambda: Some(1.0),
        sigma: Some(0.1),
        ..DdrTreeParams::new(2)
    };
    let fit = params.fit(&y).unwrap();
    assert_eq!(fit.mean, DVector::zeros(4));
    let h = &fit.convergence.trace;
    if fit.convergence.converged {
        let (a, b) = (h[h.len() - 2], h[h.len() - 1]);
        assert!((b - a).abs() / a.abs() < 1e-3);
    } else {
        assert_eq!(h.len(), 20);
    }
    for pair in h.windows(2).take(h.len().saturating_sub(2)) {
        assert!((pair[1] - pair[0]).abs() / pair[0].abs() >= 1e-3);
    }
}

#[test]
fn rejects_bad_input() {
    let y = branching(30, 4, 7);
    let base = DdrTreeParams::new(2);
    for (params, name) in [
        (
            DdrTreeParams {
                lambda: Some(0.0),
                ..base.clone()
            },
            "lambda",
        ),
        (
            DdrTreeParams {
                lambda: Some(-1.0),
                ..base.clone()
            },
            "lambda",
        ),
        (
            DdrTreeParams {
                sigma: Some(0.0),
                ..base.clone()
            },
            "sigma",
        ),
        (
            DdrTreeParams {
                sigma: Some(-1e-3),
                ..base.clone()
            },
            "sigma",
        ),
        (
            DdrTreeParams {
                gamma: 0.0,
                ..base.clone()
            },
            "gamma",
        ),
        (
            DdrTreeParams {
                ncenters: Some(31),
                ..base.clone()
            },
            "ncenters",
        ),
        (
            DdrTreeParams {
                ncenters: Some(0),
                ..base.clone()
            },
            "ncenters",
        ),
        (
            DdrTreeParams {
                max_iter: 0,
                ..base.clone()
            },
            "max_iter",
        ),
    ] {
        match params.fit(&y) {
            Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("expected an error about {name}, got {other:?}"),
        }
    }
    assert!(matches!(
        DdrTreeParams::new(4).fit(&y),
        Err(Error::DimensionTooLarge { .. })
    ));
}

/// The fit reports its real iterations and one objective value per iteration.
#[test]
fn convergence_reports_every_iteration() {
    let fit = DdrTreeParams::new(2).fit(&branching(60, 4, 6)).unwrap();
    let c = &fit.convergence;
    assert!(c.iterations > 0, "{c:?}");
    assert_eq!(c.trace.len(), c.iterations);
    assert_eq!(*c.trace.last().unwrap(), fit.evidence().value);
}

/// The two conventions' loops written out, every iteration's assignments formed afresh
/// (no buffers handed on): the fit, whose one loop hands each iteration's assignment
/// buffers to the next, has their bits (latent points, projection, centres, tree,
/// objective history and terms) in both conventions, on narrow and wide data (both
/// layouts of `R^T Y`), stopped by the rule and by the iteration limit.
#[test]
fn the_loop_has_the_bits_of_each_convention_written_out() {
    let (k, max_iter) = (30, 12);
    // How many fits of each convention stopped by the rule and by the limit.
    let mut ends = [[0; 2]; 2];
    for (p, tol) in [(5, 1e-2), (DENSE_PRODUCT_COLS + 4, 1e-2), (5, 0.0)] {
        let y = branching(1200, p, 9) + noise(1200, p, 10) * 0.05;
        for compat in [Compat::Paper, Compat::R] {
            let params = DdrTreeParams {
                compat,
                ncenters: Some(k),
                lambda: Some(100.0),
                sigma: Some(0.05),
                tol,
                max_iter,
                ..DdrTreeParams::new(2)
            };
            let fit = params.fit(&y).unwrap();
            let mean = DVector::from_fn(p, |j, _| y.column(j).mean());
            let problem = match compat {
                Compat::Paper => Problem::centred(as_faer(&y), &mean, 100.0, 0.05, 10.0, 2),
                Compat::R => Problem::new(as_faer(&y), 100.0, 0.05, 10.0, 2),
            };
            let w = top_eigenvectors(&problem.yty, 2).unwrap();
            let z = problem.y_mul(&w);
            let c = kmeans_evenly_started(&z, k).unwrap();
            let mut state = State { w, z, c };
            let mut residual = problem
                .r_residual_term(&state.z, &state.w, &(&problem.yty * &state.w))
                .unwrap();
            let (mut history, mut terms, mut edges) = (Vec::new(), Vec::new(), Vec::new());
            let mut converged = false;
            let stop = |history: &[f64]| match history {
                [.., a, b] => (b - a).abs() / a.abs() < tol,
                _ => false,
            };
            for _ in 0..max_iter {
                let step = problem.tree_step(&state, None).unwrap();
                edges = step.edges;
                if compat == Compat::R {
                    // The R package: the objective before the update, then the test.
                    terms = vec![
                        ("residual".to_string(), residual),
                        ("tree".into(), 100.0 * tree_energy(&state.c, &edges)),
                        ("assignment".into(), 10.0 * step.assign.soft_min()),
                    ];
                    history.push(sum_terms(&terms));
                    if stop(&history) {
                        converged = true;
                        break;
                    }
                }
                let (next, next_residual) = problem
                    .update_wzc(&step.lap, &step.assign, compat == Compat::R)
                    .unwrap();
                state = next;
                if compat == Compat::Paper {
                    // The paper: the objective after the update, then the test.
                    terms = problem.objective_terms(&state, &edges, &step.assign);
                    history.push(sum_terms(&terms));
                    if stop(&history) {
                        converged = true;
                        break;
                    }
                } else {
                    residual = next_residual.unwrap();
                }
            }
            let what = format!("{compat:?}, p = {p}, tol = {tol}");
            assert_eq!(fit.convergence.converged, converged, "{what}");
            assert_eq!(fit.convergence.trace, history, "{what}");
            assert_eq!(fit.evidence().terms, terms, "{what}");
            assert_eq!(fit.coords(), &state.z, "{what}");
            assert_eq!(fit.w, state.w, "{what}");
            assert_eq!(fit.centres, state.c, "{what}");
            assert_eq!(fit.edges, edges, "{what}");
            ends[usize::from(compat == Compat::R)][usize::from(converged)] += 1;
        }
    }
    assert!(ends.iter().flatten().all(|&n| n > 0), "{ends:?}");
}

#[test]
fn krumsiek11_fates_fall_in_their_own_states_after_the_progenitors() {
    // Scanpy's simulated myeloid differentiation: DDRTree in 4 dimensions (as in
    // examples/krumsiek11.rs), ordered from the first progenitor.
    let data = unfold_data::bundled::krumsiek11();
    let labels = data.labels.as_ref().unwrap();
    let fit = DdrTreeParams::new(4).fit(&data.points).unwrap();
    let order = fit.order(Root::Cell(0)).unwrap();
    let progenitor = data
        .label_names
        .iter()
        .position(|n| n == "progenitor")
        .unwrap();
    let mut fate_states = Vec::new();
    for t in (0..data.label_names.len()).filter(|&t| t != progenitor) {
        let states: Vec<usize> = (0..labels.len())
            .filter(|&i| labels[i] == t)
            .map(|i| order.state[i])
            .collect();
        assert_eq!(states.len(), 80);
        assert!(
            states.iter().all(|&s| s == states[0]),
            "{}: {states:?}",
            data.label_names[t]
        );
        fate_states.push(states[0]);
    }
    fate_states.sort_unstable();
    fate_states.dedup();
    assert_eq!(
        fate_states.len(),
        4,
        "the four fates share states: {fate_states:?}"
    );
    let mean = |keep: &dyn Fn(usize) -> bool| {
        let v: Vec<f64> = (0..labels.len())
            .filter(|&i| keep(labels[i]))
            .map(|i| order.pseudotime[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(&|t| t == progenitor) < 0.5 * mean(&|t| t != progenitor));
}

/// The declared parameters read the registry's settings: the ordering options give one
/// root (a root cell or state implies `order`), both roots are refused as before, and the
/// settings written back read the same parameters.
#[test]
fn settings_give_the_declared_parameters_and_the_ordering() {
    use crate::method::{Declared, Settings};
    let read = |s: Settings| DdrTreeParams::read_checked(&s).map(|p| p.into_inner());
    let p = read(Settings::new()).unwrap();
    assert_eq!(p, DdrTreeParams::default());
    assert_eq!((p.dim, p.ordering.min_branch), (None, None));
    assert_eq!(
        (p.sigma, p.gamma, p.max_iter, p.tol),
        (None, 10.0, 20, 1e-3)
    );
    assert_eq!((p.lambda, p.ncenters, p.ordering.root), (None, None, None));
    let s = Settings::new()
        .with("dim", 3usize)
        .with("lambda", 4.0)
        .with("compat", "r")
        .with("order", false)
        .with("min_branch", 2usize)
        .with("pseudotime_neighbours", 5usize)
        .with("root_state", 2usize);
    let p = read(s).unwrap();
    assert_eq!((p.dim, p.lambda, p.compat), (Some(3), Some(4.0), Compat::R));
    assert_eq!(
        p.ordering,
        TreeOrdering {
            root: Some(Root::State(2)),
            min_branch: Some(2),
            neighbours: Some(5),
        }
    );
    assert_eq!(read(p.settings()).unwrap(), p);
    let cell = read(Settings::new().with("root_cell", 5usize)).unwrap();
    assert_eq!(cell.ordering.root, Some(Root::Cell(5)));
    assert_eq!(read(cell.settings()).unwrap(), cell);
    let auto = read(Settings::new().with("order", true)).unwrap();
    assert_eq!(auto.ordering.root, Some(Root::Auto));
    assert_eq!(read(auto.settings()).unwrap(), auto);
    let both = Settings::new()
        .with("root_cell", 1usize)
        .with("root_state", 1usize);
    assert_eq!(
        read(both).unwrap_err().to_string(),
        "invalid value for `root_cell`: give a root cell or a root state, not both"
    );
    // The declared ranges, checked for parameters set through the Rust API.
    let state0 = DdrTreeParams::new(2).ordering(TreeOrdering {
        root: Some(Root::State(0)),
        min_branch: Some(0),
        neighbours: None,
    });
    assert!(state0
        .check()
        .unwrap_err()
        .to_string()
        .contains("root_state"));
}

/// An ordering in the parameters orders the fit as [`DdrTree::ordered`] does.
#[test]
fn the_fit_orders_the_points_when_asked() {
    let y = branching(60, 4, 6);
    let root = TreeOrdering {
        root: Some(Root::Cell(3)),
        min_branch: Some(1),
        neighbours: Some(1),
    };
    let ordered = DdrTreeParams::new(2).ordering(root).fit(&y).unwrap();
    let plain = DdrTreeParams::new(2).fit(&y).unwrap();
    assert!(plain.trajectory.is_none());
    let want = plain.order_with(Root::Cell(3), 1).unwrap();
    assert_eq!(ordered.trajectory.unwrap().pseudotime, want.pseudotime);
}

/// The default pseudotime is the distance along the tree averaged over each point and its
/// nearest points in the latent projection `(Y - mean) W`, as many as one centre stands
/// for (`N / K`, at most 30), from 0 at the root; the tree and the states are those of the
/// distance along the tree, and the R package's conventions keep Monocle 2's pseudotime.
#[test]
fn the_default_pseudotime_averages_the_tree_distance_over_latent_neighbours() {
    // 400 points over 40 centres: 10 points each.
    let y = branching(400, 5, 7);
    let order = |neighbours| TreeOrdering {
        root: Some(Root::Cell(0)),
        min_branch: Some(3),
        neighbours,
    };
    let params = DdrTreeParams {
        ncenters: Some(40),
        ..DdrTreeParams::new(2)
    };
    let smoothed = params.clone().ordering(order(None)).fit(&y).unwrap();
    let exact = params.clone().ordering(order(Some(1))).fit(&y).unwrap();
    assert_eq!(smoothed.centres, exact.centres);
    let (s, t) = (
        smoothed.trajectory.as_ref().unwrap(),
        exact.trajectory.as_ref().unwrap(),
    );
    assert_eq!(s.state, t.state);
    assert_eq!(s.branch_points, t.branch_points);
    let centred = DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - exact.mean[j]);
    let near = unfold_graph::knn(&(centred * &exact.w), 9).unwrap();
    let mean: Vec<f64> = (0..y.nrows())
        .map(|i| {
            let sum: f64 = near.indices[i].iter().map(|&j| t.pseudotime[j]).sum();
            (t.pseudotime[i] + sum) / 10.0
        })
        .collect();
    for i in 0..y.nrows() {
        let want = (mean[i] - mean[0]).max(0.0);
        assert!(
            (s.pseudotime[i] - want).abs() < 1e-9,
            "{i}: {} vs {want}",
            s.pseudotime[i]
        );
    }
    assert_eq!(s.pseudotime[0], 0.0);
    assert_ne!(s.pseudotime, t.pseudotime);
    let notes = crate::method::Model::notes(&smoothed);
    assert!(notes
        .iter()
        .any(|(n, v)| n == "pseudotime_neighbours" && v == "10"));
    // Every point its own centre (below 100 points): the distance along the tree.
    let few = y.rows(0, 60).into_owned();
    let own = DdrTreeParams::new(2)
        .ordering(order(None))
        .fit(&few)
        .unwrap();
    let own_exact = DdrTreeParams::new(2)
        .ordering(order(Some(1)))
        .fit(&few)
        .unwrap();
    assert_eq!(
        own.trajectory.unwrap().pseudotime,
        own_exact.trajectory.unwrap().pseudotime
    );
    // Monocle 2's pseudotime with the R package's conventions.
    let r = DdrTreeParams {
        compat: Compat::R,
        ..params
    };
    let r_default = r.clone().ordering(order(None)).fit(&y).unwrap();
    let r_exact = r.ordering(order(Some(0))).fit(&y).unwrap();
    assert_eq!(
        r_default.trajectory.unwrap().pseudotime,
        r_exact.trajectory.unwrap().pseudotime
    );
}

/// A row-major view of the data (a C-order array, read where it lies) gives the fit of the
/// column-major matrix, in both conventions, on narrow and wide data (both layouts of
/// `R^T Y`; from 200 columns on, `Y W` as `(W^T Y^T)^T`), with `K < N` and `K = N`
/// centres: the same latent points, projection, centres and objective to round-off (the
/// products may add in another order for another layout), the same mean and the same
/// tree. A column-major view gives the matrix's fit to the bit.
#[test]
fn a_row_major_view_gives_the_fit_of_the_matrix() {
    for (n, p, k) in [
        (400, 5, Some(25)),
        (90, 6, None),
        (300, DENSE_PRODUCT_COLS + 4, Some(20)),
        (300, 210, Some(20)),
    ] {
        let y = branching(n, p, 11) + noise(n, p, 12) * 0.05;
        let rows: Vec<f64> = y.transpose().as_slice().to_vec();
        let view = faer::MatRef::from_row_major_slice(&rows, n, p);
        for compat in [Compat::Paper, Compat::R] {
            let params = DdrTreeParams {
                compat,
                ncenters: k,
                lambda: Some(50.0),
                sigma: Some(0.05),
                ..DdrTreeParams::new(2)
            };
            let what = format!("{compat:?}, {n} x {p}, K = {k:?}");
            let want = params.fit(&y).unwrap();
            let same = params.fit_view(as_faer(&y)).unwrap();
            assert_eq!(same.coords(), want.coords(), "{what}");
            assert_eq!((&same.w, &same.centres), (&want.w, &want.centres), "{what}");
            assert_eq!(same.convergence.trace, want.convergence.trace, "{what}");
            let got = params.fit_view(view).unwrap();
            let close = |a: &DMatrix<f64>, b: &DMatrix<f64>, name: &str| {
                let rel = (a - b).amax() / b.amax().max(f64::MIN_POSITIVE);
                assert!(rel <= 1e-12, "{what}, {name}: relative difference {rel:e}");
            };
            close(got.coords(), want.coords(), "Z");
            close(&got.w, &want.w, "W");
            close(&got.centres, &want.centres, "C");
            assert_eq!(got.mean, want.mean, "{what}");
            let pairs = |t: &DdrTree| t.edges.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>();
            assert_eq!(pairs(&got), pairs(&want), "{what}");
            assert_eq!(
                got.convergence.converged, want.convergence.converged,
                "{what}"
            );
            assert_eq!(
                got.convergence.trace.len(),
                want.convergence.trace.len(),
                "{what}"
            );
            for (a, b) in got.convergence.trace.iter().zip(&want.convergence.trace) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs(),
                    "{what}: objective {a} vs {b}"
                );
            }
        }
    }
}

/// With no setting but the root, a tree of three branch points (a seeded binary tree of
/// seven segments in 20 dimensions) is ordered right: pseudotime against the true time has
/// Spearman's correlation >= 0.95 and the ordering finds exactly three branch points. The
/// papers' `d = 2` and `lambda = 5 N` give 0.87 and one branch point on these data.
/// The choices are reported with their reasons.
#[test]
fn the_defaults_order_a_tree_of_three_branch_points() {
    use unfold_data::synthetic::{tree, TreeSpec};
    let spec = TreeSpec::binary(2);
    let data = tree(2000, &spec, 20, 0.05, 11).unwrap();
    let (time, root) = data.time_and_start().unwrap();
    let order = TreeOrdering {
        root: Some(Root::Cell(root)),
        min_branch: None,
        neighbours: None,
    };
    let fit = DdrTreeParams::default()
        .ordering(order)
        .fit(&data.points)
        .unwrap();
    let t = fit.trajectory.as_ref().unwrap();
    let rho = unfold_eval::spearman(&t.pseudotime, &time).unwrap();
    assert!(rho >= 0.95, "Spearman {rho}");
    assert_eq!(t.branch_points.len(), spec.branch_points());
    // Seven orthogonal segments: seven components above the noise.
    assert_eq!(fit.w.ncols(), 7);
    assert_eq!(fit.lambda, 10.0 * 2000.0 / auto_centres(2000) as f64);
    let notes = crate::method::Model::notes(&fit);
    let note = |k: &str| notes.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(note("dim").as_deref(), Some("7"));
    assert!(note("dim_reason")
        .unwrap()
        .contains("7 principal components"));
    for name in ["lambda", "ncenters", "min_branch", "pseudotime_neighbours"] {
        assert!(note(&format!("{name}_reason")).is_some(), "{name}");
    }
    // The papers' settings, for the record of what the defaults replace.
    let papers = DdrTreeParams {
        lambda: Some(5.0 * 2000.0),
        ..DdrTreeParams::new(2)
    }
    .ordering(TreeOrdering {
        root: Some(Root::Cell(root)),
        min_branch: Some(0),
        neighbours: Some(1),
    })
    .fit(&data.points)
    .unwrap();
    let t2 = papers.trajectory.unwrap();
    assert!(unfold_eval::spearman(&t2.pseudotime, &time).unwrap() < 0.95);
    assert!(t2.branch_points.len() < 3);
}

/// Restarts keep the fit of the lowest objective: the starts of fewer restarts are among
/// those of more, so more never end higher, and here the further starts find a lower
/// minimum than the R package's start alone, which is the default's one start.
#[test]
fn restarts_keep_the_fit_of_the_lowest_objective() {
    let y = branching(1200, 5, 9) + noise(1200, 5, 10) * 0.3;
    let params = |restarts| DdrTreeParams {
        ncenters: Some(40),
        restarts,
        seed: 4,
        ..DdrTreeParams::new(2)
    };
    let values: Vec<f64> = (1..=4)
        .map(|r| params(r).fit(&y).unwrap().evidence().value)
        .collect();
    assert!(values.windows(2).all(|w| w[1] <= w[0]), "{values:?}");
    assert!(values[3] < values[0], "{values:?}");
    let default = DdrTreeParams {
        ncenters: Some(40),
        ..DdrTreeParams::new(2)
    };
    assert_eq!(default.fit(&y).unwrap().evidence().value, values[0]);
    assert!(DdrTreeParams::default().restarts(0).check().is_err());
}

/// Where the dimension rule cannot read the spectrum (three features), the fit falls back
/// to the papers' plane and says so; a given dimension is not reported as chosen; with the
/// R package's conventions `lambda` is its `5 N`.
#[test]
fn a_default_that_cannot_be_chosen_falls_back_and_says_so() {
    let y = branching(120, 3, 2);
    let fit = DdrTreeParams::default().fit(&y).unwrap();
    assert_eq!(fit.w.ncols(), 2);
    let reason = &fit.chosen.iter().find(|c| c.name == "dim").unwrap().reason;
    assert!(reason.contains("fell back"), "{reason}");
    let given = DdrTreeParams::new(2).fit(&y).unwrap();
    assert!(given.chosen.iter().all(|c| c.name != "dim"));
    let r = DdrTreeParams {
        compat: Compat::R,
        ..DdrTreeParams::new(2)
    }
    .fit(&y)
    .unwrap();
    assert_eq!(r.lambda, 5.0 * 120.0);
    // Points with no spread are refused with the reason, in both conventions.
    let same = DMatrix::from_element(50, 5, 1.5);
    for compat in [Compat::Paper, Compat::R] {
        let params = DdrTreeParams {
            compat,
            ..DdrTreeParams::default()
        };
        let e = params.fit(&same).unwrap_err().to_string();
        assert!(e.contains("no spread"), "{e}");
    }
}
