//! `unfold demo`: every method on the Swiss roll of the LL-LVM paper, with plots and a
//! table of trustworthiness, Procrustes error against the true manifold coordinates, and
//! seconds.

use crate::args::{DemoArgs, GraphKind, Method, MethodArgs, WeightKind};
use crate::methods;
use crate::plot::{scatter_svg, Colouring};
use std::fmt::Write as _;
use std::time::Instant;
use unfold_core::{Error, Result};
use unfold_eval::{procrustes_error, trustworthiness};

const METHODS: [Method; 6] = [
    Method::Pca,
    Method::Cmds,
    Method::Kpca,
    Method::Le,
    Method::Lle,
    Method::Isomap,
];

pub fn run(a: &DemoArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).map_err(|e| Error::io(&a.out, e))?;
    let data = unfold_data::synthetic::swiss_roll(a.n, 0.0, a.seed)?;
    let truth = data
        .latent
        .as_ref()
        .expect("the Swiss roll generator returns its latent coordinates");
    let t: Vec<f64> = truth.column(0).iter().copied().collect();
    eprintln!(
        "Swiss roll: {} points in 3-D (seed {}), k = {}, latent dimension 2",
        a.n, a.seed, a.k
    );

    let mut table = String::new();
    writeln!(
        table,
        "| method | trustworthiness (k={}) | Procrustes error | seconds |",
        a.k
    )
    .ok();
    writeln!(table, "|---|---|---|---|").ok();
    for method in METHODS {
        let settings = MethodArgs {
            method,
            dim: 2,
            k: a.k,
            graph: GraphKind::Union,
            seed: a.seed,
            gamma: None,
            weights: WeightKind::Binary,
            sigma: None,
            reg: 1e-3,
        };
        let name = methods::name(method);
        let start = Instant::now();
        let model = methods::fit(&settings, &data.points)?;
        let seconds = start.elapsed().as_secs_f64();
        let x = model.embedding().coords();
        let tw = trustworthiness(&data.points, x, a.k)?;
        let pe = procrustes_error(x, truth)?;
        let plot = a.out.join(format!("{name}.svg"));
        scatter_svg(
            &plot,
            x,
            Colouring::Value(&t),
            &format!("{name} (Swiss roll, n = {})", a.n),
        )?;
        writeln!(table, "| {name} | {tw:.4} | {pe:.4} | {seconds:.3} |").ok();
    }
    let summary = format!(
        "# unfold demo\n\nSwiss roll (LL-LVM paper generator), n = {}, seed {}, k = {}, 2-D.\n\
         Plots: one SVG per method in this folder, coloured by the true roll coordinate t.\n\n{table}",
        a.n, a.seed, a.k
    );
    unfold_core::write_atomic(&a.out.join("summary.md"), summary.as_bytes())?;
    println!("{table}");
    eprintln!("wrote {} (plots and summary.md)", a.out.display());
    Ok(())
}
