//! The exact Euclidean minimum spanning tree of a point set (Borůvka 1926 on a kd-tree).

use crate::kdtree::KdTree;
use crate::rows::Rows;
use crate::union_find::UnionFind;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::cmp::Ordering;
use unfold_core::{check_points, Result};

/// A candidate edge `(squared distance, smaller index, larger index)`.
pub(crate) type Edge = (f64, usize, usize);

/// The strict total order on candidate edges: squared distance, then smaller index, then
/// larger index. (Squared distances are never NaN: the coordinates are finite.)
pub(crate) fn lighter(a: Edge, b: Edge) -> bool {
    a.0 < b.0 || (a.0 == b.0 && (a.1, a.2) < (b.1, b.2))
}

/// The exact Euclidean minimum spanning tree of the rows of `points` (n x d): the `n - 1`
/// edges `(i, j, w)`, `i < j`, sorted by `(i, j)`, of least total Euclidean length that
/// connect all n points. A single point gives no edges.
///
/// Algorithm: Borůvka (1926). Every point starts as its own component; each round finds,
/// for every point, its nearest point in a *different* component with an exact kd-tree
/// (subtrees whose points all lie in the query's component are skipped, the rest pruned
/// by box distance), keeps each component's lightest outgoing edge and merges along them.
/// The number of components at least halves per round, so there are at most `log2 n`
/// rounds; the searches of a round run in parallel and no n x n matrix is formed.
///
/// Ties and zero distances: edges are compared by the strict total order (squared
/// distance, smaller index, larger index), under which the minimum spanning tree is
/// unique, so Borůvka's simultaneous merges can never close a cycle and the result is
/// deterministic (independent of the thread count). Squared distances are summed in
/// coordinate order by the same formula as every other search of the crate, so equal
/// geometry gives bit-equal distances and exact ties really are ties. Coincident points
/// (equal coordinates, `-0.0` equal to `0.0`) are found by one sort first: each group is
/// joined by zero-length edges from its smallest index to each other member, and Borůvka
/// runs on one representative per group, so a million copies of a point cost one sort,
/// not a million searches among equals. Zero-length edges between different points (a
/// squared difference that underflows) are ordinary edges of weight 0.
///
/// Used to rebuild Monocle 2's cell-level tree over cells projected onto the principal
/// graph, where many cells coincide exactly.
///
/// # Errors
/// An empty matrix (no rows or no columns), a NaN or infinite coordinate, or coordinates
/// so large (or all so tiny) that squared distances would overflow (or underflow); see
/// [`unfold_core::check_points`]; [`unfold_core::Error::Interrupted`] on a stop requested
/// during the rounds.
pub fn euclidean_mst(points: &DMatrix<f64>) -> Result<Vec<(usize, usize, f64)>> {
    check_points(points, "points")?;
    let d = points.ncols();
    let all = row_major(points);
    let (reps, mut tree) = coincident_groups(&all);
    let rep_data: Vec<f64> = reps.iter().flat_map(|&i| all.row(i)).copied().collect();
    let rep_rows = Rows::from_row_major(d, rep_data);
    let mut sets = UnionFind::new(reps.len());
    tree.extend(
        boruvka(&rep_rows, &mut sets, reps.len())?
            .into_iter()
            .map(|(d2, a, b)| (reps[a], reps[b], d2.sqrt())),
    );
    tree.sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(tree)
}

/// The edges that join the given components of the rows of `points` into one: the
/// minimum spanning tree of the components under the distance between their closest
/// points, each edge `(i, j, distance)` such a closest pair, `i < j`, sorted by `(i, j)`.
/// `labels[i]` is the component of point i, numbered `0..count`. Borůvka's rounds as in
/// [`euclidean_mst`], started from the components instead of single points; coincident
/// points in different components are joined at distance 0.
///
/// # Errors
/// Bad `points` as for [`euclidean_mst`]; labels of another length or out of range.
pub fn joining_edges(
    points: &DMatrix<f64>,
    labels: &[usize],
    count: usize,
) -> Result<Vec<(usize, usize, f64)>> {
    check_points(points, "points")?;
    let n = points.nrows();
    if labels.len() != n || labels.iter().any(|&c| c >= count) {
        return Err(unfold_core::Error::invalid(
            "labels",
            format!("need one component label below {count} for each of the {n} points"),
        ));
    }
    if count <= 1 {
        return Ok(Vec::new());
    }
    let rows = row_major(points);
    let mut sets = UnionFind::new(n);
    let mut first = vec![usize::MAX; count];
    for (i, &c) in labels.iter().enumerate() {
        if first[c] == usize::MAX {
            first[c] = i;
        } else {
            sets.union(first[c], i);
        }
    }
    let mut edges: Vec<(usize, usize, f64)> = boruvka(&rows, &mut sets, count)?
        .into_iter()
        .map(|(d2, a, b)| (a, b, d2.sqrt()))
        .collect();
    edges.sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(edges)
}

