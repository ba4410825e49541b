//! Agreement between a predicted clustering and known classes.

use crate::assignment::hungarian;
use nalgebra::DMatrix;
use unfold_core::{Error, Result};

/// Clustering accuracy: the fraction of points whose predicted cluster maps to their true
/// class under the best one-to-one matching of cluster ids to class ids,
/// `max_m (1/n) sum_i [m(pred_i) == truth_i]`, found with [`hungarian`] on the negated
/// contingency table. Label values are arbitrary ids (they need not be `0..k`); when the
/// numbers of clusters and classes differ, the surplus ones stay unmatched and count as
/// errors.
///
/// Errors: empty input or label vectors of different lengths.
pub fn clustering_accuracy(pred: &[usize], truth: &[usize]) -> Result<f64> {
    let table = Contingency::new(pred, truth)?;
    // Rows are matched into columns, so put the smaller side on the rows.
    let counts = if table.counts.nrows() <= table.counts.ncols() {
        table.counts.clone()
    } else {
        table.counts.transpose()
    };
    let matching = hungarian(&counts.map(|c| -c))?;
    let matched: f64 = matching
        .iter()
        .enumerate()
        .map(|(r, &c)| counts[(r, c)])
        .sum();
    Ok(matched / table.n)
}

/// Normalised mutual information with the arithmetic-mean normalisation (scikit-learn's
/// default `average_method="arithmetic"`):
///
/// `NMI = I(U; V) / ((H(U) + H(V)) / 2)`, with `I(U; V) = sum_ij (n_ij/n) ln(n n_ij / (a_i b_j))`
/// and `H(U) = -sum_i (a_i/n) ln(a_i/n)` (n_ij the contingency table, a_i, b_j its margins).
///
/// Symmetric in its arguments, in `[0, 1]` up to rounding, invariant to relabelling, 1 for
/// identical partitions, 0 for independent ones. As in scikit-learn: 1 when both labelings
/// put every point in a single cluster (both entropies are zero), and 0 whenever the mutual
/// information is 0 (e.g. one labeling is a single cluster and the other is not). Label
/// values are arbitrary ids.
///
/// Errors: empty input or label vectors of different lengths.
pub fn nmi(pred: &[usize], truth: &[usize]) -> Result<f64> {
    let table = Contingency::new(pred, truth)?;
    let (r, c) = table.counts.shape();
    if r == 1 && c == 1 {
        return Ok(1.0);
    }
    let n = table.n;
    let a = table.counts.column_sum();
    let b = table.counts.row_sum();
    let mut mi = 0.0;
    for i in 0..r {
        for j in 0..c {
            let nij = table.counts[(i, j)];
            if nij > 0.0 {
                mi += nij / n * (n * nij / (a[i] * b[j])).ln();
            }
        }
    }
    let mi = mi.max(0.0);
    if mi == 0.0 {
        return Ok(0.0);
    }
    let entropy = |m: &[f64]| -> f64 { -m.iter().map(|&x| x / n * (x / n).ln()).sum::<f64>() };
    Ok(mi / (0.5 * (entropy(a.as_slice()) + entropy(b.as_slice()))))
}

/// Contingency table of two labelings: `counts[(i, j)]` points in predicted cluster `i` and
/// true class `j`, with the distinct label values of each side taken in increasing order.
pub(crate) struct Contingency {
    pub(crate) counts: DMatrix<f64>,
    pub(crate) n: f64,
}

impl Contingency {
    pub(crate) fn new(pred: &[usize], truth: &[usize]) -> Result<Self> {
        if pred.is_empty() {
            return Err(Error::Empty("predicted labels".to_string()));
        }
        if pred.len() != truth.len() {
            return Err(Error::DimensionMismatch(format!(
                "there are {} predicted labels but {} true labels; give one of each per point",
                pred.len(),
                truth.len()
            )));
        }
        let (p, rows) = compact(pred);
        let (t, cols) = compact(truth);
        let mut counts = DMatrix::zeros(rows, cols);
        for (&i, &j) in p.iter().zip(&t) {
            counts[(i, j)] += 1.0;
        }
        Ok(Contingency {
            counts,
            n: pred.len() as f64,
        })
    }
}

