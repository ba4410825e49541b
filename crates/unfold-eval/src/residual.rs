//! Residual variance of an embedding against given distances (Tenenbaum et al. 2000).

use crate::check::paired_points;
use crate::rows::map_distance_rows;
use nalgebra::DMatrix;
use unfold_core::{Error, Result};

/// Residual variance `1 - rho^2` (Tenenbaum, de Silva & Langford 2000, Fig. 2), where `rho`
/// is the Pearson correlation, over all pairs `i < j`, between the given distances
/// `high_dist[(i, j)]` (an n x n matrix, e.g. graph geodesic distances, not squared) and the
/// Euclidean distances `||low_i - low_j||` of the embedding `low` (n x q). In `[0, 1]`; 0
/// when the embedding distances are an exact affine function (positive or negative slope)
/// of the given ones, e.g. a scaled copy.
///
/// `high_dist` must be square, symmetric (to a relative 1e-10; the entries below the
/// diagonal are read) and finite: infinite geodesic distances of a disconnected graph are
/// rejected, embed each connected component separately. The correlation is accumulated per
/// point in parallel and merged in point order with the pairwise update of Chan, Golub &
/// LeVeque (1979), so it is stable and independent of the thread count.
///
/// Errors: empty, non-finite, non-square or asymmetric `high_dist`, a point count that
/// differs from `low`, fewer than 3 points, or constant distances on either side (the
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
    // Point i contributes the pairs (i, j), j > i: column i of the symmetric high_dist.
    let per_point = map_distance_rows(&[low], |i, rows| {
        let given = &high_dist.as_slice()[i * n + i + 1..(i + 1) * n];
        let embedded = rows[0][i + 1..].iter().map(|d2| d2.sqrt());
        Moments::of(given.iter().copied().zip(embedded))
    });
    let total = per_point
        .into_iter()
        .fold(Moments::default(), |acc, m| acc.merge(&m));
    for (s, what) in [
        (total.m2_a, "given distances"),
        (total.m2_b, "embedding distances"),
    ] {
        if s <= 0.0 {
            return Err(Error::numerical(
                "residual variance",
                format!("the {what} are all equal, so their correlation is undefined"),
            ));
        }
    }
    let rho = total.c_ab / (total.m2_a.sqrt() * total.m2_b.sqrt());
    Ok((1.0 - rho * rho).clamp(0.0, 1.0))
}

/// Count, means, centred second moments and co-moment of a set of pairs (a, b).
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    count: f64,
    mean_a: f64,
    mean_b: f64,
    m2_a: f64,
    m2_b: f64,
    c_ab: f64,
}

impl Moments {
    /// Two passes over a small set: means, then centred sums.
    fn of(pairs: impl Iterator<Item = (f64, f64)> + Clone) -> Self {
        let mut m = Moments::default();
        for (a, b) in pairs.clone() {
            m.count += 1.0;
            m.mean_a += a;
            m.mean_b += b;
        }
        if m.count == 0.0 {
            return m;
        }
        m.mean_a /= m.count;
        m.mean_b /= m.count;
        for (a, b) in pairs {
            let (da, db) = (a - m.mean_a, b - m.mean_b);
            m.m2_a += da * da;
            m.m2_b += db * db;
            m.c_ab += da * db;
        }
        m
    }

    /// The moments of the union of two disjoint sets (Chan, Golub & LeVeque 1979).
    fn merge(&self, other: &Moments) -> Moments {
        let count = self.count + other.count;
        if other.count == 0.0 {
            return *self;
        }
        if self.count == 0.0 {
            return *other;
        }
        let (da, db) = (other.mean_a - self.mean_a, other.mean_b - self.mean_b);
        let w = self.count * other.count / count;
        Moments {
            count,
            mean_a: self.mean_a + da * other.count / count,
            mean_b: self.mean_b + db * other.count / count,
            m2_a: self.m2_a + other.m2_a + da * da * w,
            m2_b: self.m2_b + other.m2_b + db * db * w,
            c_ab: self.c_ab + other.c_ab + da * db * w,
        }
    }
}

/// Symmetric to a relative 1e-10, compared in cache-friendly tiles.
fn check_symmetric(d: &DMatrix<f64>) -> Result<()> {
    const TILE: usize = 64;
    let n = d.nrows();
    let tol = 1e-10 * d.amax();
    for jt in (0..n).step_by(TILE) {
        for it in (0..=jt).step_by(TILE) {
            for j in jt..(jt + TILE).min(n) {
                for i in it..(it + TILE).min(j) {
                    if (d[(i, j)] - d[(j, i)]).abs() > tol {
                        return Err(Error::invalid(
                            "high_dist",
                            format!(
                                "the distance matrix is not symmetric: entry ({i}, {j}) = {} but \
                                 ({j}, {i}) = {}; pass a symmetric matrix of pairwise distances",
                                d[(i, j)],
                                d[(j, i)]
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
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
    fn matches_direct_correlation_on_random_data() {
        let x = DMatrix::from_fn(40, 4, |i, j| ((i * i * 3 + j * 11) as f64).sin());
        let y = DMatrix::from_fn(40, 2, |i, j| ((i * 7 + j * 5) as f64).cos() + x[(i, j)]);
        let (dx, dy) = (euclidean(&x), euclidean(&y));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for j in 0..40 {
            for i in 0..j {
                a.push(dx[(i, j)]);
                b.push(dy[(i, j)]);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (ma, mb) = (mean(&a), mean(&b));
        let cov: f64 = a.iter().zip(&b).map(|(p, q)| (p - ma) * (q - mb)).sum();
        let va: f64 = a.iter().map(|p| (p - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|q| (q - mb).powi(2)).sum();
        let expected = 1.0 - cov * cov / (va * vb);
        let got = residual_variance(&dx, &y).unwrap();
        assert!((got - expected).abs() < 1e-13, "{got} vs {expected}");
        assert!(got > 0.05 && got < 0.95);
    }

    #[test]
    fn merged_moments_equal_direct_moments() {
        let a: Vec<f64> = (0..50)
            .map(|i| (i as f64 * 0.37).sin() * 10.0 + 100.0)
            .collect();
        let b: Vec<f64> = (0..50).map(|i| (i as f64 * 0.11).cos() + 3.0).collect();
        let pairs = |r: std::ops::Range<usize>| r.map(|i| (a[i], b[i]));
        let whole = Moments::of(pairs(0..50));
        let merged = [0..7, 7..7, 7..30, 30..50]
            .into_iter()
            .map(|r| Moments::of(pairs(r)))
            .fold(Moments::default(), |acc, m| acc.merge(&m));
        for (x, y) in [
            (whole.mean_a, merged.mean_a),
            (whole.mean_b, merged.mean_b),
            (whole.m2_a, merged.m2_a),
            (whole.m2_b, merged.m2_b),
            (whole.c_ab, merged.c_ab),
        ] {
            assert!((x - y).abs() < 1e-11 * x.abs().max(1.0), "{x} vs {y}");
        }
        assert_eq!(merged.count, 50.0);
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
