//! Squared Euclidean distances between rows, through one matrix product:
//! `||a_i - b_j||^2 = ||a_i||^2 + ||b_j||^2 - 2 a_i . b_j`.

use crate::view::{as_faer, as_faer_mut, par_for};
use faer::linalg::matmul::matmul;
use faer::Accum;
use nalgebra::DMatrix;
use rayon::prelude::*;

/// Squared Euclidean distances between the rows of `a` (n x p) and the rows of `b`
/// (m x p), as an n x m matrix. Cancellation can make the product form slightly negative;
/// results are clamped at zero.
///
/// # Panics
/// If `a` and `b` have different numbers of columns (a programming error, not bad data).
pub fn sq_dists_to(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    assert_eq!(a.ncols(), b.ncols(), "sq_dists_to: column counts differ");
    let (na, nb) = (row_sq_norms(a), row_sq_norms(b));
    let mut d = DMatrix::<f64>::zeros(a.nrows(), b.nrows());
    matmul(
        as_faer_mut(&mut d),
        Accum::Replace,
        as_faer(a),
        as_faer(b).transpose(),
        -2.0,
        par_for(a.nrows().max(b.nrows())),
    );
    let n = a.nrows();
    if n > 0 {
        d.as_mut_slice()
            .par_chunks_mut(n)
            .zip(nb.par_iter())
            .for_each(|(col, &nbj)| {
                for (v, &nai) in col.iter_mut().zip(&na) {
                    *v = (*v + nai + nbj).max(0.0);
                }
            });
    }
    d
}

/// `||m_i||^2` for every row, accumulated column by column (the storage order).
fn row_sq_norms(m: &DMatrix<f64>) -> Vec<f64> {
    let mut norms = vec![0.0; m.nrows()];
    for col in m.column_iter() {
        for (s, v) in norms.iter_mut().zip(col.iter()) {
            *s += v * v;
        }
    }
    norms
}

/// Up to this many features, pairwise distances are summed directly (exactly symmetric,
/// no cancellation, and faster than a product at this width); above it they come from
/// one matrix product.
const DIRECT_MAX_FEATURES: usize = 16;

/// Squared Euclidean distances between all pairs of rows of `y` (n x n, exactly
/// symmetric, exact zeros on the diagonal).
pub fn pairwise_sq_dists(y: &DMatrix<f64>) -> DMatrix<f64> {
    pairwise_kernel(y, |d2| d2)
}

/// `f(||y_i - y_j||^2)` for all pairs of rows of `y`: a distance-based kernel (RBF,
/// `-d2/2` of classical MDS) formed in the same pass as the distances. Exactly symmetric.
pub fn pairwise_kernel(y: &DMatrix<f64>, f: impl Fn(f64) -> f64 + Sync) -> DMatrix<f64> {
    if y.ncols() <= DIRECT_MAX_FEATURES {
        return pairwise_direct(y, f);
    }
    const TILE: usize = 64;
    let mut d = sq_dists_to(y, y);
    let n = d.nrows();
    // Average each pair with its mirror tile by tile, so both sides are read from cache.
    for j0 in (0..n).step_by(TILE) {
        for i0 in (j0..n).step_by(TILE) {
            for j in j0..(j0 + TILE).min(n) {
                for i in i0.max(j + 1)..(i0 + TILE).min(n) {
                    let v = 0.5 * (d[(i, j)] + d[(j, i)]);
                    d[(i, j)] = v;
                    d[(j, i)] = v;
                }
            }
        }
    }
    for i in 0..n {
        d[(i, i)] = 0.0;
    }
    d.as_mut_slice().par_iter_mut().for_each(|v| *v = f(*v));
    d
}

/// `f(sum_k (y_ik - y_jk)^2)` from a point-major copy of `y`: the lower triangle column by
/// column in parallel (each pair evaluated once), then mirrored tile by tile.
fn pairwise_direct(y: &DMatrix<f64>, f: impl Fn(f64) -> f64 + Sync) -> DMatrix<f64> {
    let (n, p) = (y.nrows(), y.ncols());
    let rows: Vec<f64> = (0..n)
        .flat_map(|i| (0..p).map(move |k| y[(i, k)]))
        .collect();
    let mut d = DMatrix::<f64>::zeros(n, n);
    if n == 0 || p == 0 {
        return d;
    }
    let f0 = f(0.0);
    d.as_mut_slice()
        .par_chunks_mut(n)
        .enumerate()
        .for_each(|(j, col)| {
            let yj = &rows[j * p..(j + 1) * p];
            col[j] = f0;
            for (v, yi) in col[j + 1..]
                .iter_mut()
                .zip(rows[(j + 1) * p..].chunks_exact(p))
            {
                *v = f(yi.iter().zip(yj).map(|(a, b)| (a - b) * (a - b)).sum());
            }
        });
    mirror_lower(&mut d);
    d
}

/// Copies the strict lower triangle onto the upper one, in tiles that stay in cache.
fn mirror_lower(d: &mut DMatrix<f64>) {
    const TILE: usize = 64;
    let n = d.nrows();
    for j0 in (0..n).step_by(TILE) {
        for i0 in (j0..n).step_by(TILE) {
            for j in j0..(j0 + TILE).min(n) {
                for i in i0.max(j + 1)..(i0 + TILE).min(n) {
                    d[(j, i)] = d[(i, j)];
                }
            }
        }
    }
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
        // The product path (more than DIRECT_MAX_FEATURES columns) agrees with the direct one.
        let wide = DMatrix::from_fn(9, 20, |i, j| ((i * 20 + j) as f64 * 0.37).sin() + 3.0);
        let by_product = pairwise_sq_dists(&wide);
        assert_eq!(by_product, by_product.transpose());
        let direct = pairwise_direct(&wide, |d| d);
        assert!((by_product - &direct).amax() < 1e-12 * direct.amax());
        for i in 0..9 {
            for j in 0..9 {
                assert_eq!(direct[(i, j)], (wide.row(i) - wide.row(j)).norm_squared());
            }
        }
        let k = pairwise_kernel(&wide, |d| (-d).exp());
        let k_wide = pairwise_kernel(&y, |d| -0.5 * d);
        assert!((k - direct.map(|d| (-d).exp())).amax() < 1e-12);
        assert_eq!(k_wide, p.map(|d| -0.5 * d));
    }
}