/// The distinct rows of `points` (equal when every coordinate is; -0.0 equals 0.0): the
/// smallest index of each, ascending, and for every row the position of its distinct row in
/// that list; `None` when every row is distinct. The groups are [`euclidean_mst`]'s
/// coincident points.
///
/// # Errors
/// Bad `points` as for [`euclidean_mst`], named by their row as given.
pub fn distinct_rows(points: &DMatrix<f64>) -> Result<Option<(Vec<usize>, Vec<usize>)>> {
    check_points(points, "the data")?;
    let (reps, copies) = coincident_groups(&row_major(points));
    if copies.is_empty() {
        return Ok(None);
    }
    let mut copy_of = vec![0; points.nrows()];
    for (u, &r) in reps.iter().enumerate() {
        copy_of[r] = u;
    }
    // Each copy's edge starts at its group's smallest index, a representative.
    for &(r, i, _) in &copies {
        copy_of[i] = copy_of[r];
    }
    Ok(Some((reps, copy_of)))
}

/// A row-major copy of `points` with -0.0 turned into 0.0 (x + 0.0), which changes no
/// distance.
fn row_major(points: &DMatrix<f64>) -> Rows {
    let (n, d) = points.shape();
    let mut data = vec![0.0; n * d];
    for c in 0..d {
        for (r, &v) in points.column(c).iter().enumerate() {
            data[r * d + c] = v + 0.0;
        }
    }
    Rows::from_row_major(d, data)
}

/// Groups the points with equal coordinates. Returns the smallest index of every group,
/// ascending, and the zero-length edges joining each group's smallest index to its other
/// members.
fn coincident_groups(rows: &Rows) -> (Vec<usize>, Vec<(usize, usize, f64)>) {
    let by_coords = |a: &usize, b: &usize| {
        let (ra, rb) = (rows.row(*a), rows.row(*b));
        ra.iter()
            .zip(rb)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    };
    let mut sorted: Vec<usize> = (0..rows.len()).collect();
    sorted.par_sort_unstable_by(|a, b| by_coords(a, b).then(a.cmp(b)));
    let mut reps = Vec::new();
    let mut edges = Vec::new();
    let mut rep = usize::MAX;
    for (s, &i) in sorted.iter().enumerate() {
        if s > 0 && by_coords(&sorted[s - 1], &i).is_eq() {
            edges.push((rep, i, 0.0));
        } else {
            rep = i;
            reps.push(i);
        }
    }
    reps.sort_unstable();
    (reps, edges)
}

