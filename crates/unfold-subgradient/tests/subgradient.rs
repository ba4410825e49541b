//! Convergence on non-smooth problems with known optima, projections, stopping and errors.

use argmin::core::{CostFunction, Executor, Gradient, State, TerminationReason};
use unfold_subgradient::{
    maximize, minimize, Error, ProjectedSubgradient, Projection, Sense, Status, StepRule,
    SubgradientOptions,
};

/// `||x - c||_1` and its subgradient `sign(x - c)` (0 at a tie).
fn l1_to(c: &[f64]) -> impl FnMut(&[f64], &mut [f64]) -> f64 + '_ {
    move |x, g| {
        let mut f = 0.0;
        for i in 0..x.len() {
            let d = x[i] - c[i];
            f += d.abs();
            g[i] = if d > 0.0 {
                1.0
            } else if d < 0.0 {
                -1.0
            } else {
                0.0
            };
        }
        f
    }
}

const C: [f64; 5] = [3.0, -2.0, 0.5, -0.25, 10.0];
const BOX: [(f64, f64); 5] = [
    (-1.0, 1.0),
    (-1.0, f64::INFINITY),
    (f64::NEG_INFINITY, f64::INFINITY),
    (0.0, 0.0),
    (f64::NEG_INFINITY, 4.0),
];

fn clip_c() -> (Vec<f64>, f64) {
    let x: Vec<f64> = C
        .iter()
        .zip(BOX)
        .map(|(c, (l, u))| c.max(l).min(u))
        .collect();
    let f = x.iter().zip(C).map(|(a, b)| (a - b).abs()).sum();
    (x, f)
}

#[test]
fn l1_over_box_polyak_reaches_clipped_point() {
    let (xs, fs) = clip_c();
    assert!((fs - 9.25).abs() < 1e-15);
    let opts = SubgradientOptions {
        step: StepRule::Polyak { f_star: fs },
        max_iterations: 10_000,
        ..Default::default()
    };
    let r = minimize(l1_to(&C), &[0.0; 5], &Projection::Box(BOX.to_vec()), &opts).unwrap();
    assert!(r.best_f - fs < 1e-9, "best {} vs {}", r.best_f, fs);
    for (a, b) in r.best_x.iter().zip(&xs) {
        assert!((a - b).abs() < 1e-9, "{:?} vs {:?}", r.best_x, xs);
    }
}

#[test]
fn l1_over_box_one_over_t_meets_the_classical_bound() {
    // Classical bound for projected subgradient with steps a_t (Shor; Boyd's notes):
    // f_best(T) - f* <= (R^2 + G^2 sum a_t^2) / (2 sum a_t), R = ||x_1 - x*||, G >= ||g||.
    let (xs, fs) = clip_c();
    let a0 = 0.5;
    let x0 = [0.0, 0.0, 0.0, 0.0, 0.0];
    for t_max in [10usize, 100, 1000] {
        let opts = SubgradientOptions {
            step: StepRule::OverT { a0 },
            max_iterations: t_max,
            gradient_mapping_tol: 0.0,
            ..Default::default()
        };
        let r = minimize(l1_to(&C), &x0, &Projection::Box(BOX.to_vec()), &opts).unwrap();
        assert_eq!(r.iterations, t_max);
        assert_eq!(r.evaluations, t_max + 1);
        let r2: f64 = x0.iter().zip(&xs).map(|(a, b)| (a - b) * (a - b)).sum();
        let g2 = 5.0;
        let (s1, s2) = (1..=t_max).fold((0.0, 0.0), |(s1, s2), t| {
            let a = a0 / t as f64;
            (s1 + a, s2 + a * a)
        });
        let bound = (r2 + g2 * s2) / (2.0 * s1);
        assert!(
            r.best_f - fs <= bound,
            "T={t_max}: {} > {bound}",
            r.best_f - fs
        );
        assert!(r.best_f >= fs - 1e-12);
    }
}

