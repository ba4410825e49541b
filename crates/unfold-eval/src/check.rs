//! Input checks shared by the metrics: validate first, then compute on valid values.

use nalgebra::DMatrix;
use unfold_core::{check_finite, Error, Result};

/// Both point sets are non-empty, finite and have the same number of rows (points).
pub(crate) fn paired_points(
    a: &DMatrix<f64>,
    what_a: &str,
    b: &DMatrix<f64>,
    what_b: &str,
) -> Result<()> {
    check_finite(a, what_a)?;
    check_finite(b, what_b)?;
    if a.nrows() != b.nrows() {
        return Err(Error::DimensionMismatch(format!(
            "{what_a} has {} points (rows) but {what_b} has {}; both must describe the same points in the same order",
            a.nrows(),
            b.nrows()
        )));
    }
    Ok(())
}

/// A label vector has one entry per point.
pub(crate) fn labels_len(labels: &[usize], what: &str, n: usize, per_what: &str) -> Result<()> {
    if labels.len() != n {
        return Err(Error::DimensionMismatch(format!(
            "{what} has {} entries but {per_what} has {n}; give exactly one label per point",
            labels.len()
        )));
    }
    Ok(())
}
