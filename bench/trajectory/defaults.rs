//! DDRTree's defaults chosen from the data against the papers' fixed ones, on the tree
//! generators of `unfold_data::synthetic::tree` (`bench/trajectory/defaults.sh` runs the
//! matrix and writes `bench/results/trajectory_defaults.md`).
//!
//! `cargo run --release --example trajectory_defaults -- N P NOISE SEED` prints one table
//! row per tree shape and setting: the papers' (`d = 2`, `lambda = 5 N`, every centre of
//! degree above 2 a branch point), the defaults (nothing given but the root cell, the
//! earliest cell), and the defaults with the papers' `sigma = 1e-3`. Spearman: pseudotime against the true time; F1: the states against the
//! true segments (`unfold_eval::f1_labels`); branch points found / true.

use unfold::data::synthetic::{tree, TreeSpec};
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::{DdrTreeParams, TreeOrdering};

/// The tree shapes of the matrix.
fn shapes() -> Vec<(&'static str, TreeSpec)> {
    let mut uneven = TreeSpec::two_level();
    uneven.lengths = vec![1.0, 0.4, 1.5, 0.6, 1.0];
    uneven.weights = vec![1.0, 0.3, 2.0, 0.5, 1.0];
    vec![
        ("linear", TreeSpec::linear()),
        ("bifurcation", TreeSpec::multifurcation(2)),
        ("trifurcation", TreeSpec::multifurcation(3)),
        ("two-level", TreeSpec::two_level()),
        ("binary, 3 branch points", TreeSpec::binary(2)),
        ("binary, 7 branch points", TreeSpec::binary(3)),
        ("two-level, uneven", uneven),
    ]
}

fn main() -> unfold::core::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [n, p, noise, seed] = &a[..] else {
        eprintln!("usage: trajectory_defaults N P NOISE SEED");
        std::process::exit(2);
    };
    let (n, p): (usize, usize) = (n.parse().expect("N"), p.parse().expect("P"));
    let (noise, seed): (f64, u64) = (noise.parse().expect("NOISE"), seed.parse().expect("SEED"));
    for (name, spec) in shapes() {
        if p < spec.segments() {
            continue;
        }
        let data = tree(n, &spec, p, noise, seed)?;
        let labels = data.labels.as_ref().expect("the generator's segments");
        let (time, root) = data.time_and_start().expect("the generator's times");
        let papers = DdrTreeParams {
            lambda: Some(5.0 * n as f64),
            ..DdrTreeParams::new(2)
        }
        .ordering(TreeOrdering {
            root: Some(Root::Cell(root)),
            min_branch: Some(0),
            neighbours: Some(1),
        });
        let defaults = DdrTreeParams::default().ordering(TreeOrdering {
            root: Some(Root::Cell(root)),
            min_branch: None,
            neighbours: None,
        });
        // The defaults with the papers' hard assignments: what the chosen sigma changes.
        let hard = DdrTreeParams {
            sigma: Some(1e-3),
            ..defaults.clone()
        };
        for (setting, params) in [
            ("papers", papers),
            ("defaults, sigma 1e-3", hard),
            ("defaults", defaults),
        ] {
            let start = std::time::Instant::now();
            let fit = params.fit(&data.points)?;
            let seconds = start.elapsed().as_secs_f64();
            let t = fit.trajectory.as_ref().expect("an ordering");
            let rho = unfold::eval::spearman(&t.pseudotime, &time)?;
            let f1 = unfold::eval::f1_labels(&t.state, labels)?.f1;
            let min_branch = fit
                .chosen
                .iter()
                .find(|c| c.name == "min_branch")
                .map_or("0".to_string(), |c| c.value.clone());
            println!(
                "| {name} | {n} | {p} | {noise} | {seed} | {setting} | {} | {:.0} | {min_branch} | {}/{} | {rho:.3} | {f1:.3} | {seconds:.2} |",
                fit.w.ncols(),
                fit.lambda,
                t.branch_points.len(),
                spec.branch_points(),
            );
        }
    }
    Ok(())
}