/// `max_i |a_i^T x - b_i|` for the Chebyshev line fit through (0,0), (1,1), (2,0):
/// optimum x = (0.5, 0), value 0.5 (every line has e0 + e2 - 2 e1 = 2).
fn chebyshev(x: &[f64], g: &mut [f64]) -> f64 {
    let pts = [(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)];
    let mut best = (f64::NEG_INFINITY, 0.0, 0.0);
    for &(t, b) in &pts {
        let r: f64 = x[0] + x[1] * t - b;
        if r.abs() > best.0 {
            best = (r.abs(), r.signum(), t);
        }
    }
    g[0] = best.1;
    g[1] = best.1 * best.2;
    best.0
}

#[test]
fn chebyshev_fit_polyak_and_sqrt_rule() {
    let opts = SubgradientOptions {
        step: StepRule::Polyak { f_star: 0.5 },
        max_iterations: 20_000,
        ..Default::default()
    };
    let r = minimize(chebyshev, &[2.0, -1.0], &Projection::None, &opts).unwrap();
    assert!(r.best_f - 0.5 < 1e-8, "{}", r.best_f);
    assert!(
        (r.best_x[0] - 0.5).abs() < 1e-6 && r.best_x[1].abs() < 1e-6,
        "{:?}",
        r.best_x
    );

    let opts = SubgradientOptions {
        step: StepRule::OverSqrtT { a0: 0.5 },
        max_iterations: 20_000,
        gradient_mapping_tol: 0.0,
        ..Default::default()
    };
    let r = minimize(chebyshev, &[2.0, -1.0], &Projection::None, &opts).unwrap();
    assert!(r.best_f - 0.5 < 5e-3, "{}", r.best_f);
}

/// Concave piecewise-linear `min(x, y, 2 - x - y)`: maximiser (2/3, 2/3), value 2/3.
fn tent(x: &[f64], g: &mut [f64]) -> f64 {
    let v = [x[0], x[1], 2.0 - x[0] - x[1]];
    let rows = [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]];
    let k = (0..3).min_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
    g.copy_from_slice(&rows[k]);
    v[k]
}

#[test]
fn concave_piecewise_linear_maximisation() {
    for step in [
        StepRule::Polyak { f_star: 2.0 / 3.0 },
        StepRule::OverT { a0: 5.0 },
    ] {
        let opts = SubgradientOptions {
            step,
            max_iterations: 20_000,
            record_trace: true,
            ..Default::default()
        };
        let r = maximize(tent, &[-3.0, 5.0], &Projection::None, &opts).unwrap();
        let tol = if matches!(step, StepRule::Polyak { .. }) {
            1e-9
        } else {
            1e-3
        };
        assert!(
            (r.best_f - 2.0 / 3.0).abs() < tol,
            "{step:?}: {} {:?} {} {:?}",
            r.best_f,
            r.status,
            r.iterations,
            r.best_x
        );
        assert!(r.best_f <= 2.0 / 3.0 + 1e-15);
        // The best value is the maximum of the trace.
        let m = r.trace.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(m, r.best_f);
        assert_eq!(r.trace.len(), r.evaluations);
    }
}

#[test]
fn ascent_on_the_orthant_stops_at_the_boundary_optimum() {
    // max -|x1 - 1| - |x2 + 2| over x >= 0: maximiser (1, 0), value -2.
    let f = |x: &[f64], g: &mut [f64]| {
        g[0] = -(x[0] - 1.0).signum();
        g[1] = -(x[1] + 2.0).signum();
        -(x[0] - 1.0).abs() - (x[1] + 2.0).abs()
    };
    let opts = SubgradientOptions {
        step: StepRule::Polyak { f_star: -2.0 },
        max_iterations: 5000,
        ..Default::default()
    };
    let r = maximize(f, &[5.0, 5.0], &Projection::NonNegative, &opts).unwrap();
    assert!((r.best_f + 2.0).abs() < 1e-9);
    assert!((r.best_x[0] - 1.0).abs() < 1e-9 && r.best_x[1] == 0.0);
}

