//! Trajectory metrics: how well an inferred tree over the cells (a trajectory) agrees with a
//! reference one, with the definitions of dynverse's benchmark of trajectory inference
//! (Saelens et al. 2019; the `dyneval` package).
//!
//! A trajectory is a tree over `K` nodes (a DDRTree's centres, or a simulator's milestones)
//! with edge lengths, and each cell's position on it: on the edge `from`–`to`, at the
//! fraction `t` of its length from `from` ([`TrajectoryLayout`]). Both trajectories describe
//! the same cells in the same order; their trees are unrelated (any number of nodes, any
//! labels).
//!
//! * [`geodesic_correlation`]: Spearman's correlation between the distances along each
//!   tree from a set of waypoint cells ([`waypoint_cells`]) to every cell (dyneval's
//!   `correlation`); [`geodesic_distances`] gives those distances.
//! * [`geodesic_agreement`]: the same correlation between every pair of several
//!   trajectories over the same cells, from the distances between sampled cells (DDRTree
//!   keeps the start that agrees most with the others).
//! * [`pseudotime`] (the distance along the tree from a root) and [`pseudotime_correlation`].
//! * [`branches`], [`f1_branches`], [`f1_labels`]: the cells grouped by the branch they lie
//!   on, and the F1 of the best Jaccard matches between the two groupings (dyneval's
//!   `F1_branches`).
//! * [`him`]: the Hamming–Ipsen–Mikhailov distance between the two trees, weighted by edge
//!   length (dyneval's `him` is `1 - HIM`).
//!
//! See `docs/trajectory_metrics.md` for the definitions, and where they follow or depart
//! from dyneval's.

mod agreement;
mod branches;
mod him;
#[cfg(test)]
mod tests;

pub use agreement::geodesic_agreement;
pub use branches::{branches, f1_branches, f1_labels, BranchF1};
pub use him::{him, Him, HimOptions};

use crate::correlation::spearman;
use branches::Branches;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::collections::HashMap;
use unfold_core::{Error, Result};

/// A trajectory: a tree over nodes `0..K` and each cell's position on it.
///
/// ```
/// use unfold_eval::{f1_branches, geodesic_correlation, him, HimOptions, TrajectoryLayout, Waypoints};
///
/// // A reference bifurcation (trunk 0-1, branches 1-2 and 1-3) with two cells per branch,
/// // and a prediction that is the same tree with its nodes numbered otherwise.
/// let reference = TrajectoryLayout::new(
///     vec![(0, 1, 2.0), (1, 2, 1.0), (1, 3, 1.0)],
///     vec![(0, 1, 0.2), (0, 1, 0.7), (1, 2, 0.3), (1, 2, 0.9), (1, 3, 0.5), (1, 3, 0.8)],
/// );
/// let pred = TrajectoryLayout::new(
///     vec![(3, 2, 2.0), (2, 0, 1.0), (2, 1, 1.0)],
///     vec![(3, 2, 0.2), (2, 3, 0.3), (2, 0, 0.3), (0, 2, 0.1), (2, 1, 0.5), (2, 1, 0.8)],
/// );
/// assert_eq!(geodesic_correlation(&pred, &reference, Waypoints::default())?, 1.0);
/// assert_eq!(f1_branches(&pred, &reference)?.f1, 1.0);
/// assert!(him(&pred.edges, &reference.edges, &HimOptions::default())?.distance < 1e-12);
/// # Ok::<(), unfold_core::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrajectoryLayout {
    /// The tree's edges `(a, b, length)`: `K - 1` edges over the nodes `0..K`, connected,
    /// every length finite and `>= 0`. Direction does not matter.
    pub edges: Vec<(usize, usize, f64)>,
    /// Each cell's position `(from, to, t)`: on the edge between `from` and `to` (either
    /// orientation of an edge of `edges`), at the fraction `t` in `[0, 1]` of its length
    /// from `from`. A cell at a node may be given on any edge at that node (for
    /// [`branches`], the edge named decides the branch).
    pub cells: Vec<(usize, usize, f64)>,
}

impl TrajectoryLayout {
    /// A trajectory from its edges `(a, b, length)` and cell positions `(from, to, t)`.
    pub fn new(edges: Vec<(usize, usize, f64)>, cells: Vec<(usize, usize, f64)>) -> Self {
        TrajectoryLayout { edges, cells }
    }

