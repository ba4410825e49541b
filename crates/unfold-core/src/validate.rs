//! Up-front checks shared by every method: validate, then compute on valid values.

use crate::{Error, Result};
use nalgebra::DMatrix;

/// Fails with [`Error::Empty`] or [`Error::NonFinite`] (naming a bad cell).
pub fn check_finite(y: &DMatrix<f64>, what: &str) -> Result<()> {
    if y.nrows() == 0 || y.ncols() == 0 {
        return Err(Error::Empty(what.to_string()));
    }
    // Column-major scan (the storage order); reports the first bad cell of the first bad
    // column.
    if let Some(idx) = y.as_slice().iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: what.to_string(),
            row: idx % y.nrows(),
            col: idx / y.nrows(),
        });
    }
    Ok(())
}

/// A k-nearest-neighbour method needs `k >= 1` and at least `k + 1` points.
pub fn check_k(n: usize, k: usize, method: &str) -> Result<()> {
    if k == 0 {
        return Err(Error::invalid(
            "k",
            "the number of neighbours must be at least 1",
        ));
    }
    if n < k + 1 {
        return Err(Error::TooFewPoints {
            what: format!("{method} with k = {k}"),
            needed: k + 1,
            got: n,
            advice: format!("use k <= {}", n.saturating_sub(1).max(1)),
        });
    }
    Ok(())
}

/// A latent dimension must be at least 1 and strictly below `limit`.
pub fn check_dim(dim: usize, limit: usize, reason: &str) -> Result<()> {
    if dim == 0 {
        return Err(Error::invalid(
            "dim",
            "the latent dimension must be at least 1",
        ));
    }
    if dim >= limit {
        return Err(Error::DimensionTooLarge {
            dim,
            limit,
            reason: reason.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_first_nan() {
        let mut y = DMatrix::zeros(3, 2);
        y[(2, 1)] = f64::NAN;
        match check_finite(&y, "data") {
            Err(Error::NonFinite { row: 2, col: 1, .. }) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            check_finite(&DMatrix::zeros(0, 3), "data"),
            Err(Error::Empty(_))
        ));
    }

    #[test]
    fn k_and_dim_limits() {
        assert!(check_k(5, 4, "kNN").is_ok());
        assert!(matches!(
            check_k(5, 5, "kNN"),
            Err(Error::TooFewPoints { needed: 6, .. })
        ));
        assert!(check_dim(2, 3, "dim < p").is_ok());
        assert!(matches!(
            check_dim(3, 3, "dim < p"),
            Err(Error::DimensionTooLarge { .. })
        ));
    }
}
