//! Known optima: Rosenbrock (free, on a bound, at a corner), constructed box QPs, mixed
//! infinite bounds; KKT conditions at every returned point.

mod common;

use common::{assert_kkt, rosenbrock, Lcg};
use unfold_lbfgsb::{minimize, LbfgsbOptions, Status};

const INF: f64 = f64::INFINITY;

fn opts_tight() -> LbfgsbOptions {
    LbfgsbOptions {
        pgtol: 1e-9,
        factr: 0.0,
        ..LbfgsbOptions::default()
    }
}

#[test]
fn rosenbrock_2d_unconstrained() {
    let bounds = [(-INF, INF); 2];
    let r = minimize(rosenbrock, &[-1.2, 1.0], &bounds, &opts_tight()).unwrap();
    assert!(matches!(
        r.status,
        Status::ConvergedPgtol | Status::ConvergedFactr
    ));
    for xi in &r.x {
        assert!((xi - 1.0).abs() < 1e-6, "{:?}", r.x);
    }
    assert!(r.f < 1e-12);
    assert_kkt(&r, &bounds, 1e-5);
    assert!(!r.x0_projected);
    // Default options: the SciPy-like budget.
    let d = minimize(rosenbrock, &[-1.2, 1.0], &bounds, &LbfgsbOptions::default()).unwrap();
    assert!(d.f < 1e-9 && d.evaluations < 60, "{d:?}");
}

#[test]
fn rosenbrock_10d_unconstrained() {
    let bounds = [(-INF, INF); 10];
    let x0: Vec<f64> = (0..10)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let r = minimize(rosenbrock, &x0, &bounds, &opts_tight()).unwrap();
    for xi in &r.x {
        assert!((xi - 1.0).abs() < 1e-6, "{:?}", r.x);
    }
    assert_kkt(&r, &bounds, 1e-5);
}

#[test]
fn rosenbrock_optimum_on_a_bound() {
    // x0 <= 0.5 is active; then x1 = x0^2 = 0.25 and f = (1 - 0.5)^2 = 0.25.
    let bounds = [(-2.0, 0.5), (-INF, INF)];
    let r = minimize(rosenbrock, &[-1.2, 1.0], &bounds, &opts_tight()).unwrap();
    assert_eq!(r.x[0], 0.5);
    assert!((r.x[1] - 0.25).abs() < 1e-7, "{:?}", r.x);
    assert!((r.f - 0.25).abs() < 1e-12);
    assert!(r.g[0] < 0.0);
    assert_kkt(&r, &bounds, 1e-6);
}

#[test]
fn rosenbrock_optimum_at_a_corner() {
    // At (1.5, 1): g = (751, -250), pushing into the lower bound of x0 and upper of x1.
    let bounds = [(1.5, 3.0), (-1.0, 1.0)];
    let r = minimize(rosenbrock, &[2.5, -0.5], &bounds, &LbfgsbOptions::default()).unwrap();
    assert_eq!(r.x, vec![1.5, 1.0]);
    assert!((r.f - 156.5).abs() < 1e-12);
    assert_eq!(r.status, Status::ConvergedPgtol);
    assert_kkt(&r, &bounds, 0.0);
}

/// Box QP `x^T A x / 2 + b^T x` with a known KKT point: a chosen active set, multipliers
/// and free values, with `b` built so that the gradient is zero on the free set and has
/// the multipliers' sign on the active set.
struct Qp {
    a: Vec<f64>,
    b: Vec<f64>,
    x_star: Vec<f64>,
    bounds: Vec<(f64, f64)>,
}

fn constructed_qp(n: usize, seed: u64, mixed_infinite: bool) -> Qp {
    let mut rng = Lcg(seed);
    let q: Vec<f64> = (0..n * n).map(|_| rng.next()).collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|k| q[k * n + i] * q[k * n + j]).sum::<f64>();
        }
        a[i * n + i] += 0.5;
    }
    let mut x_star = vec![0.0; n];
    let mut g_star = vec![0.0; n];
    let mut bounds = vec![(-INF, INF); n];
    for i in 0..n {
        let (l, u) = (-1.0 + 0.2 * rng.next(), 1.0 + 0.2 * rng.next());
        match i % 3 {
            0 => {
                x_star[i] = l;
                g_star[i] = 0.5 + rng.next().abs();
                bounds[i] = (l, if mixed_infinite { INF } else { u });
            }
            1 => {
                x_star[i] = u;
                g_star[i] = -0.5 - rng.next().abs();
                bounds[i] = (if mixed_infinite { -INF } else { l }, u);
            }
            _ => {
                x_star[i] = 0.5 * rng.next();
                bounds[i] = if mixed_infinite && i % 2 == 0 {
                    (-INF, INF)
                } else {
                    (l, u)
                };
            }
        }
    }
    let b = (0..n)
        .map(|i| g_star[i] - (0..n).map(|j| a[i * n + j] * x_star[j]).sum::<f64>())
        .collect();
    Qp {
        a,
        b,
        x_star,
        bounds,
    }
}