    /// A trajectory whose edges all have length 1.
    pub fn unit_lengths(edges: &[(usize, usize)], cells: Vec<(usize, usize, f64)>) -> Self {
        TrajectoryLayout {
            edges: edges.iter().map(|&(a, b)| (a, b, 1.0)).collect(),
            cells,
        }
    }
}

/// Where pseudotime starts: a node of the tree, or a cell's position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// Node `k` of the tree (e.g. a reference's start milestone).
    Node(usize),
    /// The position of cell `i` (e.g. DDRTree's root cell).
    Cell(usize),
}

/// Which cells the geodesic distances start from in [`geodesic_correlation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waypoints {
    /// About this many cells of each trajectory, spread over its branches and branch
    /// points in proportion to their cells ([`waypoint_cells`]); the union of the two sets
    /// is used. dyneval's default is 100.
    PerTrajectory(usize),
    /// Every cell: all `n x n` distances, `O(n^2)` time and memory.
    All,
}

impl Default for Waypoints {
    /// dyneval's default: about 100 waypoint cells per trajectory.
    fn default() -> Self {
        Waypoints::PerTrajectory(100)
    }
}

/// A tree over nodes `0..n_nodes`, validated.
pub(crate) struct Tree {
    pub(crate) n_nodes: usize,
    pub(crate) edges: Vec<(usize, usize, f64)>,
    /// `adj[v]`: `(neighbour, edge index)` in the order of `edges`.
    pub(crate) adj: Vec<Vec<(usize, usize)>>,
    index: HashMap<(usize, usize), usize>,
}

impl Tree {
    /// Checks that `edges` form a tree over the nodes `0..K` with finite lengths `>= 0`.
    pub(crate) fn new(edges: &[(usize, usize, f64)], what: &str) -> Result<Tree> {
        if edges.is_empty() {
            return Err(Error::Empty(format!(
                "the {what}'s tree (it has no edges; a tree over K nodes has K - 1 >= 1)"
            )));
        }
        let m = edges.len();
        let bad = |message: String| Error::invalid(what, message);
        let mut k = 0;
        for (e, &(a, b, len)) in edges.iter().enumerate() {
            if a > m || b > m {
                return Err(bad(format!(
                    "edge {e} ({a}, {b}) names node {}, but a tree with {m} edges has the nodes 0..={m}; number the nodes 0..K-1, each on an edge",
                    a.max(b)
                )));
            }
            if a == b {
                return Err(bad(format!(
                    "edge {e} joins node {a} to itself; a tree has no loops"
                )));
            }
            if !(len.is_finite() && len >= 0.0) {
                return Err(bad(format!(
                    "edge {e} ({a}, {b}) has length {len}; lengths must be finite and >= 0"
                )));
            }
            k = k.max(a + 1).max(b + 1);
        }
        if k != m + 1 {
            return Err(bad(format!(
                "the {m} edges join only {k} nodes (0..{k}), so they are not a tree (a tree on {k} nodes has {} edges): there is a cycle or a repeated edge",
                k - 1
            )));
        }
        let mut adj = vec![Vec::new(); k];
        let mut index = HashMap::with_capacity(m);
        for (e, &(a, b, _)) in edges.iter().enumerate() {
            if let Some(first) = index.insert((a.min(b), a.max(b)), e) {
                return Err(bad(format!(
                    "edge {e} ({a}, {b}) repeats edge {first}; a tree has one edge between two nodes"
                )));
            }
            adj[a].push((b, e));
            adj[b].push((a, e));
        }
        let mut seen = vec![false; k];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(v) = stack.pop() {
            for &(w, _) in &adj[v] {
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        if let Some(v) = seen.iter().position(|&s| !s) {
            return Err(bad(format!(
                "node {v} is not connected to node 0, so the {m} edges over {k} nodes contain a cycle: they are not a tree"
            )));
        }
        Ok(Tree {
            n_nodes: k,
            edges: edges.to_vec(),
            adj,
            index,
        })
    }

    /// The edge between `a` and `b`, in either orientation.
    fn edge(&self, a: usize, b: usize) -> Option<usize> {
        self.index.get(&(a.min(b), a.max(b))).copied()
    }

    pub(crate) fn degree(&self, v: usize) -> usize {
        self.adj[v].len()
    }

    /// Distance along the tree from node `root` to every node: one traversal, `O(K)`.
    pub(crate) fn distances_from(&self, root: usize) -> Vec<f64> {
        let mut dist = vec![f64::INFINITY; self.n_nodes];
        dist[root] = 0.0;
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            for &(w, e) in &self.adj[v] {
                if dist[w].is_infinite() {
                    dist[w] = dist[v] + self.edges[e].2;
                    stack.push(w);
                }
            }
        }
        dist
    }
}

/// The precision, relative to a tree's total length, to which the correlations compare
/// distances along it: closer ones tie.
pub const TIE_PRECISION: f64 = 1e-9;

/// A cell's position on the tree: on edge `edge` = `(a, b)` of length `len`, at distance
/// `off` from `a`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub(crate) edge: usize,
    pub(crate) a: usize,
    pub(crate) b: usize,
    pub(crate) len: f64,
    pub(crate) off: f64,
}

