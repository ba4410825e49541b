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
//! the state of the segment it hangs from, and its junction is not a branch point. By the
//! same rule, two branch points joined by a path of fewer than L edges are one junction
//! (a multifurcation that noise has drawn as two nearby forks): the path's cells keep the
//! state of the segment the path is entered from, and the junction is reported once, by
//! its lowest centre.
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
//! of the positions ([`crate::euclidean_mst`], Borůvka on a kd-tree,
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
//!
//! [`Trajectory::smooth_over`] averages pseudotime over each cell's nearest cells in the
//! data (DDRTree's default ordering does, over its latent projection): positions move along
//! the tree with the noise across it, and the mean over a neighbourhood cancels much of it.
//!
//! Layout: this file holds the types and [`order_measured`]; `tree.rs` the tree over the
//! centres (distances along it, the projection of a cell onto it), `cell_tree.rs` Monocle
//! 2's tree over the cells, `states.rs` the numbering of states and the tips of states,
//! `smooth.rs` the averaging of pseudotime over neighbours.

mod cell_tree;
mod smooth;
mod states;
#[cfg(test)]
mod tests;
mod tree;

use crate::knn_query;
use cell_tree::CellTree;
use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use states::{numbered_segments, state_tip};
use tree::{argmax, project, Tree};
use unfold_core::{Error, Result};

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
    /// Centres of degree above 2, ascending; with `min_branch`, one per junction (module
    /// doc).
    pub branch_points: Vec<usize>,
    /// The number of states.
    pub states: usize,
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
    let branch_points = tree.junctions();
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
