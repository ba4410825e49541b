//! How far several trajectories over the same cells agree with each other: the geodesic
//! distance correlation of [`super::geodesic_correlation`] between every pair of them, on
//! the distances between a sample of the cells.

use super::{Checked, TrajectoryLayout};
use crate::correlation::ranks;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{Error, Result};

/// Spearman's correlation of the distances along the trees between the cells `cells`
/// (every unordered pair of them once), for every pair of the `trajectories`, which all
/// place the same cells in the same order.
///
/// Entry `(a, b)` of the symmetric result compares trajectory `a` with trajectory `b`; the
/// diagonal is 1, and an entry is 0 where either trajectory's distances are constant
/// (dyneval's rule, as in [`super::geodesic_correlation`]). Distances are compared to
/// [`super::TIE_PRECISION`] of each tree's total length.
///
/// Each trajectory's distances are ranked once, so `m` trajectories over a sample of `c`
/// cells cost `O(m c (K + n) + m c^2 log c + m^2 c^2)` time and about `8 m c^2` bytes.
///
/// Errors: no trajectories, an invalid one, different cell counts, fewer than 2 cells in
/// `cells`, a cell out of range, or the memory limit.
pub fn geodesic_agreement(
    trajectories: &[TrajectoryLayout],
    cells: &[usize],
) -> Result<DMatrix<f64>> {
    if trajectories.is_empty() {
        return Err(Error::Empty("the trajectories to compare".to_string()));
    }
    let checked = trajectories
        .iter()
        .map(|t| Checked::new(t, "trajectory"))
        .collect::<Result<Vec<_>>>()?;
    let n = checked[0].n_cells();
    if let Some(t) = checked.iter().find(|t| t.n_cells() != n) {
        return Err(Error::DimensionMismatch(format!(
            "one trajectory places {n} cells and another {}; all must describe the same cells in the same order",
            t.n_cells()
        )));
    }
    if cells.len() < 2 {
        return Err(Error::TooFewPoints {
            what: "geodesic agreement".to_string(),
            needed: 2,
            got: cells.len(),
            advice: "sample at least two cells: the distances are between pairs of them"
                .to_string(),
        });
    }
    if let Some(&i) = cells.iter().find(|&&i| i >= n) {
        return Err(Error::invalid(
            "geodesic agreement cells",
            format!("cell {i} is out of range: there are {n} cells (0..{n})"),
        ));
    }
    let c = cells.len();
    let pairs = c * (c - 1) / 2;
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method: "the geodesic agreement of trajectories",
        n: c,
        bytes: &|m| 8 * 3 * (checked.len() as u64) * (m as u64) * (m as u64) / 2,
        holds: format!(
            "the {pairs} distances between the sampled cells along each tree and their ranks"
        ),
        alternative: "fewer sampled cells",
    })?;
    // Each trajectory's pair distances, ranked and centred, with their norm.
    let centred: Vec<(Vec<f64>, f64)> = checked
        .par_iter()
        .map(|t| {
            let mut d = Vec::with_capacity(pairs);
            for (r, &i) in cells.iter().enumerate() {
                let from = t.distances_from_cell(i);
                d.extend(cells[r + 1..].iter().map(|&j| from[j]));
            }
            let mean = (pairs as f64 - 1.0) / 2.0;
            let v: Vec<f64> = ranks(&t.snapped(d)).iter().map(|r| r - mean).collect();
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            (v, norm)
        })
        .collect();
    let m = centred.len();
    let mut out = DMatrix::identity(m, m);
    for a in 0..m {
        for b in a + 1..m {
            let ((va, na), (vb, nb)) = (&centred[a], &centred[b]);
            let r = if *na == 0.0 || *nb == 0.0 {
                0.0
            } else {
                va.iter().zip(vb).map(|(x, y)| x * y).sum::<f64>() / (na * nb)
            };
            out[(a, b)] = r;
            out[(b, a)] = r;
        }
    }
    Ok(out)
}
