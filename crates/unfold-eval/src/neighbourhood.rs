//! Trustworthiness and continuity of k-neighbourhoods (Venna & Kaski 2001).

use crate::check::paired_points;
use crate::ranks::{nearest, ranks_of};
use crate::rows::map_distance_rows;
use nalgebra::DMatrix;
use unfold_core::{Error, Result};

/// Trustworthiness of the embedding `low` (n x q) of the data `high` (n x p) with `k`
/// neighbours (Venna & Kaski 2001), scikit-learn's `sklearn.manifold.trustworthiness` with
/// the Euclidean metric:
///
/// `T(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in U_i^k} (r(i, j) - k)`
///
/// where `U_i^k` are the points among the `k` nearest neighbours of `i` in the embedding but
/// not in the data, and `r(i, j)` is the rank of `j` among the neighbours of `i` in the data
/// (1 = nearest). It penalises false neighbours brought in by the embedding; 1 is best.
///
/// Neighbours are ordered by (Euclidean distance, row index), a point is never its own
/// neighbour. Squared distances come from the Gram expansion `||a||^2 + ||b||^2 - 2 a.b` of
/// the column-centred points ([`unfold_linalg::sq_dists_to`]), so distances equal in exact
/// arithmetic but computed from non-integer coordinates may be ordered by rounding rather
/// than by index. Cost: O(n^2 (p + q)) for the distances (one block of rows at a time, never
/// the whole n x n matrix) plus O(n^2 log k) at worst for the ranks, parallel over points;
/// the result does not depend on the thread count (the penalty is an exact integer sum).
///
/// Errors: empty or non-finite input, different numbers of points, or `k` outside
/// `1 <= k < n / 2` (the normalisation needs `2n - 3k - 1 > 0`; scikit-learn has the
/// same limit).
pub fn trustworthiness(high: &DMatrix<f64>, low: &DMatrix<f64>, k: usize) -> Result<f64> {
    paired_points(high, "high-dimensional data", low, "embedding")?;
    check_k(high.nrows(), k, "trustworthiness")?;
    Ok(intrusion_score(high, low, k))
}

/// Continuity of the embedding `low` (n x q) of the data `high` (n x p) with `k` neighbours
/// (Venna & Kaski 2001):
///
/// `C(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in V_i^k} (r'(i, j) - k)`
///
/// where `V_i^k` are the points among the `k` nearest neighbours of `i` in the data but not
/// in the embedding and `r'(i, j)` is the rank of `j` in the embedding. It penalises true
/// neighbours that the embedding tears apart; 1 is best. By construction
/// `continuity(high, low, k) == trustworthiness(low, high, k)`. Same conventions, cost and
/// errors as [`trustworthiness`].
pub fn continuity(high: &DMatrix<f64>, low: &DMatrix<f64>, k: usize) -> Result<f64> {
    paired_points(high, "high-dimensional data", low, "embedding")?;
    check_k(high.nrows(), k, "continuity")?;
    Ok(intrusion_score(low, high, k))
}

/// `1 <= k < n / 2`.
fn check_k(n: usize, k: usize, metric: &str) -> Result<()> {
    if k == 0 || 2 * k >= n {
        let advice = if n >= 3 {
            format!("use 1 <= k <= {}", (n - 1) / 2)
        } else {
            "it needs at least 3 points".to_string()
        };
        return Err(Error::invalid(
            "k",
            format!("{metric} needs 1 <= k < n/2 with n = {n} points, got k = {k}; {advice}"),
        ));
    }
    Ok(())
}