#[test]
fn gradient_mapping_stops_at_a_bound() {
    // min x over [1, 5] (constant step): one step lands on 1, then the mapping is 0.
    let opts = SubgradientOptions {
        step: StepRule::Constant { a: 10.0 },
        ..Default::default()
    };
    let r = minimize(
        |x: &[f64], g: &mut [f64]| {
            g[0] = 1.0;
            x[0]
        },
        &[3.0],
        &Projection::Box(vec![(1.0, 5.0)]),
        &opts,
    )
    .unwrap();
    assert_eq!(r.status, Status::GradientMappingSmall);
    assert_eq!(r.x, vec![1.0]);
    assert_eq!(r.iterations, 1);
    assert_eq!(r.gradient_mapping_norm, 0.0);
}

#[test]
fn stall_test_stops_a_constant_step_oscillation() {
    // |x| with constant step 0.3 from 0.1 oscillates between 0.1 and -0.2.
    let opts = SubgradientOptions {
        step: StepRule::Constant { a: 0.3 },
        patience: Some(20),
        max_iterations: 1000,
        ..Default::default()
    };
    let r = minimize(
        |x: &[f64], g: &mut [f64]| {
            g[0] = x[0].signum();
            x[0].abs()
        },
        &[0.1],
        &Projection::None,
        &opts,
    )
    .unwrap();
    assert_eq!(r.status, Status::Stalled);
    assert_eq!(r.iterations, 20);
    assert!((r.best_f - 0.1).abs() < 1e-15);
}

#[test]
fn normalized_steps_have_the_requested_length() {
    let opts = SubgradientOptions {
        step: StepRule::Constant { a: 0.25 },
        normalized: true,
        max_iterations: 1,
        ..Default::default()
    };
    let r = minimize(
        |x: &[f64], g: &mut [f64]| {
            g[0] = 30.0;
            g[1] = 40.0;
            30.0 * x[0] + 40.0 * x[1]
        },
        &[0.0, 0.0],
        &Projection::None,
        &opts,
    )
    .unwrap();
    assert!((r.x[0] + 0.15).abs() < 1e-15 && (r.x[1] + 0.2).abs() < 1e-15);
}

/// Variational inequality of a Euclidean projection: (x - p)^T (z - p) <= 0 for all z in C.
fn check_projection(p: &Projection, feasible: impl Fn(&[f64]) -> bool, sample: &[Vec<f64>]) {
    for x in sample {
        let mut px = x.clone();
        p.apply(&mut px);
        assert!(feasible(&px), "{px:?} infeasible");
        for z in sample {
            let mut pz = z.clone();
            p.apply(&mut pz);
            let ip: f64 = (0..x.len()).map(|i| (x[i] - px[i]) * (pz[i] - px[i])).sum();
            assert!(ip <= 1e-12, "{x:?} -> {px:?}, z {pz:?}: {ip}");
        }
        let mut ppx = px.clone();
        p.apply(&mut ppx);
        assert_eq!(ppx, px, "projection is not idempotent");
    }
}

#[test]
fn projections_are_euclidean() {
    let mut sample = Vec::new();
    let mut s = 12345u64;
    for _ in 0..40 {
        let v: Vec<f64> = (0..3)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 8.0 - 4.0
            })
            .collect();
        sample.push(v);
    }
    let bounds = vec![(-1.0, 2.0), (0.5, f64::INFINITY), (f64::NEG_INFINITY, -3.0)];
    let b2 = bounds.clone();
    check_projection(
        &Projection::Box(bounds),
        move |x| x.iter().zip(&b2).all(|(v, (l, u))| *l <= *v && *v <= *u),
        &sample,
    );
    check_projection(
        &Projection::NonNegative,
        |x| x.iter().all(|v| *v >= 0.0),
        &sample,
    );
    let ball = Projection::custom(|x: &mut [f64]| {
        let n = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if n > 1.0 {
            x.iter_mut().for_each(|v| *v /= n);
        }
    });
    check_projection(
        &ball,
        |x| x.iter().map(|v| v * v).sum::<f64>() <= 1.0 + 1e-12,
        &sample,
    );
}