fn solve_qp(qp: &Qp, x0: &[f64]) -> unfold_lbfgsb::LbfgsbReport {
    let n = qp.b.len();
    let f = |x: &[f64], g: &mut [f64]| {
        let mut v = 0.0;
        for i in 0..n {
            g[i] = qp.b[i] + (0..n).map(|j| qp.a[i * n + j] * x[j]).sum::<f64>();
            v += x[i] * (qp.b[i] + 0.5 * (g[i] - qp.b[i]));
        }
        v
    };
    minimize(f, x0, &qp.bounds, &opts_tight()).unwrap()
}

#[test]
fn box_qps_reach_the_constructed_kkt_point() {
    for (seed, n) in [(1u64, 12usize), (2, 30), (3, 45)] {
        let qp = constructed_qp(n, seed, false);
        let r = solve_qp(&qp, &vec![0.0; n]);
        for (i, (xi, si)) in r.x.iter().zip(&qp.x_star).enumerate() {
            assert!((xi - si).abs() < 1e-7, "seed {seed}: x[{i}] = {xi} vs {si}");
        }
        assert_kkt(&r, &qp.bounds, 1e-6);
    }
}

#[test]
fn mixed_infinite_bounds_and_projected_start() {
    let n = 24;
    let qp = constructed_qp(n, 7, true);
    // Start far outside the box in some coordinates: the start is projected.
    let x0: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { -50.0 } else { 3.0 })
        .collect();
    let r = solve_qp(&qp, &x0);
    assert!(r.x0_projected);
    for (xi, si) in r.x.iter().zip(&qp.x_star) {
        assert!((xi - si).abs() < 1e-7, "{xi} vs {si}");
    }
    assert_kkt(&r, &qp.bounds, 1e-6);
}

#[test]
fn limits_are_respected() {
    let bounds = [(-INF, INF); 2];
    let opts = LbfgsbOptions {
        max_iterations: 3,
        ..LbfgsbOptions::default()
    };
    let r = minimize(rosenbrock, &[-1.2, 1.0], &bounds, &opts).unwrap();
    assert_eq!(r.status, Status::MaxIterations);
    assert_eq!(r.iterations, 3);
    let opts = LbfgsbOptions {
        max_evaluations: 7,
        ..LbfgsbOptions::default()
    };
    let mut count = 0;
    let r = minimize(
        |x, g| {
            count += 1;
            rosenbrock(x, g)
        },
        &[-1.2, 1.0],
        &bounds,
        &opts,
    )
    .unwrap();
    assert_eq!(r.status, Status::MaxEvaluations);
    assert!(r.evaluations <= 7 && r.evaluations == count);
    // The report's gradient belongs to the report's point.
    let mut g = [0.0; 2];
    assert_eq!(rosenbrock(&r.x, &mut g), r.f);
    assert_eq!(g.to_vec(), r.g);
}

#[test]
fn fixed_variable_stays_fixed() {
    // Rosenbrock in 3-D with x1 fixed at 0.7 (l = u): then x0 and x2 solve their own
    // one-dimensional problems, x2 = 0.49 exactly at the optimum.
    let bounds = [(-INF, INF), (0.7, 0.7), (-INF, INF)];
    let r = minimize(rosenbrock, &[0.0, 0.0, 0.0], &bounds, &opts_tight()).unwrap();
    assert!(r.x0_projected);
    assert_eq!(r.x[1], 0.7);
    assert!((r.x[2] - 0.49).abs() < 1e-7, "{:?}", r.x);
    // x0 minimises 100 (0.7 - x0^2)^2 + (1 - x0)^2: its derivative vanishes.
    let x0 = r.x[0];
    assert!((-400.0 * x0 * (0.7 - x0 * x0) - 2.0 * (1.0 - x0)).abs() < 1e-6);
    assert_kkt(&r, &bounds, 1e-6);
}
