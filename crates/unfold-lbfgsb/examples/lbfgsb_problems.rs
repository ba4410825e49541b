//! Standard test problems (Moré, Garbow & Hillstrom 1981 and box-constrained variants) run
//! with default options. Prints one line per problem: `name f* nfev nit status`.
//! The same problems are mirrored in `bench/optim/lbfgsb_problems.py` for the SciPy
//! comparison (`bench/optim/lbfgsb_vs_scipy.sh`).
//!
//! Run: `cargo run --release -p unfold-lbfgsb --example lbfgsb_problems`

/// The test suite's Rosenbrock and seeded generator, shared rather than copied.
#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;
use common::{rosenbrock, Lcg};
use std::f64::consts::PI;

use unfold_lbfgsb::{minimize, LbfgsbOptions};

const INF: f64 = f64::INFINITY;

type Objective = Box<dyn Fn(&[f64], &mut [f64]) -> f64>;

/// A named problem: objective, start and box.
struct Problem {
    name: &'static str,
    f: Objective,
    x0: Vec<f64>,
    bounds: Vec<(f64, f64)>,
}

fn free(n: usize) -> Vec<(f64, f64)> {
    vec![(-INF, INF); n]
}

fn rosen_start(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

/// Extended Powell singular function (blocks of 4).
fn powell(x: &[f64], g: &mut [f64]) -> f64 {
    let mut f = 0.0;
    for b in 0..x.len() / 4 {
        let (x1, x2, x3, x4) = (x[4 * b], x[4 * b + 1], x[4 * b + 2], x[4 * b + 3]);
        let (t1, t2, t3, t4) = (x1 + 10.0 * x2, x3 - x4, x2 - 2.0 * x3, x1 - x4);
        f += t1 * t1 + 5.0 * t2 * t2 + t3.powi(4) + 10.0 * t4.powi(4);
        g[4 * b] = 2.0 * t1 + 40.0 * t4.powi(3);
        g[4 * b + 1] = 20.0 * t1 + 4.0 * t3.powi(3);
        g[4 * b + 2] = 10.0 * t2 - 8.0 * t3.powi(3);
        g[4 * b + 3] = -10.0 * t2 - 40.0 * t4.powi(3);
    }
    f
}

fn powell_start(n: usize) -> Vec<f64> {
    (0..n).map(|i| [3.0, -1.0, 0.0, 1.0][i % 4]).collect()
}

/// Beale function.
fn beale(x: &[f64], g: &mut [f64]) -> f64 {
    let (a, b) = (x[0], x[1]);
    let c = [1.5, 2.25, 2.625];
    let mut f = 0.0;
    g[0] = 0.0;
    g[1] = 0.0;
    for (k, ck) in c.iter().enumerate() {
        let p = (k + 1) as i32;
        let r = ck - a * (1.0 - b.powi(p));
        f += r * r;
        g[0] += -2.0 * r * (1.0 - b.powi(p));
        g[1] += 2.0 * r * a * p as f64 * b.powi(p - 1);
    }
    f
}

/// Wood function.
fn wood(x: &[f64], g: &mut [f64]) -> f64 {
    let (x1, x2, x3, x4) = (x[0], x[1], x[2], x[3]);
    let (a, b) = (x2 - x1 * x1, x4 - x3 * x3);
    g[0] = -400.0 * x1 * a - 2.0 * (1.0 - x1);
    g[1] = 200.0 * a + 20.2 * (x2 - 1.0) + 19.8 * (x4 - 1.0);
    g[2] = -360.0 * x3 * b - 2.0 * (1.0 - x3);
    g[3] = 180.0 * b + 20.2 * (x4 - 1.0) + 19.8 * (x2 - 1.0);
    100.0 * a * a
        + (1.0 - x1).powi(2)
        + 90.0 * b * b
        + (1.0 - x3).powi(2)
        + 10.1 * ((x2 - 1.0).powi(2) + (x4 - 1.0).powi(2))
        + 19.8 * (x2 - 1.0) * (x4 - 1.0)
}

/// Brown badly scaled function.
fn brown_badly_scaled(x: &[f64], g: &mut [f64]) -> f64 {
    let (r1, r2, r3) = (x[0] - 1e6, x[1] - 2e-6, x[0] * x[1] - 2.0);
    g[0] = 2.0 * r1 + 2.0 * r3 * x[1];
    g[1] = 2.0 * r2 + 2.0 * r3 * x[0];
    r1 * r1 + r2 * r2 + r3 * r3
}

/// Freudenstein & Roth function.
fn freudenstein_roth(x: &[f64], g: &mut [f64]) -> f64 {
    let y = x[1];
    let r1 = -13.0 + x[0] + ((5.0 - y) * y - 2.0) * y;
    let r2 = -29.0 + x[0] + ((y + 1.0) * y - 14.0) * y;
    g[0] = 2.0 * r1 + 2.0 * r2;
    g[1] = 2.0 * r1 * (10.0 * y - 3.0 * y * y - 2.0) + 2.0 * r2 * (3.0 * y * y + 2.0 * y - 14.0);
    r1 * r1 + r2 * r2
}

/// Himmelblau function.
fn himmelblau(x: &[f64], g: &mut [f64]) -> f64 {
    let (a, b) = (x[0] * x[0] + x[1] - 11.0, x[0] + x[1] * x[1] - 7.0);
    g[0] = 4.0 * a * x[0] + 2.0 * b;
    g[1] = 2.0 * a + 4.0 * b * x[1];
    a * a + b * b
}

/// Helical valley function.
fn helical_valley(x: &[f64], g: &mut [f64]) -> f64 {
    let r2 = x[0] * x[0] + x[1] * x[1];
    let r = r2.sqrt();
    let theta = (x[1] / x[0]).atan() / (2.0 * PI) + if x[0] < 0.0 { 0.5 } else { 0.0 };
    let a = x[2] - 10.0 * theta;
    let b = r - 1.0;
    let (dth0, dth1) = (-x[1] / (2.0 * PI * r2), x[0] / (2.0 * PI * r2));
    g[0] = 200.0 * (a * (-10.0 * dth0) + b * x[0] / r);
    g[1] = 200.0 * (a * (-10.0 * dth1) + b * x[1] / r);
    g[2] = 200.0 * a + 2.0 * x[2];
    100.0 * (a * a + b * b) + x[2] * x[2]
}

/// Trigonometric function.
fn trigonometric(x: &[f64], g: &mut [f64]) -> f64 {
    let n = x.len();
    let sum_cos: f64 = x.iter().map(|v| v.cos()).sum();
    let r: Vec<f64> = (0..n)
        .map(|i| n as f64 - sum_cos + (i + 1) as f64 * (1.0 - x[i].cos()) - x[i].sin())
        .collect();
    let total: f64 = r.iter().sum();
    for j in 0..n {
        g[j] = 2.0 * x[j].sin() * total + 2.0 * r[j] * ((j + 1) as f64 * x[j].sin() - x[j].cos());
    }
    r.iter().map(|v| v * v).sum()
}

/// Box QP `x^T A x / 2 + b^T x`, `A = Q^T Q + I/2`, with a constructed KKT point: a third of
/// the variables at the lower bound, a third at the upper bound, a third free.
fn box_qp(n: usize, seed: u64) -> (Objective, Vec<(f64, f64)>) {
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
    let mut bounds = vec![(0.0, 0.0); n];
    for i in 0..n {
        let (l, u) = (-1.0 + 0.2 * rng.next(), 1.0 + 0.2 * rng.next());
        bounds[i] = (l, u);
        match i % 3 {
            0 => {
                x_star[i] = l;
                g_star[i] = 0.5 + rng.next().abs();
            }
            1 => {
                x_star[i] = u;
                g_star[i] = -0.5 - rng.next().abs();
            }
            _ => x_star[i] = 0.5 * rng.next(),
        }
    }
    let b: Vec<f64> = (0..n)
        .map(|i| g_star[i] - (0..n).map(|j| a[i * n + j] * x_star[j]).sum::<f64>())
        .collect();
    let f = move |x: &[f64], g: &mut [f64]| {
        let mut v = 0.0;
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
            g[i] = ax + b[i];
            v += x[i] * (0.5 * ax + b[i]);
        }
        v
    };
    (Box::new(f), bounds)
}