/// Borůvka from the `components` sets of `sets` (singletons for a spanning tree): the
/// `components - 1` lightest edges that join them, as `(squared distance, a, b)`, `a < b`.
/// The interruption flag is checked before each round (a round at 200,000 points takes
/// tens of milliseconds).
fn boruvka(rows: &Rows, sets: &mut UnionFind, components: usize) -> Result<Vec<Edge>> {
    let m = rows.len();
    let tree = KdTree::build(rows);
    let mut edges = Vec::with_capacity(components.saturating_sub(1));
    // label[t]: the component (union-find root) of the point at tree position t.
    let mut label = vec![0; m];
    let mut lightest: Vec<Option<Edge>> = vec![None; m];
    while edges.len() + 1 < components {
        unfold_core::interrupt::check()?;
        for (t, l) in label.iter_mut().enumerate() {
            *l = sets.find(tree.original(t));
        }
        let node_label = tree.node_labels(&label);
        let nearest: Vec<Option<(f64, usize)>> = (0..m)
            .into_par_iter()
            .map(|t| tree.nearest_other(t, &label, &node_label))
            .collect();
        lightest.fill(None);
        for (t, (d2, j)) in nearest
            .into_iter()
            .enumerate()
            .filter_map(|(t, f)| Some((t, f?)))
        {
            let i = tree.original(t);
            let e = (d2, i.min(j), i.max(j));
            let slot = &mut lightest[label[t]];
            match *slot {
                Some(s) if !lighter(e, s) => {}
                _ => *slot = Some(e),
            }
        }
        // Two components may choose the same edge; the second union then fails.
        for &e in lightest.iter().flatten() {
            if sets.union(e.1, e.2) {
                edges.push(e);
            }
        }
    }
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimum_spanning_tree_dense;
    use rand::Rng;
    use unfold_core::Error;

    #[test]
    fn distinct_rows_map_every_copy_to_its_first_row() {
        let y = DMatrix::from_row_slice(5, 2, &[1.0, 2.0, 0.0, 1.0, 1.0, 2.0, -0.0, 1.0, 3.0, 3.0]);
        let (first, copy_of) = distinct_rows(&y).unwrap().unwrap();
        assert_eq!(first, vec![0, 1, 4]);
        assert_eq!(copy_of, vec![0, 1, 0, 1, 2]);
        assert!(distinct_rows(&y.rows(0, 2).into_owned()).unwrap().is_none());
        let mut bad = y.clone();
        bad[(3, 1)] = f64::NAN;
        assert!(matches!(
            distinct_rows(&bad),
            Err(Error::NonFinite { row: 3, .. })
        ));
    }

    /// Euclidean distance written independently of the crate.
    fn dist(p: &DMatrix<f64>, i: usize, j: usize) -> f64 {
        (0..p.ncols())
            .map(|c| (p[(i, c)] - p[(j, c)]).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    fn dense_total(p: &DMatrix<f64>) -> f64 {
        let n = p.nrows();
        let dm = DMatrix::from_fn(n, n, |i, j| dist(p, i, j));
        minimum_spanning_tree_dense(&dm)
            .unwrap()
            .iter()
            .map(|e| e.2)
            .sum()
    }

    /// Checks the shape of a tree on `p`: n - 1 edges, i < j, sorted, weights equal to the
    /// distances, and all points connected. Returns the total weight.
    fn check_spanning(p: &DMatrix<f64>, tree: &[(usize, usize, f64)]) -> f64 {
        let n = p.nrows();
        assert_eq!(tree.len(), n - 1, "n = {n}");
        assert!(tree.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
        let mut sets = UnionFind::new(n);
        for &(i, j, w) in tree {
            assert!(i < j && j < n);
            assert!(
                (w - dist(p, i, j)).abs() <= 1e-12 * (1.0 + w),
                "{i} {j} {w}"
            );
            assert!(sets.union(i, j), "edge ({i}, {j}) closes a cycle");
        }
        tree.iter().map(|e| e.2).sum()
    }

    fn assert_close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-300), "{a} vs {b}");
    }

    #[test]
    fn random_points_match_dense_prim() {
        for seed in 0..3 {
            let mut rng = unfold_core::seeded_rng(seed);
            for d in 1..=3 {
                for n in [1, 2, 3, 4, 7, 9, 17, 40, 100, 173, 300] {
                    let p = DMatrix::from_fn(n, d, |_, _| rng.random::<f64>() * 10.0 - 5.0);
                    let tree = euclidean_mst(&p).unwrap();
                    let total = check_spanning(&p, &tree);
                    if n > 1 {
                        assert_close(total, dense_total(&p));
                    }
                }
            }
        }
    }

    #[test]
    fn integer_grid_ties_match_dense_prim() {
        // Few distinct values: massive exact ties among distances and many duplicates.
        for seed in 0..3 {
            let mut rng = unfold_core::seeded_rng(seed);
            for d in 1..=3 {
                let p = DMatrix::from_fn(250, d, |_, _| rng.random_range(0..4) as f64);
                let tree = euclidean_mst(&p).unwrap();
                assert_close(check_spanning(&p, &tree), dense_total(&p));
            }
        }
    }

    /// Cells projected onto a tree of 5 segments: collinear points, a third of them
    /// snapped exactly onto segment end points.
    fn projected_cells(n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        let nodes: Vec<[f64; 2]> = (0..6)
            .map(|_| [rng.random::<f64>() * 10.0, rng.random::<f64>() * 10.0])
            .collect();
        let segments: Vec<(usize, usize)> = (1..6).map(|k| (rng.random_range(0..k), k)).collect();
        let mut p = DMatrix::zeros(n, 2);
        for r in 0..n {
            let (a, b) = segments[rng.random_range(0..segments.len())];
            let row = if rng.random_range(0..3) == 0 {
                if rng.random::<bool>() {
                    nodes[a]
                } else {
                    nodes[b]
                }
            } else {
                let t: f64 = rng.random();
                [0, 1].map(|c| nodes[a][c] + t * (nodes[b][c] - nodes[a][c]))
            };
            p[(r, 0)] = row[0];
            p[(r, 1)] = row[1];
        }
        p
    }

    #[test]
    fn duplicates_and_collinear_segments_match_dense_prim() {
        for seed in 0..4 {
            let p = projected_cells(500, seed);
            let tree = euclidean_mst(&p).unwrap();
            let total = check_spanning(&p, &tree);
            assert!(tree.iter().filter(|e| e.2 == 0.0).count() > 100);
            assert_close(total, dense_total(&p));
        }
    }

    #[test]
    fn same_tree_for_one_and_two_threads() {
        let p = projected_cells(2000, 7);
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| euclidean_mst(&p).unwrap())
        };
        assert_eq!(run(1), run(2));
    }

    #[test]
    fn degenerate_inputs() {
        assert!(euclidean_mst(&DMatrix::from_row_slice(1, 2, &[3.0, 4.0]))
            .unwrap()
            .is_empty());
        let two = DMatrix::from_row_slice(2, 2, &[0.0, 0.0, 3.0, 4.0]);
        assert_eq!(euclidean_mst(&two).unwrap(), vec![(0, 1, 5.0)]);
        // All points equal (with signed zeros): a star of zero-length edges from point 0.
        let same = DMatrix::from_fn(
            50,
            3,
            |r, c| if c == 0 && r % 2 == 1 { -0.0 } else { 0.0 } + if c == 1 { 2.5 } else { 0.0 },
        );
        let tree = euclidean_mst(&same).unwrap();
        check_spanning(&same, &tree);
        assert!(tree.iter().all(|&(i, _, w)| i == 0 && w == 0.0));
        // Collinear, equally spaced: every spanning path of unit steps is minimal.
        let line = DMatrix::from_fn(30, 2, |r, c| if c == 0 { (r % 10) as f64 } else { 1.0 });
        assert_close(check_spanning(&line, &euclidean_mst(&line).unwrap()), 9.0);
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut p = DMatrix::from_fn(5, 2, |r, c| (r + c) as f64);
        p[(3, 1)] = f64::NAN;
        assert!(matches!(
            euclidean_mst(&p),
            Err(Error::NonFinite { row: 3, col: 1, .. })
        ));
        p[(3, 1)] = f64::INFINITY;
        assert!(matches!(euclidean_mst(&p), Err(Error::NonFinite { .. })));
        assert!(matches!(
            euclidean_mst(&DMatrix::zeros(0, 2)),
            Err(Error::Empty(_))
        ));
        assert!(matches!(
            euclidean_mst(&DMatrix::zeros(3, 0)),
            Err(Error::Empty(_))
        ));
        let huge = DMatrix::from_row_slice(2, 1, &[-1e300, 1e300]);
        assert!(matches!(
            euclidean_mst(&huge),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn large_run_is_spanning_and_holds_nearest_neighbour_edges() {
        let mut rng = unfold_core::seeded_rng(11);
        let n = 20_000;
        let p = DMatrix::from_fn(n, 2, |_, _| rng.random::<f64>());
        let tree = euclidean_mst(&p).unwrap();
        check_spanning(&p, &tree);
        // Each point's edge to its nearest neighbour is in every minimum spanning tree
        // (distances are distinct here).
        let nn = crate::knn(&p, 1).unwrap();
        let edges: std::collections::HashSet<(usize, usize)> =
            tree.iter().map(|&(i, j, _)| (i, j)).collect();
        for (i, js) in nn.indices.iter().enumerate() {
            let j = js[0];
            assert!(edges.contains(&(i.min(j), i.max(j))), "({i}, {j}) missing");
        }
    }
}