#[test]
fn errors_are_reported() {
    let f = |x: &[f64], g: &mut [f64]| {
        g[0] = 1.0;
        x[0]
    };
    let o = SubgradientOptions::default();
    let b = Projection::Box(vec![(0.0, 1.0), (0.0, 1.0)]);
    assert_eq!(
        minimize(f, &[0.5], &b, &o).unwrap_err(),
        Error::DimensionMismatch {
            expected: 2,
            got: 1
        }
    );
    let bad = Projection::Box(vec![(2.0, 1.0)]);
    assert!(matches!(
        minimize(f, &[0.5], &bad, &o),
        Err(Error::BadBounds { index: 0, .. })
    ));
    let nan = Projection::Box(vec![(f64::NAN, 1.0)]);
    assert!(matches!(
        minimize(f, &[0.5], &nan, &o),
        Err(Error::BadBounds { .. })
    ));
    assert_eq!(
        minimize(f, &[], &Projection::None, &o).unwrap_err(),
        Error::EmptyProblem
    );
    assert!(matches!(
        minimize(f, &[f64::NAN], &Projection::None, &o),
        Err(Error::NonFiniteStart { index: 0, .. })
    ));
    for step in [
        StepRule::OverT { a0: 0.0 },
        StepRule::OverSqrtT { a0: -1.0 },
        StepRule::Constant { a: f64::INFINITY },
        StepRule::Polyak { f_star: f64::NAN },
    ] {
        let o = SubgradientOptions {
            step,
            ..Default::default()
        };
        assert!(matches!(
            minimize(f, &[0.5], &Projection::None, &o),
            Err(Error::InvalidOption { .. })
        ));
    }
    let o2 = SubgradientOptions {
        patience: Some(0),
        ..Default::default()
    };
    assert!(matches!(
        minimize(f, &[0.5], &Projection::None, &o2),
        Err(Error::InvalidOption {
            name: "patience",
            ..
        })
    ));
    // Non-finite value after some steps: f = 1/x reaches x = 0 at the box bound.
    let r = minimize(
        |x: &[f64], g: &mut [f64]| {
            g[0] = 1.0;
            if x[0] == 0.0 {
                f64::NAN
            } else {
                x[0]
            }
        },
        &[0.5],
        &Projection::NonNegative,
        &o,
    );
    assert!(
        matches!(r, Err(Error::NonFiniteValue { iteration: 1, .. })),
        "{r:?}"
    );
    let r = minimize(
        |x: &[f64], g: &mut [f64]| {
            g[0] = f64::INFINITY;
            x[0]
        },
        &[0.5],
        &Projection::None,
        &o,
    );
    assert!(matches!(
        r,
        Err(Error::NonFiniteSubgradient {
            iteration: 0,
            index: 0,
            ..
        })
    ));
    let p = Projection::custom(|x: &mut [f64]| x[0] = f64::NAN);
    assert!(matches!(
        minimize(f, &[0.5], &p, &o),
        Err(Error::NonFiniteProjection { .. })
    ));
}

/// The L1 box problem for argmin.
struct L1Box;
impl CostFunction for L1Box {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        Ok(x.iter().zip(C).map(|(a, b)| (a - b).abs()).sum())
    }
}
impl Gradient for L1Box {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        Ok(x.iter()
            .zip(C)
            .map(|(a, b)| {
                if a > &b {
                    1.0
                } else if a < &b {
                    -1.0
                } else {
                    0.0
                }
            })
            .collect())
    }
}

