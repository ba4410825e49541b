//! Branches of a tree (the maximal paths between nodes of degree other than 2) and the F1
//! of the cells' grouping by branch.

use super::{Checked, Place, TrajectoryLayout, Tree};
use crate::clustering::Contingency;
use unfold_core::{Error, Result};

/// The tree's branches: every edge lies on exactly one maximal path whose inner nodes all
/// have degree 2 and whose ends do not.
pub(crate) struct Branches {
    /// The branch of each edge.
    pub(crate) of_edge: Vec<usize>,
    /// The end of each edge nearer its branch's start, and that end's distance along the
    /// branch.
    first: Vec<usize>,
    base: Vec<f64>,
    /// Each branch's start and end node, and its length.
    pub(crate) ends: Vec<(usize, usize)>,
    pub(crate) length: Vec<f64>,
}

impl Branches {
    /// Walks every branch from one end: the nodes of degree other than 2 by increasing
    /// index, each one's edges in the order given, skipping edges already on a branch.
    pub(crate) fn of(tree: &Tree) -> Branches {
        let m = tree.edges.len();
        let mut out = Branches {
            of_edge: vec![usize::MAX; m],
            first: vec![0; m],
            base: vec![0.0; m],
            ends: Vec::new(),
            length: Vec::new(),
        };
        for v in 0..tree.n_nodes {
            if tree.degree(v) == 2 {
                continue;
            }
            for &(w, e) in &tree.adj[v] {
                if out.of_edge[e] != usize::MAX {
                    continue;
                }
                let id = out.ends.len();
                let (mut cur, mut edge, mut next, mut along) = (v, e, w, 0.0);
                loop {
                    out.of_edge[edge] = id;
                    out.first[edge] = cur;
                    out.base[edge] = along;
                    along += tree.edges[edge].2;
                    if tree.degree(next) != 2 {
                        break;
                    }
                    // The inner node's other edge (a node of degree 2 has exactly one).
                    let &(after, f) = tree.adj[next]
                        .iter()
                        .find(|&&(_, f)| f != edge)
                        .unwrap_or(&(cur, edge));
                    (cur, edge, next) = (next, f, after);
                }
                out.ends.push((v, next));
                out.length.push(along);
            }
        }
        out
    }

    /// The branch a position lies on and its distance along the branch from the start.
    pub(crate) fn along(&self, q: &Place) -> (usize, f64) {
        let e = q.edge;
        let from_first = if q.a == self.first[e] {
            q.off
        } else {
            q.len - q.off
        };
        (self.of_edge[e], self.base[e] + from_first)
    }

    /// The contracted tree: its nodes are the branch ends, renumbered `0..` in order of
    /// first appearance, its edges the branches with their lengths.
    pub(crate) fn network(&self) -> (usize, Vec<(usize, usize, f64)>) {
        let mut id = std::collections::HashMap::new();
        let mut number = |v: usize| {
            let next = id.len();
            *id.entry(v).or_insert(next)
        };
        let edges: Vec<_> = self
            .ends
            .iter()
            .zip(&self.length)
            .map(|(&(a, b), &len)| (number(a), number(b), len))
            .collect();
        (id.len(), edges)
    }
}

/// Each cell's branch: the maximal path between nodes of degree other than 2 (branch
/// points and leaves) that holds the edge it lies on, numbered `0..B`. A tree with one
/// branch point of degree 3 has 3 branches, a path has 1. A cell exactly at a branch point
/// belongs to the branch of the edge its position names (as dyneval groups a cell by the
/// edge of its progression).
///
/// Branches are numbered in the order they are walked: from the nodes of degree other than
/// 2 by increasing index, each node's edges in the order of `edges`.
///
/// Errors: an invalid tree or position (see [`TrajectoryLayout`]), or no cells.
pub fn branches(layout: &TrajectoryLayout) -> Result<Vec<usize>> {
    let t = Checked::new(layout, "trajectory")?;
    Ok(branch_labels(&t))
}

fn branch_labels(t: &Checked) -> Vec<usize> {
    let b = Branches::of(&t.tree);
    t.places.iter().map(|q| b.of_edge[q.edge]).collect()
}

/// Recovery, relevance and their F1 (harmonic mean) between two groupings of the cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BranchF1 {
    /// Mean over the reference's groups of the best Jaccard with a predicted group.
    pub recovery: f64,
    /// Mean over the predicted groups of the best Jaccard with a reference group.
    pub relevance: f64,
    /// `2 recovery relevance / (recovery + relevance)` (0 when both are 0).
    pub f1: f64,
}

/// dyneval's `F1_branches` on the branches of the two trajectories ([`branches`]): the
/// cells grouped by the branch they lie on, in the prediction and in the reference, then
/// [`f1_labels`].
///
/// Errors: an invalid trajectory, no cells, or different cell counts.
pub fn f1_branches(pred: &TrajectoryLayout, reference: &TrajectoryLayout) -> Result<BranchF1> {
    let p = Checked::new(pred, "predicted trajectory")?;
    let r = Checked::new(reference, "reference trajectory")?;
    if p.n_cells() != r.n_cells() {
        return Err(Error::DimensionMismatch(format!(
            "the predicted trajectory places {} cells but the reference places {}; both must describe the same cells in the same order",
            p.n_cells(),
            r.n_cells()
        )));
    }
    f1_labels(&branch_labels(&p), &branch_labels(&r))
}

/// The F1 of two groupings of the same cells (dyneval's `calculate_mapping`): with `P_i`
/// the predicted groups and `R_j` the reference's (the cells sharing a label; label values
/// are arbitrary ids), `J(i, j) = |P_i ∩ R_j| / |P_i ∪ R_j|`,
///
/// ```text
/// recovery  = mean_j max_i J(i, j),   relevance = mean_i max_j J(i, j),
/// F1        = 2 recovery relevance / (recovery + relevance).
/// ```
///
/// All three lie in `[0, 1]`, are 1 exactly when the groupings are the same partition (up
/// to relabelling), and F1 is symmetric in its arguments.
///
/// Errors: no labels, or label vectors of different lengths.
pub fn f1_labels(pred: &[usize], reference: &[usize]) -> Result<BranchF1> {
    let counts = Contingency::new(pred, reference)?.counts;
    let (np, nr) = counts.shape();
    let (size_p, size_r) = (counts.column_sum(), counts.row_sum());
    let jaccard = |i: usize, j: usize| {
        let c = counts[(i, j)];
        c / (size_p[i] + size_r[j] - c)
    };
    let recovery = (0..nr)
        .map(|j| (0..np).map(|i| jaccard(i, j)).fold(0.0, f64::max))
        .sum::<f64>()
        / nr as f64;
    let relevance = (0..np)
        .map(|i| (0..nr).map(|j| jaccard(i, j)).fold(0.0, f64::max))
        .sum::<f64>()
        / np as f64;
    let f1 = if recovery + relevance > 0.0 {
        2.0 * recovery * relevance / (recovery + relevance)
    } else {
        0.0
    };
    Ok(BranchF1 {
        recovery,
        relevance,
        f1,
    })
}
