//! Minimum spanning trees: Kruskal on sparse graphs, Prim on complete graphs.

use crate::components::disconnected;
use crate::graph::NeighbourGraph;
use crate::union_find::UnionFind;
use nalgebra::DMatrix;
use unfold_core::{check_finite, Error, Result};

/// A minimum spanning forest (Kruskal 1956): a minimum spanning tree of every connected
/// component, as a graph with the original weights. Equal weights are taken in `(i, j)`
/// order, so the result is deterministic. It has `n - (number of components)` edges.
pub fn minimum_spanning_forest(g: &NeighbourGraph) -> NeighbourGraph {
    let mut edges = g.edges();
    // A stable sort keeps the (i, j) order of `edges()` among equal weights.
    edges.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut sets = UnionFind::new(g.n());
    let tree: Vec<(usize, usize, f64)> = edges
        .into_iter()
        .filter(|&(i, j, _)| sets.union(i, j))
        .collect();
    NeighbourGraph::from_edges(g.n(), &tree).expect("a subset of a valid graph's edges is valid")
}

/// The minimum spanning tree of a connected graph (Kruskal, see
/// [`minimum_spanning_forest`]): `n - 1` edges of least total weight.
///
/// # Errors
/// [`Error::DisconnectedGraph`] if the graph has several components (use
/// [`minimum_spanning_forest`] for a forest).
pub fn minimum_spanning_tree(g: &NeighbourGraph) -> Result<NeighbourGraph> {
    let c = g.components();
    if c.count > 1 {
        return Err(disconnected(&c, g.n()));
    }
    Ok(minimum_spanning_forest(g))
}

/// The minimum spanning tree of the complete graph whose edge `{i, j}` has weight
/// `dist[(i, j)]` (Prim 1957, O(n^2), the right order for a dense graph). Returns the
/// `n - 1` edges `(i, j, w)` with `i < j`, sorted by `(i, j)`. Zero weights (coincident
/// centres) are allowed; ties go to the smaller index.
///
/// # Errors
/// An empty, non-square or non-finite matrix, a negative entry, or `dist` not exactly
/// symmetric.
pub fn minimum_spanning_tree_dense(dist: &DMatrix<f64>) -> Result<Vec<(usize, usize, f64)>> {
    check_finite(dist, "distance matrix")?;
    let n = dist.nrows();
    if dist.ncols() != n {
        return Err(Error::DimensionMismatch(format!(
            "a distance matrix must be square, got {} x {}",
            n,
            dist.ncols()
        )));
    }
    // In tiles, so that the entry and its mirror both stay in cache.
    const TILE: usize = 64;
    for jb in (0..n).step_by(TILE) {
        for ib in (0..=jb).step_by(TILE) {
            for j in jb..(jb + TILE).min(n) {
                for i in ib..(ib + TILE).min(j) {
                    let (a, b) = (dist[(i, j)], dist[(j, i)]);
                    if a != b || a < 0.0 {
                        return Err(Error::invalid(
                            "dist",
                            format!(
                                "entries ({i}, {j}) = {a} and ({j}, {i}) = {b} must be equal and \
                                 non-negative"
                            ),
                        ));
                    }
                }
            }
        }
    }
    // key[v]: lightest known edge from the tree to v, from parent[v]. One pass per added
    // point updates the keys from its column (contiguous: dist is symmetric) and finds the
    // next point, the first of least key.
    let mut in_tree = vec![false; n];
    let mut key = vec![f64::INFINITY; n];
    let mut parent = vec![0usize; n];
    let mut tree = Vec::with_capacity(n.saturating_sub(1));
    let mut u = 0;
    for added in 0..n {
        in_tree[u] = true;
        if added > 0 {
            let p = parent[u];
            tree.push((p.min(u), p.max(u), dist[(p, u)]));
        }
        let mut next = usize::MAX;
        for (v, &d) in dist.column(u).iter().enumerate() {
            if in_tree[v] {
                continue;
            }
            if d < key[v] {
                key[v] = d;
                parent[v] = u;
            }
            if next == usize::MAX || key[v] < key[next] {
                next = v;
            }
        }
        u = next;
    }
    tree.sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(tree)
}