/// A trajectory whose tree and cell positions are validated.
pub(crate) struct Checked {
    pub(crate) tree: Tree,
    pub(crate) places: Vec<Place>,
}

impl Checked {
    pub(crate) fn new(layout: &TrajectoryLayout, what: &str) -> Result<Checked> {
        let tree = Tree::new(&layout.edges, what)?;
        if layout.cells.is_empty() {
            return Err(Error::Empty(format!("the {what}'s cell positions")));
        }
        let mut places = Vec::with_capacity(layout.cells.len());
        for (i, &(from, to, t)) in layout.cells.iter().enumerate() {
            if !(0.0..=1.0).contains(&t) {
                return Err(Error::invalid(
                    what,
                    format!(
                        "cell {i} is at t = {t} on ({from}, {to}); t must lie in [0, 1] (a position past a leaf is the leaf: t = 0 or 1)"
                    ),
                ));
            }
            let Some(edge) = tree.edge(from, to) else {
                return Err(Error::invalid(
                    what,
                    format!("cell {i} lies on ({from}, {to}), which is not an edge of the tree"),
                ));
            };
            let len = tree.edges[edge].2;
            places.push(Place {
                edge,
                a: from,
                b: to,
                len,
                off: t * len,
            });
        }
        Ok(Checked { tree, places })
    }

    pub(crate) fn n_cells(&self) -> usize {
        self.places.len()
    }

    /// Distances in units of [`TIE_PRECISION`] times the tree's total length, rounded: a
    /// distance computed along different paths (or from either end) can differ in its last
    /// bits, and ranks would split what are ties.
    pub(crate) fn snapped(&self, mut d: Vec<f64>) -> Vec<f64> {
        let total: f64 = self.tree.edges.iter().map(|e| e.2).sum();
        let unit = if total > 0.0 {
            TIE_PRECISION * total
        } else {
            1.0
        };
        for x in &mut d {
            *x = (*x / unit).round();
        }
        d
    }

    /// The distance along the tree from node `root` to every cell.
    fn distances_from_node(&self, root: usize) -> Vec<f64> {
        let d = self.tree.distances_from(root);
        self.places
            .iter()
            .map(|q| (d[q.a] + q.off).min(d[q.b] + (q.len - q.off)))
            .collect()
    }

    /// The distance along the tree from cell `i` to every cell: the path leaves the edge of
    /// `i` through one of its ends and enters the other cell's edge through one of its
    /// ends (the shortest of the four is the path in a tree), or stays on a shared edge.
    pub(crate) fn distances_from_cell(&self, i: usize) -> Vec<f64> {
        let p = self.places[i];
        let da = self.tree.distances_from(p.a);
        let db = self.tree.distances_from(p.b);
        let to = |d: &[f64], q: &Place| (d[q.a] + q.off).min(d[q.b] + (q.len - q.off));
        self.places
            .iter()
            .map(|q| {
                if q.edge == p.edge {
                    let from_a = if q.a == p.a { q.off } else { q.len - q.off };
                    (p.off - from_a).abs()
                } else {
                    (p.off + to(&da, q)).min((p.len - p.off) + to(&db, q))
                }
            })
            .collect()
    }
}

