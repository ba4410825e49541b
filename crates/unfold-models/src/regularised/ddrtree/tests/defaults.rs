//! The settings chosen from the data and the declared parameters: Monocle 2's centres,
//! the defaults on a tree of three branch points, the fallbacks, and the registry's
//! settings read into the parameters.

use super::*;

#[test]
fn automatic_centres_follow_monocle() {
    // Monocle 2's cal_ncenter: round(2 * 100 * log(n) / (log(n) + log(100))).
    assert_eq!(auto_centres(99), 99);
    assert_eq!(auto_centres(100), 100);
    assert_eq!(auto_centres(1000), 120);
    assert_eq!(auto_centres(20_000), 137);
    assert_eq!(auto_centres(100_000), 143);
    let y = branching(150, 5, 3) + noise(150, 5, 4) * 0.1;
    let fit = DdrTreeParams::new(2).fit(&y).unwrap();
    assert_eq!(fit.centres.nrows(), auto_centres(150));
}

/// With no setting but the root, a tree of three branch points (a seeded binary tree of
/// seven segments in 20 dimensions) is ordered right: pseudotime against the true time has
/// Spearman's correlation >= 0.95 and the ordering finds exactly three branch points. The
/// papers' `d = 2` and `lambda = 5 N` give 0.87 and one branch point on these data.
/// The choices are reported with their reasons.
#[test]
fn the_defaults_order_a_tree_of_three_branch_points() {
    use unfold_data::synthetic::{tree, TreeSpec};
    let spec = TreeSpec::binary(2);
    let data = tree(2000, &spec, 20, 0.05, 11).unwrap();
    let (time, root) = data.time_and_start().unwrap();
    let order = TreeOrdering {
        root: Some(Root::Cell(root)),
        min_branch: None,
        neighbours: None,
    };
    let fit = DdrTreeParams::default()
        .ordering(order)
        .fit(&data.points)
        .unwrap();
    let t = fit.trajectory.as_ref().unwrap();
    let rho = unfold_eval::spearman(&t.pseudotime, &time).unwrap();
    assert!(rho >= 0.95, "Spearman {rho}");
    assert_eq!(t.branch_points.len(), spec.branch_points());
    // Seven orthogonal segments: seven components above the noise.
    assert_eq!(fit.w.ncols(), 7);
    assert_eq!(fit.lambda, 10.0 * 2000.0 / auto_centres(2000) as f64);
    let notes = crate::method::Model::notes(&fit);
    let note = |k: &str| notes.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(note("dim").as_deref(), Some("7"));
    assert!(note("dim_reason")
        .unwrap()
        .contains("7 principal components"));
    for name in ["lambda", "ncenters", "min_branch", "pseudotime_neighbours"] {
        assert!(note(&format!("{name}_reason")).is_some(), "{name}");
    }
    // The papers' settings, for the record of what the defaults replace.
    let papers = DdrTreeParams {
        lambda: Some(5.0 * 2000.0),
        ..DdrTreeParams::new(2)
    }
    .ordering(TreeOrdering {
        root: Some(Root::Cell(root)),
        min_branch: Some(0),
        neighbours: Some(1),
    })
    .fit(&data.points)
    .unwrap();
    let t2 = papers.trajectory.unwrap();
    assert!(unfold_eval::spearman(&t2.pseudotime, &time).unwrap() < 0.95);
    assert!(t2.branch_points.len() < 3);
}

/// Where the dimension rule cannot read the spectrum (three features), the fit falls back
/// to the papers' plane and says so; a given dimension is not reported as chosen; with the
/// R package's conventions `lambda` is its `5 N`.
#[test]
fn a_default_that_cannot_be_chosen_falls_back_and_says_so() {
    let y = branching(120, 3, 2);
    let fit = DdrTreeParams::default().fit(&y).unwrap();
    assert_eq!(fit.w.ncols(), 2);
    let reason = &fit.chosen.iter().find(|c| c.name == "dim").unwrap().reason;
    assert!(reason.contains("fell back"), "{reason}");
    let given = DdrTreeParams::new(2).fit(&y).unwrap();
    assert!(given.chosen.iter().all(|c| c.name != "dim"));
    let r = DdrTreeParams {
        compat: Compat::R,
        ..DdrTreeParams::new(2)
    }
    .fit(&y)
    .unwrap();
    assert_eq!(r.lambda, 5.0 * 120.0);
    // Points with no spread are refused with the reason, in both conventions.
    let same = DMatrix::from_element(50, 5, 1.5);
    for compat in [Compat::Paper, Compat::R] {
        let params = DdrTreeParams {
            compat,
            ..DdrTreeParams::default()
        };
        let e = params.fit(&same).unwrap_err().to_string();
        assert!(e.contains("no spread"), "{e}");
    }
}

/// The declared parameters read the registry's settings: the ordering options give one
/// root (a root cell or state implies `order`), both roots are refused as before, and the
/// settings written back read the same parameters.
#[test]
fn settings_give_the_declared_parameters_and_the_ordering() {
    use crate::method::{Declared, Settings};
    let read = |s: Settings| DdrTreeParams::read_checked(&s).map(|p| p.into_inner());
    let p = read(Settings::new()).unwrap();
    assert_eq!(p, DdrTreeParams::default());
    assert_eq!((p.dim, p.ordering.min_branch), (None, None));
    assert_eq!(
        (p.sigma, p.gamma, p.max_iter, p.tol),
        (None, 10.0, 20, 1e-3)
    );
    assert_eq!((p.lambda, p.ncenters, p.ordering.root), (None, None, None));
    let s = Settings::new()
        .with("dim", 3usize)
        .with("lambda", 4.0)
        .with("compat", "r")
        .with("order", false)
        .with("min_branch", 2usize)
        .with("pseudotime_neighbours", 5usize)
        .with("root_state", 2usize);
    let p = read(s).unwrap();
    assert_eq!((p.dim, p.lambda, p.compat), (Some(3), Some(4.0), Compat::R));
    assert_eq!(
        p.ordering,
        TreeOrdering {
            root: Some(Root::State(2)),
            min_branch: Some(2),
            neighbours: Some(5),
        }
    );
    assert_eq!(read(p.settings()).unwrap(), p);
    let cell = read(Settings::new().with("root_cell", 5usize)).unwrap();
    assert_eq!(cell.ordering.root, Some(Root::Cell(5)));
    assert_eq!(read(cell.settings()).unwrap(), cell);
    let auto = read(Settings::new().with("order", true)).unwrap();
    assert_eq!(auto.ordering.root, Some(Root::Auto));
    assert_eq!(read(auto.settings()).unwrap(), auto);
    let both = Settings::new()
        .with("root_cell", 1usize)
        .with("root_state", 1usize);
    assert_eq!(
        read(both).unwrap_err().to_string(),
        "invalid value for `root_cell`: give a root cell or a root state, not both"
    );
    // The declared ranges, checked for parameters set through the Rust API.
    let state0 = DdrTreeParams::new(2).ordering(TreeOrdering {
        root: Some(Root::State(0)),
        min_branch: Some(0),
        neighbours: None,
    });
    assert!(state0
        .check()
        .unwrap_err()
        .to_string()
        .contains("root_state"));
}
