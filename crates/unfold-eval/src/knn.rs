//! Leave-one-out 1-nearest-neighbour classification accuracy.

use crate::check::labels_len;
use crate::ranks::nearest;
use crate::rows::map_distance_rows;
use nalgebra::DMatrix;
use unfold_core::{check_finite, Error, Result};

/// Leave-one-out 1-nearest-neighbour accuracy of the points `x` (n x q, e.g. an embedding)
/// with class `labels` (one per row): the fraction of points whose nearest other point
/// (Euclidean) has the same label, `(1/n) sum_i [labels[nn(i)] == labels[i]]`.
///
/// Ties in distance go to the smaller row index; a point is never its own neighbour, but a
/// duplicate of it at distance 0 is a valid neighbour. Squared distances come from the Gram
/// expansion of the column-centred points ([`unfold_linalg::sq_dists_to`], one block of rows
/// at a time); O(n^2 q) time, parallel over points.
///
/// Errors: empty or non-finite `x`, fewer than 2 points, or a label count that differs
/// from the number of rows.
pub fn loo_1nn_accuracy(x: &DMatrix<f64>, labels: &[usize]) -> Result<f64> {
    check_finite(x, "points")?;
    let n = x.nrows();
    labels_len(labels, "labels", n, "the point matrix (rows)")?;
    if n < 2 {
        return Err(Error::TooFewPoints {
            what: "leave-one-out 1-NN accuracy".to_string(),
            needed: 2,
            got: n,
            advice: "each point needs another point to be its neighbour".to_string(),
        });
    }
    let correct = map_distance_rows(&[x], |i, rows| {
        labels[nearest(rows[0], i, 1)[0]] == labels[i]
    })
    .into_iter()
    .filter(|&hit| hit)
    .count();
    Ok(correct as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructed_example() {
        // Points on a line at 0, 1, 3, 4, 10, 12 with labels a a b b a b.
        // Nearest others: 0->1 (a=a ok), 1->0 (ok), 3->4 (b=b ok), 4->3 (ok),
        // 10->12 (a vs b wrong), 12->10 (wrong). Accuracy 4/6.
        let x = DMatrix::from_column_slice(6, 1, &[0., 1., 3., 4., 10., 12.]);
        let labels = [0, 0, 1, 1, 0, 1];
        assert_eq!(loo_1nn_accuracy(&x, &labels).unwrap(), 4.0 / 6.0);
    }

    #[test]
    fn ties_go_to_the_smaller_index() {
        // Point 1 at 0 has points 0 (at -1) and 2 (at 1) at the same distance: 0 wins.
        let x = DMatrix::from_column_slice(3, 1, &[-1., 0., 1.]);
        assert_eq!(loo_1nn_accuracy(&x, &[7, 7, 9]).unwrap(), 2.0 / 3.0);
        assert_eq!(loo_1nn_accuracy(&x, &[9, 7, 7]).unwrap(), 1.0 / 3.0);
    }

    #[test]
    fn rejects_bad_input() {
        let x = DMatrix::from_column_slice(3, 1, &[-1., 0., 1.]);
        assert!(matches!(
            loo_1nn_accuracy(&x, &[0, 1]),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(matches!(
            loo_1nn_accuracy(&DMatrix::zeros(1, 2), &[0]),
            Err(Error::TooFewPoints { .. })
        ));
        let mut bad = x.clone();
        bad[(1, 0)] = f64::NAN;
        assert!(loo_1nn_accuracy(&bad, &[0, 0, 0]).is_err());
    }
}
