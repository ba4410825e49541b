//! Tests of the ordering: brute-force geodesics, Monocle 2's recipe, states and refusals.

use super::tree::path_lengths;
use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random tree over `k` centres in the plane (each centre joined to an earlier one)
/// and `n` points scattered around its edges and past its leaves.
fn random_tree(k: usize, n: usize, seed: u64) -> (DMatrix<f64>, Vec<(usize, usize)>, DMatrix<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut centres = DMatrix::zeros(k, 2);
    let mut edges = Vec::new();
    for c in 1..k {
        let p = rng.random_range(0..c);
        let angle: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let len: f64 = rng.random_range(0.5..2.0);
        centres[(c, 0)] = centres[(p, 0)] + len * angle.cos();
        centres[(c, 1)] = centres[(p, 1)] + len * angle.sin();
        edges.push((p, c));
    }
    let z = DMatrix::from_fn(n, 2, |_, _| 0.0);
    let mut z = z;
    for i in 0..n {
        let (a, b) = edges[rng.random_range(0..edges.len())];
        let t: f64 = rng.random_range(-0.3..1.3);
        for j in 0..2 {
            z[(i, j)] = centres[(a, j)]
                + t * (centres[(b, j)] - centres[(a, j)])
                + rng.random_range(-0.2..0.2);
        }
    }
    (centres, edges, z)
}

/// Brute force: nearest centre by a full scan, the projection by the same rule written
/// out, then Dijkstra on the tree with every cell's position inserted as a node.
fn brute_pseudotime(
    centres: &DMatrix<f64>,
    edges: &[(usize, usize)],
    z: &DMatrix<f64>,
    root: usize,
) -> Vec<f64> {
    let k = centres.nrows();
    let n = z.nrows();
    let mut degree = vec![0; k];
    for &(a, b) in edges {
        degree[a] += 1;
        degree[b] += 1;
    }
    // Positions as (edge index, fraction from the edge's first centre).
    let mut on_edge: Vec<(usize, f64)> = Vec::new();
    for i in 0..n {
        let c = (0..k)
            .min_by(|&a, &b| {
                let da = (z.row(i) - centres.row(a)).norm_squared();
                let db = (z.row(i) - centres.row(b)).norm_squared();
                da.total_cmp(&db).then(a.cmp(&b))
            })
            .unwrap();
        let mut best = (f64::INFINITY, 0, 0.0);
        let mut nbs: Vec<(usize, usize)> = edges
            .iter()
            .enumerate()
            .filter_map(|(e, &(a, b))| {
                if a == c {
                    Some((b, e))
                } else if b == c {
                    Some((a, e))
                } else {
                    None
                }
            })
            .collect();
        nbs.sort();
        for (nb, e) in nbs {
            let (p, q) = (centres.row(c), centres.row(nb));
            let mut t = (z.row(i) - p).dot(&(q - p)) / (q - p).norm_squared();
            t = if degree[c] == 1 {
                t.min(1.0)
            } else {
                t.clamp(0.0, 1.0)
            };
            let point = p + (q - p) * t;
            let gap = (z.row(i) - point).norm_squared();
            if gap < best.0 {
                let from_first = if edges[e].0 == c { t } else { 1.0 - t };
                best = (gap, e, from_first);
            }
        }
        on_edge.push((best.1, best.2));
    }
    // Nodes: centres 0..k, then cells k..k+n; per edge, its stops sorted by fraction.
    let mut adj = vec![Vec::new(); k + n];
    for (e, &(a, b)) in edges.iter().enumerate() {
        let len = (centres.row(a) - centres.row(b)).norm();
        let mut stops: Vec<(f64, usize)> = vec![(0.0, a), (1.0, b)];
        for (i, &(ei, t)) in on_edge.iter().enumerate() {
            if ei == e {
                stops.push((t, k + i));
            }
        }
        stops.sort_by(|x, y| x.0.total_cmp(&y.0));
        for w in stops.windows(2) {
            let d = (w[1].0 - w[0].0) * len;
            adj[w[0].1].push((w[1].1, d));
            adj[w[1].1].push((w[0].1, d));
        }
    }
    let mut dist = vec![f64::INFINITY; k + n];
    let mut done = vec![false; k + n];
    dist[k + root] = 0.0;
    for _ in 0..k + n {
        let u = (0..k + n)
            .filter(|&u| !done[u])
            .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
            .unwrap();
        done[u] = true;
        for &(v, d) in &adj[u] {
            if dist[u] + d < dist[v] {
                dist[v] = dist[u] + d;
            }
        }
    }
    dist[k..].to_vec()
}

