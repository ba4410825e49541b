//! The comparison of Lawrence (2012, §4) on bundled data: Laplacian eigenmaps, LLE, Isomap,
//! MVU, MEU, acyclic LLE and DRILL, scored by the GP-LVM likelihood of each embedding (the
//! paper's metric) and by trustworthiness; then MEU's exact log-likelihood over k, and the
//! projection of held-out points with their variances.
//!
//! `cargo run --release --example grf_comparison [-- roll|ushcn]`

use nalgebra::DMatrix;
use std::time::Instant;
use unfold::eval::{gplvm_score, trustworthiness, GplvmScoreOptions};
use unfold::models::{
    AlleParams, DrillParams, Embedding, IsomapParams, LaplacianEigenmapsParams, LleParams,
    MeuParams, MvuParams, OutOfSample,
};
use unfold::Result;

fn main() -> Result<()> {
    let which = std::env::args().nth(1).unwrap_or_else(|| "roll".into());
    let (name, y, k) = match which.as_str() {
        "ushcn" => {
            let d = unfold::data::bundled::ushcn_400(0);
            (
                "USHCN stations (z-scores)",
                unfold::data::standardise(&d.points).points,
                12,
            )
        }
        _ => (
            "Swiss roll",
            unfold::data::synthetic::swiss_roll(400, 0.0, 0)?.points,
            7,
        ),
    };
    println!(
        "{name}: {} points x {} features, k = {k}\n",
        y.nrows(),
        y.ncols()
    );
    println!("| method | evidence kind | evidence | GP-LVM score | trustworthiness | seconds |");
    println!("|---|---|---|---|---|---|");
    // DRILL's L1 penalty: 0.1 times the mean diagonal of S = Y_c Y_c^T / p.
    let rho = 0.1 * unfold::data::centre(&y).0.norm_squared() / y.len() as f64;
    type Fit = Box<dyn Fn(&DMatrix<f64>) -> Result<Box<dyn Embedding>>>;
    let methods: Vec<(&str, Fit)> = vec![
        (
            "le",
            Box::new(move |y| Ok(Box::new(LaplacianEigenmapsParams::new(2, k).fit(y)?))),
        ),
        (
            "lle",
            Box::new(move |y| Ok(Box::new(LleParams::new(2, k).fit(y)?))),
        ),
        (
            "isomap",
            Box::new(move |y| Ok(Box::new(IsomapParams::new(2, k).fit(y)?))),
        ),
        (
            "mvu",
            Box::new(move |y| Ok(Box::new(MvuParams::new(2, k).fit(y)?))),
        ),
        (
            "meu",
            Box::new(move |y| Ok(Box::new(MeuParams::new(2, k).fit(y)?))),
        ),
        (
            "alle",
            Box::new(move |y| Ok(Box::new(AlleParams::new(2, k).fit(y)?))),
        ),
        (
            "drill",
            Box::new(move |y| Ok(Box::new(DrillParams::new(2, k, rho).fit(y)?))),
        ),
    ];
    for (method, fit) in &methods {
        let start = Instant::now();
        let model = fit(&y)?;
        let seconds = start.elapsed().as_secs_f64();
        let x = model.coords();
        let score = gplvm_score(x, &y, &GplvmScoreOptions::default())?.log_likelihood;
        let tw = trustworthiness(&y, x, k)?;
        let ev = model.evidence();
        println!(
            "| {method} | {} | {:.2} | {score:.2} | {tw:.4} | {seconds:.2} |",
            ev.kind, ev.value
        );
    }

    // The same model family on different graphs: MEU's exact log-likelihood compares them.
    println!("\nMEU exact log-likelihood by neighbourhood size:");
    for kk in [5, 7, 10, 14] {
        let meu = MeuParams::new(2, kk).fit(&y)?;
        println!(
            "  k = {kk:2}: {:.2} ({} iterations)",
            meu.evidence.value, meu.convergence.iterations
        );
    }

    // Hold out every tenth point, fit on the rest, project the held-out points.
    let keep: Vec<usize> = (0..y.nrows()).filter(|i| i % 10 != 0).collect();
    let held: Vec<usize> = (0..y.nrows()).filter(|i| i % 10 == 0).collect();
    let train = y.select_rows(&keep);
    let meu = MeuParams::new(2, k).fit(&train)?;
    let proj = meu.project(&y.select_rows(&held))?;
    let cov = proj.covariance.expect("MEU gives variances");
    println!(
        "\nMEU projection of {} held-out points (first three):",
        held.len()
    );
    for i in 0..3 {
        println!(
            "  point {:3}: x = ({:.3}, {:.3}), sd = ({:.3}, {:.3})",
            held[i],
            proj.mean[(i, 0)],
            proj.mean[(i, 1)],
            cov[i][(0, 0)].sqrt(),
            cov[i][(1, 1)].sqrt()
        );
    }
    Ok(())
}
