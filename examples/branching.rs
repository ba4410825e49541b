//! DDRTree's ordering on simulated branching trajectories with known time and branch
//! (`unfold_data::synthetic::branching`): Spearman's correlation of pseudotime with the
//! true time (the root at the earliest cell) and the agreement of the states with the true
//! segments (clustering accuracy: the best one-to-one matching of states to segments;
//! surplus states count as errors).
//!
//! `cargo run --release --example branching -- N D NOISE BRANCHES [LAMBDA] [SEED] [MIN_BRANCH]`
//! (LAMBDA defaults to DDRTree's own, `auto`; SEED to 1; MIN_BRANCH to 0, every centre of
//! degree above 2 a branch point, else spurs of fewer than MIN_BRANCH centres set aside as
//! `--min-branch` does; e.g. `20000 500 0.05 3 2000 1 5`).

use unfold::data::synthetic::branching;
use unfold::eval::{clustering_accuracy, spearman};
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::DdrTreeParams;

#[path = "support/branching_truth.rs"]
mod branching_truth;

fn main() -> unfold::core::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or(default.into());
    let parse = |s: String| s.parse::<f64>().expect("a number");
    let n = parse(arg(0, "2000")) as usize;
    let p = parse(arg(1, "50")) as usize;
    let noise = parse(arg(2, "0.05"));
    let branches = parse(arg(3, "3")) as usize;
    let seed = parse(arg(5, "1")) as u64;
    let min_branch = parse(arg(6, "0")) as usize;
    let data = branching(n, branches, p, noise, seed)?;
    let truth = branching_truth::truth(&data);
    let mut params = DdrTreeParams::new(2);
    if let Some(l) = args.get(4).filter(|l| *l != "auto") {
        params.lambda = Some(parse(l.clone()));
    }
    let start = std::time::Instant::now();
    let fit = params.fit(&data.points)?;
    let order = fit.order_with(Root::Cell(truth.root), min_branch)?;
    let seconds = start.elapsed().as_secs_f64();
    let rho = spearman(&order.pseudotime, &truth.time)?;
    let agreement = clustering_accuracy(&order.state, truth.segment)?;
    println!(
        "| {n} | {p} | {noise} | {branches} | {} | {min_branch} | {} | {} | {rho:.4} | {agreement:.4} | {seconds:.2} |",
        args.get(4).map_or("auto", |s| s.as_str()),
        fit.centres.nrows(),
        order.states,
    );
    Ok(())
}
