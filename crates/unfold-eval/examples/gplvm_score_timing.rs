//! GP-LVM likelihood score of a noisy 2-D manifold in 3-D for its true latent coordinates and
//! for a shuffled copy, with wall-clock times:
//! `cargo run --release -p unfold-eval --example gplvm_score_timing -- [n] [p] [options]`
//! (defaults n = 400, p = 3; for p > 3 the extra features are random mixtures of the three).
//!
//! Options: `--roll` scores a Swiss roll `(t cos t, h, t sin t)`, latent `(t, h)`, instead of
//! the sheet `(u, v, sin(u v))`; `--exact` / `--bound` force the exact score or the sparse
//! bound (default: `gplvm_evidence`'s automatic choice by n); `--inducing=M` sets the
//! bound's inducing points; `--starts=S` the optimiser's starts; `--true-only` skips the
//! shuffled latent points.

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_eval::{gplvm_evidence, GplvmEvidence, GplvmScoreOptions, GplvmSolver};

fn main() -> unfold_core::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut numbers = args.iter().filter_map(|s| s.parse::<usize>().ok());
    let n = numbers.next().unwrap_or(400);
    let p = numbers.next().unwrap_or(3).max(3);
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        args.iter()
            .find_map(|a| a.strip_prefix(name).and_then(|v| v.parse::<usize>().ok()))
    };
    let mut opts = GplvmScoreOptions {
        inducing: value("--inducing="),
        ..Default::default()
    };
    if let Some(starts) = value("--starts=") {
        opts.starts = starts;
    }
    if flag("--exact") {
        opts.solver = GplvmSolver::Exact;
    } else if flag("--bound") {
        opts.solver = GplvmSolver::Bound;
    }
    let roll = flag("--roll");
    let mut rng = unfold_core::seeded_rng(1);
    let (x, manifold) = if roll {
        let x = DMatrix::from_fn(n, 2, |_, j| {
            let u: f64 = rng.random_range(0.0..1.0);
            [1.5 * std::f64::consts::PI * (1.0 + 2.0 * u), 21.0 * u][j]
        });
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let (t, h) = (x[(i, 0)], x[(i, 1)]);
            [t * t.cos(), h, t * t.sin()][j]
        });
        (x, y)
    } else {
        let x = DMatrix::from_fn(n, 2, |_, _| rng.random_range(-1.5..1.5));
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let (u, v): (f64, f64) = (x[(i, 0)], x[(i, 1)]);
            [u, v, (u * v).sin()][j]
        });
        (x, y)
    };
    let noise = if roll { 0.5 } else { 0.05 };
    let mix = DMatrix::from_fn(3, p, |i, j| {
        if j < 3 {
            f64::from(u8::from(i == j))
        } else {
            rng.random_range(-1.0..1.0)
        }
    });
    let y = (&manifold * mix).map(|v| v + noise * rng.random_range(-1.0..1.0));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let shuffled = DMatrix::from_fn(n, 2, |i, j| x[(order[i], j)]);
    let data = if roll { "Swiss roll" } else { "sheet" };
    let runs: &[(&str, &DMatrix<f64>)] = if flag("--true-only") {
        &[("true latent", &x)]
    } else {
        &[("true latent", &x), ("shuffled latent", &shuffled)]
    };
    for (name, latent) in runs {
        let start = Instant::now();
        let s = gplvm_evidence(latent, &y, &opts)?;
        let seconds = start.elapsed().as_secs_f64();
        let h = s.hyperparameters();
        let (what, jitter, iterations, evaluations) = match &s {
            GplvmEvidence::Exact(e) => (
                "exact log p(Y|X)".to_string(),
                e.jitter,
                e.iterations,
                e.evaluations,
            ),
            GplvmEvidence::Bound(b) => (
                format!("bound (m = {}, trace term {:.3})", b.inducing, b.trace_term),
                b.jitter,
                b.iterations,
                b.evaluations,
            ),
        };
        println!(
            "{data}, {name:<16} n = {n}, q = 2, p = {p}: {what} = {:.3}  alpha = {:.4} ell = {:.4} \
             bias = {:.3e} noise = {:.3e} jitter = {:.1e}  {iterations} iterations, \
             {evaluations} evaluations (converged: {})  {seconds:.3} s",
            s.value(),
            h.alpha,
            h.lengthscale,
            h.bias,
            h.noise,
            jitter,
            s.converged(),
        );
    }
    Ok(())
}
