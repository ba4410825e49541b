//! Exact k-nearest-neighbour search.

use crate::brute;
use crate::kdtree::{KdTree, Search};
use crate::rows::Rows;
use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{check_k, check_points, interrupt, Error, Result};

/// Above this many coordinates [`KnnAlgorithm::Auto`] always uses brute force.
pub const KD_TREE_MAX_DIM: usize = 64;

/// With fewer queries than this, [`KnnAlgorithm::Auto`] answers [`knn_query`] by brute
/// force: one brute-force query screens n points, while building a tree sorts all n
/// points about `log2 n` times, which few queries never pay back.
pub const MIN_TREE_QUERIES: usize = 64;

/// The k nearest neighbours of each point, self excluded, sorted by increasing distance,
/// ties broken by smaller index. Distances are Euclidean (not squared).
///
/// Row `i` of `indices` / `distances` belongs to point (row) `i`. Results are exact and
/// identical for every algorithm and thread count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knn {
    /// Neighbours per point.
    pub k: usize,
    /// `indices[i][r]` is the (r+1)-th nearest neighbour of point `i`.
    pub indices: Vec<Vec<usize>>,
    /// `distances[i][r]` is the Euclidean distance from point `i` to `indices[i][r]`.
    pub distances: Vec<Vec<f64>>,
}

impl Knn {
    /// Number of points (rows) the neighbour lists belong to.
    pub fn n(&self) -> usize {
        self.indices.len()
    }
}

/// How [`knn_with`] and [`knn_query_with`] search. All give the same answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum KnnAlgorithm {
    /// Brute force above [`KD_TREE_MAX_DIM`] coordinates. Otherwise a kd-tree is built and
    /// a fixed sample of 32 queries measures how many points a search examines; the tree is
    /// used if that predicts it beats brute force. (A kd-tree's cost depends on the
    /// *intrinsic* dimension: 10 coordinates of a curled 2-D sheet search fast, 10 uniform
    /// coordinates do not.) [`knn_query`] with fewer than [`MIN_TREE_QUERIES`] queries uses
    /// brute force: building the tree would cost more than it saves. The choice is
    /// deterministic.
    #[default]
    Auto,
    /// A kd-tree with exact pruning, queries in parallel.
    KdTree,
    /// Blocked distance products with exact re-measurement of the candidates.
    BruteForce,
}

/// The kd-tree to search `points` with, or `None` where brute force should be used.
/// `cost(tree, t)` is the number of points a search from tree position `t` examines.
fn chosen_tree(
    points: &DMatrix<f64>,
    algorithm: KnnAlgorithm,
    cost: impl Fn(&KdTree, usize) -> usize,
) -> Option<KdTree> {
    let p = points.ncols();
    match algorithm {
        KnnAlgorithm::BruteForce => None,
        KnnAlgorithm::KdTree => Some(KdTree::build(&Rows::new(points))),
        KnnAlgorithm::Auto if p > KD_TREE_MAX_DIM => None,
        KnnAlgorithm::Auto => {
            let tree = KdTree::build(&Rows::new(points));
            tree_pays_off(&tree, p, cost).then_some(tree)
        }
    }
}

/// Whether kd-tree searches are predicted to be cheaper than brute force, from the points
/// examined by up to 32 searches spread over the tree. Cost per query in nanoseconds,
/// measured on the development machine: about `20 + 8p` per examined point for the tree
/// (with its share of the descent) and `n (1.6 + 0.1 p)` for brute force (screening plus
/// its share of the distance product). The probe stops as soon as the tree has cost more
/// than brute force would for the same queries, so it never costs much more than 32
/// brute-force queries plus one tree search.
fn tree_pays_off(tree: &KdTree, p: usize, cost: impl Fn(&KdTree, usize) -> usize) -> bool {
    let n = tree.len();
    let samples = n.min(32);
    let per_point = 20.0 + 8.0 * p as f64;
    let budget = samples as f64 * n as f64 * (1.6 + 0.1 * p as f64);
    let mut spent = 0.0;
    for r in 0..samples {
        spent += cost(tree, r * n / samples) as f64 * per_point;
        if spent >= budget {
            return false;
        }
    }
    true
}

