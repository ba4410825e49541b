//! Ordering points along a learned tree: pseudotime, branch points and states, as Monocle
//! 2's `orderCells` reads them off a DDRTree fit (Qiu et al. 2017).
//!
//! The tree is over K centres in the latent space; every point (cell) is projected onto the
//! tree (its position), and the pseudotime of a cell is the distance along the tree from
//! the root's position to its own. Because every position lies on one of the tree's K - 1
//! edges, distances along the tree reduce to distances between centres: for positions `P`
//! on edge `(a, b)` and `Q` on edge `(c, d)` (different edges),
//!
//! ```text
//! d(P, Q) = min over u in {a, b}, v in {c, d} of  d(P, u) + D(u, v) + d(v, Q)
//! ```
//!
//! where `D` is the tree distance between centres (the path leaves `P`'s edge through one
//! end and enters `Q`'s through one end; in a tree the shortest of the four is the path).
//! So the whole ordering costs one nearest-centre search (a kd-tree, `O(N log K)`), the
//! projections (`O(N)` times the centre's degree) and two traversals of the tree per root
//! (`O(K)`); no N x N matrix and no tree over the cells is built.
//!
//! The rules, following Monocle 2 (`project2MST`, `orderCells`):
//! - a cell's position is the nearest point to it on the edges at its nearest centre,
//!   clamped to each edge, except that at a leaf centre the edge extends beyond the leaf
//!   (cells past the end of a branch keep their distance past it);
//! - the default root is an end of the tree's diameter over the cells' positions (the pair
//!   of cells farthest apart along the tree; of the two, the one with the lower index);
//! - branch points are the centres of degree above 2; states are the segments between
//!   branch points and leaves, numbered from 1 in depth-first order from the root (children
//!   by ascending centre index).
//!
//! Short side branches ("spurs" of a few centres, which noise grows on a tree of 100-200
//! centres) can be set aside as Monocle 3 does (`learn_graph`'s `minimal_branch_len`,
//! default 10): with `min_branch = L`, the tree's leaves are peeled L - 1 times (a side
//! branch of fewer than L centres is gone by then), and a branch point is a centre with at
//! least three neighbours left after peeling (so every branch it starts reaches at least L
//! centres). A spur's cells keep
//! the state of the segment it hangs from, and its junction is not a branch point.
//! Pseudotime is unchanged: it is the distance along the whole tree. `min_branch = 0` (the
//! default, [`order`]) is Monocle 2's reading: every centre of degree above 2. Pruning is
//! not the default because real short branches go with the spurs: on `krumsiek11` (117
//! centres) `min_branch = 10` merges two of the four fates.
//!
//! Where this differs from the R package: Monocle 2 measures pseudotime along a minimum
//! spanning tree over the projected cells (with every distance raised by the smallest
//! one), which follows the tree except that two cells projected onto neighbouring edges
//! can be joined across a branch point's corner, and ties in that tree fall to igraph's
//! order. Here pseudotime is the exact distance along the tree of centres, so it is a
//! function of the projections alone and does not depend on cell order.
//!
//! [`Measure::CellTree`] (DDRTree's `--compat r`) measures it Monocle 2's way instead,
//! without its N x N distance matrix: the cell tree is the Euclidean minimum spanning tree
//! of the positions ([`unfold_graph::euclidean_mst`], Borůvka on a kd-tree,
//! `O(N log N)`), every edge lengthened by the smallest nonzero distance between two
//! positions (`project2MST`'s `dp + min_dist`; that distance is the tree's shortest
//! nonzero edge, since a minimum spanning tree holds a shortest edge between any two
//! distinct points' components), and pseudotime is the length of the path from the root
//! cell in that tree (`extract_ddrtree_ordering`). The automatic root follows `orderCells`
//! too: the end of the centres' tree diameter with the lower index (igraph's `get.diameter`
//! starts from the first source that reaches it), then the first cell at that centre that
//! is a leaf of the cell tree (else the first cell at that centre). Where the cell tree has
//! ties (cells at the same position, which clamping at a centre makes common), igraph's
//! choice among equal edges is not reproduced: there a cell's pseudotime can differ from
//! the R package's by a few multiples of the smallest distance.

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_graph::knn_query;

/// Where pseudotime starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Root {
    /// An end of the tree's diameter over the cells' positions (with
    /// [`Measure::CellTree`], `orderCells`' root: module doc).
    Auto,
    /// This cell (0-based row).
    Cell(usize),
    /// The tip of this state (1-based, as numbered from the automatic root): the cell of
    /// the state farthest towards its leaf end.
    State(usize),
}

