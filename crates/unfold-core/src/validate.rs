//! Up-front checks shared by every method: validate, then compute on valid values.

use crate::{Error, Result};
use nalgebra::DMatrix;

/// Fails with [`Error::Empty`] or [`Error::NonFinite`] (naming a bad cell).
pub fn check_finite(y: &DMatrix<f64>, what: &str) -> Result<()> {
    check_finite_values(y.as_slice(), y.nrows(), y.ncols(), Order::Columns, what)
}

/// How the values of an n x p matrix are laid out in a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Column after column (nalgebra's storage, NumPy's Fortran order).
    Columns,
    /// Row after row (NumPy's C order).
    Rows,
}

/// [`check_finite`] of the n x p matrix whose values `values` holds in `order`: the first
/// bad cell in storage order is named.
pub fn check_finite_values(
    values: &[f64],
    n: usize,
    p: usize,
    order: Order,
    what: &str,
) -> Result<()> {
    if n == 0 || p == 0 {
        return Err(Error::Empty(what.to_string()));
    }
    if let Some(idx) = values.iter().position(|v| !v.is_finite()) {
        let (row, col) = match order {
            Order::Columns => (idx % n, idx / n),
            Order::Rows => (idx / p, idx % p),
        };
        return Err(Error::NonFinite {
            what: what.to_string(),
            row,
            col,
        });
    }
    Ok(())
}

/// The largest absolute value data may have: squared distances, Gram matrices and the
/// products of squared distances some methods form (MVU's constraints, fourth powers of
/// the values) stay finite for any data that fits in memory (`(1e60)^4 n p < f64::MAX`).
pub const MAX_MAGNITUDE: f64 = 1e60;

/// The smallest largest-absolute-value data may have (unless it is all zero): below it the
/// same products underflow to zero or lose their precision in subnormal numbers, and
/// distinct points look like duplicates.
pub const MIN_MAGNITUDE: f64 = 1e-60;

/// Points to compute with: [`check_finite`], then a magnitude whose squares and their
/// products stay in `f64`'s range: the largest absolute value at most [`MAX_MAGNITUDE`]
/// and, unless every value is zero, at least [`MIN_MAGNITUDE`].
///
/// # Errors
/// As [`check_finite`]; [`Error::InvalidParameter`] naming `what`, the magnitude found, the
/// range allowed, and what to do: standardise (`--preprocess scale`) or divide by a
/// constant.
pub fn check_points(y: &DMatrix<f64>, what: &str) -> Result<()> {
    check_point_values(y.as_slice(), y.nrows(), y.ncols(), Order::Columns, what)
}

/// The largest absolute value of `values` (infinite if a value is) and whether one is NaN,
/// in one pass, each lane of 8 on its own so that the loop vectorises: what
/// [`check_point_values`] reads, for callers that see their values in pieces.
pub fn magnitude(values: &[f64]) -> (f64, bool) {
    let mut lanes = [0.0f64; 8];
    let mut nan = false;
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(chunk) {
            let a = v.abs();
            *m = if a > *m { a } else { *m };
            nan |= v.is_nan();
        }
    }
    for &v in chunks.remainder() {
        lanes[0] = lanes[0].max(v.abs());
        nan |= v.is_nan();
    }
    (lanes.iter().fold(0.0f64, |m, &v| m.max(v)), nan)
}

/// [`check_points`] of the n x p matrix whose values `values` holds in `order`.
pub fn check_point_values(
    values: &[f64],
    n: usize,
    p: usize,
    order: Order,
    what: &str,
) -> Result<()> {
    let (largest, nan) = magnitude(values);
    if nan || largest.is_infinite() || values.is_empty() {
        check_finite_values(values, n, p, order, what)?;
    }
    let problem = if largest > MAX_MAGNITUDE {
        "their squared distances and Gram matrices would overflow to infinity"
    } else if largest > 0.0 && largest < MIN_MAGNITUDE {
        "their squared distances would underflow to zero, so distinct points would look identical"
    } else {
        return Ok(());
    };
    Err(Error::invalid(
        what,
        format!(
            "the largest absolute value is {largest:e}, outside the range [{MIN_MAGNITUDE:e}, \
             {MAX_MAGNITUDE:e}] unfold computes in: {problem}. Standardise the data \
             (`--preprocess scale`, or divide every value by a constant such as {largest:e})"
        ),
    ))
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
    fn points_of_extreme_magnitude_are_refused_with_the_magnitude_and_the_remedy() {
        let y = DMatrix::from_fn(4, 2, |i, j| (i + 2 * j) as f64);
        assert!(check_points(&y, "the data").is_ok());
        assert!(check_points(&DMatrix::zeros(3, 2), "the data").is_ok());
        assert!(check_points(&(&y * 1e59), "the data").is_ok());
        assert!(check_points(&(&y * 1e-59), "the data").is_ok());
        for (scale, words) in [(1e300, "overflow"), (1e-300, "underflow")] {
            let text = check_points(&(&y * scale), "the data")
                .unwrap_err()
                .to_string();
            // The largest value, 5 * scale, is named.
            let largest = format!("{:e}", 5.0 * scale);
            for part in ["`the data`", words, "--preprocess scale", largest.as_str()] {
                assert!(text.contains(part), "{part:?} missing from {text}");
            }
        }
        // Non-finite values are named as such first.
        let mut bad = y.clone();
        bad[(1, 1)] = f64::INFINITY;
        assert!(matches!(
            check_points(&bad, "x"),
            Err(Error::NonFinite { row: 1, col: 1, .. })
        ));
        // Each position of a 5 x 7 matrix (four lanes of 8, then 3 left over): a NaN or an
        // infinity is found and named, before a huge value elsewhere.
        for at in 0..35 {
            for v in [f64::NAN, f64::NEG_INFINITY] {
                let mut y = DMatrix::from_fn(5, 7, |i, j| (i + j) as f64);
                y[(4, 6 - at / 5 % 7)] = 1e300;
                y[(at % 5, at / 5)] = v;
                let (row, col) = (at % 5, at / 5);
                let e = check_points(&y, "x").unwrap_err();
                assert!(
                    matches!(e, Error::NonFinite { row: r, col: c, .. } if (r, c) == (row, col)),
                    "{at}: {e}"
                );
            }
        }
        assert!(matches!(
            check_points(&DMatrix::zeros(0, 3), "x"),
            Err(Error::Empty(_))
        ));
        // The same cells found in a row-major copy.
        let mut y = DMatrix::from_fn(5, 7, |i, j| (i + j) as f64);
        y[(3, 2)] = f64::NAN;
        let rows: Vec<f64> = y.transpose().as_slice().to_vec();
        let e = check_point_values(&rows, 5, 7, Order::Rows, "x").unwrap_err();
        assert!(matches!(e, Error::NonFinite { row: 3, col: 2, .. }), "{e}");
        let rows = vec![1e300; 35];
        let e = check_point_values(&rows, 5, 7, Order::Rows, "x").unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
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
        let message = check_dim(3, 3, "dim < p").unwrap_err().to_string();
        assert!(message.contains("must be less than 3"), "{message}");
        // One feature leaves no dimension to choose: the message points at the data.
        let message = check_dim(2, 1, "one feature").unwrap_err().to_string();
        assert!(message.contains("impossible"), "{message}");
        assert!(message.contains("needs more features"), "{message}");
        assert!(!message.contains("less than 1"), "{message}");
    }
}