/// The `k` nearest neighbours of every row of `points` (n x p) among the other rows,
/// chosen by [`KnnAlgorithm::Auto`].
///
/// # Errors
/// Empty or non-finite `points`, `k = 0` or `k >= n`.
pub fn knn(points: &DMatrix<f64>, k: usize) -> Result<Knn> {
    knn_with(points, k, KnnAlgorithm::Auto)
}

/// [`knn`] with an explicit search algorithm.
pub fn knn_with(points: &DMatrix<f64>, k: usize, algorithm: KnnAlgorithm) -> Result<Knn> {
    check_points(points, "points")?;
    check_k(points.nrows(), k, "k-nearest-neighbour search")?;
    let chosen = chosen_tree(points, algorithm, |tree, t| {
        tree.search_cost(tree.point(t), Search::Nearest(k), Some(tree.original(t)))
    });
    let found = match chosen {
        Some(tree) => in_original_order(&tree, |t| {
            tree.nearest(tree.point(t), k, Some(tree.original(t)))
        })?,
        None => brute::knn(points, points, k, true)?,
    };
    Ok(into_knn(k, found))
}

/// The `k` nearest rows of `reference` (n x p) to each row of `queries` (m x p), with no
/// self exclusion (a query equal to a reference row finds it at distance 0). Row `i` of the
/// result belongs to query `i`; indices refer to rows of `reference`.
///
/// # Errors
/// Empty or non-finite inputs, different column counts, `k = 0` or `k > n`.
pub fn knn_query(reference: &DMatrix<f64>, queries: &DMatrix<f64>, k: usize) -> Result<Knn> {
    knn_query_with(reference, queries, k, KnnAlgorithm::Auto)
}

/// [`knn_query`] with an explicit search algorithm.
pub fn knn_query_with(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    k: usize,
    algorithm: KnnAlgorithm,
) -> Result<Knn> {
    check_points(reference, "reference points")?;
    check_points(queries, "query points")?;
    if reference.ncols() != queries.ncols() {
        return Err(Error::DimensionMismatch(format!(
            "query points have {} columns but the reference points have {}; both must be points in the same space",
            queries.ncols(),
            reference.ncols()
        )));
    }
    check_query_k(reference.nrows(), k)?;
    let algorithm = match algorithm {
        KnnAlgorithm::Auto if queries.nrows() < MIN_TREE_QUERIES => KnnAlgorithm::BruteForce,
        other => other,
    };
    let chosen = chosen_tree(reference, algorithm, |tree, t| {
        tree.search_cost(tree.point(t), Search::Nearest(k), None)
    });
    let found = match chosen {
        Some(tree) => {
            let q = Rows::new(queries);
            (0..q.len())
                .into_par_iter()
                .map(|i| {
                    interrupt::check()?;
                    Ok(tree.nearest(q.row(i), k, None))
                })
                .collect::<Result<_>>()?
        }
        None => brute::knn(reference, queries, k, false)?,
    };
    Ok(into_knn(k, found))
}

/// For each point, its `k` nearest neighbours among the points **later** in `order` (a
/// permutation of `0..n`; fewer for the last `k` points, none for the last), as `(squared
/// distance, index)`, nearest first, ties by smaller index: the parents of acyclic LLE.
/// Exact: a kd-tree search that skips subtrees holding no later point, or brute force
/// where a kd-tree would not pay off (as [`KnnAlgorithm::Auto`] decides). Each point's search checks the process's
/// interruption flag.
///
/// # Errors
/// Empty or non-finite points, `order` not a permutation of `0..n`, `k = 0`;
/// [`Error::Interrupted`].
pub fn knn_later(
    points: &DMatrix<f64>,
    order: &[usize],
    k: usize,
) -> Result<Vec<Vec<(f64, usize)>>> {
    check_points(points, "points")?;
    check_k(usize::MAX, k, "later-neighbour search")?;
    let n = points.nrows();
    if order.len() != n {
        return Err(Error::invalid(
            "order",
            format!(
                "must be a permutation of 0..{n}, but it has {} entries",
                order.len()
            ),
        ));
    }
    let rank = crate::order::ranks(order, n)?;
    // The tree where an ordinary kNN search would use it (a later-neighbour search costs
    // at least as much as one).
    let chosen = chosen_tree(points, KnnAlgorithm::Auto, |tree, t| {
        tree.search_cost(tree.point(t), Search::Nearest(k), Some(tree.original(t)))
    });
    let Some(tree) = chosen else {
        let rows = Rows::new(points);
        return (0..n)
            .into_par_iter()
            .map(|i| {
                interrupt::check()?;
                let mut best = crate::kdtree::Best::new(k);
                for &j in &order[rank[i] + 1..] {
                    best.offer(crate::rows::sq_dist(rows.row(j), rows.row(i)), j);
                }
                Ok(best.into_sorted())
            })
            .collect();
    };
    let by_position: Vec<usize> = (0..n).map(|t| rank[tree.original(t)]).collect();
    let node_max = tree.node_max(&by_position);
    in_original_order(&tree, |t| tree.nearest_later(t, k, &by_position, &node_max))
}

