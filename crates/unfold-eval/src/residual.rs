//! Residual variance of an embedding against given distances (Tenenbaum et al. 2000).

use crate::check::paired_points;
use nalgebra::DMatrix;
use unfold_core::{Error, Result};
use unfold_linalg::pairwise_sq_dists;

/// Residual variance `1 - rho^2` (Tenenbaum, de Silva & Langford 2000, Fig. 2), where `rho`
/// is the Pearson correlation between the entries `high_dist[(i, j)]`, `i < j`, of a given
/// n x n distance matrix (e.g. graph geodesic distances, not squared) and the Euclidean
/// distances `||low_i - low_j||` of the embedding `low` (n x q). In `[0, 1]`; 0 when the
/// embedding distances are an exact positive multiple of the given ones (plus a constant).
///
/// Only the entries above the diagonal are used; `high_dist` must be square, symmetric (to
/// a relative 1e-10) and finite: infinite geodesic distances of a disconnected graph are
/// rejected, embed each connected component separately.
///
/// Errors: empty, non-finite or non-square `high_dist`, asymmetric `high_dist`, a point count
/// that differs from `low`, fewer than 3 points, or constant distances on either side (the
/// correlation is undefined).
pub fn residual_variance(high_dist: &DMatrix<f64>, low: &DMatrix<f64>) -> Result<f64> {
    paired_points(high_dist, "distance matrix", low, "embedding")?;
    let n = high_dist.nrows();
    if high_dist.ncols() != n {
        return Err(Error::DimensionMismatch(format!(
            "the distance matrix must be square (n x n), got {} x {}",
            n,
            high_dist.ncols()
        )));
    }
    check_symmetric(high_dist)?;
    if n < 3 {
        return Err(Error::TooFewPoints {
            what: "residual variance".to_string(),
            needed: 3,
            got: n,
            advice: "a correlation needs at least 3 pairs of points".to_string(),
        });
    }
    let low_sq = pairwise_sq_dists(low);
    let pairs = || (0..n).flat_map(|j| (0..j).map(move |i| (i, j)));
    let a = pairs().map(|(i, j)| high_dist[(i, j)]);
    let b = pairs().map(|(i, j)| low_sq[(i, j)].sqrt());
    let rho = pearson(a, b)?;
    Ok((1.0 - rho * rho).max(0.0))
}

fn check_symmetric(d: &DMatrix<f64>) -> Result<()> {
    let scale = d.amax();
    for j in 0..d.ncols() {
        for i in 0..j {
            if (d[(i, j)] - d[(j, i)]).abs() > 1e-10 * scale {
                return Err(Error::invalid(
                    "high_dist",
                    format!(
                        "the distance matrix is not symmetric: entry ({i}, {j}) = {} but ({j}, {i}) = {}; \
                         pass a symmetric matrix of pairwise distances",
                        d[(i, j)],
                        d[(j, i)]
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Pearson correlation of two equally long sequences (two passes: means, then moments).
fn pearson<A, B>(a: A, b: B) -> Result<f64>
where
    A: Iterator<Item = f64> + Clone,
    B: Iterator<Item = f64> + Clone,
{
    let m = a.clone().count() as f64;
    let mean_a = a.clone().sum::<f64>() / m;
    let mean_b = b.clone().sum::<f64>() / m;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.zip(b) {
        let (dx, dy) = (x - mean_a, y - mean_b);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    for (s, what) in [(saa, "given distances"), (sbb, "embedding distances")] {
        if s == 0.0 {
            return Err(Error::numerical(
                "residual variance",
                format!("the {what} are all equal, so their correlation is undefined"),
            ));
        }
    }
    Ok(sab / (saa.sqrt() * sbb.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn euclidean(x: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(x.nrows(), x.nrows(), |i, j| (x.row(i) - x.row(j)).norm())
    }

    #[test]
    fn zero_for_a_scaled_copy() {
        let x = DMatrix::from_fn(20, 3, |i, j| ((i * 7 + j * 3) as f64).sin());
        let rv = residual_variance(&euclidean(&x), &(&x * -2.5)).unwrap();
        assert!(rv < 1e-14, "rv = {rv}");
    }

    #[test]
    fn hand_computed_case() {
        // Embedding at 0, 1, 3: distances (0,1) = 1, (0,2) = 3, (1,2) = 2.
        // Given distances (0,1) = 1, (0,2) = 2, (1,2) = 3.
        // Centred: (-1, 0, 1) and (-1, 1, 0): cov 1, variances 2 and 2, rho = 1/2,
        // residual variance 3/4.
        let high = DMatrix::from_row_slice(3, 3, &[0., 1., 2., 1., 0., 3., 2., 3., 0.]);
        let low = DMatrix::from_column_slice(3, 1, &[0., 1., 3.]);
        let rv = residual_variance(&high, &low).unwrap();
        assert!((rv - 0.75).abs() < 1e-15, "rv = {rv}");
    }

    #[test]
    fn rejects_bad_input() {
        let low = DMatrix::from_column_slice(3, 1, &[0., 1., 3.]);
        let square = DMatrix::from_row_slice(3, 3, &[0., 1., 2., 1., 0., 3., 2., 3., 0.]);
        assert!(matches!(
            residual_variance(&DMatrix::zeros(3, 2), &low),
            Err(Error::DimensionMismatch(_))
        ));
        let mut asym = square.clone();
        asym[(0, 2)] = 2.5;
        assert!(matches!(
            residual_variance(&asym, &low),
            Err(Error::InvalidParameter { .. })
        ));
        let mut inf = square.clone();
        inf[(0, 2)] = f64::INFINITY;
        inf[(2, 0)] = f64::INFINITY;
        assert!(matches!(
            residual_variance(&inf, &low),
            Err(Error::NonFinite { .. })
        ));
        let constant = DMatrix::from_row_slice(3, 3, &[0., 1., 1., 1., 0., 1., 1., 1., 0.]);
        assert!(matches!(
            residual_variance(&constant, &low),
            Err(Error::Numerical { .. })
        ));
        assert!(residual_variance(&square, &DMatrix::zeros(4, 1)).is_err());
    }
}
