//! DDRTree's ordering against simulated branching trajectories with known time and branch
//! (`unfold_data::synthetic::branching`): the bench (`bench/ddrtree/accuracy.sh`) runs the
//! full-size matrix; this is the same check at N = 3000.

use unfold::data::synthetic::branching;
use unfold::eval::{clustering_accuracy, spearman};
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::DdrTreeParams;

/// With lambda = N / 10 (docs/methods/ddrtree.md), rooted at the earliest cell:
/// pseudotime follows the true time (Spearman >= 0.95) and the states are the true
/// segments (clustering accuracy >= 0.9, surplus states counting as errors), on three
/// seeds of a three-branch trajectory in 100 dimensions with noise 0.05 per dimension.
#[test]
fn pseudotime_and_states_recover_a_simulated_trajectory() {
    let n = 3000;
    for seed in 1..=3 {
        let data = branching(n, 3, 100, 0.05, seed).unwrap();
        let (time, root) = data.time_and_start().unwrap();
        let params = DdrTreeParams {
            lambda: Some(n as f64 / 10.0),
            ..DdrTreeParams::new(2)
        };
        let fit = params.fit(&data.points).unwrap();
        let order = fit.order(Root::Cell(root)).unwrap();
        let rho = spearman(&order.pseudotime, &time).unwrap();
        let agreement = clustering_accuracy(&order.state, data.labels.as_ref().unwrap()).unwrap();
        assert!(rho >= 0.95, "seed {seed}: Spearman {rho}");
        assert!(agreement >= 0.9, "seed {seed}: state agreement {agreement}");
    }
}
