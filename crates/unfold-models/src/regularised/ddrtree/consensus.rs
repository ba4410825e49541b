//! The consensus of several starts: the fit whose tree places the cells most as the other
//! starts' trees do ([`Keep::Consensus`](super::Keep::Consensus)).
//!
//! Each start's fit is read as a trajectory, its tree over the centres with the cells'
//! positions on it (their projections, as the ordering places them). Two fits agree as far
//! as the distances along their trees between the same cells do (Spearman's correlation,
//! [`unfold_eval::geodesic_agreement`], on every pair of [`SAMPLED_CELLS`] cells spread
//! over the rows). The fit kept is the medoid: the one of the highest summed agreement
//! with the others. It needs no root, and a fit caught in a local minimum of its own
//! (a branch folded back, a tree drawn backwards) is outvoted by the starts that agree.

use super::iterate::Run;
use unfold_core::Result;
use unfold_eval::{geodesic_agreement, TrajectoryLayout};
use unfold_graph::trajectory::{order, Root};

/// Cells whose pairwise distances along each tree are compared (all of them below this).
pub(crate) const SAMPLED_CELLS: usize = 250;

/// The index of the medoid of `runs` by geodesic agreement; of equal ones (two starts
/// always tie), the one of the lower `objectives`, then the first.
pub(super) fn medoid(runs: &[Run], objectives: &[f64]) -> Result<usize> {
    let n = runs[0].state.z.nrows();
    let m = n.min(SAMPLED_CELLS);
    // The middles of m equal slices of the rows.
    let cells: Vec<usize> = (0..m).map(|j| (2 * j + 1) * n / (2 * m)).collect();
    let layouts = runs
        .iter()
        .map(|run| layout(run, &cells))
        .collect::<Result<Vec<_>>>()?;
    let all: Vec<usize> = (0..m).collect();
    let agreement = geodesic_agreement(&layouts, &all)?;
    let sums: Vec<f64> = agreement.row_iter().map(|r| r.sum()).collect();
    let mut best = 0;
    for (r, &s) in sums.iter().enumerate() {
        if s > sums[best] || (s == sums[best] && objectives[r] < objectives[best]) {
            best = r;
        }
    }
    Ok(best)
}

/// A fit as a trajectory of the cells `cells`: its tree, each edge as long as the distance
/// between its centres, and those cells' positions on it (a position past a leaf at the
/// leaf).
fn layout(run: &Run, cells: &[usize]) -> Result<TrajectoryLayout> {
    let c = &run.state.c;
    let pairs: Vec<(usize, usize)> = run.edges.iter().map(|&(a, b, _)| (a, b)).collect();
    let edges = pairs
        .iter()
        .map(|&(a, b)| (a, b, (c.row(a) - c.row(b)).norm()))
        .collect();
    let positions = order(&run.state.z.select_rows(cells), c, &pairs, Root::Auto)?.position;
    let cells = positions
        .iter()
        .map(|p| (p.from, p.to, p.t.clamp(0.0, 1.0)))
        .collect();
    Ok(TrajectoryLayout::new(edges, cells))
}
