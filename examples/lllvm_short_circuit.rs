//! Short-circuit detection with LL-LVM (Park et al. 2015, §4.1 and Fig. 4;
//! `specs/lllvm.md` §4.2): on the 400-point Swiss roll with k = 9, add one edge between two
//! points that are close in 3-D but far apart on the roll (the pair whose distance along the
//! roll most exceeds its 3-D distance). The graph without the shortcut
//! must reach the higher lower bound (the paper: 1151.5 without vs 1119.4 with, under its
//! own preprocessing and seeds).
//!
//! `cargo run --release --example lllvm_short_circuit [-- seeds]`

use unfold::data::synthetic::swiss_roll;
use unfold::graph::Weighting;
use unfold::models::{GraphSpec, LlLvmParams};
use unfold::Result;

fn main() -> Result<()> {
    let seeds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("number of seeds"))
        .unwrap_or(5);
    let data = swiss_roll(400, 0.0, 0)?;
    let (y, truth) = (&data.points, data.latent.as_ref().expect("latent"));
    let (_, graph) = GraphSpec::knn(9).build(
        y,
        Weighting::Binary,
        "short-circuit example",
        &unfold::prelude::Silent,
    )?;
    // The pair whose distance along the roll most exceeds its 3-D distance: arc length
    // of the spiral r = 0.35 t is s(t) = 0.175 (t sqrt(1 + t^2) + asinh t).
    let arc = |t: f64| 0.175 * (t * (1.0 + t * t).sqrt() + t.asinh());
    let mut best = (0.0, 0, 0, 0.0, 0.0);
    for i in 0..y.nrows() {
        for j in i + 1..y.nrows() {
            let d = (y.row(i) - y.row(j)).norm();
            let along =
                (arc(truth[(i, 0)]) - arc(truth[(j, 0)])).hypot(truth[(i, 1)] - truth[(j, 1)]);
            if along / d > best.0 && !graph.has_edge(i, j) {
                best = (along / d, i, j, d, along);
            }
        }
    }
    let (_, i, j, d, along) = best;
    println!(
        "shortcut: points {i} and {j}, {d:.3} apart in 3-D but {along:.3} along the roll \
         (t = {:.2} and {:.2})\n",
        truth[(i, 0)],
        truth[(j, 0)]
    );
    let shortcut = graph.with_edge(i, j, 1.0)?;
    let params = LlLvmParams::new(2, 9).restarts(seeds).seed(1);
    let bounds = params.compare_graphs(y, &[graph, shortcut])?;
    println!("| graph | mean bound over {seeds} seeds | per seed |");
    println!("|---|---|---|");
    for (name, b) in ["9-NN", "9-NN + shortcut"].iter().zip(&bounds) {
        let per: Vec<String> = b.bounds.iter().map(|v| format!("{v:.1}")).collect();
        println!("| {name} | {:.1} | {} |", b.mean(), per.join(", "));
    }
    let drop = bounds[0].mean() - bounds[1].mean();
    println!(
        "\nthe shortcut {} the mean bound by {:.1}",
        if drop > 0.0 { "lowers" } else { "raises" },
        drop.abs()
    );
    Ok(())
}
