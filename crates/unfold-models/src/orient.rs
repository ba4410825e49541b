//! A deterministic sign for eigenvectors, so that repeated fits agree exactly.

use nalgebra::DMatrix;

/// Flips each column so that its entry of largest magnitude is positive (the first such
/// entry on ties). Eigenvectors are defined up to sign; this picks one reproducibly.
pub(crate) fn orient_columns(v: &mut DMatrix<f64>) {
    for mut col in v.column_iter_mut() {
        let mut best = 0.0f64;
        for &x in col.iter() {
            if x.abs() > best.abs() {
                best = x;
            }
        }
        if best < 0.0 {
            col.neg_mut();
        }
    }
}
