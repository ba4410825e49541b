//! Pseudotime averaged over each cell's nearest cells: the distance along the tree is
//! measured from a cell's position, which noise across the tree moves along it; the mean
//! over the cell and its neighbours in the data (as diffusion pseudotime and Palantir
//! average over a kNN graph) keeps the ordering and cancels much of that noise.
//!
//! With `t` the distance along the tree and `N(i)` the neighbours of cell `i`,
//!
//! ```text
//! s_i = (t_i + sum_{j in N(i)} t_j) / (1 + |N(i)|),   pseudotime_i = max(0, s_i - s_root)
//! ```
//!
//! so pseudotime still starts at 0 at the root cell, and the few cells whose neighbourhood
//! lies nearer the root than the root's own share its 0.

use super::Trajectory;
use unfold_core::{Error, Result};

impl Trajectory {
    /// Replaces the pseudotime by its mean over each cell and its `neighbours[i]` (module
    /// doc), shifted to 0 at the root cell and raised to 0 where below. States, positions
    /// and branch points are unchanged.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if `neighbours` does not have one list per cell, or a
    /// neighbour is not a cell.
    pub fn smooth_over(&mut self, neighbours: &[Vec<usize>]) -> Result<()> {
        let n = self.pseudotime.len();
        if neighbours.len() != n {
            return Err(Error::DimensionMismatch(format!(
                "pseudotime smoothing: {} neighbour lists for {n} cells",
                neighbours.len()
            )));
        }
        if let Some(&j) = neighbours.iter().flatten().find(|&&j| j >= n) {
            return Err(Error::DimensionMismatch(format!(
                "pseudotime smoothing: neighbour {j} is not one of the {n} cells"
            )));
        }
        let t = &self.pseudotime;
        let mean: Vec<f64> = neighbours
            .iter()
            .enumerate()
            .map(|(i, near)| {
                let sum = near.iter().fold(t[i], |s, &j| s + t[j]);
                sum / (1 + near.len()) as f64
            })
            .collect();
        let start = mean[self.root_cell];
        self.pseudotime = mean.iter().map(|&s| (s - start).max(0.0)).collect();
        Ok(())
    }
}
