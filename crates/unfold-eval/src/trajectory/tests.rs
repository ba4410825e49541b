use super::him::{frequencies, lorentz_overlap, Network};
use super::*;
use std::f64::consts::PI;

/// A bifurcation: trunk 0-1 (length 2), branches 1-2 (length 1) and 1-3 (length 3); four
/// cells inside the trunk, three inside each branch.
fn bifurcation() -> TrajectoryLayout {
    TrajectoryLayout::new(
        vec![(0, 1, 2.0), (1, 2, 1.0), (1, 3, 3.0)],
        vec![
            (0, 1, 0.1),
            (0, 1, 0.3),
            (1, 0, 0.4),
            (0, 1, 0.8),
            (1, 2, 0.2),
            (2, 1, 0.5),
            (1, 2, 0.9),
            (1, 3, 0.25),
            (1, 3, 0.5),
            (3, 1, 0.1),
        ],
    )
}

/// The same trajectory with its nodes renamed by `perm` (node v becomes perm[v]), its edges
/// listed in reverse and flipped, and every other cell given from the other end.
fn relabel(layout: &TrajectoryLayout, perm: &[usize]) -> TrajectoryLayout {
    let edges = layout
        .edges
        .iter()
        .rev()
        .map(|&(a, b, len)| (perm[b], perm[a], len))
        .collect();
    let cells = layout
        .cells
        .iter()
        .enumerate()
        .map(|(i, &(a, b, t))| {
            if i % 2 == 0 {
                (perm[b], perm[a], 1.0 - t)
            } else {
                (perm[a], perm[b], t)
            }
        })
        .collect();
    TrajectoryLayout::new(edges, cells)
}

/// The distances between all cells by a different route: every cell becomes a vertex that
/// splits its edge, then Floyd–Warshall on the refined graph.
fn brute_distances(layout: &TrajectoryLayout) -> Vec<Vec<f64>> {
    let k = 1 + layout.edges.iter().map(|e| e.0.max(e.1)).max().unwrap();
    let n = layout.cells.len();
    let v = k + n;
    let mut d = vec![vec![f64::INFINITY; v]; v];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = 0.0;
    }
    for &(a, b, len) in &layout.edges {
        // Points along a -> b: (offset from a, vertex).
        let mut points = vec![(0.0, a), (len, b)];
        for (i, &(f, t, x)) in layout.cells.iter().enumerate() {
            if (f, t) == (a, b) {
                points.push((x * len, k + i));
            } else if (f, t) == (b, a) {
                points.push(((1.0 - x) * len, k + i));
            }
        }
        points.sort_by(|p, q| p.0.total_cmp(&q.0));
        for w in points.windows(2) {
            let (x, y, s) = (w[0].1, w[1].1, w[1].0 - w[0].0);
            d[x][y] = d[x][y].min(s);
            d[y][x] = d[y][x].min(s);
        }
    }
    for m in 0..v {
        for i in 0..v {
            for j in 0..v {
                if d[i][m] + d[m][j] < d[i][j] {
                    d[i][j] = d[i][m] + d[m][j];
                }
            }
        }
    }
    (0..n)
        .map(|i| (0..n).map(|j| d[k + i][k + j]).collect())
        .collect()
}

/// A tree of 9 nodes with cells on every edge, at nodes (t = 0 and t = 1, on different
/// edges at the same node) and several on one edge in both orientations.
fn bushy() -> TrajectoryLayout {
    let edges = vec![
        (0, 1, 1.5),
        (1, 2, 0.5),
        (2, 3, 2.0),
        (2, 4, 1.0),
        (1, 5, 0.75),
        (5, 6, 3.0),
        (5, 7, 0.25),
        (7, 8, 1.25),
    ];
    let mut cells = Vec::new();
    for (e, &(a, b, _)) in edges.iter().enumerate() {
        let t = 0.1 + 0.1 * e as f64;
        cells.push((a, b, t));
        cells.push((b, a, 1.0 - t / 2.0));
    }
    cells.extend([
        (2, 3, 0.0),
        (2, 4, 0.0),
        (1, 2, 1.0),
        (7, 8, 1.0),
        (0, 1, 0.0),
    ]);
    TrajectoryLayout::new(edges, cells)
}

