//! Monocle 2's measure of pseudotime: path lengths in a minimum spanning tree over the
//! cells' positions ([`super::Measure::CellTree`]).

use super::tree::{argmax, argmin_by, path_lengths, Tree};
use super::Position;
use nalgebra::DMatrix;
use unfold_core::Result;

/// Monocle 2's tree over the cells: the Euclidean minimum spanning tree of their positions,
/// every edge lengthened by the smallest nonzero edge (`project2MST`).
pub(super) struct CellTree {
    /// `adjacent[i]`: `(neighbour, lengthened edge)`.
    adjacent: Vec<Vec<(usize, f64)>>,
}

impl CellTree {
    pub(super) fn new(centres: &DMatrix<f64>, position: &[Position]) -> Result<CellTree> {
        let d = centres.ncols();
        let points = DMatrix::from_fn(position.len(), d, |i, c| {
            let p = position[i];
            let (a, b) = (centres[(p.from, c)], centres[(p.to, c)]);
            a + p.t * (b - a)
        });
        let edges = crate::euclidean_mst(&points)?;
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
    pub(super) fn distances_from(&self, root: usize) -> Vec<f64> {
        path_lengths(&self.adjacent, root)
    }

    /// `orderCells`' automatic root: the lower-index end of the centres' tree diameter,
    /// then the first cell whose nearest centre it is that is a leaf of the cell tree (else
    /// the first cell whose nearest centre it is; with none, the first cell at the centre
    /// nearest to it along the tree).
    pub(super) fn monocle_root(&self, tree: &Tree, centre: &[usize]) -> usize {
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
