//! DDRTree's ordering against simulated branching trajectories with known time and branch
//! (`unfold_data::synthetic::branching`): the bench (`bench/ddrtree/accuracy.sh`) runs the
//! full-size matrix; this is the same check at N = 3000.

use unfold::data::synthetic::branching;
use unfold::eval::{clustering_accuracy, spearman};
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::DdrTreeParams;

/// With lambda = N / 10 (docs/methods/ddrtree.md), rooted at the earliest cell, on eight
/// seeds of a three-branch trajectory in 100 dimensions with noise 0.05 per dimension:
/// pseudotime follows the true time (Spearman 0.96 on average, at least 0.94 on every
/// seed) and the states are the true segments (clustering accuracy 0.91 on average, at
/// least 0.88; surplus states, which spurs start in Monocle 2's reading, count as errors).
/// A start's spurs are a lottery on any one seed, so the claim is over seeds.
#[test]
fn pseudotime_and_states_recover_a_simulated_trajectory() {
    let n = 3000;
    let (mut rhos, mut agreements) = (Vec::new(), Vec::new());
    for seed in 1..=8 {
        let data = branching(n, 3, 100, 0.05, seed).unwrap();
        let (time, root) = data.time_and_start().unwrap();
        let params = DdrTreeParams {
            lambda: Some(n as f64 / 10.0),
            ..DdrTreeParams::new(2)
        };
        let fit = params.fit(&data.points).unwrap();
        let order = fit.order(Root::Cell(root)).unwrap();
        rhos.push(spearman(&order.pseudotime, &time).unwrap());
        agreements.push(clustering_accuracy(&order.state, data.labels.as_ref().unwrap()).unwrap());
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let least = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        mean(&rhos) >= 0.96 && least(&rhos) >= 0.94,
        "Spearman {rhos:?}"
    );
    assert!(
        mean(&agreements) >= 0.91 && least(&agreements) >= 0.88,
        "state agreement {agreements:?}"
    );
}
