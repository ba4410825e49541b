//! GP-LVM likelihood score of a noisy 2-D sheet in 3-D for its true latent coordinates and
//! for a shuffled copy, with wall-clock times:
//! `cargo run --release -p unfold-eval --example gplvm_score_timing -- [n] [p]`
//! (defaults n = 400, p = 3; for p > 3 the extra features are random mixtures of the three).

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_eval::{gplvm_score, GplvmScoreOptions};

fn main() -> unfold_core::Result<()> {
    let mut args = std::env::args().skip(1).map(|s| s.parse::<usize>().ok());
    let n = args.next().flatten().unwrap_or(400);
    let p = args.next().flatten().unwrap_or(3).max(3);
    let mut rng = unfold_core::seeded_rng(1);
    let x = DMatrix::from_fn(n, 2, |_, _| rng.random_range(-1.5..1.5));
    let sheet = DMatrix::from_fn(n, 3, |i, j| {
        let (u, v): (f64, f64) = (x[(i, 0)], x[(i, 1)]);
        [u, v, (u * v).sin()][j]
    });
    let mix = DMatrix::from_fn(3, p, |i, j| {
        if j < 3 {
            f64::from(u8::from(i == j))
        } else {
            rng.random_range(-1.0..1.0)
        }
    });
    let y = (&sheet * mix).map(|v| v + 0.05 * rng.random_range(-1.0..1.0));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let shuffled = DMatrix::from_fn(n, 2, |i, j| x[(order[i], j)]);
    let opts = GplvmScoreOptions::default();
    for (name, latent) in [("true latent", &x), ("shuffled latent", &shuffled)] {
        let start = Instant::now();
        let s = gplvm_score(latent, &y, &opts)?;
        println!(
            "{name:<16} n = {n}, q = 2, p = {p}: log p(Y|X) = {:.3}  alpha = {:.4} ell = {:.4} \
             bias = {:.3e} noise = {:.3e} jitter = {:.1e}  {} iterations, {} evaluations (converged: {})  {:.3} s",
            s.log_likelihood,
            s.hyperparameters.alpha,
            s.hyperparameters.lengthscale,
            s.hyperparameters.bias,
            s.hyperparameters.noise,
            s.jitter,
            s.iterations,
            s.evaluations,
            s.converged,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