/// How pseudotime is measured from the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Measure {
    /// The exact distance along the tree of centres.
    #[default]
    Tree,
    /// Monocle 2's: along the minimum spanning tree of the cells' positions, every edge
    /// lengthened by the smallest nonzero distance between two positions (module doc).
    CellTree,
}

/// A cell's position on the tree: on the edge from centre `from` to centre `to`, at the
/// fraction `t` of its length from `from` (`t <= 1`; `t < 0` only past a leaf `from`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub from: usize,
    pub to: usize,
    pub t: f64,
}

/// Pseudotime, states and branch points of every cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Distance along the tree from the root's position, per cell.
    pub pseudotime: Vec<f64>,
    /// The segment between branch points a cell lies on, from 1.
    pub state: Vec<usize>,
    /// Each cell's nearest centre.
    pub centre: Vec<usize>,
    /// Each cell's position on the tree.
    pub position: Vec<Position>,
    /// The cell pseudotime starts from.
    pub root_cell: usize,
    /// Centres of degree above 2, ascending.
    pub branch_points: Vec<usize>,
    /// The number of states.
    pub states: usize,
}

/// The tree over the centres with its edge lengths (Euclidean, from the centres).
struct Tree {
    /// `adjacent[c]`: `(neighbour, length)`, by ascending neighbour.
    adjacent: Vec<Vec<(usize, f64)>>,
    /// Whether each centre is a branch point (degree above 2, or as left by
    /// [`Tree::mark_branch_points`]).
    branch: Vec<bool>,
}

impl Tree {
    fn new(centres: &DMatrix<f64>, edges: &[(usize, usize)]) -> Result<Tree> {
        let k = centres.nrows();
        if k < 2 {
            return Err(Error::invalid(
                "ncenters",
                "ordering cells needs a tree of at least 2 centres",
            ));
        }
        if edges.len() != k - 1 {
            return Err(Error::invalid(
                "tree",
                format!(
                    "a tree over {k} centres has {} edges, not {}",
                    k - 1,
                    edges.len()
                ),
            ));
        }
        let mut adjacent = vec![Vec::new(); k];
        for &(a, b) in edges {
            if a >= k || b >= k || a == b {
                return Err(Error::invalid(
                    "tree",
                    format!("edge ({a}, {b}) is not a pair of distinct centres 0..{k}"),
                ));
            }
            let length = (centres.row(a) - centres.row(b)).norm();
            adjacent[a].push((b, length));
            adjacent[b].push((a, length));
        }
        for list in &mut adjacent {
            list.sort_by_key(|&(c, _)| c);
        }
        let branch = adjacent.iter().map(|a| a.len() > 2).collect();
        let tree = Tree { adjacent, branch };
        if tree.distances_from(0).iter().any(|d| d.is_infinite()) {
            return Err(Error::invalid(
                "tree",
                "the edges do not connect every centre, so they are not a spanning tree",
            ));
        }
        Ok(tree)
    }

    fn degree(&self, c: usize) -> usize {
        self.adjacent[c].len()
    }

    /// Peels every leaf `min_branch - 1` times (all of a round's leaves at once) and marks
    /// as branch points the centres with at least three neighbours left.
    fn mark_branch_points(&mut self, min_branch: usize) {
        let k = self.adjacent.len();
        let mut degree: Vec<usize> = (0..k).map(|c| self.degree(c)).collect();
        let mut gone = vec![false; k];
        for _ in 1..min_branch {
            let leaves: Vec<usize> = (0..k).filter(|&c| !gone[c] && degree[c] <= 1).collect();
            if leaves.is_empty() {
                break;
            }
            for &c in &leaves {
                gone[c] = true;
            }
            for &c in &leaves {
                for &(nb, _) in &self.adjacent[c] {
                    if !gone[nb] {
                        degree[nb] -= 1;
                    }
                }
            }
        }
        self.branch = (0..k).map(|c| !gone[c] && degree[c] > 2).collect();
    }

    fn length(&self, a: usize, b: usize) -> f64 {
        self.adjacent[a]
            .iter()
            .find(|&&(c, _)| c == b)
            .map(|&(_, l)| l)
            .expect("positions lie on edges of the tree")
    }

    /// Tree distances from centre `s` to every centre (infinite where unreachable).
    fn distances_from(&self, s: usize) -> Vec<f64> {
        path_lengths(&self.adjacent, s)
    }