fn problems() -> Vec<Problem> {
    let mixed100: Vec<(f64, f64)> = (0..100)
        .map(|i| match i % 3 {
            0 => (-1.5, 0.9),
            1 => (-INF, 0.8),
            _ => (0.0, INF),
        })
        .collect();
    let (qp30, qp30_bounds) = box_qp(30, 1);
    let (qp100, qp100_bounds) = box_qp(100, 2);
    let (qp200, qp200_bounds) = box_qp(200, 3);
    vec![
        Problem {
            name: "rosenbrock2",
            f: Box::new(rosenbrock),
            x0: vec![-1.2, 1.0],
            bounds: free(2),
        },
        Problem {
            name: "rosenbrock2_bound",
            f: Box::new(rosenbrock),
            x0: vec![-1.2, 1.0],
            bounds: vec![(-2.0, 0.5), (-INF, INF)],
        },
        Problem {
            name: "rosenbrock2_corner",
            f: Box::new(rosenbrock),
            x0: vec![2.5, -0.5],
            bounds: vec![(1.5, 3.0), (-1.0, 1.0)],
        },
        Problem {
            name: "rosenbrock10",
            f: Box::new(rosenbrock),
            x0: rosen_start(10),
            bounds: free(10),
        },
        Problem {
            name: "rosenbrock10_box",
            f: Box::new(rosenbrock),
            x0: rosen_start(10),
            bounds: vec![(-2.0, 0.8); 10],
        },
        Problem {
            name: "rosenbrock100",
            f: Box::new(rosenbrock),
            x0: rosen_start(100),
            bounds: free(100),
        },
        Problem {
            name: "rosenbrock100_mixed",
            f: Box::new(rosenbrock),
            x0: rosen_start(100),
            bounds: mixed100,
        },
        Problem {
            name: "powell4",
            f: Box::new(powell),
            x0: powell_start(4),
            bounds: free(4),
        },
        Problem {
            name: "powell12",
            f: Box::new(powell),
            x0: powell_start(12),
            bounds: free(12),
        },
        Problem {
            name: "powell4_box",
            f: Box::new(powell),
            x0: powell_start(4),
            bounds: vec![(0.1, 100.0), (-INF, INF), (-INF, INF), (-INF, INF)],
        },
        Problem {
            name: "beale",
            f: Box::new(beale),
            x0: vec![1.0, 1.0],
            bounds: free(2),
        },
        Problem {
            name: "beale_box",
            f: Box::new(beale),
            x0: vec![1.0, 1.0],
            bounds: vec![(-4.5, 2.5), (-4.5, 4.5)],
        },
        Problem {
            name: "wood",
            f: Box::new(wood),
            x0: vec![-3.0, -1.0, -3.0, -1.0],
            bounds: free(4),
        },
        Problem {
            name: "wood_box",
            f: Box::new(wood),
            x0: vec![-3.0, -1.0, -3.0, -1.0],
            bounds: vec![(-INF, 0.9), (-INF, INF), (-INF, INF), (-INF, INF)],
        },
        Problem {
            name: "brown_badly_scaled",
            f: Box::new(brown_badly_scaled),
            x0: vec![1.0, 1.0],
            bounds: free(2),
        },
        Problem {
            name: "freudenstein_roth",
            f: Box::new(freudenstein_roth),
            x0: vec![0.5, -2.0],
            bounds: free(2),
        },
        Problem {
            name: "freudenstein_roth_box",
            f: Box::new(freudenstein_roth),
            x0: vec![0.5, -2.0],
            bounds: vec![(0.0, 20.0), (0.0, 10.0)],
        },
        Problem {
            name: "himmelblau_box",
            f: Box::new(himmelblau),
            x0: vec![1.0, 1.0],
            bounds: vec![(0.0, 2.5), (0.0, 1.5)],
        },
        Problem {
            name: "helical_valley",
            f: Box::new(helical_valley),
            x0: vec![-1.0, 0.0, 0.0],
            bounds: free(3),
        },
        Problem {
            name: "trigonometric10",
            f: Box::new(trigonometric),
            x0: vec![0.1; 10],
            bounds: free(10),
        },
        Problem {
            name: "trigonometric50_box",
            f: Box::new(trigonometric),
            x0: vec![0.02; 50],
            bounds: vec![(0.0, 0.05); 50],
        },
        Problem {
            name: "box_qp30",
            f: qp30,
            x0: vec![0.0; 30],
            bounds: qp30_bounds,
        },
        Problem {
            name: "box_qp100",
            f: qp100,
            x0: vec![0.0; 100],
            bounds: qp100_bounds,
        },
        Problem {
            name: "box_qp200",
            f: qp200,
            x0: vec![0.0; 200],
            bounds: qp200_bounds,
        },
    ]
}