/// Without self exclusion a query may ask for all `n` reference points, but not more.
pub(crate) fn check_query_k(n: usize, k: usize) -> Result<()> {
    check_k(usize::MAX, k, "k-nearest-neighbour query")?;
    if k > n {
        return Err(Error::TooFewPoints {
            what: format!("k-nearest-neighbour query with k = {k}"),
            needed: k,
            got: n,
            advice: format!("use k <= {n} (the number of reference points)"),
        });
    }
    Ok(())
}

/// Runs `search` for every tree position in parallel (neighbouring queries share cache)
/// and returns the answers indexed by original point; each search first checks the
/// process's interruption flag ([`Error::Interrupted`]).
fn in_original_order(
    tree: &KdTree,
    search: impl Fn(usize) -> Vec<(f64, usize)> + Sync,
) -> Result<Vec<Vec<(f64, usize)>>> {
    let by_position: Vec<Vec<(f64, usize)>> = (0..tree.len())
        .into_par_iter()
        .map(|t| {
            interrupt::check()?;
            Ok(search(t))
        })
        .collect::<Result<_>>()?;
    let mut out = vec![Vec::new(); tree.len()];
    for (t, found) in by_position.into_iter().enumerate() {
        out[tree.original(t)] = found;
    }
    Ok(out)
}

pub(crate) fn into_knn(k: usize, found: Vec<Vec<(f64, usize)>>) -> Knn {
    let indices = found
        .iter()
        .map(|f| f.iter().map(|&(_, j)| j).collect())
        .collect();
    let distances = found
        .iter()
        .map(|f| f.iter().map(|&(d2, _)| d2.sqrt()).collect())
        .collect();
    Knn {
        k,
        indices,
        distances,
    }
}

/// Unordered pairs `(i, j)`, `i < j`, that a kNN result shows to be at distance exactly 0,
/// sorted. A point with more than `k` copies has only `k` of them in its list, so a group
/// of `m > k + 1` identical points may show fewer than all `m (m - 1) / 2` pairs; every
/// point with a duplicate appears in at least one pair.
pub fn duplicate_pairs(knn: &Knn) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = knn
        .indices
        .iter()
        .zip(&knn.distances)
        .enumerate()
        .flat_map(|(i, (js, ds))| {
            js.iter()
                .zip(ds)
                .filter(|&(_, &d)| d == 0.0)
                .map(move |(&j, _)| (i.min(j), i.max(j)))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Range search for [`crate::NeighbourGraph::epsilon_ball`]: for every point, the other
/// points within `radius` as `(Euclidean distance, index)` sorted by index.
pub(crate) fn within_radius(points: &DMatrix<f64>, radius: f64) -> Result<Vec<Vec<(f64, usize)>>> {
    let chosen = chosen_tree(points, KnnAlgorithm::Auto, |tree, t| {
        tree.search_cost(
            tree.point(t),
            Search::Within(radius),
            Some(tree.original(t)),
        )
    });
    let mut found = match chosen {
        Some(tree) => in_original_order(&tree, |t| {
            tree.within(tree.point(t), radius, Some(tree.original(t)))
        })?,
        None => brute::within(points, radius)?,
    };
    for list in &mut found {
        for e in list.iter_mut() {
            e.0 = e.0.sqrt();
        }
        list.sort_unstable_by_key(|&(_, j)| j);
    }
    Ok(found)
}