/// Both trajectories describe the same number of cells, at least 2.
fn paired(pred: &Checked, reference: &Checked, what: &str) -> Result<usize> {
    let n = pred.n_cells();
    if reference.n_cells() != n {
        return Err(Error::DimensionMismatch(format!(
            "the predicted trajectory places {n} cells but the reference places {}; both must describe the same cells in the same order",
            reference.n_cells()
        )));
    }
    if n < 2 {
        return Err(Error::TooFewPoints {
            what: what.to_string(),
            needed: 2,
            got: n,
            advice: "a correlation needs at least two cells".to_string(),
        });
    }
    Ok(n)
}

fn cell_index(i: usize, n: usize, what: &str) -> Result<()> {
    if i >= n {
        return Err(Error::invalid(
            what,
            format!("cell {i} is out of range: there are {n} cells (0..{n})"),
        ));
    }
    Ok(())
}

/// The distance along the tree from each of the cells `rows` to every cell: entry `(r, j)`
/// of the `rows.len() x n` result is the length of the path on the tree between the
/// positions of cells `rows[r]` and `j`.
///
/// `O(rows (K + n))` time, parallel over rows.
///
/// Errors: an invalid tree or position (see [`TrajectoryLayout`]), no cells, or a row that
/// is not a cell.
pub fn geodesic_distances(layout: &TrajectoryLayout, rows: &[usize]) -> Result<DMatrix<f64>> {
    let t = Checked::new(layout, "trajectory")?;
    for &i in rows {
        cell_index(i, t.n_cells(), "geodesic distance rows")?;
    }
    let d: Vec<Vec<f64>> = rows.par_iter().map(|&i| t.distances_from_cell(i)).collect();
    Ok(DMatrix::from_fn(rows.len(), t.n_cells(), |r, j| d[r][j]))
}

/// Pseudotime: the distance along the tree from `root` to every cell.
///
/// Errors: an invalid tree or position, no cells, or a root that is not a node or cell.
pub fn pseudotime(layout: &TrajectoryLayout, root: Root) -> Result<Vec<f64>> {
    let t = Checked::new(layout, "trajectory")?;
    pseudotime_of(&t, root, "root")
}

fn pseudotime_of(t: &Checked, root: Root, what: &str) -> Result<Vec<f64>> {
    match root {
        Root::Node(k) if k < t.tree.n_nodes => Ok(t.distances_from_node(k)),
        Root::Node(k) => Err(Error::invalid(
            what,
            format!(
                "node {k} is not a node of the tree (its nodes are 0..{})",
                t.tree.n_nodes
            ),
        )),
        Root::Cell(i) => {
            cell_index(i, t.n_cells(), what)?;
            Ok(t.distances_from_cell(i))
        }
    }
}

/// Spearman's correlation of the two trajectories' pseudotimes, each from its own root;
/// 0 when either pseudotime is constant (it orders nothing). Pseudotimes are compared to
/// [`TIE_PRECISION`] of each tree's total length (closer ones tie).
///
/// Errors: an invalid trajectory, different cell counts, fewer than 2 cells, or a root
/// that is not a node or cell.
pub fn pseudotime_correlation(
    pred: &TrajectoryLayout,
    pred_root: Root,
    reference: &TrajectoryLayout,
    reference_root: Root,
) -> Result<f64> {
    let p = Checked::new(pred, "predicted trajectory")?;
    let r = Checked::new(reference, "reference trajectory")?;
    paired(&p, &r, "pseudotime correlation")?;
    let tp = p.snapped(pseudotime_of(&p, pred_root, "predicted root")?);
    let tr = r.snapped(pseudotime_of(&r, reference_root, "reference root")?);
    spearman_or_zero(&tp, &tr)
}

/// Spearman's correlation, or 0 when either side is constant.
fn spearman_or_zero(a: &[f64], b: &[f64]) -> Result<f64> {
    let constant = |v: &[f64]| v.iter().all(|&x| x == v[0]);
    if constant(a) || constant(b) {
        return Ok(0.0);
    }
    spearman(a, b)
}