    /// Distance along the tree from position `p` to every position in `all`.
    fn distances_along(&self, p: Position, all: &[Position]) -> Vec<f64> {
        let length = self.length(p.from, p.to);
        let (da, db) = (self.distances_from(p.from), self.distances_from(p.to));
        let to_ends = [(p.t.abs() * length, &da), ((1.0 - p.t) * length, &db)];
        all.par_iter()
            .map(|q| {
                let lq = self.length(q.from, q.to);
                if (q.from, q.to) == (p.from, p.to) {
                    return (q.t - p.t).abs() * lq;
                }
                if (q.from, q.to) == (p.to, p.from) {
                    return (1.0 - q.t - p.t).abs() * lq;
                }
                let q_ends = [(q.from, q.t.abs() * lq), (q.to, (1.0 - q.t) * lq)];
                let mut best = f64::INFINITY;
                for &(dp, d) in &to_ends {
                    for &(v, dq) in &q_ends {
                        best = best.min(dp + d[v] + dq);
                    }
                }
                best
            })
            .collect()
    }
}

/// Orders the points `z` (N x d) along the tree `edges` over `centres` (K x d) from `root`.
///
/// # Errors
/// Fewer than 2 centres; edges that are not a spanning tree of the centres; a point
/// dimension that is not the centres'; a root cell out of range; a root state that does
/// not exist, has no cells, or lies between two branch points (no tip to start from).
pub fn order(
    z: &DMatrix<f64>,
    centres: &DMatrix<f64>,
    edges: &[(usize, usize)],
    root: Root,
) -> Result<Trajectory> {
    order_with(z, centres, edges, root, 0)
}

/// [`order`] with spurs of fewer than `min_branch` centres set aside (module doc): they
/// start no state and their junctions are not branch points.
pub fn order_with(
    z: &DMatrix<f64>,
    centres: &DMatrix<f64>,
    edges: &[(usize, usize)],
    root: Root,
    min_branch: usize,
) -> Result<Trajectory> {
    order_measured(z, centres, edges, root, min_branch, Measure::Tree)
}

/// [`order_with`] with pseudotime measured by `measure` ([`Measure::CellTree`]: Monocle
/// 2's tree over the cells, and its automatic root).
pub fn order_measured(
    z: &DMatrix<f64>,
    centres: &DMatrix<f64>,
    edges: &[(usize, usize)],
    root: Root,
    min_branch: usize,
    measure: Measure,
) -> Result<Trajectory> {
    let mut tree = Tree::new(centres, edges)?;
    tree.mark_branch_points(min_branch);
    let n = z.nrows();
    if z.ncols() != centres.ncols() {
        return Err(Error::DimensionMismatch(format!(
            "the points have {} coordinates and the centres {}",
            z.ncols(),
            centres.ncols()
        )));
    }
    let nearest = knn_query(centres, z, 1)?;
    let centre: Vec<usize> = nearest.indices.iter().map(|r| r[0]).collect();
    let position: Vec<Position> = (0..n)
        .into_par_iter()
        .map(|i| project(&tree, centres, z, i, centre[i]))
        .collect();
    let cell_tree = match measure {
        Measure::Tree => None,
        Measure::CellTree => Some(CellTree::new(centres, &position)?),
    };
    // The automatic root, from which root states are numbered too.
    let auto_root = || match &cell_tree {
        Some(cells) => cells.monocle_root(&tree, &centre),
        None => {
            // An end of the diameter over the positions, by two sweeps.
            let e1 = argmax(&tree.distances_along(position[0], &position));
            let e2 = argmax(&tree.distances_along(position[e1], &position));
            e1.min(e2)
        }
    };
    let root_cell = match root {
        Root::Auto => auto_root(),
        Root::Cell(i) if i < n => i,
        Root::Cell(i) => {
            return Err(Error::invalid(
                "root_cell",
                format!("cell {i} is out of range: there are {n} cells (0-based rows)"),
            ))
        }
        Root::State(s) => state_tip(&tree, &position, auto_root(), s)?,
    };
    let pseudotime = match &cell_tree {
        Some(cells) => cells.distances_from(root_cell),
        None => tree.distances_along(position[root_cell], &position),
    };
    let segments = numbered_segments(&tree, position[root_cell]);
    let state: Vec<usize> = position
        .iter()
        .map(|p| segments[&(p.from.min(p.to), p.from.max(p.to))])
        .collect();
    let branch_points = (0..centres.nrows()).filter(|&c| tree.branch[c]).collect();
    Ok(Trajectory {
        pseudotime,
        state,
        centre,
        position,
        root_cell,
        branch_points,
        states: segments.values().copied().max().unwrap_or(0),
    })
}