#[test]
fn pseudotime_equals_the_brute_force_geodesics_on_random_trees() {
    for seed in 0..6 {
        let (centres, edges, z) = random_tree(12, 150, seed);
        let root = (seed as usize * 37) % 150;
        let fit = order(&z, &centres, &edges, Root::Cell(root)).unwrap();
        let brute = brute_pseudotime(&centres, &edges, &z, root);
        assert_eq!(fit.root_cell, root);
        for (a, b) in fit.pseudotime.iter().zip(&brute) {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "seed {seed}: {a} vs {b}"
            );
        }
    }
}

/// Monocle 2's measure against its own recipe on the whole distance matrix: the
/// positions' N x N distances, each raised by the smallest nonzero one, Prim's tree on
/// them, and path lengths from the root cell. Cells lie on the edges at distinct
/// fractions, on random trees; trees where two cells still share a position (a tie,
/// which the two may break differently) are skipped, and at least 4 are compared.
#[test]
fn cell_tree_pseudotime_is_the_path_in_monocles_cell_tree() {
    let mut tested = 0;
    for seed in 0..12 {
        let (centres, edges, _) = random_tree(12, 0, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let n = 300;
        let z = DMatrix::from_fn(n, 2, |_, _| 0.0);
        let mut z = z;
        for i in 0..n {
            let (a, b) = edges[rng.random_range(0..edges.len())];
            let t: f64 = rng.random_range(0.05..0.95);
            for j in 0..2 {
                z[(i, j)] = centres[(a, j)] + t * (centres[(b, j)] - centres[(a, j)]);
            }
        }
        let root = rng.random_range(0..n);
        let fit =
            order_measured(&z, &centres, &edges, Root::Cell(root), 0, Measure::CellTree).unwrap();
        let points = DMatrix::from_fn(n, 2, |i, c| {
            let p = fit.position[i];
            centres[(p.from, c)] + p.t * (centres[(p.to, c)] - centres[(p.from, c)])
        });
        let mut dist = DMatrix::from_fn(n, n, |i, j| (points.row(i) - points.row(j)).norm());
        let shortest = dist
            .iter()
            .copied()
            .filter(|&d| d > 0.0)
            .fold(f64::INFINITY, f64::min);
        if (0..n).any(|i| (0..i).any(|j| dist[(i, j)] == 0.0)) {
            // A cell nearer another edge's centre, clamped onto it beside another: a
            // tie in the cell tree, which the recipe may break otherwise.
            continue;
        }
        tested += 1;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    dist[(i, j)] += shortest;
                }
            }
        }
        let prim = crate::minimum_spanning_tree_dense(&dist).unwrap();
        let mut adjacent = vec![Vec::new(); n];
        for &(i, j, w) in &prim {
            adjacent[i].push((j, w));
            adjacent[j].push((i, w));
        }
        let want = path_lengths(&adjacent, root);
        for (i, (&got, &want)) in fit.pseudotime.iter().zip(&want).enumerate() {
            let err = (got - want).abs();
            assert!(err < 1e-9 * (1.0 + want), "seed {seed} cell {i}: {err:e}");
        }
        // It is not the distance along the centres' tree (the raises add up, corners
        // are cut).
        let along = order(&z, &centres, &edges, Root::Cell(root)).unwrap();
        let gap = (0..n)
            .map(|i| (fit.pseudotime[i] - along.pseudotime[i]).abs())
            .fold(0.0, f64::max);
        assert!(gap > shortest, "seed {seed}: {gap:e}");
    }
    assert!(tested >= 4, "only {tested} random trees without ties");
}

