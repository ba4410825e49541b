//! The Rust half of `bench/spectral/run.sh`: generates the Swiss roll and times unfold's
//! spectral methods on it, writing each embedding for the Python side to compare.
//!
//! ```text
//! cargo run --release --example bench_spectral -- gen N SEED DATA.csv
//! cargo run --release --example bench_spectral -- run DATA.csv K REPS OUTDIR
//! ```
//! `run` prints one line per method: `method seconds` (the median of REPS fits, data
//! loading excluded), and writes `OUTDIR/unfold_<method>.csv`.

use nalgebra::DMatrix;
use std::path::{Path, PathBuf};
use std::time::Instant;
use unfold::data::{read_csv, synthetic::swiss_roll, write_csv, CsvOptions};
use unfold::models::{
    CmdsParams, Embedding, IsomapParams, KernelPcaParams, LaplacianEigenmapsParams, LleParams,
    PcaParams,
};
use unfold::Result;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("gen") if args.len() == 4 => generate(&args[1], &args[2], &args[3]),
        Some("run") if args.len() == 5 => run(&args[1], &args[2], &args[3], &args[4]),
        _ => {
            eprintln!("usage: bench_spectral gen N SEED DATA.csv | run DATA.csv K REPS OUTDIR");
            std::process::exit(2);
        }
    };
    if let Err(e) = outcome {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn number<T: std::str::FromStr>(s: &str, what: &str) -> T {
    s.parse().unwrap_or_else(|_| {
        eprintln!("error: {what} must be a number, got {s}");
        std::process::exit(2)
    })
}

fn generate(n: &str, seed: &str, path: &str) -> Result<()> {
    let data = swiss_roll(number(n, "N"), 0.0, number(seed, "SEED"))?;
    let mut both = data.points.clone().resize_horizontally(5, 0.0);
    let latent = data.latent.expect("the Swiss roll has latent coordinates");
    both.column_mut(3).copy_from(&latent.column(0));
    both.column_mut(4).copy_from(&latent.column(1));
    let header = ["y1", "y2", "y3", "t", "height"].map(String::from);
    write_csv(Path::new(path), &both, &header)
}

/// Fits one method and returns its embedding.
fn fit(name: &str, y: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>> {
    Ok(match name {
        "pca" => PcaParams::new(2).fit(y)?.coords().clone(),
        "cmds" => CmdsParams::new(2).fit(y)?.coords().clone(),
        "kpca" => KernelPcaParams::new(2).fit(y)?.coords().clone(),
        "le" => LaplacianEigenmapsParams::new(2, k).fit(y)?.coords().clone(),
        "lle" => LleParams::new(2, k).fit(y)?.coords().clone(),
        _ => IsomapParams::new(2, k).fit(y)?.coords().clone(),
    })
}

fn run(path: &str, k: &str, reps: &str, out: &str) -> Result<()> {
    let data = read_csv(Path::new(path), &CsvOptions::default())?;
    let y = data.points.columns(0, 3).into_owned();
    let k: usize = number(k, "K");
    let reps: usize = number(reps, "REPS");
    let out = PathBuf::from(out);
    for name in ["pca", "cmds", "kpca", "le", "lle", "isomap"] {
        let mut times = Vec::with_capacity(reps);
        let mut last = None;
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            let model = fit(name, &y, k)?;
            times.push(start.elapsed().as_secs_f64());
            last = Some(model);
        }
        times.sort_by(f64::total_cmp);
        let model = last.expect("at least one fit");
        write_csv(
            &out.join(format!("unfold_{name}.csv")),
            &model,
            &["x1".to_string(), "x2".to_string()],
        )?;
        println!("{name} {}", times[times.len() / 2]);
    }
    Ok(())
}