/// Monocle 2's tree over the cells: the Euclidean minimum spanning tree of their positions,
/// every edge lengthened by the smallest nonzero edge (`project2MST`).
struct CellTree {
    /// `adjacent[i]`: `(neighbour, lengthened edge)`.
    adjacent: Vec<Vec<(usize, f64)>>,
}

impl CellTree {
    fn new(centres: &DMatrix<f64>, position: &[Position]) -> Result<CellTree> {
        let d = centres.ncols();
        let points = DMatrix::from_fn(position.len(), d, |i, c| {
            let p = position[i];
            let (a, b) = (centres[(p.from, c)], centres[(p.to, c)]);
            a + p.t * (b - a)
        });
        let edges = unfold_graph::euclidean_mst(&points)?;
        let shortest = edges
            .iter()
            .map(|e| e.2)
            .filter(|&w| w > 0.0)
            .fold(f64::INFINITY, f64::min);
        let raise = if shortest.is_finite() { shortest } else { 0.0 };
        let mut adjacent = vec![Vec::new(); position.len()];
        for &(i, j, w) in &edges {
            adjacent[i].push((j, w + raise));
            adjacent[j].push((i, w + raise));
        }
        Ok(CellTree { adjacent })
    }

    /// The length of the path from cell `root` to every cell.
    fn distances_from(&self, root: usize) -> Vec<f64> {
        path_lengths(&self.adjacent, root)
    }

    /// `orderCells`' automatic root: the lower-index end of the centres' tree diameter,
    /// then the first cell whose nearest centre it is that is a leaf of the cell tree (else
    /// the first cell whose nearest centre it is; with none, the first cell at the centre
    /// nearest to it along the tree).
    fn monocle_root(&self, tree: &Tree, centre: &[usize]) -> usize {
        // The diameter's ends by two sweeps (exact on a tree).
        let a = argmax(&tree.distances_from(0));
        let b = argmax(&tree.distances_from(a));
        let root_centre = a.min(b);
        let at_root: Vec<usize> = (0..centre.len())
            .filter(|&i| centre[i] == root_centre)
            .collect();
        at_root
            .iter()
            .copied()
            .find(|&i| self.adjacent[i].len() == 1)
            .or_else(|| at_root.first().copied())
            .unwrap_or_else(|| {
                let d = tree.distances_from(root_centre);
                argmin_by(centre, |c| d[c])
            })
    }
}

/// Lengths of the paths from node `s` to every node of a forest given by its adjacency
/// lists `(neighbour, edge length)` (infinite where unreachable).
fn path_lengths(adjacent: &[Vec<(usize, f64)>], s: usize) -> Vec<f64> {
    let mut d = vec![f64::INFINITY; adjacent.len()];
    d[s] = 0.0;
    let mut stack = vec![s];
    while let Some(u) = stack.pop() {
        for &(v, l) in &adjacent[u] {
            if d[v].is_infinite() {
                d[v] = d[u] + l;
                stack.push(v);
            }
        }
    }
    d
}

/// The index whose `key(v[i])` is least, the smallest index among ties.
fn argmin_by(v: &[usize], key: impl Fn(usize) -> f64) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if key(x) < key(v[best]) {
            best = i;
        }
    }
    best
}

/// The position of point `i` on the edges at its nearest centre `c`: clamped to each edge,
/// but past `c` where `c` is a leaf; the nearest of these, ties to the smaller neighbour.
fn project(tree: &Tree, centres: &DMatrix<f64>, z: &DMatrix<f64>, i: usize, c: usize) -> Position {
    let leaf = tree.degree(c) == 1;
    let mut best = (
        f64::INFINITY,
        Position {
            from: c,
            to: c,
            t: 0.0,
        },
    );
    for &(nb, _) in &tree.adjacent[c] {
        let dir = centres.row(nb) - centres.row(c);
        let rel = z.row(i) - centres.row(c);
        let len2 = dir.norm_squared();
        let mut t = if len2 > 0.0 {
            rel.dot(&dir) / len2
        } else {
            0.0
        };
        t = if leaf { t.min(1.0) } else { t.clamp(0.0, 1.0) };
        let gap = (rel - dir * t).norm_squared();
        if gap < best.0 {
            best = (gap, Position { from: c, to: nb, t });
        }
    }
    best.1
}

