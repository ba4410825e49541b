//! LL-LVM on USHCN precipitation (Park et al. 2015, §4.3 and Fig. 6; `specs/lllvm.md` §5.4):
//! 400 stations, 12 monthly averages each, 12-NN graph, 2-D. The paper compares the layouts
//! qualitatively; here each embedding is scored against the stations' true latitude and
//! longitude by Procrustes error and trustworthiness (k = 12), next to Isomap, LLE and
//! Laplacian eigenmaps on the same graph.
//!
//! `cargo run --release --example lllvm_ushcn [-- restarts]`

use std::time::Instant;
use unfold::data::bundled::ushcn_400;
use unfold::eval::{procrustes, trustworthiness};
use unfold::models::{
    Embedding, IsomapParams, LaplacianEigenmapsParams, LlLvmInit, LlLvmParams, LleParams,
};
use unfold::Result;

fn main() -> Result<()> {
    let restarts: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("number of restarts"))
        .unwrap_or(4);
    let data = ushcn_400(16);
    let (y, latlon) = (
        &data.points,
        data.latent.as_ref().expect("latitude and longitude"),
    );
    let k = 12;
    println!(
        "| method | Procrustes error vs lat/lon | trustworthiness vs lat/lon | seconds | note |"
    );
    println!("|---|---|---|---|---|");
    let report = |name: &str, x: &nalgebra::DMatrix<f64>, secs: f64, note: String| -> Result<()> {
        println!(
            "| {name} | {:.3} | {:.3} | {secs:.2} | {note} |",
            procrustes(x, latlon)?.error,
            trustworthiness(latlon, x, k)?
        );
        Ok(())
    };
    for (name, init) in [
        ("LL-LVM (authors' random start)", LlLvmInit::Random),
        ("LL-LVM (spectral start)", LlLvmInit::Spectral),
    ] {
        let t = Instant::now();
        let fit = LlLvmParams::new(2, k)
            .init(init)
            .restarts(restarts)
            .seed(1)
            .fit(y)?;
        let note = format!(
            "bound {:.1}, best of {restarts}, {} iterations",
            fit.evidence().value,
            fit.convergence.iterations
        );
        report(name, fit.coords(), t.elapsed().as_secs_f64(), note)?;
    }
    let t = Instant::now();
    let iso = IsomapParams::new(2, k).fit(y)?;
    report(
        "Isomap",
        iso.coords(),
        t.elapsed().as_secs_f64(),
        String::new(),
    )?;
    let t = Instant::now();
    let lle = LleParams::new(2, k).fit(y)?;
    report(
        "LLE",
        lle.coords(),
        t.elapsed().as_secs_f64(),
        String::new(),
    )?;
    let t = Instant::now();
    let le = LaplacianEigenmapsParams::new(2, k).fit(y)?;
    report(
        "Laplacian eigenmaps",
        le.coords(),
        t.elapsed().as_secs_f64(),
        String::new(),
    )?;
    Ok(())
}
