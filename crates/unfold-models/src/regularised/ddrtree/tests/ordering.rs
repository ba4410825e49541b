//! Ordering the points along the fitted tree: pseudotime, states and their averaging.

use super::*;

#[test]
fn krumsiek11_fates_fall_in_their_own_states_after_the_progenitors() {
    // Scanpy's simulated myeloid differentiation: DDRTree in 4 dimensions (as in
    // examples/krumsiek11.rs), ordered from the first progenitor.
    let data = unfold_data::bundled::krumsiek11();
    let labels = data.labels.as_ref().unwrap();
    let fit = DdrTreeParams::new(4).fit(&data.points).unwrap();
    let order = fit.order(Root::Cell(0)).unwrap();
    let progenitor = data
        .label_names
        .iter()
        .position(|n| n == "progenitor")
        .unwrap();
    let mut fate_states = Vec::new();
    for t in (0..data.label_names.len()).filter(|&t| t != progenitor) {
        let states: Vec<usize> = (0..labels.len())
            .filter(|&i| labels[i] == t)
            .map(|i| order.state[i])
            .collect();
        assert_eq!(states.len(), 80);
        assert!(
            states.iter().all(|&s| s == states[0]),
            "{}: {states:?}",
            data.label_names[t]
        );
        fate_states.push(states[0]);
    }
    fate_states.sort_unstable();
    fate_states.dedup();
    assert_eq!(
        fate_states.len(),
        4,
        "the four fates share states: {fate_states:?}"
    );
    let mean = |keep: &dyn Fn(usize) -> bool| {
        let v: Vec<f64> = (0..labels.len())
            .filter(|&i| keep(labels[i]))
            .map(|i| order.pseudotime[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(&|t| t == progenitor) < 0.5 * mean(&|t| t != progenitor));
}

/// An ordering in the parameters orders the fit as [`DdrTree::ordered`] does.
#[test]
fn the_fit_orders_the_points_when_asked() {
    let y = branching(60, 4, 6);
    let root = TreeOrdering {
        root: Some(Root::Cell(3)),
        min_branch: Some(1),
        neighbours: Some(1),
    };
    let ordered = DdrTreeParams::new(2).ordering(root).fit(&y).unwrap();
    let plain = DdrTreeParams::new(2).fit(&y).unwrap();
    assert!(plain.trajectory.is_none());
    let want = plain.order_with(Root::Cell(3), 1).unwrap();
    assert_eq!(ordered.trajectory.unwrap().pseudotime, want.pseudotime);
}

/// The default pseudotime is the distance along the tree averaged over each point and its
/// nearest points in the latent projection `(Y - mean) W`, as many as one centre stands
/// for (`N / K`, at most 30), from 0 at the root; the tree and the states are those of the
/// distance along the tree, and the R package's conventions keep Monocle 2's pseudotime.
#[test]
fn the_default_pseudotime_averages_the_tree_distance_over_latent_neighbours() {
    // 400 points over 40 centres: 10 points each.
    let y = branching(400, 5, 7);
    let order = |neighbours| TreeOrdering {
        root: Some(Root::Cell(0)),
        min_branch: Some(3),
        neighbours,
    };
    let params = DdrTreeParams {
        ncenters: Some(40),
        ..DdrTreeParams::new(2)
    };
    let smoothed = params.clone().ordering(order(None)).fit(&y).unwrap();
    let exact = params.clone().ordering(order(Some(1))).fit(&y).unwrap();
    assert_eq!(smoothed.centres, exact.centres);
    let (s, t) = (
        smoothed.trajectory.as_ref().unwrap(),
        exact.trajectory.as_ref().unwrap(),
    );
    assert_eq!(s.state, t.state);
    assert_eq!(s.branch_points, t.branch_points);
    let centred = DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - exact.mean[j]);
    let near = unfold_graph::knn(&(centred * &exact.w), 9).unwrap();
    let mean: Vec<f64> = (0..y.nrows())
        .map(|i| {
            let sum: f64 = near.indices[i].iter().map(|&j| t.pseudotime[j]).sum();
            (t.pseudotime[i] + sum) / 10.0
        })
        .collect();
    for i in 0..y.nrows() {
        let want = (mean[i] - mean[0]).max(0.0);
        assert!(
            (s.pseudotime[i] - want).abs() < 1e-9,
            "{i}: {} vs {want}",
            s.pseudotime[i]
        );
    }
    assert_eq!(s.pseudotime[0], 0.0);
    assert_ne!(s.pseudotime, t.pseudotime);
    let notes = crate::method::Model::notes(&smoothed);
    assert!(notes
        .iter()
        .any(|(n, v)| n == "pseudotime_neighbours" && v == "10"));
    // Every point its own centre (below 100 points): the distance along the tree.
    let few = y.rows(0, 60).into_owned();
    let own = DdrTreeParams::new(2)
        .ordering(order(None))
        .fit(&few)
        .unwrap();
    let own_exact = DdrTreeParams::new(2)
        .ordering(order(Some(1)))
        .fit(&few)
        .unwrap();
    assert_eq!(
        own.trajectory.unwrap().pseudotime,
        own_exact.trajectory.unwrap().pseudotime
    );
    // Monocle 2's pseudotime with the R package's conventions.
    let r = DdrTreeParams {
        compat: Compat::R,
        ..params
    };
    let r_default = r.clone().ordering(order(None)).fit(&y).unwrap();
    let r_exact = r.ordering(order(Some(0))).fit(&y).unwrap();
    assert_eq!(
        r_default.trajectory.unwrap().pseudotime,
        r_exact.trajectory.unwrap().pseudotime
    );
}