/// On a straight line Monocle 2's pseudotime is the arc length plus the smallest gap
/// between neighbouring cells once per cell passed; its automatic root is the first
/// cell at the lower-index end of the tree (centre 0 here), which is a leaf of the cell
/// tree.
#[test]
fn cell_tree_on_a_line_adds_the_smallest_gap_per_cell_passed() {
    let k = 5;
    let centres = DMatrix::from_fn(k, 2, |i, j| if j == 0 { 3.0 * i as f64 } else { 0.0 });
    let edges: Vec<(usize, usize)> = (1..k).map(|c| (c - 1, c)).collect();
    // Distinct positions from x = -0.5 (past the first leaf) to 13.5 (past the last), in
    // shuffled order, with gaps 0.1 and 0.25 alternating.
    let mut xs = vec![-0.5];
    for i in 0..80 {
        let last = xs[xs.len() - 1];
        xs.push(last + if i % 2 == 0 { 0.1 } else { 0.25 });
    }
    let n = xs.len();
    let z = DMatrix::from_fn(n, 2, |i, j| if j == 0 { xs[(i * 37) % n] } else { 0.05 });
    let fit = order_measured(&z, &centres, &edges, Root::Auto, 0, Measure::CellTree).unwrap();
    assert_eq!(
        z[(fit.root_cell, 0)],
        -0.5,
        "the cell at the end of centre 0"
    );
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.sort_by(|&a, &b| z[(a, 0)].total_cmp(&z[(b, 0)]));
    for (rank, &i) in sorted.iter().enumerate() {
        let want = (z[(i, 0)] + 0.5) + rank as f64 * 0.1;
        assert!(
            (fit.pseudotime[i] - want).abs() < 1e-9,
            "cell {i}: {} against {want}",
            fit.pseudotime[i]
        );
    }
    // States and branch points do not depend on the measure.
    let along = order(&z, &centres, &edges, Root::Cell(fit.root_cell)).unwrap();
    assert_eq!((&fit.state, fit.states), (&along.state, along.states));
}

#[test]
fn a_straight_line_gives_the_arc_length_and_roots_at_an_end() {
    let k = 6;
    let centres = DMatrix::from_fn(k, 2, |i, j| if j == 0 { 2.0 * i as f64 } else { 0.0 });
    let edges: Vec<(usize, usize)> = (1..k).map(|c| (c - 1, c)).collect();
    // Cells from x = -1 (past the first leaf) to x = 11 (past the last), off the line.
    let xs: Vec<f64> = (0..61).map(|i| -1.0 + 0.2 * i as f64).collect();
    let z = DMatrix::from_fn(xs.len(), 2, |i, j| {
        if j == 0 {
            xs[(i * 17) % 61]
        } else {
            0.1 * ((i % 3) as f64 - 1.0)
        }
    });
    let fit = order(&z, &centres, &edges, Root::Auto).unwrap();
    let x_root = z[(fit.root_cell, 0)];
    assert!(x_root == -1.0 || (x_root - 11.0).abs() < 1e-12);
    for i in 0..z.nrows() {
        let arc = (z[(i, 0)] - x_root).abs();
        assert!(
            (fit.pseudotime[i] - arc).abs() < 1e-12,
            "{} vs {arc}",
            fit.pseudotime[i]
        );
    }
    assert!(fit.branch_points.is_empty());
    assert_eq!(fit.states, 1);
    assert!(fit.state.iter().all(|&s| s == 1));
}