#[test]
fn geodesic_distances_match_a_brute_force_path_sum() {
    for layout in [bushy(), bifurcation()] {
        let n = layout.cells.len();
        let rows: Vec<usize> = (0..n).collect();
        let d = geodesic_distances(&layout, &rows).unwrap();
        let brute = brute_distances(&layout);
        for i in 0..n {
            for j in 0..n {
                assert!(
                    (d[(i, j)] - brute[i][j]).abs() < 1e-12,
                    "cells {i}, {j}: {} vs {}",
                    d[(i, j)],
                    brute[i][j]
                );
            }
        }
        // A subset of rows gives those rows.
        let some = geodesic_distances(&layout, &[3, 0]).unwrap();
        assert_eq!(some.row(0), d.row(3));
        assert_eq!(some.row(1), d.row(0));
    }
}

#[test]
fn pseudotime_from_a_node_and_from_a_cell() {
    let layout = bifurcation();
    let t = pseudotime(&layout, Root::Node(0)).unwrap();
    let expected = [0.2, 0.6, 1.2, 1.6, 2.2, 2.5, 2.9, 2.75, 3.5, 4.7];
    for (got, want) in t.iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "{t:?}");
    }
    let from_cell = pseudotime(&layout, Root::Cell(4)).unwrap();
    let brute = brute_distances(&layout);
    assert_eq!(from_cell, brute[4]);
    assert!(pseudotime(&layout, Root::Node(4)).is_err());
    assert!(pseudotime(&layout, Root::Cell(10)).is_err());
}

#[test]
fn pseudotime_correlation_is_one_for_the_same_order_and_minus_one_reversed() {
    // A path 0-1-2 with cells in order, and the same path with its nodes renamed.
    let path = TrajectoryLayout::unit_lengths(
        &[(0, 1), (1, 2)],
        vec![(0, 1, 0.1), (0, 1, 0.6), (1, 2, 0.2), (2, 1, 0.3)],
    );
    let renamed = relabel(&path, &[2, 0, 1]);
    let r = pseudotime_correlation(&path, Root::Node(0), &renamed, Root::Node(2)).unwrap();
    assert!((r - 1.0).abs() < 1e-15);
    let r = pseudotime_correlation(&path, Root::Node(0), &renamed, Root::Node(1)).unwrap();
    assert!((r + 1.0).abs() < 1e-15);
    // All cells at the root: no order, 0.
    let flat = TrajectoryLayout::unit_lengths(&[(0, 1)], vec![(0, 1, 0.0); 4]);
    let r = pseudotime_correlation(&flat, Root::Node(0), &path, Root::Node(0)).unwrap();
    assert_eq!(r, 0.0);
}

