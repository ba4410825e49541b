//! Benchmark driver for `bench/optim/glasso_vs_sklearn.sh`.
//!
//! `cargo run --release -p unfold-glasso --example glasso_bench -- S.csv rho tol [THETA_OUT.csv] [REPEATS] [INNER_TOL]`
//!
//! Reads a dense symmetric S (comma-separated, no header), fits the graphical lasso with a
//! scalar penalty and an unpenalised diagonal (scikit-learn's convention) to the given
//! duality-gap tolerance, and prints one line `seconds=<best of REPEATS> objective=<..>
//! gap=<..> iterations=<..> converged=<..>`. With THETA_OUT the precision is written as CSV.

use nalgebra::DMatrix;
use std::time::Instant;
use unfold_glasso::{graphical_lasso, GlassoOptions, Penalty};

fn read_csv(path: &str) -> Result<DMatrix<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut rows = Vec::new();
    for (k, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let row: Result<Vec<f64>, _> = line.split(',').map(|v| v.trim().parse::<f64>()).collect();
        rows.push(row.map_err(|e| format!("{path}:{}: {e}", k + 1))?);
    }
    let p = rows.len();
    if rows.iter().any(|r| r.len() != p) {
        return Err(format!("{path}: expected a square matrix"));
    }
    Ok(DMatrix::from_fn(p, p, |i, j| rows[i][j]))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err(
            "usage: glasso_bench S.csv rho tol [THETA_OUT.csv] [REPEATS] [INNER_TOL]".into(),
        );
    }
    let s = read_csv(&args[1])?;
    let parse = |k: usize| {
        args[k]
            .parse::<f64>()
            .map_err(|e| format!("argument {k}: {e}"))
    };
    let (rho, tol) = (parse(2)?, parse(3)?);
    let repeats: usize = match args.get(5) {
        Some(r) => r.parse().map_err(|e| format!("REPEATS: {e}"))?,
        None => 3,
    };
    let mut opts = GlassoOptions {
        tol,
        max_iter: 1000,
        ..Default::default()
    };
    if let Some(t) = args.get(6) {
        opts.inner_tol = t.parse().map_err(|e| format!("INNER_TOL: {e}"))?;
    }
    let mut best = f64::INFINITY;
    let mut fit = None;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let f = graphical_lasso(&s, &Penalty::Scalar(rho), &opts).map_err(|e| e.to_string())?;
        best = best.min(t0.elapsed().as_secs_f64());
        fit = Some(f);
    }
    let fit = fit.expect("at least one repeat");
    if let Some(out) = args.get(4) {
        let mut text = String::new();
        for i in 0..fit.precision.nrows() {
            let row: Vec<String> = fit
                .precision
                .row(i)
                .iter()
                .map(|v| format!("{v:e}"))
                .collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        std::fs::write(out, text).map_err(|e| format!("cannot write {out}: {e}"))?;
    }
    println!(
        "seconds={best:e} objective={:.12e} gap={:e} iterations={} converged={}",
        fit.objective, fit.duality_gap, fit.iterations, fit.converged
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("glasso_bench: {e}");
        std::process::exit(1);
    }
}
