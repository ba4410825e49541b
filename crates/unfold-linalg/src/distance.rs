//! Squared Euclidean distances between rows, through one matrix product:
//! `||a_i - b_j||^2 = ||a_i||^2 + ||b_j||^2 - 2 a_i . b_j`.

use crate::view::{as_faer, as_faer_mut, par};
use faer::linalg::matmul::matmul;
use faer::Accum;
use nalgebra::DMatrix;

/// Squared Euclidean distances between the rows of `a` (n x p) and the rows of `b`
/// (m x p), as an n x m matrix. Cancellation can make the product form slightly negative;
/// results are clamped at zero.
///
/// # Panics
/// If `a` and `b` have different numbers of columns (a programming error, not bad data).
pub fn sq_dists_to(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    assert_eq!(a.ncols(), b.ncols(), "sq_dists_to: column counts differ");
    let na: Vec<f64> = a.row_iter().map(|r| r.norm_squared()).collect();
    let nb: Vec<f64> = b.row_iter().map(|r| r.norm_squared()).collect();
    let mut d = DMatrix::<f64>::zeros(a.nrows(), b.nrows());
    matmul(
        as_faer_mut(&mut d),
        Accum::Replace,
        as_faer(a),
        as_faer(b).transpose(),
        -2.0,
        par(),
    );
    for j in 0..b.nrows() {
        for i in 0..a.nrows() {
            let v = d[(i, j)] + na[i] + nb[j];
            d[(i, j)] = v.max(0.0);
        }
    }
    d
}

/// Squared Euclidean distances between all pairs of rows of `y` (n x n, symmetric,
/// exact zeros on the diagonal).
pub fn pairwise_sq_dists(y: &DMatrix<f64>) -> DMatrix<f64> {
    let mut d = sq_dists_to(y, y);
    let n = d.nrows();
    for i in 0..n {
        d[(i, i)] = 0.0;
        for j in 0..i {
            let v = 0.5 * (d[(i, j)] + d[(j, i)]);
            d[(i, j)] = v;
            d[(j, i)] = v;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_direct_formula() {
        let y = DMatrix::from_fn(7, 3, |i, j| ((i * 3 + j) as f64).sin() * 2.0 + j as f64);
        let z = DMatrix::from_fn(4, 3, |i, j| ((i + 2 * j) as f64).cos());
        let d = sq_dists_to(&y, &z);
        for i in 0..7 {
            for j in 0..4 {
                let direct = (y.row(i) - z.row(j)).norm_squared();
                assert!((d[(i, j)] - direct).abs() < 1e-12 * (1.0 + direct));
            }
        }
        let p = pairwise_sq_dists(&y);
        assert_eq!(p, p.transpose());
        assert!((0..7).all(|i| p[(i, i)] == 0.0));
    }
}