#[test]
fn states_change_exactly_at_branch_points() {
    // A "Y": a stem 0-1-2 to the branch point 2, arms 2-3-4 and 2-5-6.
    let centres = DMatrix::from_row_slice(
        7,
        2,
        &[
            -4.0, 0.0, -2.0, 0.0, 0.0, 0.0, 1.5, 1.5, 3.0, 3.0, 1.5, -1.5, 3.0, -3.0,
        ],
    );
    let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (2, 5), (5, 6)];
    let z = DMatrix::from_row_slice(
        8,
        2,
        &[
            -4.5, 0.1, // past the stem's leaf: the automatic root
            -1.0, 0.1, // stem
            -0.2, 0.05, // stem, next to the branch point
            0.7, 0.8, // upper arm
            3.2, 3.1, // upper arm, past its leaf
            0.8, -0.7, // lower arm
            2.2, -2.3, // lower arm
            -3.0, -0.1, // stem
        ],
    );
    let fit = order(&z, &centres, &edges, Root::Auto).unwrap();
    assert_eq!(fit.branch_points, vec![2]);
    assert_eq!(fit.states, 3);
    assert_eq!(fit.root_cell, 0);
    let s = &fit.state;
    assert_eq!(s[0], 1);
    assert!(s[1] == 1 && s[2] == 1 && s[7] == 1);
    // Depth-first from the root, children by ascending centre: the arm through 3 is
    // state 2, the arm through 5 state 3.
    assert_eq!((s[3], s[4]), (2, 2));
    assert_eq!((s[5], s[6]), (3, 3));
    // Rooted at the tip of state 3 (the lower arm's leaf side), states renumber from
    // there and pseudotime starts at the lower arm's outermost cell.
    let tip = order(&z, &centres, &edges, Root::State(3)).unwrap();
    assert_eq!(tip.root_cell, 6);
    assert_eq!(tip.pseudotime[6], 0.0);
    assert_eq!(tip.state[6], 1);
    assert!(order(&z, &centres, &edges, Root::State(4))
        .unwrap_err()
        .to_string()
        .contains("no state 4"));
    assert!(order(&z, &centres, &edges, Root::Cell(8))
        .unwrap_err()
        .to_string()
        .contains("out of range"));
    assert_eq!(
        order(&z, &centres, &edges, Root::Cell(4))
            .unwrap()
            .pseudotime[4],
        0.0
    );
}

#[test]
fn spurs_shorter_than_min_branch_join_the_segment_they_hang_from() {
    // A path 0-1-...-9 along the x axis, a spur 4-10-11 of two centres, and a branch
    // 6-12-13-14-15 of four (the path goes on past 6 for three centres).
    let mut xy = (0..10).flat_map(|i| [i as f64, 0.0]).collect::<Vec<_>>();
    xy.extend_from_slice(&[4.0, 1.0, 4.0, 2.0]);
    xy.extend((1..=4).flat_map(|i| [6.0 + i as f64 * 0.5, -(i as f64)]));
    let centres = DMatrix::from_row_slice(16, 2, &xy);
    let mut edges: Vec<(usize, usize)> = (0..9).map(|i| (i, i + 1)).collect();
    edges.extend_from_slice(&[(4, 10), (10, 11), (6, 12), (12, 13), (13, 14), (14, 15)]);
    let z = DMatrix::from_fn(16, 2, |i, j| centres[(i, j)] + 0.01 * (i as f64).sin());
    let all = order_with(&z, &centres, &edges, Root::Cell(0), 0).unwrap();
    assert_eq!(all.branch_points, vec![4, 6]);
    assert_eq!(all.states, 5);
    for min_branch in [1, 2] {
        let kept = order_with(&z, &centres, &edges, Root::Cell(0), min_branch).unwrap();
        assert_eq!(
            kept, all,
            "a spur of 2 centres is not shorter than {min_branch}"
        );
    }
    let pruned = order_with(&z, &centres, &edges, Root::Cell(0), 3).unwrap();
    assert_eq!(pruned.branch_points, vec![6]);
    assert_eq!(pruned.states, 3);
    // The spur's cells are in the stem's state; pseudotime is unchanged.
    assert_eq!(pruned.state[10], pruned.state[2]);
    assert_eq!(pruned.state[11], pruned.state[2]);
    assert_eq!(pruned.pseudotime, all.pseudotime);
    // Past 6 the path goes on for 3 centres only: from 4 on, 6 is a bend, not a branch.
    for min_branch in [4, 5] {
        let none = order_with(&z, &centres, &edges, Root::Cell(0), min_branch).unwrap();
        assert!(none.branch_points.is_empty());
        assert_eq!(none.states, 1);
        let tip = order_with(&z, &centres, &edges, Root::State(1), min_branch).unwrap();
        assert_eq!(tip.states, 1);
    }
}