/// Labels renumbered `0..m` in increasing order of their values, and `m`.
fn compact(labels: &[usize]) -> (Vec<usize>, usize) {
    let mut values = labels.to_vec();
    values.sort_unstable();
    values.dedup();
    let ids = labels
        .iter()
        .map(|l| values.binary_search(l).unwrap_or_default())
        .collect();
    (ids, values.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_under_best_matching() {
        // Clusters 5, 9, 2 correspond to classes 0, 1, 2; one point of class 2 is in 9.
        let pred = [5, 5, 9, 9, 2, 2, 9];
        let truth = [0, 0, 1, 1, 2, 2, 2];
        assert_eq!(clustering_accuracy(&pred, &truth).unwrap(), 6.0 / 7.0);
        assert_eq!(clustering_accuracy(&truth, &pred).unwrap(), 6.0 / 7.0);
        // More clusters than classes: the best 2 clusters match, the third is an error.
        assert_eq!(
            clustering_accuracy(&[0, 0, 1, 1, 2, 2], &[0, 0, 0, 1, 1, 1]).unwrap(),
            4.0 / 6.0
        );
        assert_eq!(clustering_accuracy(&[3, 3, 3], &[1, 1, 1]).unwrap(), 1.0);
    }

    #[test]
    fn nmi_of_a_relabelled_partition_is_one() {
        let truth = [0, 0, 1, 1, 1, 2, 2, 2, 2];
        let pred = [7, 7, 3, 3, 3, 0, 0, 0, 0];
        assert!((nmi(&pred, &truth).unwrap() - 1.0).abs() < 1e-15);
        assert_eq!(nmi(&[4, 4, 4], &[1, 1, 1]).unwrap(), 1.0);
    }

    #[test]
    fn nmi_hand_computed_case() {
        // pred = 0 0 1 1, truth = 0 0 0 1: n_00 = 2, n_10 = 1, n_11 = 1; a = (2, 2),
        // b = (3, 1). I = 1/2 ln(4/3) + 1/4 ln(2/3) + 1/4 ln 2, H(pred) = ln 2,
        // H(truth) = -(3/4 ln 3/4 + 1/4 ln 1/4).
        let mi = 0.5 * (4.0f64 / 3.0).ln() + 0.25 * (2.0f64 / 3.0).ln() + 0.25 * 2.0f64.ln();
        let h_pred = 2.0f64.ln();
        let h_truth = -(0.75 * 0.75f64.ln() + 0.25 * 0.25f64.ln());
        let expected = mi / (0.5 * (h_pred + h_truth));
        // scikit-learn 1.x: normalized_mutual_info_score([0,0,0,1], [0,0,1,1]).
        assert!((expected - 0.3437110184854508).abs() < 1e-15);
        let got = nmi(&[0, 0, 1, 1], &[0, 0, 0, 1]).unwrap();
        assert!((got - expected).abs() < 1e-15, "{got}");
        assert!((nmi(&[0, 0, 0, 1], &[0, 0, 1, 1]).unwrap() - expected).abs() < 1e-15);
    }

    #[test]
    fn nmi_of_independent_partitions_is_zero() {
        assert_eq!(nmi(&[0, 0, 1, 1], &[0, 1, 0, 1]).unwrap(), 0.0);
        assert_eq!(nmi(&[0, 0, 0, 0], &[0, 1, 2, 3]).unwrap(), 0.0);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            nmi(&[0, 1], &[0]),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(matches!(nmi(&[], &[]), Err(Error::Empty(_))));
        assert!(clustering_accuracy(&[0, 1, 2], &[0, 1]).is_err());
    }
}