/// The index of the largest value, the smallest index among ties.
fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// Every edge's segment (maximal path through centres that are not branch points, so a
/// set-aside spur joins the segment it hangs from), numbered from 1 in
/// depth-first order from the root's edge, children by ascending centre; keyed by the
/// edge's `(min, max)` centres.
fn numbered_segments(
    tree: &Tree,
    root: Position,
) -> std::collections::HashMap<(usize, usize), usize> {
    use std::collections::HashMap;
    let key = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut state: HashMap<(usize, usize), usize> = HashMap::new();
    let mut next = 0;
    // Walk the root's edge from `root.from` to `root.to` first, then depth-first; an entry
    // is (node reached, the node we came from, the state carried along, if any).
    let mut stack: Vec<(usize, usize, Option<usize>)> = vec![(root.to, root.from, None)];
    // The root's edge continues through `root.from` when that centre has degree 2.
    let back: Vec<(usize, usize)> = tree.adjacent[root.from]
        .iter()
        .map(|&(c, _)| (c, root.from))
        .filter(|&(c, _)| c != root.to)
        .collect();
    while let Some((node, parent, carried)) = stack.pop() {
        let s = carried.unwrap_or_else(|| {
            next += 1;
            next
        });
        state.insert(key(node, parent), s);
        if state.len() == 1 {
            // After the root's edge: the edges on the other side of `root.from` (explored
            // after those beyond `root.to`), which continue the root's segment if
            // `root.from` has degree 2.
            let carry = (!tree.branch[root.from]).then_some(s);
            for &(c, p) in back.iter().rev() {
                stack.push((c, p, carry));
            }
        }
        let carry = (!tree.branch[node]).then_some(s);
        for &(c, _) in tree.adjacent[node].iter().rev() {
            if c != parent {
                stack.push((c, node, carry));
            }
        }
    }
    state
}

/// The root cell for `Root::State(s)`: the cell of state `s` farthest from the segment's
/// inner end (towards its leaf), states numbered from the automatic root `auto`.
fn state_tip(tree: &Tree, position: &[Position], auto: usize, s: usize) -> Result<usize> {
    let segments = numbered_segments(tree, position[auto]);
    let count = segments.values().copied().max().unwrap_or(0);
    if s == 0 || s > count {
        return Err(Error::invalid(
            "root_state",
            format!("there is no state {s}: the tree has states 1 to {count}"),
        ));
    }
    // The segment's end centres: its branch points and leaves.
    let mut ends: Vec<usize> = segments
        .iter()
        .filter(|&(_, &v)| v == s)
        .flat_map(|(&(a, b), _)| [a, b])
        .filter(|&c| tree.branch[c] || tree.degree(c) == 1)
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let leaves: Vec<usize> = ends
        .iter()
        .copied()
        .filter(|&c| tree.degree(c) == 1)
        .collect();
    let Some(&leaf) = leaves.first() else {
        return Err(Error::invalid(
            "root_state",
            format!(
                "state {s} lies between branch points {}; start from a state at a tip of \
                 the tree",
                ends.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ));
    };
    // The inner end: its branch point; for a state without one (the whole tree), its
    // highest-numbered leaf.
    let inner = ends
        .iter()
        .copied()
        .find(|&c| tree.branch[c])
        .or_else(|| leaves.last().copied())
        .unwrap_or(leaf);
    let cells: Vec<usize> = (0..position.len())
        .filter(|&i| {
            let p = position[i];
            segments[&(p.from.min(p.to), p.from.max(p.to))] == s
        })
        .collect();
    if cells.is_empty() {
        return Err(Error::invalid(
            "root_state",
            format!("state {s} has no cells; choose another state"),
        ));
    }
    let origin = Position {
        from: inner,
        to: tree.adjacent[inner][0].0,
        t: 0.0,
    };
    let chosen: Vec<Position> = cells.iter().map(|&i| position[i]).collect();
    let d = tree.distances_along(origin, &chosen);
    Ok(cells[argmax(&d)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random tree over `k` centres in the plane (each centre joined to an earlier one)
    /// and `n` points scattered around its edges and past its leaves.
    fn random_tree(
        k: usize,
        n: usize,
        seed: u64,
    ) -> (DMatrix<f64>, Vec<(usize, usize)>, DMatrix<f64>) {
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
            let fit = order_measured(&z, &centres, &edges, Root::Cell(root), 0, Measure::CellTree)
                .unwrap();
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
            let prim = unfold_graph::minimum_spanning_tree_dense(&dist).unwrap();
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
    fn krumsiek11_fates_fall_in_their_own_states_after_the_progenitors() {
        // Scanpy's simulated myeloid differentiation: DDRTree in 4 dimensions (as in
        // examples/krumsiek11.rs), ordered from the first progenitor.
        let data = unfold_data::bundled::krumsiek11();
        let labels = data.labels.as_ref().unwrap();
        let fit = crate::regularised::ddrtree::DdrTreeParams::new(4)
            .fit(&data.points)
            .unwrap();
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
}