#[test]
fn a_state_between_two_branch_points_has_no_tip() {
    // Two branch points 1 and 2 joined by the middle segment.
    let centres = DMatrix::from_row_slice(
        6,
        2,
        &[
            -1.0, 1.0, 0.0, 0.0, 2.0, 0.0, 3.0, 1.0, 3.0, -1.0, -1.0, -1.0,
        ],
    );
    let edges = [(0, 1), (1, 2), (2, 3), (2, 4), (1, 5)];
    let z = DMatrix::from_row_slice(
        6,
        2,
        &[
            -1.2, 1.2, 1.0, 0.1, 3.2, 1.1, 3.1, -1.2, -1.1, -1.1, 0.5, -0.1,
        ],
    );
    let fit = order(&z, &centres, &edges, Root::Auto).unwrap();
    assert_eq!(fit.branch_points, vec![1, 2]);
    assert_eq!(fit.states, 5);
    let middle = fit.state[1];
    assert_eq!(fit.state[5], middle);
    let err = order(&z, &centres, &edges, Root::State(middle))
        .unwrap_err()
        .to_string();
    assert!(err.contains("between branch points 1 and 2"), "{err}");
}

#[test]
fn bad_trees_are_refused() {
    let centres = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 1.0, 0.0, 2.0, 0.0]);
    let z = DMatrix::from_row_slice(2, 2, &[0.1, 0.0, 1.9, 0.0]);
    assert!(order(&z, &centres, &[(0, 1)], Root::Auto).is_err());
    assert!(order(&z, &centres, &[(0, 1), (0, 1)], Root::Auto).is_err());
    assert!(order(&z, &centres, &[(0, 1), (1, 3)], Root::Auto).is_err());
    assert!(order(&z, &centres.rows(0, 1).into_owned(), &[], Root::Auto).is_err());
    let wide = DMatrix::zeros(2, 3);
    assert!(order(&wide, &centres, &[(0, 1), (1, 2)], Root::Auto).is_err());
}

#[test]
fn branch_points_joined_by_fewer_than_min_branch_edges_are_one_junction() {
    // A stem 0-1-2-3-4 along the x axis forks at 4 into an arm 5..8 going up and a link
    // 4-9-10 to a second fork at 10, which has arms 11..14 and 15..18. Every arm has four
    // centres; the link has two edges.
    let mut xy: Vec<f64> = (0..5).flat_map(|i| [i as f64, 0.0]).collect();
    xy.extend((1..=4).flat_map(|i| [4.0, i as f64])); // 5..8, up
    xy.extend_from_slice(&[4.5, -0.5, 5.0, -1.0]); // 9, 10
    xy.extend((1..=4).flat_map(|i| [5.0 + i as f64, -1.0])); // 11..14, right
    xy.extend((1..=4).flat_map(|i| [5.0, -1.0 - i as f64])); // 15..18, down
    let centres = DMatrix::from_row_slice(19, 2, &xy);
    let mut edges: Vec<(usize, usize)> = (0..4).map(|i| (i, i + 1)).collect();
    edges.extend_from_slice(&[(4, 5), (5, 6), (6, 7), (7, 8), (4, 9), (9, 10)]);
    edges.extend_from_slice(&[(10, 11), (11, 12), (12, 13), (13, 14)]);
    edges.extend_from_slice(&[(10, 15), (15, 16), (16, 17), (17, 18)]);
    let z = DMatrix::from_fn(19, 2, |i, j| centres[(i, j)] + 0.01 * (i as f64).cos());
    // Monocle 2's reading and a short min_branch: two forks, five states.
    for min_branch in [0, 2] {
        let two = order_with(&z, &centres, &edges, Root::Cell(0), min_branch).unwrap();
        assert_eq!(two.branch_points, vec![4, 10]);
        assert_eq!(two.states, 5);
        assert_ne!(two.state[9], two.state[0]);
    }
    // From 3 edges on, the link is shorter than a branch may be: one junction with four
    // segments, the link's cells in the stem's state, pseudotime unchanged.
    let all = order_with(&z, &centres, &edges, Root::Cell(0), 0).unwrap();
    for min_branch in [3, 4] {
        let one = order_with(&z, &centres, &edges, Root::Cell(0), min_branch).unwrap();
        assert_eq!(one.branch_points, vec![4], "min_branch {min_branch}");
        assert_eq!(one.states, 4);
        assert_eq!(one.state[9], one.state[0]);
        let arms: Vec<usize> = [6, 12, 16].iter().map(|&c| one.state[c]).collect();
        assert!(arms.iter().all(|&s| s != one.state[0]));
        assert!(arms[0] != arms[1] && arms[1] != arms[2] && arms[0] != arms[2]);
        assert_eq!(one.pseudotime, all.pseudotime);
        // Rooted at an arm's tip, the link joins that arm's state instead.
        let tip = order_with(&z, &centres, &edges, Root::Cell(14), min_branch).unwrap();
        assert_eq!(tip.branch_points, vec![4]);
        assert_eq!(tip.states, 4);
        assert_eq!(tip.state[9], tip.state[14]);
        assert_ne!(tip.state[0], tip.state[14]);
    }
    // From 5 edges on, the arms of four centres are spurs too: no branch point at all.
    let none = order_with(&z, &centres, &edges, Root::Cell(0), 6).unwrap();
    assert!(none.branch_points.is_empty());
    assert_eq!(none.states, 1);
}

