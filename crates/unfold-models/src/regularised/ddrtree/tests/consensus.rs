//! The consensus of starts (`consensus.rs`): the medoid by agreement of the distances
//! along the trees, whatever the objectives say.

use super::super::consensus::medoid;
use super::super::iterate::Run;
use super::*;
use unfold_core::{Evidence, Stop};

/// A fit of the cells `z` with the tree `edges` over `centres`.
fn run(z: &DMatrix<f64>, centres: &DMatrix<f64>, edges: &[(usize, usize)]) -> Run {
    Run {
        state: State {
            w: DMatrix::identity(2, 2),
            z: z.clone(),
            c: centres.clone(),
        },
        edges: edges.iter().map(|&(a, b)| (a, b, 1.0)).collect(),
        history: Vec::new(),
        terms: Vec::new(),
        stop: Stop::MaxIter,
    }
}

#[test]
fn the_medoid_is_a_tree_the_others_agree_with_and_objectives_break_ties() {
    // A fork: trunk 0-1-2, branches 2-3-4 (up) and 2-5-6 (down); three cells near each
    // centre.
    let at = [
        (0.0, 0.0),
        (1.0, 0.0),
        (2.0, 0.0),
        (2.7, 0.7),
        (3.4, 1.4),
        (2.7, -0.7),
        (3.4, -1.4),
    ];
    let centres = DMatrix::from_fn(7, 2, |k, j| if j == 0 { at[k].0 } else { at[k].1 });
    let z = DMatrix::from_fn(21, 2, |i, j| {
        centres[(i / 3, j)] + 0.05 * ((i % 3) as f64 - 1.0) * if j == 0 { 1.0 } else { -1.0 }
    });
    let fork = [(0, 1), (1, 2), (2, 3), (3, 4), (2, 5), (5, 6)];
    // The same tree with its centres numbered otherwise.
    let perm = [4, 0, 6, 2, 5, 1, 3];
    let mut renamed = DMatrix::zeros(7, 2);
    for (k, &to) in perm.iter().enumerate() {
        renamed.set_row(to, &centres.row(k));
    }
    let renamed_fork: Vec<(usize, usize)> = fork.iter().map(|&(a, b)| (perm[a], perm[b])).collect();
    // A wrong tree: a path that joins the ends of the branches.
    let path = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 5)];
    let runs = [
        run(&z, &centres, &fork),
        run(&z, &renamed, &renamed_fork),
        run(&z, &centres, &path),
    ];
    // The wrong tree has the lowest objective and is outvoted; of the two equal trees, the
    // lower objective is kept.
    assert_eq!(medoid(&runs, &[3.0, 2.0, 1.0]).unwrap(), 1);
    assert_eq!(medoid(&runs, &[2.0, 3.0, 1.0]).unwrap(), 0);
    // Two starts always tie: the lower objective.
    assert_eq!(medoid(&runs[1..], &[2.0, 1.0]).unwrap(), 1);
    assert_eq!(medoid(&runs[1..], &[1.0, 2.0]).unwrap(), 0);
}

/// In a fit: two starts tie, so consensus keeps the lower objective; with more starts it
/// keeps one of the starts' fits (its objective is one a start reached), never below the
/// lowest; one start has nothing to choose.
#[test]
fn consensus_in_a_fit_keeps_one_of_the_starts() {
    let y = branching(1200, 5, 9) + noise(1200, 5, 10) * 0.3;
    let value = |restarts, keep| {
        let params = DdrTreeParams {
            ncenters: Some(40),
            restarts: Some(restarts),
            keep,
            seed: 4,
            ..DdrTreeParams::new(2)
        };
        params.fit(&y).unwrap().evidence().value
    };
    for restarts in [1, 2] {
        assert_eq!(
            value(restarts, Keep::Consensus),
            value(restarts, Keep::Objective)
        );
    }
    // The further starts reach a lower objective than the first (the objective test).
    assert!(value(2, Keep::Objective) < value(1, Keep::Objective));
    assert!(value(4, Keep::Consensus) >= value(4, Keep::Objective));
    // Each start's own final objective, as the observer hears it: the lowest is the
    // objective rule's fit, and the consensus keeps one of them.
    let finals = Finals(Default::default());
    let params = DdrTreeParams {
        ncenters: Some(40),
        restarts: Some(4),
        seed: 4,
        ..DdrTreeParams::new(2)
    }
    .check()
    .unwrap();
    let kept = params.fit_view_observed(as_faer(&y), &finals).unwrap();
    let finals = finals.0.into_inner().unwrap();
    assert_eq!(finals.len(), 4);
    let lowest = finals.values().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(lowest, value(4, Keep::Objective));
    let kept = kept.evidence().value;
    assert_eq!(kept, value(4, Keep::Consensus));
    assert!(finals.values().any(|&v| v == kept), "{kept} {finals:?}");
}

/// The last objective each start reported.
struct Finals(std::sync::Mutex<std::collections::BTreeMap<usize, f64>>);

impl Observer for Finals {
    fn iteration(&self, restart: usize, _: usize, evidence: &Evidence) {
        self.0.lock().unwrap().insert(restart, evidence.value);
    }
}

/// Once the observer has heard `after` iterations it stops the fit or, with `end`, ends it.
struct After {
    after: usize,
    end: bool,
    heard: std::sync::atomic::AtomicUsize,
}

impl Observer for After {
    fn iteration(&self, _: usize, _: usize, _: &Evidence) {
        self.heard
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn stopped(&self) -> bool {
        !self.end && self.heard.load(std::sync::atomic::Ordering::Relaxed) >= self.after
    }
    fn ended(&self) -> bool {
        self.end && self.heard.load(std::sync::atomic::Ordering::Relaxed) >= self.after
    }
}

/// The starts run in parallel and stop together: a stop asked after the first iteration
/// interrupts the fit, an end keeps a fit of one iteration, and no start runs a second
/// iteration (each hears the request after its own first).
#[test]
fn ddrtree_starts_stop_together() {
    let y = branching(1200, 5, 9) + noise(1200, 5, 10) * 0.3;
    let params = DdrTreeParams {
        ncenters: Some(40),
        tol: 0.0,
        max_iter: 1000,
        ..DdrTreeParams::new(2)
    }
    .check()
    .unwrap();
    let stop = After {
        after: 1,
        end: false,
        heard: Default::default(),
    };
    assert!(matches!(
        params.fit_view_observed(as_faer(&y), &stop),
        Err(Error::Interrupted)
    ));
    assert!((1..=5).contains(&stop.heard.into_inner()));
    let end = After {
        after: 1,
        end: true,
        heard: Default::default(),
    };
    let fit = params.fit_view_observed(as_faer(&y), &end).unwrap();
    assert_eq!(fit.convergence.trace.len(), 1);
    assert!(!fit.convergence.converged);
    assert!((1..=5).contains(&end.heard.into_inner()));
}
