//! Algorithm 2 as a fit: each convention's loop written out, the stopping rules, the
//! reported convergence, both layouts of the data, restarts, and the refusals.

use super::*;

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
/// layouts of `R^T Y`), stopped by the rule and by the iteration limit (one start, the
/// R package's).
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
                restarts: Some(1),
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

/// With `keep = objective`, restarts keep the fit of the lowest objective: the starts of
/// fewer restarts are among those of more, so more never end higher, and here the further
/// starts find a lower minimum than the R package's start alone. The default is the
/// consensus of five starts; `--compat r`'s is the R package's one start.
#[test]
fn restarts_keep_the_fit_of_the_lowest_objective() {
    let y = branching(1200, 5, 9) + noise(1200, 5, 10) * 0.3;
    let params = |restarts, keep| DdrTreeParams {
        ncenters: Some(40),
        restarts,
        keep,
        seed: 4,
        ..DdrTreeParams::new(2)
    };
    let value = |p: DdrTreeParams| p.fit(&y).unwrap().evidence().value;
    let values: Vec<f64> = (1..=4)
        .map(|r| value(params(Some(r), Keep::Objective)))
        .collect();
    assert!(values.windows(2).all(|w| w[1] <= w[0]), "{values:?}");
    assert!(values[3] < values[0], "{values:?}");
    let default = params(None, Keep::default());
    assert_eq!(value(default), value(params(Some(5), Keep::Consensus)));
    let r = |restarts| DdrTreeParams {
        ncenters: Some(40),
        restarts,
        compat: Compat::R,
        ..DdrTreeParams::new(2)
    };
    assert_eq!(value(r(None)), value(r(Some(1))));
    assert!(DdrTreeParams::default().restarts(Some(0)).check().is_err());
}
