//! MEU fit time and per-gradient time (issue 4): n = 500, 1000, 2000, 4000, k = 10, p = 3
//! (the Swiss roll) and p = 100 (the roll mapped linearly into 100 dimensions plus noise),
//! with the share of each gradient evaluation spent in the dense Cholesky factorisation.
//!
//! `cargo run --release --example bench_grf -- [n ...]` prints a Markdown table;
//! `bench/grf/run.sh` writes it to `bench/results/grf.md`.

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use std::time::Instant;
use unfold::linalg::Cholesky;
use unfold::models::{GaussianRandomField, MeuParams};

fn data(n: usize, p: usize) -> DMatrix<f64> {
    let roll = unfold::data::synthetic::swiss_roll(n, 0.05, 1)
        .expect("valid generator settings")
        .points;
    if p == 3 {
        return roll;
    }
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
    let mut draw = || -> f64 { StandardNormal.sample(&mut rng) };
    let map = DMatrix::from_fn(3, p, |_, _| draw());
    let noise = DMatrix::from_fn(n, p, |_, _| 0.05 * draw());
    roll * map / (p as f64).sqrt() + noise
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are integers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![500, 1000, 2000, 4000]
    } else {
        sizes
    };
    println!("| n | p | edges | fit s | iterations | evaluations | stopped by | projected gradient | gradient s | Cholesky s | Cholesky share | gradient s / n^3 x 1e9 |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &sizes {
        for p in [3, 100] {
            let y = data(n, p);
            let start = Instant::now();
            let meu = MeuParams::new(2, 10).fit(&y).expect("MEU fits");
            let fit = start.elapsed().as_secs_f64();
            let field = meu.field();
            let mut g = vec![0.0; meu.lambda.len()];
            let grad = median(
                (0..3)
                    .map(|_| {
                        let t = Instant::now();
                        field
                            .log_likelihood_gradient(&meu.lambda, &mut g)
                            .expect("gradient");
                        t.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            let dense = field.laplacian(&meu.lambda, meu.gamma).to_dense();
            let chol = median(
                (0..3)
                    .map(|_| {
                        let t = Instant::now();
                        Cholesky::new(&dense, "bench").expect("positive definite");
                        t.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            let (r, c) = (&meu.report, &meu.convergence);
            println!(
                "| {n} | {p} | {} | {fit:.2} | {} | {} | {} | {:.1e} | {grad:.4} | {chol:.4} | {:.0}% | {:.2} |",
                meu.lambda.len(),
                c.iterations,
                r.evaluations,
                c.stopped_by,
                r.projected_gradient,
                100.0 * chol / grad,
                grad / (n as f64).powi(3) * 1e9,
            );
        }
    }
}
