//! The skeletons of SPL and MPME on synthetic curves (SPL paper Section 6.1.2, Fig. 2; MPME
//! paper Section 4, its synthetic visualisations; `specs/spl_drtree_ddrtree.md` §8.2,
//! `specs/mpme.md` §4).
//!
//! Four noisy curves (an S-shape, two moons, a helix and a circle, 200 points each, seed 1)
//! are fitted by SPL (K = 10, C = 1e3, gamma = 1e-3, the paper's synthetic setting) and by
//! MPME (C = inf, "for the skeleton structure", lambda = 0.5 on squared distances scaled to
//! a mean nearest-neighbour distance of 1). For each set and model the learned graph, the
//! pairs whose weight exceeds 1e-3 of the largest, is drawn over the data (the first two
//! coordinates) to `skeletons/<set>_<model>.svg`, and a Markdown table gives the edges
//! kept (and, for the moons, how many join the two moons), the dual objective and the
//! seconds. Both papers report figures only, no numbers.
//!
//! Run: `cargo run --release --example skeletons`

use nalgebra::DMatrix;
use std::path::Path;
use std::time::Instant;
use unfold::data::synthetic::{helix, noisy_circle, noisy_s_shape, two_moons};
use unfold::data::Dataset;
use unfold::graph::NeighbourGraph;
use unfold::models::regularised::mpme::{DistanceScale, MpmeParams};
use unfold::models::regularised::spl::SplParams;
use unfold_cli::plot::graph_svg;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Edges lighter than this fraction of the heaviest are not drawn.
const THRESHOLD: f64 = 1e-3;

fn main() -> AnyResult<()> {
    let out = Path::new("skeletons");
    std::fs::create_dir_all(out)?;
    let sets = [
        noisy_s_shape(200, 0.1, 1)?,
        two_moons(200, 0.1, 1)?,
        helix(200, 0.1, 1)?,
        noisy_circle(200, 0.05, 1)?,
    ];
    println!(
        "| data | model | candidate pairs | edges kept | across classes | objective | seconds |"
    );
    println!("|---|---|---|---|---|---|---|");
    for data in &sets {
        for model in ["SPL", "MPME"] {
            let start = Instant::now();
            let (graph, candidates, objective) = fit(model, &data.points)?;
            let seconds = start.elapsed().as_secs_f64();
            let edges = kept_edges(&graph);
            draw(out, data, model, &edges)?;
            println!(
                "| {} | {model} | {candidates} | {} | {} | {objective:.4} | {seconds:.2} |",
                data.name,
                edges.len(),
                across(data, &edges)
            );
        }
    }
    Ok(())
}

/// Fits `model` to `y`: the learned graph, the number of candidate pairs and the dual value.
fn fit(model: &str, y: &DMatrix<f64>) -> AnyResult<(NeighbourGraph, usize, f64)> {
    Ok(if model == "SPL" {
        let fit = SplParams::new(2).k(10).c(1e3).gamma(1e-3).fit(y)?;
        (fit.graph, fit.weights.len(), fit.evidence.value)
    } else {
        let fit = MpmeParams::new(2)
            .lambda(0.5)
            .c(f64::INFINITY)
            .scale(DistanceScale::MeanNearestNeighbour)
            .fit(y)?;
        (fit.graph, fit.solution.weights.len(), fit.evidence.value)
    })
}

/// The edges of `graph` whose weight exceeds [`THRESHOLD`] times the largest.
fn kept_edges(graph: &NeighbourGraph) -> Vec<(usize, usize)> {
    let edges = graph.edges();
    let top = edges.iter().map(|e| e.2).fold(0.0, f64::max);
    edges
        .into_iter()
        .filter(|e| e.2 > THRESHOLD * top)
        .map(|e| (e.0, e.1))
        .collect()
}

/// The number of edges joining two classes (the two moons), or "-" without labels.
fn across(data: &Dataset, edges: &[(usize, usize)]) -> String {
    data.labels.as_ref().map_or("-".into(), |l| {
        edges
            .iter()
            .filter(|&&(i, j)| l[i] != l[j])
            .count()
            .to_string()
    })
}

/// Writes `skeletons/<set>_<model>.svg`.
fn draw(out: &Path, data: &Dataset, model: &str, edges: &[(usize, usize)]) -> AnyResult<()> {
    let path = out.join(format!("{}_{}.svg", data.name, model.to_lowercase()));
    let title = format!("{model} on {}: {} edges", data.name, edges.len());
    graph_svg(&path, &data.points, edges, &title)?;
    Ok(())
}
