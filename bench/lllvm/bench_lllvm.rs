//! Seconds per LL-LVM EM iteration (issue 5), printed as a Markdown table.
//!
//! Swiss roll of `specs/lllvm.md` §5.1 (dy = 3, dx = 2), 9-NN union graph, the paper's
//! settings (eps = alpha = 1e-3, gamma0 = 1, authors' random start). Each size runs a fixed
//! number of iterations with no tolerance; the setup (graph, L^+, eigenvalues of L) is timed
//! apart. Usage: `bench_lllvm [n,n,...] [iterations]`.
//!
//! `bench_lllvm project [n] [points] [iterations]` instead fits the same model at one size
//! (default n = 2000, 5 iterations) and times the out-of-sample projection (spec §4.4) of a
//! batch of new points (default 100) drawn from the same roll with another seed.

use std::time::Instant;
use unfold::core::Silent;
use unfold::data::synthetic::swiss_roll;
use unfold::models::lvm::lllvm::{LlLvmParams, LlLvmProblem};
use unfold::models::method::Declared;
use unfold::models::GraphSpec;
use unfold::vem::LatentVariableModel;
use unfold::vem::{run_from, VemOptions};

/// The authors' MATLAB code under Octave on this kind of machine (fixture README, k = 9).
fn reference_seconds(n: usize) -> Option<f64> {
    match n {
        200 => Some(1.07),
        300 => Some(3.6),
        400 => Some(8.4),
        _ => None,
    }
}

/// Times the projection of `points` new points into a model fitted at `n`.
fn projection(args: &[String]) -> unfold::Result<()> {
    let arg = |i: usize, default: usize| -> usize {
        args.get(i)
            .map(|s| s.parse().expect("a count"))
            .unwrap_or(default)
    };
    let (n, points, iterations) = (arg(0, 2000), arg(1, 100), arg(2, 5));
    let y = swiss_roll(n, 0.0, 7)?.points;
    let new = swiss_roll(points, 0.0, 8)?.points;
    let t0 = Instant::now();
    let fit = LlLvmParams::new(2, 9).max_iter(iterations).fit(&y)?;
    let fit_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let p = fit.project_points(&new)?;
    let project_s = t1.elapsed().as_secs_f64();
    let checksum: f64 = p.iter().map(|q| q.mean_x.sum() + q.cov_x.sum()).sum();
    println!("| n | new points | fit s | projection s | s per new point | checksum |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {n} | {points} | {fit_s:.2} | {project_s:.3} | {:.4} | {checksum:.10e} |",
        project_s / points as f64
    );
    Ok(())
}

fn main() -> unfold::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("project") {
        return projection(&args[2..]);
    }
    let sizes: Vec<usize> = args
        .get(1)
        .map(|s| s.split(',').map(|v| v.parse().expect("sizes")).collect())
        .unwrap_or_else(|| vec![200, 400, 1000, 2000]);
    let iterations: usize = args
        .get(2)
        .map(|s| s.parse().expect("iterations"))
        .unwrap_or(5);
    println!("| n | setup s | s per EM iteration | authors' code s per iteration | speed-up | final bound |");
    println!("|---|---|---|---|---|---|");
    for n in sizes {
        let y = swiss_roll(n, 0.0, 7)?.points;
        let params = LlLvmParams::new(2, 9);
        let t0 = Instant::now();
        let (_, graph) = GraphSpec::knn(9).build(
            &y,
            unfold::graph::Weighting::Binary,
            "bench",
            &unfold::prelude::Silent,
        )?;
        let problem = LlLvmProblem::new(&y, &graph, &params.check()?)?;
        let (q, h) = problem.init(&mut unfold_core::seeded_rng(1))?;
        let setup = t0.elapsed().as_secs_f64();
        let options = VemOptions {
            max_iter: iterations,
            abs_tol: 0.0,
            rel_tol: 0.0,
            ..VemOptions::default()
        };
        let t1 = Instant::now();
        let run = run_from(&problem, q, h, &options, 0, &Silent)?;
        let per_iter = t1.elapsed().as_secs_f64() / iterations as f64;
        let (reference, ratio) = match reference_seconds(n) {
            Some(r) => (format!("{r:.2}"), format!("{:.0}x", r / per_iter)),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "| {n} | {setup:.3} | {per_iter:.3} | {reference} | {ratio} | {:.2} |",
            run.evidence.value
        );
    }
    Ok(())
}