#[test]
fn smoothing_averages_over_neighbours_from_zero_at_the_root() {
    let k = 10;
    let centres = DMatrix::from_fn(k, 2, |i, j| if j == 0 { i as f64 } else { 0.0 });
    let edges: Vec<(usize, usize)> = (1..k).map(|c| (c - 1, c)).collect();
    // One cell per centre, at x = i: pseudotime i from the cell at x = 0.
    let mut fit = order(&centres, &centres, &edges, Root::Cell(0)).unwrap();
    let exact = fit.clone();
    // Neighbours along the line: the cells on either side.
    let beside: Vec<Vec<usize>> = (0..k)
        .map(|i| {
            (i.saturating_sub(1)..(i + 2).min(k))
                .filter(|&j| j != i)
                .collect()
        })
        .collect();
    fit.smooth_over(&beside).unwrap();
    // Ends: (0 + 1) / 2 and (8 + 9) / 2; inside: (i - 1 + i + i + 1) / 3 = i; less the
    // root's 0.5.
    for i in 0..k {
        let mean = match i {
            0 => 0.5,
            9 => 8.5,
            _ => i as f64,
        };
        assert!(
            (fit.pseudotime[i] - (mean - 0.5)).abs() < 1e-12,
            "cell {i}: {}",
            fit.pseudotime[i]
        );
    }
    assert_eq!(fit.state, exact.state);
    assert_eq!(fit.branch_points, exact.branch_points);
    // A neighbourhood nearer the root than the root's own is raised to 0: the root
    // averages cells 0 to 2 (1.0), cell 1 only cells 0 and 1 (0.5).
    let mut fit = exact.clone();
    let mut near = beside.clone();
    near[0] = vec![1, 2];
    near[1] = vec![0];
    fit.smooth_over(&near).unwrap();
    assert_eq!(fit.pseudotime[0], 0.0);
    assert_eq!(fit.pseudotime[1], 0.0);
    assert!((fit.pseudotime[5] - 4.0).abs() < 1e-12);
    // No neighbours: the exact distance along the tree.
    let mut fit = exact.clone();
    fit.smooth_over(&vec![Vec::new(); k]).unwrap();
    assert_eq!(fit.pseudotime, exact.pseudotime);
    // Lists that do not fit the cells.
    let mut fit = exact.clone();
    assert!(fit.smooth_over(&beside[..5]).is_err());
    let mut wrong = beside.clone();
    wrong[3] = vec![k];
    assert!(fit.smooth_over(&wrong).is_err());
}
