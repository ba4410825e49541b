//! Wall-clock times of the metrics on n random points (default 5000):
//! `cargo run --release -p unfold-eval --example eval_timing -- [n]`.

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_eval::*;

/// Runs `f` three times and prints the fastest wall-clock time (shared, noisy machines).
fn timed<T>(name: &str, f: impl Fn() -> T) -> T {
    let mut fastest = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let start = Instant::now();
        out = Some(f());
        fastest = fastest.min(start.elapsed().as_secs_f64());
    }
    println!("{name:<28} {fastest:8.3} s (best of 3)");
    out.unwrap_or_else(|| unreachable!())
}

fn main() -> unfold_core::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let mut rng = unfold_core::seeded_rng(1);
    let high = DMatrix::from_fn(n, 10, |_, _| rng.random_range(-1.0..1.0));
    let low = DMatrix::from_fn(n, 2, |i, j| {
        high[(i, j)] + 0.1 * rng.random_range(-1.0..1.0)
    });
    let labels: Vec<usize> = (0..n).map(|i| usize::from(high[(i, 2)] > 0.0)).collect();
    println!(
        "n = {n}, p = 10, q = 2, rayon threads = {}",
        rayon::current_num_threads()
    );
    // Reference: one full n x n distance matrix (the metrics never form one).
    timed("pairwise_sq_dists (ref.)", || {
        unfold_linalg::pairwise_sq_dists(&high)
    });
    let t = timed("trustworthiness k=12", || trustworthiness(&high, &low, 12))?;
    let c = timed("continuity k=12", || continuity(&high, &low, 12))?;
    let t100 = timed("trustworthiness k=100", || {
        trustworthiness(&high, &low, 100)
    })?;
    let acc = timed("loo_1nn_accuracy", || loo_1nn_accuracy(&low, &labels))?;
    let dist = unfold_linalg::pairwise_sq_dists(&high).map(f64::sqrt);
    let rv = timed("residual_variance", || residual_variance(&dist, &low))?;
    let p = timed("procrustes", || procrustes_error(&low, &high))?;
    let opts = KMeansOptions::default();
    let fit = timed("kmeans k=10 (10 restarts)", || kmeans(&high, 10, &opts))?;
    // A good embedding: the data lie near a plane, the embedding is that plane.
    let plane = DMatrix::from_fn(n, 2, |_, _| rng.random_range(-1.0..1.0));
    let near_plane = DMatrix::from_fn(n, 10, |i, j| {
        if j < 2 {
            plane[(i, j)]
        } else {
            0.01 * rng.random_range(-1.0..1.0)
        }
    });
    let tg = timed("trustworthiness k=12 (good)", || {
        trustworthiness(&near_plane, &plane, 12)
    })?;
    println!("T(good) = {tg:.4}");
    println!("T = {t:.4}, C = {c:.4}, T(100) = {t100:.4}, 1-NN = {acc:.4}, RV = {rv:.4}, Procrustes = {p:.4}, inertia = {:.2} ({} iterations)", fit.inertia, fit.iterations);
    Ok(())
}