/// `1 - 2 / (n k (2n - 3k - 1)) * sum_i sum (r_ref(i, j) - k)` over the points `j` among the
/// `k` nearest neighbours of `i` in `view` but not in `reference`, with `r_ref` the rank in
/// `reference` (both n x _ point sets).
fn intrusion_score(reference: &DMatrix<f64>, view: &DMatrix<f64>, k: usize) -> f64 {
    let n = reference.nrows();
    let penalties = map_distance_rows(&[reference, view], |i, rows| {
        let (ref_row, view_row) = (rows[0], rows[1]);
        let mut true_neighbours = nearest(ref_row, i, k);
        true_neighbours.sort_unstable();
        let intruders: Vec<usize> = nearest(view_row, i, k)
            .into_iter()
            .filter(|j| true_neighbours.binary_search(j).is_err())
            .collect();
        ranks_of(ref_row, i, &intruders)
            .into_iter()
            .map(|r| (r - k) as u64)
            .sum::<u64>()
    });
    let penalty: u64 = penalties.into_iter().sum();
    let (n, k) = (n as f64, k as f64);
    1.0 - 2.0 * penalty as f64 / (n * k * (2.0 * n - 3.0 * k - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, p, |_, _| rng.random_range(-1.0..1.0))
    }

    /// Rank of `j` among the neighbours of `i` by (distance, index), from scratch.
    fn brute_rank(x: &DMatrix<f64>, i: usize, j: usize) -> usize {
        let d = |a: usize, b: usize| (x.row(a) - x.row(b)).norm();
        1 + (0..x.nrows())
            .filter(|&l| l != i && l != j)
            .filter(|&l| d(i, l) < d(i, j) || (d(i, l) == d(i, j) && l < j))
            .count()
    }

    /// The definition with plain loops, O(n^3).
    fn brute_trustworthiness(high: &DMatrix<f64>, low: &DMatrix<f64>, k: usize) -> f64 {
        let n = high.nrows();
        let mut sum = 0usize;
        for i in 0..n {
            for j in 0..n {
                if j != i && brute_rank(low, i, j) <= k {
                    sum += brute_rank(high, i, j).saturating_sub(k);
                }
            }
        }
        let (n, k) = (n as f64, k as f64);
        1.0 - 2.0 * sum as f64 / (n * k * (2.0 * n - 3.0 * k - 1.0))
    }

    #[test]
    fn isometric_embedding_is_perfect() {
        let x = random(60, 3, 7);
        let (c, s) = (0.7f64.cos(), 0.7f64.sin());
        let rot = DMatrix::from_row_slice(3, 3, &[c, -s, 0., s, c, 0., 0., 0., 1.]);
        let y = &x * rot * 3.0;
        for k in [1, 5, 29] {
            assert_eq!(trustworthiness(&x, &y, k).unwrap(), 1.0);
            assert_eq!(continuity(&x, &y, k).unwrap(), 1.0);
        }
    }

    #[test]
    fn hand_computed_case() {
        // Data on a line at 0, 1, 2, 3, 4, 5; the embedding moves point 5 to 0.5. k = 1.
        // Data 1-NN (ties to the smaller index): 0->1, 1->0, 2->1, 3->2, 4->3, 5->4.
        // Embedding 1-NN: 0->5, 1->5, 2->1, 3->2, 4->3, 5->0.
        // Trustworthiness, intruders and their data ranks: 0->5 rank 5, 1->5 rank 5
        // (order 0, 2, 3, 4, 5), 5->0 rank 5; penalty 3 * (5 - 1) = 12,
        // T = 1 - 2 * 12 / (6 * 1 * (12 - 3 - 1)) = 1 - 24/48 = 1/2.
        // Continuity, missing neighbours and their embedding ranks: 0->1 rank 2 (after 5),
        // 1->0 rank 2 (after 5; 0 and 2 tie at 1, 0 first), 5->4 rank 5; penalty 1 + 1 + 4,
        // C = 1 - 12/48 = 3/4.
        let high = DMatrix::from_column_slice(6, 1, &[0., 1., 2., 3., 4., 5.]);
        let low = DMatrix::from_column_slice(6, 1, &[0., 1., 2., 3., 4., 0.5]);
        assert_eq!(trustworthiness(&high, &low, 1).unwrap(), 0.5);
        assert_eq!(continuity(&high, &low, 1).unwrap(), 0.75);
        assert_eq!(brute_trustworthiness(&high, &low, 1), 0.5);
    }

    #[test]
    fn matches_brute_force_on_random_data() {
        let high = random(40, 5, 11);
        let low = random(40, 2, 12);
        for k in [1, 3, 7, 19] {
            let fast = trustworthiness(&high, &low, k).unwrap();
            let slow = brute_trustworthiness(&high, &low, k);
            assert!((fast - slow).abs() < 1e-14, "k = {k}: {fast} vs {slow}");
            assert!(fast < 1.0);
        }
        // A noisy copy: mostly good, a few intruders, checks the counting path of ranks.
        let noisy: DMatrix<f64> = high.columns(0, 2) + random(40, 2, 13) * 0.05;
        let fast = trustworthiness(&high, &noisy, 4).unwrap();
        assert!((fast - brute_trustworthiness(&high, &noisy, 4)).abs() < 1e-14);
        assert!(fast > 0.5 && fast < 1.0, "T = {fast}");
    }

    #[test]
    fn continuity_is_trustworthiness_with_roles_swapped() {
        let high = random(50, 4, 21);
        let low = random(50, 2, 22);
        for k in [2, 10] {
            assert_eq!(
                continuity(&high, &low, k).unwrap(),
                trustworthiness(&low, &high, k).unwrap()
            );
            let c = continuity(&high, &low, k).unwrap();
            assert!((c - brute_trustworthiness(&low, &high, k)).abs() < 1e-14);
        }
    }

    #[test]
    fn rejects_bad_k_and_shapes() {
        let x = random(10, 3, 1);
        let y = random(10, 2, 2);
        assert!(trustworthiness(&x, &y, 4).is_ok());
        for k in [0, 5, 11] {
            assert!(matches!(
                trustworthiness(&x, &y, k),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(continuity(&x, &y, k).is_err());
        }
        assert!(matches!(
            trustworthiness(&x, &random(9, 2, 3), 2),
            Err(Error::DimensionMismatch(_))
        ));
        let mut bad = y.clone();
        bad[(0, 0)] = f64::INFINITY;
        assert!(matches!(
            trustworthiness(&x, &bad, 2),
            Err(Error::NonFinite { .. })
        ));
    }
}
