//! DRILL-style use: S = Yc Yc^T / d over n data points (n x n, rank <= d - 1), a penalty
//! matrix that is `rho` on a symmetrised kNN graph and `+inf` elsewhere, penalised diagonal.
//!
//! `cargo run --release -p unfold-glasso --example glasso_mask -- [n] [k] [rho]`
//!
//! Fits once from a cold start and once along a decreasing penalty path (16, 8, 4, 2, 1 times
//! rho) with warm starts.

use nalgebra::DMatrix;
use std::time::Instant;
use unfold_glasso::{graphical_lasso, GlassoOptions, Penalty};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: usize, default: f64| args.get(k).and_then(|v| v.parse().ok()).unwrap_or(default);
    let (n, k, rho) = (arg(1, 500.0) as usize, arg(2, 10.0) as usize, arg(3, 0.01));
    println!("n={n} k={k} rho={rho}");
    let d = 10;
    // Deterministic points on a noisy helix in 10 dimensions.
    let mut state = 0x2545F4914F6CDD1Du64;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    // Points in a scrambled order (i * 7919 mod n), as data usually come.
    let y = DMatrix::from_fn(n, d, |i, j| {
        let t = 6.0 * std::f64::consts::PI * ((i * 7919) % n) as f64 / n as f64;
        let base = match j {
            0 => t.cos(),
            1 => t.sin(),
            2 => t / 6.0,
            _ => 0.0,
        };
        base + 0.05 * noise()
    });
    let mean = y.row_mean();
    let yc = DMatrix::from_fn(n, d, |i, j| y[(i, j)] - mean[j]);
    let s = &yc * yc.transpose() / d as f64;
    let mut pen = DMatrix::from_element(n, n, f64::INFINITY);
    for i in 0..n {
        pen[(i, i)] = rho;
        let mut dist: Vec<(f64, usize)> = (0..n)
            .filter(|&j| j != i)
            .map(|j| ((yc.row(i) - yc.row(j)).norm_squared(), j))
            .collect();
        dist.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(_, j) in &dist[..k] {
            pen[(i, j)] = rho;
            pen[(j, i)] = rho;
        }
    }
    let mut opts = GlassoOptions {
        penalize_diagonal: true,
        max_iter: 500,
        ..Default::default()
    };
    // Cold start at rho, then the same rho reached along a decreasing path of warm starts.
    let t0 = Instant::now();
    report(
        "cold",
        t0,
        graphical_lasso(&s, &Penalty::Matrix(pen.map(|v| v)), &opts),
    );
    let t0 = Instant::now();
    let mut sweeps = 0;
    for factor in [16.0, 8.0, 4.0, 2.0, 1.0] {
        let path_pen = pen.map(|v| v * factor);
        match graphical_lasso(&s, &Penalty::Matrix(path_pen), &opts) {
            Ok(fit) => {
                sweeps += fit.iterations;
                if factor == 1.0 {
                    println!("(path of 5 penalties: {sweeps} sweeps in total)");
                    report("path", t0, Ok(fit));
                    break;
                }
                opts.warm_start = Some((fit.covariance, fit.precision));
            }
            Err(e) => {
                println!("error: {e}");
                break;
            }
        }
    }
}

fn report(label: &str, t0: Instant, fit: Result<unfold_glasso::GlassoFit, unfold_glasso::Error>) {
    match fit {
        Ok(fit) => println!(
            "{label}: {:.3} s, {} sweeps, gap {:.2e}, converged {}, {} components, nnz {}",
            t0.elapsed().as_secs_f64(),
            fit.iterations,
            fit.duality_gap,
            fit.converged,
            fit.components,
            fit.precision.iter().filter(|v| **v != 0.0).count()
        ),
        Err(e) => println!("{label}: error: {e}"),
    }
}