/// Waypoint cells of a trajectory, about `count` of them spread over it as dyneval's
/// `select_waypoint_cells` spreads them, but deterministic.
///
/// The cells are grouped by place: the cells at a node of degree other than 2 (within
/// `1e-6` of the branch's length of it) by that node, the others by the branch they lie on
/// (see [`branches`]). A place with `m` of the `n` cells gets `s = min(m, ceil(count m /
/// n))` waypoints: its cells ordered along the branch (a node's by index), those at
/// positions `floor((2j + 1) m / (2 s))`, `j = 0..s`, the middles of `s` equal slices. In
/// increasing order of cell index.
///
/// Errors: an invalid trajectory, no cells, or `count == 0`.
pub fn waypoint_cells(layout: &TrajectoryLayout, count: usize) -> Result<Vec<usize>> {
    let t = Checked::new(layout, "trajectory")?;
    waypoints_of(&t, count)
}

fn waypoints_of(t: &Checked, count: usize) -> Result<Vec<usize>> {
    if count == 0 {
        return Err(Error::invalid(
            "waypoints",
            "ask for at least one waypoint cell per trajectory",
        ));
    }
    let b = Branches::of(&t.tree);
    let n = t.n_cells();
    // Place of every cell: Ok(node) at a branch point or leaf, Err(branch) on a branch,
    // with the cell's distance along its branch.
    let mut places: HashMap<std::result::Result<usize, usize>, Vec<(f64, usize)>> = HashMap::new();
    for (i, q) in t.places.iter().enumerate() {
        let (branch, along) = b.along(q);
        let length = b.length[branch];
        let (start, end) = b.ends[branch];
        let tol = 1e-6 * length;
        let place = if along <= tol {
            Ok(start)
        } else if along >= length - tol {
            Ok(end)
        } else {
            Err(branch)
        };
        let key = if place.is_ok() { 0.0 } else { along };
        places.entry(place).or_default().push((key, i));
    }
    let mut out = Vec::new();
    for cells in places.values_mut() {
        cells.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let m = cells.len();
        let s = m.min((count * m).div_ceil(n));
        out.extend((0..s).map(|j| cells[(2 * j + 1) * m / (2 * s)].1));
    }
    out.sort_unstable();
    Ok(out)
}

/// Spearman's correlation between the two trajectories' geodesic distances from the
/// waypoint cells to every cell (dyneval's `correlation`, before it clamps at 0): with `W`
/// the waypoints, the `|W| x n` distances along the predicted tree against those along
/// the reference tree, all `|W| n` pairs (a waypoint's zero distance to itself included,
/// as in dyneval). In `[-1, 1]`, 1 when the distances on one tree are an increasing
/// function of those on the other; 0 when either set of distances is constant (dyneval's
/// rule). Distances are compared to [`TIE_PRECISION`] of each tree's total length, so that
/// equal distances computed along different paths tie (a relabelled copy of a trajectory
/// scores exactly 1).
///
/// With [`Waypoints::PerTrajectory`] the waypoints are the union of the two
/// trajectories' [`waypoint_cells`] (dyneval samples its waypoints at random; these are
/// spread deterministically). `O(|W| (K + n) + |W| n log(|W| n))` time; the distances and
/// their ranks take about `40 |W| n` bytes, refused above the memory limit.
///
/// Errors: an invalid trajectory, different cell counts, fewer than 2 cells, zero
/// waypoints asked for, or the memory limit.
pub fn geodesic_correlation(
    pred: &TrajectoryLayout,
    reference: &TrajectoryLayout,
    waypoints: Waypoints,
) -> Result<f64> {
    let p = Checked::new(pred, "predicted trajectory")?;
    let r = Checked::new(reference, "reference trajectory")?;
    let n = paired(&p, &r, "geodesic distance correlation")?;
    let rows = match waypoints {
        Waypoints::All => (0..n).collect(),
        Waypoints::PerTrajectory(count) => {
            let mut rows = waypoints_of(&p, count)?;
            rows.extend(waypoints_of(&r, count)?);
            rows.sort_unstable();
            rows.dedup();
            rows
        }
    };
    let w = rows.len();
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method: "the geodesic distance correlation",
        n,
        bytes: &|m| 40u64.saturating_mul((w.min(m) as u64).saturating_mul(m as u64)),
        holds: format!("{w} x n distances along each tree and their ranks"),
        alternative: "fewer waypoints (Waypoints::PerTrajectory)",
    })?;
    let flat = |t: &Checked| -> Vec<f64> {
        let d: Vec<Vec<f64>> = rows
            .par_iter()
            .map(|&i| t.snapped(t.distances_from_cell(i)))
            .collect();
        d.concat()
    };
    spearman_or_zero(&flat(&p), &flat(&r))
}