#[test]
fn argmin_executor_minimises_and_maximises() {
    let (xs, fs) = clip_c();
    let solver = ProjectedSubgradient::new(
        Sense::Minimise,
        StepRule::Polyak { f_star: fs },
        Projection::Box(BOX.to_vec()),
    )
    .unwrap();
    let res = Executor::new(L1Box, solver)
        .configure(|s| s.param(vec![0.0; 5]).max_iters(10_000))
        .run()
        .unwrap();
    let best = res.state().get_best_param().unwrap();
    assert!(res.state().get_best_cost() - fs < 1e-9);
    for (a, b) in best.iter().zip(&xs) {
        assert!((a - b).abs() < 1e-9);
    }
    assert!(res.state().get_iter() < 10_000);

    // Maximise -||x - c||_1 (the same problem): state cost is -f.
    struct Neg;
    impl CostFunction for Neg {
        type Param = Vec<f64>;
        type Output = f64;
        fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
            Ok(-L1Box.cost(x)?)
        }
    }
    impl Gradient for Neg {
        type Param = Vec<f64>;
        type Gradient = Vec<f64>;
        fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
            Ok(L1Box.gradient(x)?.iter().map(|v| -v).collect())
        }
    }
    let solver = ProjectedSubgradient::new(
        Sense::Maximise,
        StepRule::OverT { a0: 0.5 },
        Projection::Box(BOX.to_vec()),
    )
    .unwrap();
    let res = Executor::new(Neg, solver)
        .configure(|s| s.param(vec![0.0; 5]).max_iters(2000))
        .run()
        .unwrap();
    // 0.5/t steps land exactly on the optimum, where the gradient mapping is zero.
    assert!(
        (res.state().get_best_cost() - fs).abs() < 1e-12,
        "{}",
        res.state().get_best_cost()
    );
    assert_eq!(
        res.state().get_termination_reason(),
        Some(&TerminationReason::SolverConverged)
    );
}

#[test]
fn an_objective_error_stops_the_method_at_once() {
    use unfold_subgradient::{try_maximize, TryOptimizeError};
    let mut calls = 0;
    let e = try_maximize(
        |x: &[f64], g: &mut [f64]| {
            calls += 1;
            if calls == 3 {
                return Err("failed at the third evaluation");
            }
            g[0] = -(x[0] - 5.0).signum();
            Ok(-(x[0] - 5.0).abs())
        },
        &[0.0],
        &Projection::NonNegative,
        &SubgradientOptions::default(),
    )
    .unwrap_err();
    assert_eq!(calls, 3);
    assert_eq!(
        e,
        TryOptimizeError::Objective {
            error: "failed at the third evaluation",
            iteration: 2
        }
    );
}

#[test]
fn a_caller_that_ends_the_method_gets_its_best_point_so_far() {
    use unfold_subgradient::{try_maximize, try_maximize_until, Status};
    let f = |x: &[f64], g: &mut [f64]| {
        g[0] = -(x[0] - 5.0).signum();
        Ok::<f64, &str>(-(x[0] - 5.0).abs())
    };
    let opts = SubgradientOptions {
        record_trace: true,
        ..SubgradientOptions::default()
    };
    let full = try_maximize(f, &[0.0], &Projection::NonNegative, &opts).unwrap();
    assert!(full.evaluations > 3);
    let mut asked = 0;
    let early = try_maximize_until(f, &[0.0], &Projection::NonNegative, &opts, || {
        asked += 1;
        asked == 3
    })
    .unwrap();
    // Ended after the third evaluation: the same first three values as the full run, and
    // the best of them.
    assert_eq!(early.status, Status::Ended);
    assert_eq!(early.evaluations, 3);
    assert_eq!(early.trace[..], full.trace[..3]);
    assert_eq!(
        early.best_f,
        full.trace[..3].iter().copied().fold(f64::MIN, f64::max)
    );
}