#[test]
fn identical_and_relabelled_trajectories_are_perfect() {
    let reference = bushy();
    let perm = [4, 7, 0, 8, 2, 6, 1, 5, 3];
    for pred in [reference.clone(), relabel(&reference, &perm)] {
        for w in [
            Waypoints::All,
            Waypoints::PerTrajectory(5),
            Waypoints::default(),
        ] {
            let r = geodesic_correlation(&pred, &reference, w).unwrap();
            assert!((r - 1.0).abs() < 1e-12, "{w:?}: {r}");
        }
        let f1 = f1_branches(&pred, &reference).unwrap();
        assert_eq!(
            f1,
            BranchF1 {
                recovery: 1.0,
                relevance: 1.0,
                f1: 1.0
            }
        );
        let h = him(&pred.edges, &reference.edges, &HimOptions::default()).unwrap();
        assert!(h.distance < 1e-12, "{h:?}");
        assert!(h.hamming < 1e-15 && h.ipsen_mikhailov == 0.0 && h.exact_matching);
        assert!((h.similarity() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn a_long_tree_has_its_branch_points_branches() {
    // 200 centres: a path 0..=119 and a side path from centre 60 through 120..=199.
    let mut edges: Vec<(usize, usize)> = (0..119).map(|i| (i, i + 1)).collect();
    edges.push((60, 120));
    edges.extend((120..199).map(|i| (i, i + 1)));
    let cells: Vec<_> = edges.iter().map(|&(a, b)| (a, b, 0.5)).collect();
    let long = TrajectoryLayout::unit_lengths(&edges, cells);
    let labels = branches(&long).unwrap();
    let mut distinct = labels.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct, vec![0, 1, 2]);
    // Node 0 (a leaf) starts branch 0, to 60; then 60's other edges: 60-61.. and 60-120..
    assert_eq!(labels[0], 0);
    assert_eq!(labels[59], 0);
    assert_eq!(labels[60], 1);
    assert_eq!(labels[118], 1);
    assert!(labels[119..].iter().all(|&l| l == 2));
    // Its contracted tree is a star of lengths 60, 59 and 80: the same as this one.
    let star = [(0, 1, 60.0), (1, 2, 59.0), (1, 3, 80.0)];
    let h = him(&long.edges, &star, &HimOptions::default()).unwrap();
    assert!(h.distance < 1e-12 && h.nodes == 4, "{h:?}");
    // Scaling every length leaves HIM unchanged.
    let scaled: Vec<_> = star.iter().map(|&(a, b, l)| (a, b, 0.01 * l)).collect();
    assert!(
        him(&scaled, &star, &HimOptions::default())
            .unwrap()
            .distance
            < 1e-12
    );
}

#[test]
fn a_linear_prediction_of_a_bifurcation_has_f1_four_elevenths() {
    // Reference groups: trunk {0..4} (4 cells), branches {4..7} and {7..10} (3 each).
    // The path puts all 10 cells in one group G. Jaccard(G, trunk) = 4/10, with each branch
    // 3/10. Recovery = (4 + 3 + 3) / 10 / 3 = 1/3; relevance = max = 2/5;
    // F1 = 2 (1/3)(2/5) / (1/3 + 2/5) = 4/11.
    let reference = bifurcation();
    let cells = (0..10).map(|i| (0, 1, i as f64 / 9.0)).collect();
    let linear = TrajectoryLayout::new(vec![(0, 1, 1.0)], cells);
    let f1 = f1_branches(&linear, &reference).unwrap();
    assert!((f1.recovery - 1.0 / 3.0).abs() < 1e-15, "{f1:?}");
    assert!((f1.relevance - 0.4).abs() < 1e-15, "{f1:?}");
    assert!((f1.f1 - 4.0 / 11.0).abs() < 1e-15, "{f1:?}");
    // Symmetric in F1, recovery and relevance swap.
    let back = f1_branches(&reference, &linear).unwrap();
    assert!((back.recovery - f1.relevance).abs() < 1e-15);
    assert!((back.f1 - f1.f1).abs() < 1e-15);
}

#[test]
fn f1_on_labels_by_hand() {
    // P0 = {0, 1}, P1 = {2, 3}; R0 = {0, 1, 2}, R1 = {3}. J(P0,R0) = 2/3, J(P0,R1) = 0,
    // J(P1,R0) = 1/4, J(P1,R1) = 1/2: recovery = (2/3 + 1/2)/2 = 7/12, relevance the same.
    let f1 = f1_labels(&[5, 5, 9, 9], &[1, 1, 1, 0]).unwrap();
    for v in [f1.recovery, f1.relevance, f1.f1] {
        assert!((v - 7.0 / 12.0).abs() < 1e-15, "{f1:?}");
    }
    // Relabelling either side changes nothing.
    assert_eq!(f1_labels(&[0, 0, 3, 3], &[7, 7, 7, 2]).unwrap(), f1);
    assert!(f1_labels(&[], &[]).is_err());
    assert!(f1_labels(&[0, 1], &[0]).is_err());
}

#[test]
fn the_closed_form_lorentzian_overlap_matches_quadrature() {
    let g = 0.1;
    for (a, b) in [(0.0, 0.0), (0.3, 0.3), (0.0, 0.5), (0.2, 0.25), (1.7, 0.4)] {
        let f = |w: f64| g * g / (((w - a).powi(2) + g * g) * ((w - b).powi(2) + g * g));
        let exact = lorentz_overlap(a, b, g);
        let numeric = half_line(f);
        assert!(
            (exact - numeric).abs() < 1e-9 * exact.max(1.0),
            "{a}, {b}: {exact} vs {numeric}"
        );
        assert!((lorentz_overlap(b, a, g) - exact).abs() < 1e-14 * exact);
    }
    // Nearly equal frequencies: no cancellation.
    let near = lorentz_overlap(0.3, 0.3 + 1e-12, g);
    assert!((near - lorentz_overlap(0.3, 0.3, g)).abs() < 1e-9);
}

/// `∫_0^∞ f` by Simpson's rule after `ω = tan θ`.
fn half_line(f: impl Fn(f64) -> f64) -> f64 {
    let steps = 400_000;
    let end = 0.5 * PI - 1e-9;
    let h = end / steps as f64;
    let g = |theta: f64| {
        let c = theta.cos();
        f(theta.tan()) / (c * c)
    };
    let mut sum = g(0.0) + g(end);
    for i in 1..steps {
        sum += g(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

#[test]
fn him_of_a_path_against_a_bifurcation_by_hand_and_by_quadrature() {
    // The path (one edge of length 2) becomes a-m-b with weights 1/4, 1/4; the star of
    // three unit branches has weights 1/6 on each edge; n = 4. Best matching a-m-b onto
    // leaf-centre-leaf: sum over pairs |A - B| = 2 (1/4 - 1/6) + 1/6 = 1/3, twice that
    // over ordered pairs, / (4 * 3): H = 1/18.
    let path = [(0, 1, 2.0)];
    let star = [(0, 1, 1.0), (0, 2, 1.0), (0, 3, 1.0)];
    let h = him(&path, &star, &HimOptions::default()).unwrap();
    assert!((h.hamming - 1.0 / 18.0).abs() < 1e-15, "{h:?}");
    assert_eq!(h.nodes, 4);
    assert!(h.exact_matching);
    // Ipsen–Mikhailov by quadrature of the densities, normalised numerically.
    let g = 0.1;
    let density = |net: &Network| {
        let w = frequencies(net, 4);
        let raw = move |x: f64| {
            w.iter()
                .map(|&k| g / ((x - k).powi(2) + g * g))
                .sum::<f64>()
        };
        let scale = 1.0 / half_line(&raw);
        move |x: f64| scale * raw(x)
    };
    let (pa, pb) = (
        density(&Network::of(&path, "a").unwrap()),
        density(&Network::of(&star, "b").unwrap()),
    );
    let im = half_line(|x| (pa(x) - pb(x)).powi(2)).sqrt();
    assert!((h.ipsen_mikhailov - im).abs() < 1e-7, "{h:?} vs {im}");
    let want = (0.5 * ((1.0 / 18.0f64).powi(2) + im * im)).sqrt();
    assert!((h.distance - want).abs() < 1e-7);
    // The path padded with an isolated node: Laplacian eigenvalues of weights 1/4 on a-m-b
    // are 0, 0 (isolated), 1/4 and 3/4.
    let w = frequencies(&Network::of(&path, "a").unwrap(), 4);
    let want = [0.0, 0.25f64.sqrt(), 0.75f64.sqrt()];
    for (x, y) in w.iter().zip(want) {
        assert!((x - y).abs() < 1e-12, "{w:?}");
    }
    // Symmetric.
    let back = him(&star, &path, &HimOptions::default()).unwrap();
    assert!((back.distance - h.distance).abs() < 1e-15);
}

#[test]
fn him_finds_the_best_matching_of_unequal_trees() {
    // Two caterpillars labelled differently; the prediction has an extra short leg at the
    // node that is the reference's node 1 (reference node v is prediction node 6 - v).
    // The best correspondence maps the shared part onto itself, whatever the labels.
    let reference = [
        (0, 1, 1.0),
        (1, 2, 1.0),
        (2, 3, 1.0),
        (1, 4, 2.0),
        (2, 5, 0.5),
    ];
    let pred = [
        (6, 5, 1.0),
        (5, 4, 1.0),
        (4, 3, 1.0),
        (5, 2, 2.0),
        (4, 1, 0.5),
        (5, 0, 0.25),
    ];
    let h = him(&pred, &reference, &HimOptions::default()).unwrap();
    assert!(h.exact_matching && h.nodes == 7);
    // Weights l / (2 total): totals 5.75 and 5.5. Sum over pairs of |A - B| under that
    // correspondence (the extra leg unmatched), twice over ordered pairs, / (7 * 6).
    let (tp, tr): (f64, f64) = (11.5, 11.0);
    let shared: f64 = [1.0, 1.0, 1.0, 2.0, 0.5]
        .iter()
        .map(|l| (l / tp - l / tr).abs())
        .sum();
    let want = 2.0 * (shared + 0.25 / tp) / 42.0;
    assert!((h.hamming - want).abs() < 1e-15, "{} vs {want}", h.hamming);
    // A tiny budget still returns a valid (not proven) matching.
    let quick = him(
        &pred,
        &reference,
        &HimOptions {
            max_matching_steps: 3,
            ..HimOptions::default()
        },
    )
    .unwrap();
    assert!(quick.hamming >= h.hamming - 1e-15);
    assert!(!quick.exact_matching);
}

#[test]
fn geodesic_correlation_over_all_cells_is_spearman_of_the_distance_matrices() {
    let reference = bifurcation();
    // A prediction that puts the trunk's cells on a separate branch of a path.
    let mut pred = bifurcation();
    pred.edges = vec![(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)];
    pred.cells = (0..10)
        .map(|i| (i % 3, i % 3 + 1, 0.05 * i as f64))
        .collect();
    let rows: Vec<usize> = (0..10).collect();
    let dp = geodesic_distances(&pred, &rows).unwrap();
    let dr = geodesic_distances(&reference, &rows).unwrap();
    // Row by row, in units of 1e-9 of the tree's total length (3 and 6), rounded.
    let flat = |d: &DMatrix<f64>, total: f64| -> Vec<f64> {
        let unit = TIE_PRECISION * total;
        d.transpose().iter().map(|x| (x / unit).round()).collect()
    };
    let want = crate::spearman(&flat(&dp, 3.0), &flat(&dr, 6.0)).unwrap();
    let got = geodesic_correlation(&pred, &reference, Waypoints::All).unwrap();
    assert_eq!(got, want);
    assert!(got < 0.99);
    // Enough waypoints per trajectory to take every cell: the same value.
    let same = geodesic_correlation(&pred, &reference, Waypoints::PerTrajectory(10)).unwrap();
    assert_eq!(same, want);
    // All cells at one node: constant distances, 0.
    let mut collapsed = reference.clone();
    collapsed.cells = vec![(1, 2, 0.0); 10];
    let r = geodesic_correlation(&collapsed, &reference, Waypoints::default()).unwrap();
    assert_eq!(r, 0.0);
}

#[test]
fn waypoints_spread_over_places_in_proportion() {
    let layout = bifurcation();
    // 10 cells: 4 on the trunk, 3 on each branch (none at a node). Asking for 2 gives
    // each place ceil(2 m / 10) = 1 waypoint, the middle one (position floor(m / 2)) of its
    // cells along the branch: trunk 0 (0.2), 1 (0.6), 2 (1.2), 3 (1.6) -> cell 2; branch
    // 1-2: cells 4 (0.2), 5 (0.5), 6 (0.9) -> 5; branch 1-3: 7 (0.75), 8 (1.5), 9 (2.7) -> 8.
    let w = waypoint_cells(&layout, 2).unwrap();
    assert_eq!(w, vec![2, 5, 8]);
    assert_eq!(
        waypoint_cells(&layout, 10).unwrap(),
        (0..10).collect::<Vec<_>>()
    );
    // A cell at a leaf and one at the branch point are places of their own.
    let mut at_nodes = layout.clone();
    at_nodes.cells.push((1, 3, 1.0));
    at_nodes.cells.push((2, 1, 1.0));
    let w = waypoint_cells(&at_nodes, 1).unwrap();
    assert!(w.contains(&10) && w.contains(&11), "{w:?}");
    assert!(waypoint_cells(&layout, 0).is_err());
}

#[test]
fn bad_input_is_an_error_with_a_message() {
    let good = bifurcation();
    let message = |r: Result<f64>| r.unwrap_err().to_string();
    let check = |layout: &TrajectoryLayout, needle: &str| {
        let e = message(geodesic_correlation(layout, &good, Waypoints::default()));
        assert!(e.contains(needle), "{e}");
        assert!(f1_branches(layout, &good).is_err());
        assert!(branches(layout).is_err());
        assert!(pseudotime(layout, Root::Node(0)).is_err());
    };
    let with_edges = |edges: Vec<(usize, usize, f64)>| TrajectoryLayout {
        edges,
        cells: vec![(0, 1, 0.5)],
    };
    check(&with_edges(vec![]), "no edges");
    check(&with_edges(vec![(0, 1, 1.0), (1, 1, 1.0)]), "itself");
    check(&with_edges(vec![(0, 1, 1.0), (1, 9, 1.0)]), "names node 9");
    check(&with_edges(vec![(0, 1, f64::NAN)]), "finite");
    check(&with_edges(vec![(0, 1, -1.0)]), ">= 0");
    check(
        &with_edges(vec![(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]),
        "not a tree",
    );
    check(&with_edges(vec![(0, 1, 1.0), (1, 0, 1.0)]), "not a tree");
    check(
        &with_edges(vec![(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (3, 4, 1.0)]),
        "cycle",
    );
    let with_cells = |cells: Vec<(usize, usize, f64)>| TrajectoryLayout {
        edges: good.edges.clone(),
        cells,
    };
    check(&with_cells(vec![]), "empty");
    check(&with_cells(vec![(0, 1, 1.5)]), "[0, 1]");
    check(&with_cells(vec![(0, 1, -0.1)]), "[0, 1]");
    check(&with_cells(vec![(0, 1, f64::NAN)]), "[0, 1]");
    check(&with_cells(vec![(0, 2, 0.5)]), "not an edge");
    // Different cell counts.
    let mut fewer = good.clone();
    fewer.cells.pop();
    let e = message(geodesic_correlation(&fewer, &good, Waypoints::default()));
    assert!(e.contains("9 cells") && e.contains("10"), "{e}");
    assert!(f1_branches(&fewer, &good).is_err());
    assert!(pseudotime_correlation(&fewer, Root::Node(0), &good, Root::Node(0)).is_err());
    // One cell: no correlation.
    let one = with_cells(vec![(0, 1, 0.5)]);
    assert!(geodesic_correlation(&one, &one, Waypoints::All).is_err());
    // Bad rows and roots.
    assert!(geodesic_distances(&good, &[10]).is_err());
    assert!(pseudotime_correlation(&good, Root::Node(7), &good, Root::Node(0)).is_err());
    // HIM: invalid trees, zero lengths, bad options.
    let opts = HimOptions::default();
    assert!(him(&[], &good.edges, &opts).is_err());
    assert!(him(&[(0, 1, 1.0), (1, 0, 1.0)], &good.edges, &opts).is_err());
    let e = him(&[(0, 1, 0.0), (1, 2, 0.0)], &good.edges, &opts).unwrap_err();
    assert!(e.to_string().contains("length 0"), "{e}");
    for bad in [
        HimOptions { gamma: 0.0, ..opts },
        HimOptions {
            gamma: f64::INFINITY,
            ..opts
        },
        HimOptions {
            max_matching_steps: 0,
            ..opts
        },
    ] {
        assert!(him(&good.edges, &good.edges, &bad).is_err());
    }
}

#[test]
fn geodesic_agreement_is_spearman_of_the_brute_force_pair_distances() {
    let a = bushy();
    // The same cells on a path through the nodes in another order, and a relabelled copy.
    let mut b = bushy();
    b.edges = (0..8).map(|v| (v, v + 1, 1.0 + 0.1 * v as f64)).collect();
    b.cells = (0..a.cells.len())
        .map(|i| ((i * 5) % 8, (i * 5) % 8 + 1, 0.1 * (i % 10) as f64))
        .collect();
    let c = relabel(&a, &[3, 8, 0, 1, 7, 2, 6, 4, 5]);
    let cells = [0, 3, 4, 7, 11, 15, 16, 19];
    let got = geodesic_agreement(&[a.clone(), b.clone(), c], &cells).unwrap();
    // Every unordered pair of the cells once, in units of 1e-9 of the tree's total length.
    let pairs = |layout: &TrajectoryLayout| -> Vec<f64> {
        let d = brute_distances(layout);
        let unit = TIE_PRECISION * layout.edges.iter().map(|e| e.2).sum::<f64>();
        let mut out = Vec::new();
        for (r, &i) in cells.iter().enumerate() {
            out.extend(cells[r + 1..].iter().map(|&j| (d[i][j] / unit).round()));
        }
        out
    };
    let want = crate::spearman(&pairs(&a), &pairs(&b)).unwrap();
    assert!((got[(0, 1)] - want).abs() < 1e-12, "{} {want}", got[(0, 1)]);
    assert_eq!(got[(0, 1)], got[(1, 0)]);
    assert!(want < 0.9, "{want}");
    // A relabelled copy agrees exactly; the diagonal is 1.
    assert!((got[(0, 2)] - 1.0).abs() < 1e-12);
    assert!((got[(1, 2)] - want).abs() < 1e-12);
    assert_eq!(got[(1, 1)], 1.0);
    // Every cell at one node: constant distances, 0.
    let mut collapsed = a.clone();
    collapsed.cells = vec![(1, 2, 0.0); a.cells.len()];
    let r = geodesic_agreement(&[a.clone(), collapsed], &cells).unwrap();
    assert_eq!(r[(0, 1)], 0.0);
    // Bad input.
    assert!(geodesic_agreement(&[], &cells).is_err());
    assert!(geodesic_agreement(std::slice::from_ref(&a), &[0]).is_err());
    let e = geodesic_agreement(std::slice::from_ref(&a), &[0, 99])
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of range"), "{e}");
    let mut fewer = a.clone();
    fewer.cells.pop();
    assert!(geodesic_agreement(&[a, fewer], &cells).is_err());
}