/// Largest relative error of the analytic gradient against central differences at `x0`.
fn gradient_check(p: &Problem) -> f64 {
    let n = p.x0.len();
    let mut g = vec![0.0; n];
    (p.f)(&p.x0, &mut g);
    let mut scratch = vec![0.0; n];
    (0..n)
        .map(|i| {
            let h = 1e-6 * p.x0[i].abs().max(1.0);
            let (mut a, mut b) = (p.x0.clone(), p.x0.clone());
            a[i] += h;
            b[i] -= h;
            let fd = ((p.f)(&a, &mut scratch) - (p.f)(&b, &mut scratch)) / (2.0 * h);
            (fd - g[i]).abs() / g[i].abs().max(1.0)
        })
        .fold(0.0, f64::max)
}

fn main() {
    let opts = LbfgsbOptions::default();
    for p in problems() {
        let check = gradient_check(&p);
        if check > 1e-4 {
            eprintln!("warning: {} gradient check error {check:.2e}", p.name);
        }
        match minimize(&p.f, &p.x0, &p.bounds, &opts) {
            Ok(r) => println!(
                "{} {:.17e} {} {} {:?}",
                p.name, r.f, r.evaluations, r.iterations, r.status
            ),
            Err(e) => println!("{} error: {e}", p.name),
        }
    }
}
